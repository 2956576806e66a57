package cluster

import (
	"github.com/kseg/kseg/decode/schema"
)

// SchemaDecoder serves Decoder with kseg's schema-table decoder
// (decode/schema), which knows every record type of the internal topics,
// the KIP-848 ones included. It is the decoder the CLI uses.
type SchemaDecoder struct{}

var _ Decoder = SchemaDecoder{}

// recordKinds maps the coordinator key message of __consumer_offsets to
// the record kinds the groups view replays (CoordinatorRecordType).
// Record type 0, LegacyOffsetCommitKey (what 0.8.2 brokers wrote, its
// value LegacyOffsetCommitValue: offset, metadata, commitTimestamp), is
// an offset commit too: GroupCoordinatorShard.replay converts it
// (convertLegacyOffsetCommitKey/Value) and replays it as OFFSET_COMMIT.
var recordKinds = map[string]GroupRecordKind{
	"LegacyOffsetCommitKey":                    GroupRecordOffsetCommit,
	"OffsetCommitKey":                          GroupRecordOffsetCommit,
	"GroupMetadataKey":                         GroupRecordGroupMetadata,
	"ConsumerGroupMetadataKey":                 GroupRecordConsumerGroupMetadata,
	"ConsumerGroupMemberMetadataKey":           GroupRecordConsumerGroupMember,
	"ConsumerGroupTargetAssignmentMetadataKey": GroupRecordConsumerGroupTargetAssignmentMetadata,
	"ConsumerGroupTargetAssignmentMemberKey":   GroupRecordConsumerGroupTargetAssignmentMember,
	"ConsumerGroupCurrentMemberAssignmentKey":  GroupRecordConsumerGroupCurrentMemberAssignment,
}

func str(s *schema.Struct, name string) string {
	if s == nil {
		return ""
	}
	v, _ := s.String(name)
	return v
}

func i64(s *schema.Struct, name string, def int64) int64 {
	if s == nil {
		return def
	}
	if v, ok := s.Int(name); ok {
		return v
	}
	return def
}

func int32s(s *schema.Struct, name string) []int32 {
	vs, _ := s.Ints(name)
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
	return out
}

func idPartitions(ss []*schema.Struct) []TopicIDPartitions {
	var out []TopicIDPartitions
	for _, t := range ss {
		id, _ := t.UUID("topicId")
		out = append(out, TopicIDPartitions{TopicID: id, Partitions: int32s(t, "partitions")})
	}
	return out
}

// ConsumerOffsets decodes a __consumer_offsets record: with the typed
// decoders (schema.ReadOffsetCommitKey …) when they read it, else with
// the generic reader, which also says what is wrong with a record that
// does not decode.
func (SchemaDecoder) ConsumerOffsets(key, value []byte) (GroupRecord, error) {
	if r, ok := typedConsumerOffsets(key, value); ok {
		return r, nil
	}
	return genericConsumerOffsets(key, value)
}

// genericConsumerOffsets is ConsumerOffsets through DecodeInternal's
// *schema.Struct tree.
func genericConsumerOffsets(key, value []byte) (GroupRecord, error) {
	d, err := schema.DecodeInternal(schema.ConsumerOffsets, key, value)
	if err != nil {
		return GroupRecord{}, err
	}
	r := GroupRecord{KeyVersion: d.RecordType, Tombstone: d.Tombstone()}
	if d.KeyMessage == nil {
		return r, nil // GroupRecordUnknown
	}
	if d.Unknown {
		return r, nil // a key or value schema kseg does not have
	}
	k, v := d.Key, d.Value
	kind, ok := recordKinds[d.KeyMessage.Name]
	if !ok {
		r.Kind, r.SkippedType = GroupRecordSkipped, d.TypeName()
		return r, nil
	}
	r.Kind = kind
	if g := str(k, "group"); g != "" {
		r.Group = g
	} else {
		r.Group = str(k, "groupId")
	}
	r.MemberID = str(k, "memberId")
	r.Topic, r.Partition = str(k, "topic"), int32(i64(k, "partition", -1))
	if v == nil {
		return r, nil
	}
	switch kind {
	case GroupRecordOffsetCommit:
		r.Offset = &OffsetCommitValue{Version: d.ValueVersion, Offset: i64(v, "offset", -1), LeaderEpoch: int32(i64(v, "leaderEpoch", -1)),
			Metadata: str(v, "metadata"), CommitTimestamp: i64(v, "commitTimestamp", -1), ExpireTimestamp: i64(v, "expireTimestamp", -1)}
	case GroupRecordGroupMetadata:
		c := &ClassicGroupValue{Version: d.ValueVersion, ProtocolType: str(v, "protocolType"), Generation: int32(i64(v, "generation", 0)),
			Protocol: str(v, "protocol"), Leader: str(v, "leader"), CurrentStateTimestamp: i64(v, "currentStateTimestamp", -1)}
		for _, m := range v.Structs("members") {
			cm := ClassicMember{MemberID: str(m, "memberId"), GroupInstanceID: str(m, "groupInstanceId"), ClientID: str(m, "clientId"),
				ClientHost: str(m, "clientHost"), RebalanceTimeout: int32(i64(m, "rebalanceTimeout", -1)), SessionTimeout: int32(i64(m, "sessionTimeout", -1))}
			// ConsumerProtocolAssignment, decoded by the schema reader
			// when the protocol type is "consumer".
			if a := m.Struct("assignment"); a != nil {
				for _, tp := range a.Structs("assignedPartitions") {
					cm.Assignment = append(cm.Assignment, TopicPartitions{Topic: str(tp, "topic"), Partitions: int32s(tp, "partitions")})
				}
			}
			c.Members = append(c.Members, cm)
		}
		r.Classic = c
	case GroupRecordConsumerGroupMetadata:
		r.ConsumerGroupEpoch = int32(i64(v, "epoch", 0))
	case GroupRecordConsumerGroupTargetAssignmentMetadata:
		r.AssignmentEpoch = int32(i64(v, "assignmentEpoch", 0))
	case GroupRecordConsumerGroupTargetAssignmentMember:
		r.Target = idPartitions(v.Structs("topicPartitions"))
	case GroupRecordConsumerGroupMember:
		names, _ := v.Array("subscribedTopicNames")
		var subs []string
		for _, n := range names {
			if s, ok := n.(string); ok {
				subs = append(subs, s)
			}
		}
		r.Member = &ConsumerGroupMemberValue{InstanceID: str(v, "instanceId"), RackID: str(v, "rackId"), ClientID: str(v, "clientId"),
			ClientHost: str(v, "clientHost"), SubscribedTopicNames: subs, SubscribedTopicRegex: str(v, "subscribedTopicRegex"),
			ServerAssignor: str(v, "serverAssignor"), RebalanceTimeoutMs: int32(i64(v, "rebalanceTimeoutMs", -1))}
	case GroupRecordConsumerGroupCurrentMemberAssignment:
		r.Current = &CurrentMemberAssignmentValue{MemberEpoch: int32(i64(v, "memberEpoch", -1)), PreviousMemberEpoch: int32(i64(v, "previousMemberEpoch", -1)),
			State: int8(i64(v, "state", 0)), Assigned: idPartitions(v.Structs("assignedPartitions")), PendingRevocation: idPartitions(v.Structs("partitionsPendingRevocation"))}
	}
	return r, nil
}

// TransactionState decodes a __transaction_state record, as
// ConsumerOffsets does.
func (SchemaDecoder) TransactionState(key, value []byte) (TxnRecord, error) {
	if r, ok := typedTransactionState(key, value); ok {
		return r, nil
	}
	return genericTransactionState(key, value)
}

// genericTransactionState is TransactionState through DecodeInternal.
func genericTransactionState(key, value []byte) (TxnRecord, error) {
	d, err := schema.DecodeInternal(schema.TransactionState, key, value)
	if err != nil {
		return TxnRecord{}, err
	}
	r := TxnRecord{TransactionalID: str(d.Key, "transactionalId"), Tombstone: d.Tombstone()}
	v := d.Value
	if v == nil {
		r.Tombstone = true
		return r, nil
	}
	tv := &TxnMetadataValue{Version: d.ValueVersion, ProducerID: i64(v, "producerId", -1), PreviousProducerID: i64(v, "previousProducerId", -1),
		NextProducerID: i64(v, "nextProducerId", -1), ProducerEpoch: int16(i64(v, "producerEpoch", -1)), TimeoutMs: int32(i64(v, "transactionTimeoutMs", 0)),
		State: TxnState(i64(v, "transactionStatus", -1)), LastUpdateTimestamp: i64(v, "transactionLastUpdateTimestampMs", -1),
		StartTimestamp: i64(v, "transactionStartTimestampMs", -1)}
	for _, p := range v.Structs("transactionPartitions") {
		tv.Partitions = append(tv.Partitions, TopicPartitions{Topic: str(p, "topic"), Partitions: int32s(p, "partitionIds")})
	}
	r.Value = tv
	return r, nil
}
