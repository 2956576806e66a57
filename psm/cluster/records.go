package cluster

// The decoded records the state is built from. A Decoder fills them from a
// record's key and value bytes; the state code below never sees bytes, so
// any decoder of Kafka's internal-topic schemas can serve it: kseg's own
// schema tables (SchemaDecoder, decode/schema) or, in the tests, franz-go's
// kmsg, an independent implementation the views are cross-checked with.

// Decoder decodes the records of the internal topics.
type Decoder interface {
	// ConsumerOffsets decodes one __consumer_offsets record; value is nil
	// for a tombstone. A key version the decoder does not know is not an
	// error: it returns a GroupRecord of kind GroupRecordUnknown.
	ConsumerOffsets(key, value []byte) (GroupRecord, error)
	// TransactionState decodes one __transaction_state record; value is
	// nil for a tombstone.
	TransactionState(key, value []byte) (TxnRecord, error)
}

// GroupRecordKind is the record type of a __consumer_offsets record, which
// its key version selects (GroupCoordinatorRecordSerde; KIP-848 record
// types 3..8).
type GroupRecordKind int

const (
	GroupRecordUnknown GroupRecordKind = iota
	// OffsetCommit: key versions 0 and 1 (OffsetCommitKey/Value).
	GroupRecordOffsetCommit
	// GroupMetadata: key version 2, a classic group (GroupMetadataValue).
	GroupRecordGroupMetadata
	// ConsumerGroupMetadata: type 3, a KIP-848 group's epoch.
	GroupRecordConsumerGroupMetadata
	// ConsumerGroupMemberMetadata: type 5, one KIP-848 member.
	GroupRecordConsumerGroupMember
	// ConsumerGroupTargetAssignmentMetadata: type 6, the assignment epoch.
	GroupRecordConsumerGroupTargetAssignmentMetadata
	// ConsumerGroupTargetAssignmentMember: type 7.
	GroupRecordConsumerGroupTargetAssignmentMember
	// ConsumerGroupCurrentMemberAssignment: type 8.
	GroupRecordConsumerGroupCurrentMemberAssignment
	// Other record types the views do not need (ConsumerGroupPartitionMetadata,
	// regular expressions, share and streams groups) are Skipped: replay
	// counts them and goes on.
	GroupRecordSkipped
)

// GroupRecord is one decoded __consumer_offsets record. Group is always
// set; Tombstone means the value was null (the key's state is deleted).
// Exactly the field for Kind is set when the record is not a tombstone.
type GroupRecord struct {
	Kind       GroupRecordKind
	KeyVersion int16
	Group      string
	// Topic, Partition: the key of an OffsetCommit.
	Topic     string
	Partition int32
	// MemberID: the key of the KIP-848 member records.
	MemberID  string
	Tombstone bool

	Offset             *OffsetCommitValue
	Classic            *ClassicGroupValue
	ConsumerGroupEpoch int32 // ConsumerGroupMetadata.epoch
	AssignmentEpoch    int32 // ConsumerGroupTargetAssignmentMetadata.assignmentEpoch
	Member             *ConsumerGroupMemberValue
	Target             []TopicIDPartitions // ConsumerGroupTargetAssignmentMember
	Current            *CurrentMemberAssignmentValue
	// SkippedType names what a GroupRecordSkipped record is, for counts.
	SkippedType string
}

// OffsetCommitValue is OffsetCommitValue (versions 0..4).
type OffsetCommitValue struct {
	Version         int16
	Offset          int64
	LeaderEpoch     int32 // -1 when absent (version < 3)
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64 // version 1 only; -1 otherwise
}

// ClassicGroupValue is GroupMetadataValue.
type ClassicGroupValue struct {
	Version               int16
	ProtocolType          string
	Generation            int32
	Protocol              string // "" when null
	Leader                string // "" when null
	CurrentStateTimestamp int64  // -1 when absent
	Members               []ClassicMember
}

// ClassicMember is GroupMetadataValue.MemberMetadata, with its assignment
// decoded when the protocol type is "consumer" (ConsumerProtocolAssignment).
type ClassicMember struct {
	MemberID         string
	GroupInstanceID  string
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32
	SessionTimeout   int32
	// Assignment is nil when the group's protocol is not the consumer
	// protocol or the bytes did not decode.
	Assignment []TopicPartitions
}

// TopicPartitions is a topic name and partitions.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// TopicIDPartitions is a topic id and partitions (KIP-848 records name
// topics by id).
type TopicIDPartitions struct {
	TopicID    [16]byte
	Partitions []int32
}

// ConsumerGroupMemberValue is ConsumerGroupMemberMetadataValue.
type ConsumerGroupMemberValue struct {
	InstanceID           string
	RackID               string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
	SubscribedTopicRegex string
	ServerAssignor       string
	RebalanceTimeoutMs   int32
}

// CurrentMemberAssignmentValue is ConsumerGroupCurrentMemberAssignmentValue.
type CurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8
	Assigned            []TopicIDPartitions
	PendingRevocation   []TopicIDPartitions
}

// TxnRecord is one decoded __transaction_state record.
type TxnRecord struct {
	TransactionalID string
	Tombstone       bool
	Value           *TxnMetadataValue
}

// TxnMetadataValue is TransactionLogValue.
type TxnMetadataValue struct {
	Version             int16
	ProducerID          int64
	PreviousProducerID  int64 // -1 when absent
	NextProducerID      int64 // -1 when absent
	ProducerEpoch       int16
	TimeoutMs           int32
	State               TxnState
	Partitions          []TopicPartitions
	LastUpdateTimestamp int64
	StartTimestamp      int64
}

// TxnState is TransactionState's id as the log stores it.
type TxnState int8

// TransactionState ids (TransactionState.java).
const (
	TxnEmpty             TxnState = 0
	TxnOngoing           TxnState = 1
	TxnPrepareCommit     TxnState = 2
	TxnPrepareAbort      TxnState = 3
	TxnCompleteCommit    TxnState = 4
	TxnCompleteAbort     TxnState = 5
	TxnDead              TxnState = 6
	TxnPrepareEpochFence TxnState = 7
)

func (s TxnState) String() string {
	if s >= 0 && int(s) < len(txnStateNames) {
		return txnStateNames[s]
	}
	return "Unknown(" + itoa(int64(s)) + ")"
}

// txnStateNames are TransactionState's names, by id.
var txnStateNames = [...]string{TxnEmpty: "Empty", TxnOngoing: "Ongoing", TxnPrepareCommit: "PrepareCommit",
	TxnPrepareAbort: "PrepareAbort", TxnCompleteCommit: "CompleteCommit", TxnCompleteAbort: "CompleteAbort",
	TxnDead: "Dead", TxnPrepareEpochFence: "PrepareEpochFence"}

// includesPartitions: the states in which the coordinator still tracks the
// transaction's partitions as part of an open or finishing transaction.
func (s TxnState) open() bool {
	return s == TxnOngoing || s == TxnPrepareCommit || s == TxnPrepareAbort || s == TxnPrepareEpochFence
}
