package barrier

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/plural"
)

// Size is the size of the version-only barrier batch (barrier.md §4.4).
const Size = 75

// Attributes is the barrier's attribute word: isControl, nothing else
// (MemoryRecords.withMirrorPidResetRecord builds it like the KRaft control
// batches of MemoryRecords.createKraftControlRecordBuilder).
const Attributes = decode.AttrControl

// Spec is what varies between barriers. The leader assigns BaseOffset and
// PartitionLeaderEpoch on append (LogValidator); neither is covered by the
// CRC.
type Spec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	// Timestamp is the base and max timestamp, the leader's
	// time.milliseconds() in the prototype.
	Timestamp int64
	// SourceClusterID selects the MirrorPidResetRecord variant that carries
	// the source cluster id (aiven/kafka@cec72d23); nil writes the
	// version-only value 00 00 00 (showuon/kafka@053f9385).
	SourceClusterID *string
}

// Build encodes the barrier batch described by s.
func Build(s Spec) []byte {
	rec := decode.RecordSpec{
		OffsetDelta: 0,
		Timestamp:   s.Timestamp,
		Key:         decode.AppendControlKey(nil, decode.ControlMirrorPidReset),
		Value:       decode.AppendMirrorPidResetValue(nil, s.SourceClusterID),
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{
		BaseOffset:           s.BaseOffset,
		PartitionLeaderEpoch: s.PartitionLeaderEpoch,
		Compression:          decode.CompressionNone,
		Control:              true,
		ProducerID:           decode.NoProducerID,
		ProducerEpoch:        decode.NoProducerEpoch,
		BaseSequence:         decode.NoSequence,
	}, []decode.RecordSpec{rec})
	if err != nil {
		// Only an invalid compression id fails, and none is set.
		panic("barrier: " + err.Error())
	}
	return b
}

// firstRecord returns a copy of the key and value of b's first record, read
// as the broker reads a control batch's (decode.Decoder.FirstRecord).
func firstRecord(b *decode.Batch) (key, value []byte, ok bool, err error) {
	var d decode.Decoder
	d.MaxDecompressed = 1 << 20
	r, err := d.FirstRecord(b)
	if err != nil || r == nil {
		return nil, nil, false, err
	}
	key = append([]byte(nil), r.Key...)
	if r.Value != nil {
		value = append([]byte(nil), r.Value...)
	}
	return key, value, true, nil
}

// Is reports whether b is a MIRROR_PID_RESET batch the way the prototype's
// ControlRecordType.isMirrorPidResetBatch decides it: a control batch whose
// first record's key has type 7. It does not check the rest of the shape;
// ValidateBatch does.
func Is(b *decode.Batch) bool {
	if b == nil || b.RecordCount < 1 {
		return false
	}
	typ, ok := ControlTypeOf(b)
	return ok && typ == decode.ControlMirrorPidReset
}

// ControlTypeOf is the type of control batch b (ABORT, COMMIT,
// MIRROR_PID_RESET …), read from its first record's key as the broker
// reads a control batch (ControlRecordType.parse); ok is false for a batch
// that is not a control batch or whose key does not parse.
func ControlTypeOf(b *decode.Batch) (typ decode.ControlType, ok bool) {
	if !b.IsControl() {
		return 0, false
	}
	key, _, ok, err := firstRecord(b)
	if err != nil || !ok {
		return 0, false
	}
	_, typ, err = decode.ParseControlKey(key)
	return typ, err == nil
}

// Problem codes reported by ValidateBatch.
const (
	ProblemFraming        = "framing"         // the bytes are not one whole batch
	ProblemMagic          = "magic"           // not a v2 batch
	ProblemNotControl     = "not-control"     // isControl is false
	ProblemTransactional  = "transactional"   // isTransactional is true
	ProblemAttributes     = "attributes"      // other attribute bits set
	ProblemProducerID     = "has-producer-id" // producerId != -1
	ProblemProducerEpoch  = "producer-epoch"  // producerEpoch != -1
	ProblemBaseSequence   = "base-sequence"   // baseSequence != -1
	ProblemCompressed     = "compressed"      // a compression codec is set
	ProblemRecordCount    = "record-count"    // recordsCount != 1
	ProblemLastOffset     = "last-offset-delta"
	ProblemTimestamps     = "timestamps" // baseTimestamp != maxTimestamp
	ProblemCRC            = "crc"        // stored CRC != computed CRC-32C
	ProblemRecord         = "record"     // the record does not decode, or has deltas, attributes or headers
	ProblemKey            = "key"        // not version 0, type 7
	ProblemValue          = "value"      // not a MirrorPidResetRecord v0
	ProblemTrailingRecord = "extra-records"
)

// Problem is one way a batch deviates from a well-formed barrier.
type Problem struct {
	Code    string // one of the Problem* constants
	Field   string // the Kafka field concerned
	Message string
}

func (p Problem) String() string { return p.Code + ": " + p.Message }

// ValidateBatch checks raw (one whole batch, as on disk) against the barrier
// shape of barrier.md §4.3 and names every deviation. A nil result means a
// well-formed barrier. A LogAppendTime barrier (attribute bit 3, topics with
// message.timestamp.type=LogAppendTime) is well-formed.
func ValidateBatch(raw []byte) []Problem {
	var ps problems
	b, err := decode.ParseBatch(raw)
	if err != nil {
		ps.add(ProblemFraming, "batchLength", "%v", err)
		return ps
	}
	if int64(len(raw)) != b.Size() {
		ps.add(ProblemFraming, "batchLength", "%d bytes after the batch", int64(len(raw))-b.Size())
	}
	if b.IsLegacy() {
		ps.add(ProblemMagic, "magic", "magic %d, a barrier is a v2 batch", b.Magic)
		return ps
	}
	ps.header(&b)
	if b.RecordCount < 1 {
		return ps
	}
	var d decode.Decoder
	d.MaxDecompressed = 1 << 20
	n := 0
	err = d.Records(&b, func(r *decode.Record) error {
		if n++; n == 1 {
			ps.record(&b, r)
		}
		return nil
	})
	if err != nil {
		ps.add(ProblemRecord, "records", "%v", err)
	}
	if n > 1 {
		ps.add(ProblemTrailingRecord, "records", "%s, want 1", plural.N(n, "record"))
	}
	return ps
}

// problems collects ValidateBatch's findings.
type problems []Problem

func (ps *problems) add(code, field, format string, args ...any) {
	*ps = append(*ps, Problem{Code: code, Field: field, Message: fmt.Sprintf(format, args...)})
}

// header checks the v2 batch header of b: a control batch, not
// transactional, uncompressed, no producer, one record at offset delta 0,
// one timestamp, a valid CRC.
func (ps *problems) header(b *decode.Batch) {
	if !b.IsControl() {
		ps.add(ProblemNotControl, "attributes", "isControl is false (attributes 0x%04x)", uint16(b.Attributes))
	}
	if b.IsTransactional() {
		ps.add(ProblemTransactional, "attributes", "isTransactional is true (attributes 0x%04x)", uint16(b.Attributes))
	}
	if c := b.Compression(); c != decode.CompressionNone {
		ps.add(ProblemCompressed, "attributes", "compression %s, a barrier is uncompressed", c)
	}
	if extra := b.Attributes &^ (decode.AttrControl | decode.AttrTransactional | decode.AttrCompressionMask | decode.AttrTimestampType); extra != 0 {
		ps.add(ProblemAttributes, "attributes", "unexpected attribute bits 0x%04x", uint16(extra))
	}
	if b.ProducerID != decode.NoProducerID {
		ps.add(ProblemProducerID, "producerId", "producerId %d, want -1", b.ProducerID)
	}
	if b.ProducerEpoch != decode.NoProducerEpoch {
		ps.add(ProblemProducerEpoch, "producerEpoch", "producerEpoch %d, want -1", b.ProducerEpoch)
	}
	if b.BaseSequence != decode.NoSequence {
		ps.add(ProblemBaseSequence, "baseSequence", "baseSequence %d, want -1", b.BaseSequence)
	}
	if b.RecordCount != 1 {
		ps.add(ProblemRecordCount, "recordsCount", "recordsCount %d, want 1", b.RecordCount)
	}
	if b.LastOffsetDelta != 0 {
		ps.add(ProblemLastOffset, "lastOffsetDelta", "lastOffsetDelta %d, want 0", b.LastOffsetDelta)
	}
	if b.BaseTimestamp != b.MaxTimestamp && b.TimestampType() == decode.CreateTime {
		ps.add(ProblemTimestamps, "maxTimestamp", "baseTimestamp %d != maxTimestamp %d", b.BaseTimestamp, b.MaxTimestamp)
	}
	if !b.CRCValid() {
		ps.add(ProblemCRC, "crc", "stored 0x%08x, computed 0x%08x", b.CRC, b.ComputeCRC())
	}
}

// record checks the batch's one record r: no deltas, attributes or
// headers, the MIRROR_PID_RESET control key (version 0, type 7) and a
// MirrorPidResetRecord v0 value.
func (ps *problems) record(b *decode.Batch, r *decode.Record) {
	if r.OffsetDelta != 0 {
		ps.add(ProblemRecord, "offsetDelta", "record offsetDelta %d, want 0", r.OffsetDelta)
	}
	if r.Attributes != 0 {
		ps.add(ProblemRecord, "attributes", "record attributes 0x%02x, want 0", uint8(r.Attributes))
	}
	if b.TimestampType() == decode.CreateTime && r.Timestamp != b.BaseTimestamp {
		ps.add(ProblemRecord, "timestampDelta", "record timestamp %d, batch baseTimestamp %d", r.Timestamp, b.BaseTimestamp)
	}
	if len(r.Headers) != 0 {
		ps.add(ProblemRecord, "headers", "%d record headers, want none", len(r.Headers))
	}
	if r.Key == nil || len(r.Key) != 4 {
		ps.add(ProblemKey, "key", "control key of %d bytes, want 4", r.KeySize())
	} else if v, typ, kerr := decode.ParseControlKey(r.Key); kerr != nil {
		ps.add(ProblemKey, "key", "%v", kerr)
	} else if v != 0 || typ != decode.ControlMirrorPidReset {
		ps.add(ProblemKey, "key", "control key version %d type %d (%s), want version 0 type 7 (MIRROR_PID_RESET)", v, typ, typ)
	}
	if r.Value == nil {
		ps.add(ProblemValue, "value", "null value, want a MirrorPidResetRecord")
		return
	}
	c, verr := decode.ParseControl(decode.AppendControlKey(nil, decode.ControlMirrorPidReset), r.Value)
	switch {
	case verr != nil:
		ps.add(ProblemValue, "value", "MirrorPidResetRecord does not decode: %v", verr)
	case c.Version != 0:
		ps.add(ProblemValue, "value", "MirrorPidResetRecord version %d, want 0", c.Version)
	}
}

// BuildEndTxnMarker encodes a transaction marker batch the way
// MemoryRecords.withEndTransactionMarker does (formats.md §6.3): magic 2,
// attributes 0x30 (transactional, control), the producer's id and epoch,
// baseSequence -1, one record with key 00 00 00 0T (T = 0 abort, 1
// commit) and the EndTxnMarker v0 value (int16 0, int32 coordinatorEpoch).
// 78 bytes.
func BuildEndTxnMarker(baseOffset int64, partitionLeaderEpoch int32, timestamp, producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) []byte {
	t := decode.ControlAbort
	if commit {
		t = decode.ControlCommit
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: partitionLeaderEpoch,
		Transactional:        true,
		Control:              true,
		ProducerID:           producerID,
		ProducerEpoch:        producerEpoch,
		BaseSequence:         decode.NoSequence,
	}, []decode.RecordSpec{{
		Timestamp: timestamp,
		Key:       decode.AppendControlKey(nil, t),
		Value:     decode.AppendEndTxnMarkerValue(nil, coordinatorEpoch),
	}})
	if err != nil {
		panic("barrier: " + err.Error())
	}
	return b
}
