package decode

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// BatchSpec describes a v2 record batch to encode. It mirrors what
// MemoryRecordsBuilder writes: baseTimestamp is the first record's
// timestamp (or the delete horizon), maxTimestamp the largest record
// timestamp (or the append time for LogAppendTime), lastOffsetDelta the last
// record's offset delta unless overridden (compaction keeps it).
type BatchSpec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Compression          Compression
	LogAppendTime        bool
	Transactional        bool
	Control              bool
	DeleteHorizonMs      *int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	// MaxTimestamp overrides the computed maxTimestamp when non-nil (the
	// append time of a LogAppendTime batch, or the value an empty batch
	// keeps).
	MaxTimestamp *int64
	// LastOffsetDelta overrides the computed delta when non-nil (compacted
	// batches keep the original one).
	LastOffsetDelta *int32
	// BaseTimestamp overrides the computed base timestamp when non-nil
	// (empty batches carry -1).
	BaseTimestamp *int64
}

// RecordSpec is one record to encode. OffsetDelta and Timestamp are
// absolute/relative as in Kafka: OffsetDelta relative to the batch's
// baseOffset; Timestamp absolute.
type RecordSpec struct {
	OffsetDelta int32
	Timestamp   int64
	Key         []byte // nil = null
	Value       []byte // nil = null
	Headers     []Header
}

// AppendRecord appends one DefaultRecord body with its length prefix.
func AppendRecord(dst []byte, baseTimestamp int64, r RecordSpec) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = AppendVarlong(body, r.Timestamp-baseTimestamp)
	body = AppendVarint(body, r.OffsetDelta)
	body = appendVarBytes(body, r.Key)
	body = appendVarBytes(body, r.Value)
	body = AppendVarint(body, int32(len(r.Headers)))
	for _, h := range r.Headers {
		body = AppendVarint(body, int32(len(h.Key)))
		body = append(body, h.Key...)
		body = appendVarBytes(body, h.Value)
	}
	dst = AppendVarint(dst, int32(len(body)))
	return append(dst, body...)
}

func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return AppendVarint(dst, -1)
	}
	dst = AppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}

// AppendBatch encodes a v2 record batch with its CRC. An empty records list
// produces the 61-byte empty batch compaction leaves behind
// (DefaultRecordBatch.writeEmptyHeader) when LastOffsetDelta is set.
func AppendBatch(dst []byte, s BatchSpec, records []RecordSpec) ([]byte, error) {
	var c Codecs
	return c.AppendBatch(dst, s, records)
}

// AppendBatch is the package-level AppendBatch reusing c's compressors.
func (c *Codecs) AppendBatch(dst []byte, s BatchSpec, records []RecordSpec) ([]byte, error) {
	if !s.Compression.Valid() {
		return dst, errors.New("invalid compression")
	}
	baseTs, maxTs := int64(NoTimestamp), int64(NoTimestamp)
	if len(records) > 0 {
		baseTs = records[0].Timestamp
	}
	for _, r := range records {
		if r.Timestamp > maxTs {
			maxTs = r.Timestamp
		}
	}
	if s.DeleteHorizonMs != nil {
		baseTs = *s.DeleteHorizonMs
	}
	if s.BaseTimestamp != nil {
		baseTs = *s.BaseTimestamp
	}
	if s.MaxTimestamp != nil {
		maxTs = *s.MaxTimestamp
	}
	var lastDelta int32
	if len(records) > 0 {
		lastDelta = records[len(records)-1].OffsetDelta
	}
	if s.LastOffsetDelta != nil {
		lastDelta = *s.LastOffsetDelta
	}
	attrs := int16(s.Compression)
	if s.LogAppendTime {
		attrs |= AttrTimestampType
	}
	if s.Transactional {
		attrs |= AttrTransactional
	}
	if s.Control {
		attrs |= AttrControl
	}
	if s.DeleteHorizonMs != nil {
		attrs |= AttrDeleteHorizon
	}
	var recs []byte
	for _, r := range records {
		recs = AppendRecord(recs, baseTs, r)
	}
	if s.Compression != CompressionNone && len(records) > 0 {
		var err error
		recs, err = c.Compress(nil, s.Compression, 2, recs)
		if err != nil {
			return dst, err
		}
	} else if len(records) == 0 {
		attrs &^= AttrCompressionMask
	}
	start := len(dst)
	hdr := Batch{BaseOffset: s.BaseOffset, BatchLength: int32(RecordBatchOverhead - LogOverhead + len(recs)),
		PartitionLeaderEpoch: s.PartitionLeaderEpoch, Magic: 2, LastOffsetDelta: lastDelta, BaseTimestamp: baseTs,
		MaxTimestamp: maxTs, ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, BaseSequence: s.BaseSequence,
		RecordCount: int32(len(records))}
	dst = hdr.AppendHeader(dst, uint16(attrs))
	dst = append(dst, recs...)
	binary.BigEndian.PutUint32(dst[start+crcOffset:], CRC32C(dst[start+attributesOffset:]))
	return dst, nil
}

// LegacySpec describes a v0/v1 message (LegacyRecord). For a compressed
// wrapper, Inner holds the inner messages and Key/Value are ignored.
type LegacySpec struct {
	Offset        int64 // the entry offset (last inner offset for a wrapper)
	Magic         int8
	Compression   Compression
	LogAppendTime bool
	Timestamp     int64 // v1 only
	Key, Value    []byte
	Inner         []LegacySpec // inner messages, offsets as stored (absolute v0, relative v1)
}

// AppendLegacy encodes a legacy message (or compressed wrapper) with its
// CRC-32, as MemoryRecordsBuilder.appendLegacyRecord and
// writeLegacyCompressedWrapperHeader do.
func (c *Codecs) AppendLegacy(dst []byte, m LegacySpec) ([]byte, error) {
	value := m.Value
	key := m.Key
	if m.Compression != CompressionNone {
		var inner []byte
		for _, in := range m.Inner {
			in.Magic = m.Magic
			in.Compression = CompressionNone
			var err error
			if inner, err = c.AppendLegacy(inner, in); err != nil {
				return dst, err
			}
		}
		var err error
		if value, err = c.Compress(nil, m.Compression, m.Magic, inner); err != nil {
			return dst, err
		}
		key = nil
	}
	be := binary.BigEndian
	start := len(dst)
	dst = be.AppendUint64(dst, uint64(m.Offset))
	dst = be.AppendUint32(dst, 0) // size, patched below
	dst = be.AppendUint32(dst, 0) // crc, patched below
	dst = append(dst, byte(m.Magic))
	attrs := byte(m.Compression)
	if m.Magic == 1 && m.LogAppendTime {
		attrs |= AttrTimestampType
	}
	dst = append(dst, attrs)
	if m.Magic == 1 {
		dst = be.AppendUint64(dst, uint64(m.Timestamp))
	}
	for _, b := range [][]byte{key, value} {
		if b == nil {
			dst = be.AppendUint32(dst, 0xffffffff)
		} else {
			dst = be.AppendUint32(dst, uint32(len(b)))
			dst = append(dst, b...)
		}
	}
	be.PutUint32(dst[start+8:], uint32(len(dst)-start-LogOverhead))
	be.PutUint32(dst[start+12:], crc32.ChecksumIEEE(dst[start+16:]))
	return dst, nil
}
