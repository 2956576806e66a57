package mm2

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
)

// OffsetSync is one record of the offset-syncs topic (OffsetSync.java):
// the upstream offset of a record MirrorSourceTask copied, and the offset
// its copy got downstream. Topic and Partition are the upstream (source)
// partition's.
type OffsetSync struct {
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// Checkpoint is one record of a checkpoints topic (Checkpoint.java): a
// consumer group's committed upstream offset and its translation
// downstream. Topic is the remote (target) topic
// (MirrorCheckpointTask.renameTopicPartition).
type Checkpoint struct {
	Group            string
	Topic            string
	Partition        int32
	Version          int16 // the value header's version (0)
	UpstreamOffset   int64
	DownstreamOffset int64
	Metadata         string
}

// Heartbeat is one record of a heartbeats topic (Heartbeat.java).
type Heartbeat struct {
	SourceClusterAlias string
	TargetClusterAlias string
	Version            int16 // the value header's version (0)
	Timestamp          int64
}

// Record is one decoded record of an MM2 topic: exactly one of the typed
// pointers is set, for its Kind.
type Record struct {
	Kind       Kind
	OffsetSync *OffsetSync
	Checkpoint *Checkpoint
	Heartbeat  *Heartbeat
	Connect    *ConnectRecord

	// Tombstone: the value is null (the key is decoded; these topics are
	// compacted, and a null value deletes the key). MM2 itself writes
	// none to its own topics; Connect does to its configs and offsets.
	Tombstone bool
	// NewerVersion: a checkpoint or heartbeat whose header version is not
	// 0, read with the version-0 schema as Kafka does.
	NewerVersion bool
	// KeyTrailing and ValueTrailing count bytes after the last field,
	// which Schema.read ignores (Encode does not reproduce them).
	KeyTrailing, ValueTrailing int
}

// Decode decodes one record (key and value as stored; nil = null) of an
// MM2 topic of kind. Errors are *decode.CorruptError with the position
// within the key or value and Field naming it ("key.topic"), worded as
// Kafka's SchemaException (KafkaMessage).
func Decode(kind Kind, key, value []byte) (*Record, error) {
	r := &Record{Kind: kind}
	if kind.Connect() {
		c, err := decodeConnect(kind, key, value)
		r.Connect, r.Tombstone = c, value == nil
		return r, err
	}
	if kind == NotMM2 {
		return nil, fmt.Errorf("not an MM2 topic")
	}
	if key == nil {
		return r, &decode.CorruptError{BaseOffset: decode.NoBaseOffset, Field: "key",
			Err: fmt.Errorf("%w: record has no key", decode.ErrCorrupt)}
	}
	k := &reader{b: key, part: "key"}
	v := &reader{b: value, part: "value"}
	switch kind {
	case OffsetSyncs:
		s := &OffsetSync{Topic: k.string("topic"), Partition: k.int32("partition")}
		if value != nil {
			s.UpstreamOffset, s.DownstreamOffset = v.int64("upstreamOffset"), v.int64("offset")
		}
		r.OffsetSync = s
	case Checkpoints:
		c := &Checkpoint{Group: k.string("group"), Topic: k.string("topic"), Partition: k.int32("partition")}
		if value != nil {
			c.Version = v.int16("version")
			c.UpstreamOffset, c.DownstreamOffset, c.Metadata = v.int64("upstreamOffset"), v.int64("offset"), v.string("metadata")
			r.NewerVersion = c.Version != 0
		}
		r.Checkpoint = c
	case Heartbeats:
		h := &Heartbeat{SourceClusterAlias: k.string("sourceClusterAlias"), TargetClusterAlias: k.string("targetClusterAlias")}
		if value != nil {
			h.Version = v.int16("version")
			h.Timestamp = v.int64("timestamp")
			r.NewerVersion = h.Version != 0
		}
		r.Heartbeat = h
	}
	r.Tombstone = value == nil
	if err := k.errOrNil(); err != nil {
		return r, err
	}
	if err := v.errOrNil(); err != nil {
		return r, err
	}
	r.KeyTrailing = k.left()
	if value != nil {
		r.ValueTrailing = v.left()
	}
	return r, nil
}

// TypeName is the record's name: OffsetSync, Checkpoint, Heartbeat (the
// Java classes), or the Connect record's type.
func (r *Record) TypeName() string {
	switch {
	case r.OffsetSync != nil:
		return "OffsetSync"
	case r.Checkpoint != nil:
		return "Checkpoint"
	case r.Heartbeat != nil:
		return "Heartbeat"
	case r.Connect != nil:
		return r.Connect.Type
	}
	return ""
}

// ValueVersion is the value header's version, for the records that have
// one (Checkpoint, Heartbeat).
func (r *Record) ValueVersion() (int16, bool) {
	switch {
	case r.Tombstone:
		return 0, false
	case r.Checkpoint != nil:
		return r.Checkpoint.Version, true
	case r.Heartbeat != nil:
		return r.Heartbeat.Version, true
	}
	return 0, false
}

// Encode writes the record as the Java class serializes it
// (serializeKey, serializeValue), so that a decoded record can be checked
// byte for byte against its source; a tombstone's value is nil. Trailing
// bytes the reader ignored are not reproduced.
func (r *Record) Encode() (key, value []byte, err error) {
	str := func(b []byte, s string) []byte {
		if err != nil {
			return b
		}
		b, err = appendString(b, s)
		return b
	}
	i64 := func(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }
	switch {
	case r.Connect != nil:
		return r.Connect.encode()
	case r.OffsetSync != nil:
		s := r.OffsetSync
		key = binary.BigEndian.AppendUint32(str(nil, s.Topic), uint32(s.Partition))
		if !r.Tombstone {
			value = i64(i64(nil, s.UpstreamOffset), s.DownstreamOffset)
		}
	case r.Checkpoint != nil:
		c := r.Checkpoint
		key = binary.BigEndian.AppendUint32(str(str(nil, c.Group), c.Topic), uint32(c.Partition))
		if !r.Tombstone {
			value = binary.BigEndian.AppendUint16(nil, uint16(c.Version))
			value = str(i64(i64(value, c.UpstreamOffset), c.DownstreamOffset), c.Metadata)
		}
	case r.Heartbeat != nil:
		h := r.Heartbeat
		key = str(str(nil, h.SourceClusterAlias), h.TargetClusterAlias)
		if !r.Tombstone {
			value = i64(binary.BigEndian.AppendUint16(nil, uint16(h.Version)), h.Timestamp)
		}
	default:
		return nil, nil, fmt.Errorf("empty record")
	}
	if err != nil {
		return nil, nil, err
	}
	return key, value, nil
}

// AppendKeyJSON appends the key as a JSON object named by the schema's
// fields ({"topic":"orders","partition":0}), or for a Connect record its
// key: a JSON string, or the offsets topic's JSON key as stored.
func (r *Record) AppendKeyJSON(b []byte) []byte {
	j := jsonObject{b: b}
	switch {
	case r.Connect != nil:
		return r.Connect.appendKeyJSON(b)
	case r.OffsetSync != nil:
		j.str("topic", r.OffsetSync.Topic)
		j.int("partition", int64(r.OffsetSync.Partition))
	case r.Checkpoint != nil:
		j.str("group", r.Checkpoint.Group)
		j.str("topic", r.Checkpoint.Topic)
		j.int("partition", int64(r.Checkpoint.Partition))
	case r.Heartbeat != nil:
		j.str("sourceClusterAlias", r.Heartbeat.SourceClusterAlias)
		j.str("targetClusterAlias", r.Heartbeat.TargetClusterAlias)
	}
	return j.close()
}

// AppendValueJSON appends the value as a JSON object named by the
// schema's fields ({"upstreamOffset":10,"offset":7}), without the header's
// version; for a Connect record its JSON. A tombstone appends null.
func (r *Record) AppendValueJSON(b []byte) []byte {
	if r.Tombstone {
		return append(b, "null"...)
	}
	j := jsonObject{b: b}
	switch {
	case r.Connect != nil:
		return append(b, r.Connect.Value...)
	case r.OffsetSync != nil:
		j.int("upstreamOffset", r.OffsetSync.UpstreamOffset)
		j.int("offset", r.OffsetSync.DownstreamOffset)
	case r.Checkpoint != nil:
		j.int("upstreamOffset", r.Checkpoint.UpstreamOffset)
		j.int("offset", r.Checkpoint.DownstreamOffset)
		j.str("metadata", r.Checkpoint.Metadata)
	case r.Heartbeat != nil:
		j.int("timestamp", r.Heartbeat.Timestamp)
	}
	return j.close()
}

// jsonObject appends one flat JSON object; strings are rendered as Kafka
// holds them (a Java String decoded from UTF-8) and escaped as Jackson
// escapes them (schema.JSONString).
type jsonObject struct {
	b []byte
	n int
}

func (j *jsonObject) key(k string) {
	if j.n == 0 {
		j.b = append(j.b, '{')
	} else {
		j.b = append(j.b, ',')
	}
	j.n++
	j.b = append(append(append(j.b, '"'), k...), `":`...)
}

func (j *jsonObject) str(k, v string) { j.key(k); j.b = append(j.b, schema.JSONString(v)...) }
func (j *jsonObject) int(k string, v int64) {
	j.key(k)
	j.b = strconv.AppendInt(j.b, v, 10)
}

func (j *jsonObject) close() []byte {
	if j.n == 0 {
		return append(j.b, "{}"...)
	}
	return append(j.b, '}')
}
