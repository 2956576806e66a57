package decode

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Header is one record header. Key and Value alias the decoder's buffers.
type Header struct {
	Key   []byte
	Value []byte // nil = null
}

// Record is one record of a batch (DefaultRecord for v2, an inner or shallow
// LegacyRecord for v0/v1). Byte slices alias the decoder's buffers and are
// valid only during the callback.
type Record struct {
	Offset      int64
	Timestamp   int64 // LogAppendTime batches report maxTimestamp
	Sequence    int32 // -1 when the batch has no baseSequence, and for legacy
	Attributes  int8
	Key         []byte // nil = null
	Value       []byte // nil = null
	Headers     []Header
	OffsetDelta int32

	// Legacy inner/shallow message fields (kafka-dump-log prints them).
	Magic    int8
	CRC      uint32
	CRCValid bool
}

// KeySize is the key length kafka-dump-log prints: -1 for null.
func (r *Record) KeySize() int {
	if r.Key == nil {
		return -1
	}
	return len(r.Key)
}

// ValueSize is the value length: -1 for null.
func (r *Record) ValueSize() int {
	if r.Value == nil {
		return -1
	}
	return len(r.Value)
}

// Decoder iterates records. It keeps its decompression buffers and codec
// state between batches so that decoding a segment does not allocate per
// batch or per record. The zero value is ready; it is not safe for
// concurrent use.
type Decoder struct {
	// MaxDecompressed caps one batch's decompressed payload;
	// 0 means DefaultMaxDecompressed.
	MaxDecompressed int
	// Budget, when set, bounds what this decoder and the others sharing
	// it hold of decompressed bytes at once (see Budget).
	Budget *Budget
	held   int64 // bytes of Budget held

	codecs  Codecs
	buf     []byte
	headers []Header
	inner   []byte
	// rec is the record handed to the callback: a field, not a local,
	// because a pointer passed to a func value escapes, and a local would
	// then be allocated per batch.
	rec Record
}

func (d *Decoder) max() int {
	if d.MaxDecompressed > 0 {
		return d.MaxDecompressed
	}
	return DefaultMaxDecompressed
}

// Records calls fn for every record of b in order. Positions in errors are
// relative to b.Raw. For a compressed batch a failure inside the
// decompressed stream is reported at the start of the records section with
// the record index in the message, since there is no file position for a
// byte that exists only after decompression.
func (d *Decoder) Records(b *Batch, fn func(*Record) error) error {
	if b.IsLegacy() {
		return d.legacyRecords(b, fn)
	}
	if b.RecordCount < 0 {
		return corruptf(recordsCountOffset, b.BaseOffset, "recordsCount", ErrCorrupt,
			"found invalid record count %d in magic v2 batch", b.RecordCount)
	}
	// DefaultRecordBatch.iterator: an empty batch (compaction) is never
	// decompressed.
	if b.RecordCount == 0 {
		return nil
	}
	data := b.Raw[RecordBatchOverhead:]
	compressed := b.Compression() != CompressionNone
	if compressed {
		var err error
		d.buf, err = d.decompress(d.buf[:0], b.Compression(), b.Magic, data)
		if err != nil {
			if ce, ok := AsCorrupt(err); ok {
				ce = ce.At("", RecordBatchOverhead)
				ce.BaseOffset = b.BaseOffset
				if ce.Field == "" {
					ce.Field = "records"
				}
				return ce
			}
			return &CorruptError{Pos: RecordBatchOverhead, BaseOffset: b.BaseOffset, Field: "records",
				Err: fmt.Errorf("%s: %w", b.Compression(), err)}
		}
		data = d.buf
	}
	// A v2 record takes at least 7 bytes (length, attributes, timestampDelta,
	// offsetDelta, keyLength, valueLength, headersCount), so a count above
	// len/7 cannot be honest; check before trusting it.
	if int64(b.RecordCount) > int64(len(data))/7+1 {
		return corruptf(recordsCountOffset, b.BaseOffset, "recordsCount", ErrCorrupt,
			"record count %d cannot fit in %d bytes of records", b.RecordCount, len(data))
	}
	var logAppendTime int64
	isLAT := b.TimestampType() == LogAppendTime
	if isLAT {
		logAppendTime = b.MaxTimestamp
	}
	rec := &d.rec
	*rec = Record{}
	// Positions are batch positions for an uncompressed batch, and
	// decompressed bytes (reported at the records section) otherwise.
	c := NewCursor(data, RecordBatchOverhead)
	if compressed {
		c = NewCursor(data, 0)
	}
	for i := int32(0); i < b.RecordCount; i++ {
		start := c.Pos()
		if err := d.readRecord(&c, b, rec); err != nil {
			return recordErr(err, b, compressed, i, start)
		}
		if isLAT {
			rec.Timestamp = logAppendTime
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if c.Len() != 0 {
		return trailingErr(&c, b, compressed)
	}
	return nil
}

// recordErr places the failure of record i (which starts at start) in the
// batch: a compressed batch's failure is reported at the start of its
// records section, with the decompressed byte in the message, since such a
// byte has no file position.
func recordErr(err *CorruptError, b *Batch, compressed bool, i int32, start int64) *CorruptError {
	if compressed {
		err.Pos = RecordBatchOverhead
		err.Err = fmt.Errorf("record %d at decompressed byte %d: %w", i, start, err.Err)
	}
	err.BaseOffset = b.BaseOffset
	return err
}

// trailingErr reports bytes left after the declared records
// (RecordIterator / StreamRecordIterator.ensureNoneRemaining).
func trailingErr(c *Cursor, b *Batch, compressed bool) *CorruptError {
	pos := c.Pos()
	if compressed {
		pos = RecordBatchOverhead
	}
	return corruptf(pos, b.BaseOffset, "records", ErrCorrupt,
		"incorrect declared batch size, %d bytes remaining after %d records", c.Len(), b.RecordCount)
}

// FirstRecord decodes the first record of b as RecordBatch.iterator().next()
// does: what the broker reads of a control batch in
// ProducerAppendInfo.append (the transaction marker) and what the KIP-1279
// prototype's ControlRecordType.isMirrorPidResetBatch reads. The record is
// checked as DefaultRecord.readFrom checks it, and when the batch declares a
// single record no byte may follow it (RecordIterator.ensureNoneRemaining).
// Only that record is read, so a batch whose recordsCount overstates what
// follows still yields it, as Kafka's iterator does; a compressed batch (no
// broker writes a compressed control batch) is decoded whole, as
// DefaultRecordBatch.iterator() decompresses eagerly.
//
// It returns nil and no error for a batch without records (Kafka's empty
// iterator). The record is d's: valid until d's next use. Errors are
// *CorruptError values with positions relative to b.Raw, exactly those
// Records reports for the same bytes. An uncompressed batch costs no
// allocation.
func (d *Decoder) FirstRecord(b *Batch) (*Record, error) {
	if b.IsLegacy() || b.Compression() != CompressionNone {
		return d.firstOfAll(b)
	}
	if b.RecordCount < 0 {
		return nil, corruptf(recordsCountOffset, b.BaseOffset, "recordsCount", ErrCorrupt,
			"found invalid record count %d in magic v2 batch", b.RecordCount)
	}
	if b.RecordCount == 0 {
		return nil, nil
	}
	rec := &d.rec
	*rec = Record{}
	c := NewCursor(b.Raw[RecordBatchOverhead:], RecordBatchOverhead)
	start := c.Pos()
	if err := d.readRecord(&c, b, rec); err != nil {
		return nil, recordErr(err, b, false, 0, start)
	}
	if b.TimestampType() == LogAppendTime {
		rec.Timestamp = b.MaxTimestamp
	}
	if b.RecordCount == 1 && c.Len() != 0 {
		return nil, trailingErr(&c, b, false)
	}
	return rec, nil
}

// firstOfAll decodes every record of b through Records and returns the
// first, with its headers copied (later records reuse the header buffer).
func (d *Decoder) firstOfAll(b *Batch) (*Record, error) {
	var first Record
	found := false
	err := d.Records(b, func(r *Record) error {
		if !found {
			first, found = *r, true
			first.Headers = append([]Header(nil), r.Headers...)
		}
		return nil
	})
	if err != nil || !found {
		return nil, err
	}
	d.rec = first
	return &d.rec, nil
}

// readRecord decodes the DefaultRecord at c (DefaultRecord.readFrom) into
// rec. Errors carry c's positions.
func (d *Decoder) readRecord(c *Cursor, b *Batch, rec *Record) *CorruptError {
	start := c.Pos()
	length := c.Varint("length")
	if c.err != nil {
		return c.err
	}
	if length < 0 || int64(length) > int64(c.Len()) {
		return corruptf(start, NoBaseOffset, "length", ErrCorrupt,
			"record length %d exceeds the %d bytes left", length, c.Len())
	}
	bodyStart := c.Pos()
	body := c.Sub(int(length), "length")
	if body.Len() == 0 {
		return corruptf(body.Pos(), NoBaseOffset, "attributes", ErrTruncated, "record body is empty")
	}
	rec.Attributes = body.Int8("attributes")
	tsDelta := body.Varlong("timestampDelta")
	offDelta := body.Varint("offsetDelta")
	rec.Key = body.VarBytes("keyLength")
	rec.Value = body.VarBytes("valueLength")
	if body.err != nil {
		return body.err
	}
	rec.OffsetDelta = offDelta
	rec.Offset = b.BaseOffset + int64(offDelta)
	rec.Timestamp = b.BaseTimestamp + tsDelta
	rec.Sequence = NoSequence
	if b.BaseSequence >= 0 {
		rec.Sequence = IncrementSequence(b.BaseSequence, offDelta)
	}
	hcPos := body.Pos()
	hc := body.Varint("headersCount")
	if body.err != nil {
		return body.err
	}
	// Each header needs at least two bytes (key length, value length).
	if hc < 0 || int64(hc) > int64(body.Len())/2 {
		return corruptf(hcPos, NoBaseOffset, "headersCount", ErrCorrupt,
			"invalid header count %d with %d bytes left", hc, body.Len())
	}
	d.headers = d.headers[:0]
	for h := int32(0); h < hc; h++ {
		kp := body.Pos()
		kl := body.Varint("headerKeyLength")
		if body.err != nil {
			return body.err
		}
		if kl < 0 {
			return corruptf(kp, NoBaseOffset, "headerKeyLength", ErrCorrupt, "invalid negative header key size %d", kl)
		}
		if int64(kl) > int64(body.Len()) {
			return corruptf(kp, NoBaseOffset, "headerKeyLength", ErrCorrupt, "header key length %d exceeds the %d bytes left", kl, body.Len())
		}
		key := body.Bytes(int(kl), "headerKey")
		val := body.VarBytes("headerValueLength")
		if body.err != nil {
			return body.err
		}
		d.headers = append(d.headers, Header{Key: key, Value: val})
	}
	rec.Headers = d.headers
	if body.Len() != 0 {
		// DefaultRecord.readFrom: "Invalid record size: expected to read N
		// bytes in record payload, but instead read M".
		return corruptf(start, NoBaseOffset, "length", ErrCorrupt,
			"invalid record size: expected to read %d bytes in record payload, but instead read %d", length, body.Pos()-bodyStart)
	}
	rec.Magic = 2
	rec.CRC = 0
	rec.CRCValid = true
	return nil
}

// legacyRecords yields the one record of an uncompressed legacy message, or
// the inner messages of a compressed wrapper
// (AbstractLegacyRecordBatch.DeepRecordsIterator).
func (d *Decoder) legacyRecords(b *Batch, fn func(*Record) error) error {
	key, value, err := b.legacyKeyValue()
	if err != nil {
		return err
	}
	rec := &d.rec
	if b.Compression() == CompressionNone {
		*rec = Record{Offset: b.BaseOffset, Timestamp: b.MaxTimestamp, Sequence: NoSequence,
			Attributes: int8(b.Attributes), Key: key, Value: value, Magic: b.Magic, CRC: b.CRC, CRCValid: b.CRCValid()}
		return fn(rec)
	}
	valuePos := int64(len(b.Raw) - len(value))
	if value == nil {
		return corruptf(valuePos, b.BaseOffset, "value", ErrCorrupt, "compressed wrapper message has a null value")
	}
	if b.Compression() == CompressionZstd {
		return corruptf(17, b.BaseOffset, "attributes", ErrUnsupported, "zstd is not allowed in magic %d messages", b.Magic)
	}
	d.inner, err = d.decompress(d.inner[:0], b.Compression(), b.Magic, value)
	if err != nil {
		return &CorruptError{Pos: valuePos, BaseOffset: b.BaseOffset, Field: "value",
			Err: fmt.Errorf("%s: %w", b.Compression(), err)}
	}
	inner := d.inner
	absBase, err := legacyAbsoluteBase(b, inner, valuePos)
	if err != nil {
		return err
	}
	for p := 0; p < len(inner); {
		size := int32(binary.BigEndian.Uint32(inner[p+8:]))
		ib, err := ParseBatch(inner[p : p+LogOverhead+int(size)])
		if err != nil {
			ce, _ := AsCorrupt(err)
			return &CorruptError{Pos: valuePos, BaseOffset: b.BaseOffset, Field: "value",
				Err: fmt.Errorf("inner message at decompressed byte %d: %w", p, ce)}
		}
		p += LogOverhead + int(size)
		if !ib.IsLegacy() || ib.Compression() != CompressionNone {
			return corruptf(valuePos, b.BaseOffset, "value", ErrCorrupt, "inner messages must not be compressed (or v2)")
		}
		k, v, err := ib.legacyKeyValue()
		if err != nil {
			return err
		}
		off := ib.BaseOffset
		if b.Magic == 1 {
			off += absBase
		}
		ts := ib.MaxTimestamp
		if b.Magic == 1 && b.TimestampType() == LogAppendTime {
			ts = b.MaxTimestamp
		}
		*rec = Record{Offset: off, Timestamp: ts, Sequence: NoSequence, Attributes: int8(ib.Attributes),
			Key: k, Value: v, Magic: ib.Magic, CRC: ib.CRC,
			CRCValid: crc32.ChecksumIEEE(ib.Raw[LogOverhead+4:]) == ib.CRC}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// legacyAbsoluteBase frames the decompressed inner message set once,
// checking every inner size, and returns the base that magic-1 relative
// inner offsets are added to: wrapperOffset - lastInnerOffset, as
// DeepRecordsIterator computes absoluteBaseOffset (0 for magic 0, whose
// inner offsets are absolute, and for a wrapper offset of 0, which "certain
// versions of librdkafka" produce).
func legacyAbsoluteBase(b *Batch, inner []byte, valuePos int64) (int64, error) {
	var lastInner int64
	count := 0
	for p := 0; p < len(inner); {
		if len(inner)-p < LogOverhead {
			return 0, corruptf(valuePos, b.BaseOffset, "value", ErrCorrupt, "inner message set has %d trailing bytes at decompressed byte %d", len(inner)-p, p)
		}
		size := int32(binary.BigEndian.Uint32(inner[p+8:]))
		if size < MinLegacyRecordSize || int64(size) > int64(len(inner)-p-LogOverhead) {
			return 0, corruptf(valuePos, b.BaseOffset, "value", ErrCorrupt, "inner message at decompressed byte %d has invalid size %d", p, size)
		}
		lastInner = int64(binary.BigEndian.Uint64(inner[p:]))
		p += LogOverhead + int(size)
		count++
	}
	if count == 0 {
		return 0, corruptf(valuePos, b.BaseOffset, "value", ErrCorrupt, "found invalid compressed record set with no inner records")
	}
	if b.Magic != 1 || b.BaseOffset == 0 {
		return 0, nil
	}
	if b.BaseOffset < lastInner {
		return 0, corruptf(0, b.BaseOffset, "offset", ErrCorrupt,
			"found invalid wrapper offset %d below the last inner offset %d", b.BaseOffset, lastInner)
	}
	return b.BaseOffset - lastInner, nil
}

// AppendVarint appends a zig-zag varint (ByteUtils.writeVarint).
func AppendVarint(dst []byte, v int32) []byte {
	return binary.AppendUvarint(dst, uint64(uint32((v<<1)^(v>>31))))
}

// AppendVarlong appends a zig-zag varlong (ByteUtils.writeVarlong).
func AppendVarlong(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, uint64((v<<1)^(v>>63)))
}
