package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/kseg/kseg/decode"
)

// The internal topics kseg decodes.
const (
	ConsumerOffsets    = "__consumer_offsets"
	TransactionState   = "__transaction_state"
	ShareGroupState    = "__share_group_state"
	ClusterMetadata    = "__cluster_metadata"
	RemoteLogMetadata  = "__remote_log_metadata"
	consumerProtocol   = "consumer-protocol"
	consumerProtocolID = "consumer" // ConsumerProtocol.PROTOCOL_TYPE
)

// TopicOf returns the internal topic a partition directory belongs to
// ("__consumer_offsets-7" → "__consumer_offsets"), or "" for any other
// topic. The directory name is <topic>-<partition> (UnifiedLog.parseTopicPartitionName).
func TopicOf(dir string) string {
	i := strings.LastIndexByte(dir, '-')
	if i <= 0 {
		return ""
	}
	t := dir[:i]
	if IsInternal(t) {
		return t
	}
	return ""
}

// IsInternal reports whether kseg decodes the records of topic.
func IsInternal(topic string) bool {
	switch topic {
	case ConsumerOffsets, TransactionState, ShareGroupState, ClusterMetadata, RemoteLogMetadata:
		return true
	}
	return false
}

// Coordinator reports whether topic uses the coordinator framing (int16
// record type key, int16 version value).
func Coordinator(topic string) bool {
	return topic == ConsumerOffsets || topic == TransactionState || topic == ShareGroupState
}

// Decoded is one decoded record of an internal topic.
type Decoded struct {
	Topic string

	// RecordType is the coordinator record type (the key's int16 prefix)
	// or the metadata record's apiKey.
	RecordType int16
	// KeyMessage, KeyVersion and Key: the coordinator key, read at
	// KeyVersion (= RecordType, as CoordinatorRecordSerde reads it). Nil
	// for metadata topics, which have no key.
	KeyMessage *Message
	KeyVersion int16
	Key        *Struct

	// FrameVersion is the metadata framing's frame version (1).
	FrameVersion int16
	// ValueMessage, ValueVersion and Value: the value. Value is nil for a
	// tombstone (a coordinator record with a null value).
	ValueMessage *Message
	ValueVersion int16
	Value        *Struct

	// Unknown: the record type is not in the table; Key/Value are nil.
	Unknown bool
	// NewerVersion: a version above the schema's validVersions, read with
	// the newest layout as Kafka's generated readers do.
	NewerVersion bool
	// KeyTrailing/ValueTrailing count bytes after a coordinator message,
	// which CoordinatorRecordSerde ignores.
	KeyTrailing, ValueTrailing int
}

// Tombstone reports a coordinator record with a null value.
func (d *Decoded) Tombstone() bool { return d.KeyMessage != nil && d.Value == nil && !d.Unknown }

// TypeName is the record's name as kafka-dump-log shows it: the
// MetadataRecordType name for metadata records (TOPIC_RECORD), else the
// key message's name without "Key" (OffsetCommit, GroupMetadata …).
func (d *Decoded) TypeName() string {
	switch {
	case d.Unknown:
		return fmt.Sprintf("UNKNOWN(%d)", d.RecordType)
	case d.KeyMessage != nil:
		return strings.TrimSuffix(d.KeyMessage.Name, "Key")
	case d.ValueMessage != nil:
		return RecordTypeName(d.ValueMessage)
	}
	return ""
}

// field prefixes a CorruptError's field with the part it came from and
// rewords its Kafka message with kafka (which gets the inner message as
// its %s), as the serde that wraps the generated reader does.
func field(err *decode.CorruptError, part, kafka string) *decode.CorruptError {
	c := *err
	c.Field = join(part, c.Field)
	inner, _ := decode.KafkaMessage(err)
	if kafka != "" {
		var re *decode.KafkaError
		if errors.As(err.Err, &re) {
			w := *re
			w.Message = fmt.Sprintf(kafka, inner)
			c.Err = &w
		}
	}
	return &c
}

func corrupt(part string, pos int, class error, kafka, format string, args ...any) *decode.CorruptError {
	return &decode.CorruptError{Pos: int64(pos), BaseOffset: decode.NoBaseOffset, Field: part,
		Err: &decode.KafkaError{Class: class, Detail: fmt.Sprintf(format, args...), Message: kafka}}
}

// coordinatorReadError is CoordinatorRecordSerde.readMessage's wording.
func coordinatorReadError(version int16, part string) string {
	return fmt.Sprintf("Could not read record with version %d from %s's buffer due to: %%s.", version, part)
}

// DecodeInternal decodes one record (key and value as stored; nil = null)
// of an internal topic. An unknown record type is not an error: the result
// has Unknown set. Errors are *decode.CorruptError with the position within
// the key or value and Field naming it ("key", "value.members[0].clientId").
func DecodeInternal(topic string, key, value []byte) (*Decoded, error) {
	d := &Decoded{Topic: topic}
	if Coordinator(topic) {
		return d, d.coordinator(key, value)
	}
	if topic == ClusterMetadata || topic == RemoteLogMetadata {
		return d, d.apiMessage(value)
	}
	return nil, fmt.Errorf("%s is not an internal topic kseg decodes", topic)
}

// coordinator reads CoordinatorRecordSerde's framing.
func (d *Decoded) coordinator(key, value []byte) error {
	if key == nil {
		return corrupt("key", 0, decode.ErrCorrupt, "", "record has no key")
	}
	if len(key) < 2 {
		return corrupt("key", 0, decode.ErrTruncated, "Could not read version from key's buffer.", "could not read the record type from %d byte(s)", len(key))
	}
	d.RecordType = int16(binary.BigEndian.Uint16(key))
	d.KeyVersion = d.RecordType
	d.KeyMessage = KeyFor(d.Topic, d.RecordType)
	if d.KeyMessage == nil {
		d.Unknown = true
		return nil
	}
	kv := d.KeyVersion
	if d.KeyMessage.Type == "coordinator-key" {
		kv = 0
	}
	k, n, err := decodeMessage(d.KeyMessage, kv, key[2:])
	if err != nil {
		return field(err.At("", 2), "key", coordinatorReadError(kv, "key"))
	}
	d.Key, d.KeyTrailing = k, len(key)-2-n
	d.ValueMessage = ValueFor(d.KeyMessage)
	if value == nil {
		return nil
	}
	if d.ValueMessage == nil {
		d.Unknown = true
		return nil
	}
	if len(value) < 2 {
		return corrupt("value", 0, decode.ErrTruncated, "Could not read version from value's buffer.", "could not read the version from %d byte(s)", len(value))
	}
	d.ValueVersion = int16(binary.BigEndian.Uint16(value))
	if d.ValueVersion < 0 {
		return corrupt("value", 0, decode.ErrCorrupt, UnknownRecordVersion(d.ValueVersion, d.RecordType),
			"negative value version %d", d.ValueVersion)
	}
	d.NewerVersion = d.ValueVersion > d.ValueMessage.Valid.Hi
	v, n, err := decodeMessage(d.ValueMessage, d.ValueVersion, value[2:])
	if err != nil {
		return field(err.At("", 2), "value", coordinatorReadError(d.ValueVersion, "value"))
	}
	d.Value, d.ValueTrailing = v, len(value)-2-n
	if d.ValueMessage.Name == "GroupMetadataValue" {
		expandConsumerProtocol(d.Value)
	}
	return nil
}

// apiMessage reads AbstractApiMessageSerde's framing: uvarint frame
// version (1), uvarint apiKey, uvarint version, the message, and nothing
// after it.
func (d *Decoded) apiMessage(value []byte) error {
	if value == nil {
		return corrupt("value", 0, decode.ErrCorrupt, "", "record has no value")
	}
	r := &reader{b: value}
	fv := r.uvarint("frameVersion")
	ak := r.uvarint("apiKey")
	ver := r.uvarint("version")
	if r.err != nil {
		return field(r.err, "value", "")
	}
	// AbstractApiMessageSerde.read's checks and messages.
	switch {
	case fv == 0:
		return corrupt("value.frameVersion", 0, decode.ErrUnsupported,
			"Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
			"frame version 0 (KRaft 2.8 preview) is not supported")
	case fv != 1:
		return corrupt("value.frameVersion", 0, decode.ErrUnsupported,
			fmt.Sprintf("Could not deserialize metadata record due to unknown frame version %d(only frame version 1 is supported)", fv),
			"unknown frame version %d (only frame version 1 is supported)", fv)
	case ak > 0x7fff || ver > 0x7fff:
		return corrupt("value.apiKey", 1, decode.ErrCorrupt, "", "apiKey %d or version %d out of range", ak, ver)
	}
	d.FrameVersion, d.RecordType, d.ValueVersion = int16(fv), int16(ak), int16(ver)
	d.ValueMessage = RecordFor(d.Topic, d.RecordType)
	if d.ValueMessage == nil {
		d.Unknown = true
		return nil
	}
	d.NewerVersion = d.ValueVersion > d.ValueMessage.Valid.Hi
	start := r.p
	v, n, err := decodeMessage(d.ValueMessage, d.ValueVersion, value[start:])
	if err != nil {
		return field(err.At("", int64(start)), "value", fmt.Sprintf("Failed to deserialize record with type %d", ak)+"%.0s")
	}
	if left := len(value) - start - n; left > 0 {
		return corrupt("value", start+n, decode.ErrCorrupt, fmt.Sprintf("Found %d byte(s) of garbage after %d", left, ak),
			"%d byte(s) after the %s", left, d.ValueMessage.Name)
	}
	d.Value = v
	return nil
}

// expandConsumerProtocol decodes the subscription and assignment bytes of
// each member of a group whose protocolType is "consumer", as
// kafka-dump-log's OffsetsMessageParser.prepareGroupMetadataValue does:
// int16 version, then ConsumerProtocolSubscription/Assignment at that
// version; bytes that do not parse stay bytes.
func expandConsumerProtocol(v *Struct) {
	if pt, _ := v.String("protocolType"); pt != consumerProtocolID {
		return
	}
	for _, m := range v.Structs("members") {
		for i := range m.Fields {
			fv := &m.Fields[i]
			var msg *Message
			switch fv.Field.Name {
			case "subscription":
				msg = Lookup("ConsumerProtocolSubscription")
			case "assignment":
				msg = Lookup("ConsumerProtocolAssignment")
			default:
				continue
			}
			raw, ok := fv.Value.([]byte)
			if !ok || msg == nil || len(raw) < 2 {
				continue
			}
			ver := int16(binary.BigEndian.Uint16(raw))
			if ver < 0 {
				continue
			}
			s, n, err := decodeMessage(msg, ver, raw[2:])
			if err != nil {
				continue
			}
			fv.Value = &Embedded{Raw: raw, Message: msg, Version: ver, Struct: s, Used: n}
		}
	}
}

// Encode re-encodes the record's key and value with the same framing, so
// that a decoded record can be checked byte for byte against its source.
// Trailing bytes a coordinator message ignored are not reproduced.
func (d *Decoded) Encode() (key, value []byte, err error) {
	if d.Unknown {
		return nil, nil, fmt.Errorf("record type %d is unknown", d.RecordType)
	}
	if d.KeyMessage != nil {
		key = binary.BigEndian.AppendUint16(nil, uint16(d.RecordType))
		kb, err := Encode(d.KeyMessage, d.Key)
		if err != nil {
			return nil, nil, err
		}
		key = append(key, kb...)
		if d.Value == nil {
			return key, nil, nil
		}
		value = binary.BigEndian.AppendUint16(nil, uint16(d.ValueVersion))
	} else {
		value = binary.AppendUvarint(nil, uint64(d.FrameVersion))
		value = binary.AppendUvarint(value, uint64(d.RecordType))
		value = binary.AppendUvarint(value, uint64(d.ValueVersion))
	}
	vb, err := Encode(d.ValueMessage, d.Value)
	if err != nil {
		return nil, nil, err
	}
	return key, append(value, vb...), nil
}

// UnknownRecordVersion is the message of Kafka's
// Deserializer.UnknownRecordVersionException, which CoordinatorRecordSerde
// (Kafka 4.2+) throws for a value version outside the value schema's
// validVersions instead of reading it.
func UnknownRecordVersion(version, recordType int16) string {
	return fmt.Sprintf("Found an unknown record version %d for %d type", version, recordType)
}

// TransactionStateName is the name Kafka gives a TransactionLogValue
// transactionStatus byte (TransactionState: Empty, Ongoing, PrepareCommit,
// PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence).
func TransactionStateName(s int64) string {
	names := []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
		"CompleteAbort", "Dead", "PrepareEpochFence"}
	if s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("Unknown(%d)", s)
}
