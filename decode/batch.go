package decode

import (
	"encoding/binary"
	"hash/crc32"
	"math"
)

// Layout constants from Records.java, DefaultRecordBatch.java and
// LegacyRecord.java.
const (
	LogOverhead            = 12 // offset + size
	HeaderSizeUpToMagic    = 17
	RecordBatchOverhead    = 61 // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
	MinLegacyRecordSize    = 14 // LegacyRecord.RECORD_OVERHEAD_V0, FileLogInputStream's floor
	legacyHeaderV0         = 6  // crc, magic, attributes
	legacyHeaderV1         = 14 // + timestamp
	crcOffset              = 17
	attributesOffset       = 21
	recordsCountOffset     = 57
	NoProducerID           = -1
	NoProducerEpoch        = -1
	NoSequence             = -1
	NoTimestamp            = -1
	NoPartitionLeaderEpoch = -1
)

// Attribute bits (DefaultRecordBatch: COMPRESSION_CODEC_MASK …).
const (
	AttrCompressionMask = 0x07
	AttrTimestampType   = 0x08
	AttrTransactional   = 0x10
	AttrControl         = 0x20
	AttrDeleteHorizon   = 0x40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is Kafka's Crc32C.compute.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// TimestampType mirrors org.apache.kafka.common.record.TimestampType.
type TimestampType int8

const (
	NoTimestampType TimestampType = -1
	CreateTime      TimestampType = 0
	LogAppendTime   TimestampType = 1
)

// String returns Kafka's name (TimestampType.name), which kafka-dump-log
// prints in front of the timestamp.
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// Batch is one entry of a log: a v2 record batch, or a legacy v0/v1 shallow
// message (which may be a compressed wrapper around inner messages). For a
// legacy entry the v2-only fields hold Kafka's defaults for legacy batches
// (AbstractLegacyRecordBatch): producerId -1, epoch -1, sequence -1,
// partitionLeaderEpoch -1.
type Batch struct {
	// BaseOffset is the first offset of a v2 batch. For a legacy entry it is
	// the offset field of the log overhead, which is the LAST offset (the
	// wrapper carries the offset of its last inner message).
	BaseOffset           int64
	BatchLength          int32 // bytes after the length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32 // stored checksum
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32 // v2 only; -1 for legacy (countOrNull = null)

	// Raw is the whole entry, LogOverhead+BatchLength bytes. It aliases the
	// caller's buffer and is only valid as long as that buffer is.
	Raw []byte
}

// Size is the entry size on disk, log overhead included (sizeInBytes).
func (b *Batch) Size() int64 { return LogOverhead + int64(b.BatchLength) }

// AppendHeader appends the fixed part of b as its fields give it: the 61
// bytes of a v2 batch header (RecordBatchOverhead), or the 18 (magic 0) or
// 26 (magic 1) bytes of a legacy message before its key. attrs is the v2
// attributes field as stored, all 16 bits (Attributes keeps the bits Kafka
// reads); a legacy message's attributes byte is Attributes. For an entry
// read from disk the result is Raw's prefix; this is for an entry known by
// its fields only (a digest, a batch being built).
func (b *Batch) AppendHeader(dst []byte, attrs uint16) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(b.BaseOffset))
	dst = be.AppendUint32(dst, uint32(b.BatchLength))
	if b.IsLegacy() {
		dst = be.AppendUint32(dst, b.CRC)
		dst = append(dst, byte(b.Magic), byte(b.Attributes))
		if b.Magic == 1 {
			dst = be.AppendUint64(dst, uint64(b.MaxTimestamp))
		}
		return dst
	}
	dst = be.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, byte(b.Magic))
	dst = be.AppendUint32(dst, b.CRC)
	dst = be.AppendUint16(dst, attrs)
	dst = be.AppendUint32(dst, uint32(b.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(b.ProducerID))
	dst = be.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(b.BaseSequence))
	return be.AppendUint32(dst, uint32(b.RecordCount))
}

// IsLegacy reports magic 0 or 1.
func (b *Batch) IsLegacy() bool { return b.Magic < 2 }

// LastOffset is baseOffset + lastOffsetDelta for v2, the entry offset for
// legacy entries.
func (b *Batch) LastOffset() int64 {
	if b.IsLegacy() {
		return b.BaseOffset
	}
	return b.BaseOffset + int64(b.LastOffsetDelta)
}

// NextOffset is lastOffset + 1.
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// Compression is the codec in the low three attribute bits. Kafka reads only
// the low byte of the v2 attributes; the legacy attributes are one byte.
func (b *Batch) Compression() Compression { return Compression(b.Attributes & AttrCompressionMask) }

// TimestampType follows DefaultRecordBatch.timestampType and
// LegacyRecord.timestampType: magic 0 has no timestamps.
func (b *Batch) TimestampType() TimestampType {
	if b.Magic == 0 {
		return NoTimestampType
	}
	if b.Attributes&AttrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional is attribute bit 4 (v2 only).
func (b *Batch) IsTransactional() bool { return !b.IsLegacy() && b.Attributes&AttrTransactional != 0 }

// IsControl is attribute bit 5 (v2 only).
func (b *Batch) IsControl() bool { return !b.IsLegacy() && b.Attributes&AttrControl != 0 }

// DeleteHorizonMs returns the delete horizon (KIP-534) when attribute bit 6
// is set; baseTimestamp then holds it.
func (b *Batch) DeleteHorizonMs() (int64, bool) {
	if !b.IsLegacy() && b.Attributes&AttrDeleteHorizon != 0 {
		return b.BaseTimestamp, true
	}
	return 0, false
}

// HasProducerID is AbstractRecordBatch.hasProducerId: producerId > -1.
func (b *Batch) HasProducerID() bool { return b.ProducerID > NoProducerID }

// LastSequence is DefaultRecordBatch.lastSequence: -1 without a base
// sequence, else baseSequence + lastOffsetDelta with wrap-around at MaxInt32.
func (b *Batch) LastSequence() int32 {
	if b.BaseSequence == NoSequence {
		return NoSequence
	}
	return IncrementSequence(b.BaseSequence, b.LastOffsetDelta)
}

// ComputeCRC recomputes the checksum Kafka validates: CRC-32C over bytes
// [21, end) for v2, CRC-32/IEEE over the message from its magic byte for
// v0/v1 (LegacyRecord.computeChecksum).
func (b *Batch) ComputeCRC() uint32 {
	if b.IsLegacy() {
		return crc32.ChecksumIEEE(b.Raw[LogOverhead+4:])
	}
	return CRC32C(b.Raw[attributesOffset:])
}

// CRCValid is isValid() without the size test (the scanner already
// enforces the minimum sizes).
func (b *Batch) CRCValid() bool { return b.ComputeCRC() == b.CRC }

// Payload is the records section of a v2 batch (compressed when codec !=
// none) or the value of a legacy message.
func (b *Batch) Payload() []byte {
	if !b.IsLegacy() {
		return b.Raw[RecordBatchOverhead:]
	}
	_, value, _ := b.legacyKeyValue()
	return value
}

// IncrementSequence is DefaultRecordBatch.incrementSequence.
func IncrementSequence(seq, inc int32) int32 {
	if seq > math.MaxInt32-inc {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

// DecrementSequence is DefaultRecordBatch.decrementSequence.
func DecrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return math.MaxInt32 - (dec - seq) + 1
	}
	return seq - dec
}

// ParseBatch decodes the header of the entry at the start of raw, which must
// hold the whole entry (LogOverhead + batchLength bytes; extra bytes after it
// are ignored). It validates the framing (sizes against the bytes present,
// magic) but not the CRC: a CRC mismatch is a finding the caller reports
// while going on, as kafka-dump-log does (isvalid: false).
func ParseBatch(raw []byte) (Batch, error) { return parseBatch(raw, false) }

// ParseBatchAsKafka is ParseBatch as Kafka's FileLogInputStream frames an
// entry: a magic above 2 is read with the v2 layout (DefaultRecordBatch)
// instead of being rejected, and Magic keeps the stored byte. kafka-dump-log
// prints such a batch (magic: 3) and reads on; ParseBatch reports it, since
// no Kafka ever wrote one.
func ParseBatchAsKafka(raw []byte) (Batch, error) { return parseBatch(raw, true) }

func parseBatch(raw []byte, futureAsV2 bool) (Batch, error) {
	var b Batch
	if len(raw) < HeaderSizeUpToMagic {
		return b, corruptf(0, NoBaseOffset, "header", ErrTruncated, "%d bytes, need %d", len(raw), HeaderSizeUpToMagic)
	}
	be := binary.BigEndian
	b.BaseOffset = int64(be.Uint64(raw[0:]))
	b.BatchLength = int32(be.Uint32(raw[8:]))
	b.Magic = int8(raw[16])
	if b.BatchLength < MinLegacyRecordSize {
		return b, corruptf(8, b.BaseOffset, "batchLength", ErrCorrupt,
			"record size %d smaller than minimum record overhead (%d)", b.BatchLength, MinLegacyRecordSize)
	}
	total := LogOverhead + int64(b.BatchLength)
	if int64(len(raw)) < total {
		return b, corruptf(8, b.BaseOffset, "batchLength", ErrTruncated, "entry needs %d bytes, %d present", total, len(raw))
	}
	b.Raw = raw[:total]
	switch {
	case b.Magic < 0 || (b.Magic > 2 && !futureAsV2):
		// FileLogInputStream treats magic > 2 as v2; an inspection tool must
		// say that no Kafka ever wrote it.
		return b, corruptf(16, b.BaseOffset, "magic", ErrCorrupt, "invalid magic %d", b.Magic)
	case b.Magic >= 2:
		if total < RecordBatchOverhead {
			return b, corruptf(8, b.BaseOffset, "batchLength", ErrCorrupt,
				"record batch size %d is smaller than the minimum allowed overhead %d", total, RecordBatchOverhead)
		}
		b.PartitionLeaderEpoch = int32(be.Uint32(raw[12:]))
		b.CRC = be.Uint32(raw[17:])
		b.Attributes = int16(be.Uint16(raw[21:]))
		b.LastOffsetDelta = int32(be.Uint32(raw[23:]))
		b.BaseTimestamp = int64(be.Uint64(raw[27:]))
		b.MaxTimestamp = int64(be.Uint64(raw[35:]))
		b.ProducerID = int64(be.Uint64(raw[43:]))
		b.ProducerEpoch = int16(be.Uint16(raw[51:]))
		b.BaseSequence = int32(be.Uint32(raw[53:]))
		b.RecordCount = int32(be.Uint32(raw[57:]))
		// Kafka reads only the low byte of the attributes.
		b.Attributes &= 0xff
	default:
		hdr := legacyHeaderV0
		if b.Magic == 1 {
			hdr = legacyHeaderV1
		}
		if total < LogOverhead+int64(hdr)+8 {
			return b, corruptf(8, b.BaseOffset, "size", ErrCorrupt, "legacy message of %d bytes is shorter than its header", b.BatchLength)
		}
		b.CRC = be.Uint32(raw[12:])
		b.Attributes = int16(raw[17])
		b.PartitionLeaderEpoch = NoPartitionLeaderEpoch
		b.ProducerID = NoProducerID
		b.ProducerEpoch = NoProducerEpoch
		b.BaseSequence = NoSequence
		b.RecordCount = -1
		b.BaseTimestamp = NoTimestamp
		b.MaxTimestamp = NoTimestamp
		if b.Magic == 1 {
			b.MaxTimestamp = int64(be.Uint64(raw[18:]))
			b.BaseTimestamp = b.MaxTimestamp
		}
		if _, _, err := b.legacyKeyValue(); err != nil {
			return b, err
		}
	}
	return b, nil
}

// legacyKeyValue splits a legacy message into key and value (nil = null).
func (b *Batch) legacyKeyValue() (key, value []byte, err error) {
	be := binary.BigEndian
	p := LogOverhead + legacyHeaderV0
	if b.Magic == 1 {
		p = LogOverhead + legacyHeaderV1
	}
	raw := b.Raw
	readBytes := func(field string) ([]byte, error) {
		if len(raw)-p < 4 {
			return nil, corruptf(int64(p), b.BaseOffset, field, ErrTruncated, "length field past the end of the message")
		}
		n := int32(be.Uint32(raw[p:]))
		p += 4
		if n < 0 {
			return nil, nil
		}
		if int64(n) > int64(len(raw)-p) {
			return nil, corruptf(int64(p-4), b.BaseOffset, field, ErrCorrupt, "length %d exceeds the %d bytes left in the message", n, len(raw)-p)
		}
		v := raw[p : p+int(n)]
		p += int(n)
		return v, nil
	}
	if key, err = readBytes("keyLength"); err != nil {
		return nil, nil, err
	}
	if value, err = readBytes("valueLength"); err != nil {
		return nil, nil, err
	}
	if p != len(raw) {
		return nil, nil, corruptf(int64(p), b.BaseOffset, "size", ErrCorrupt, "%d bytes after the value", len(raw)-p)
	}
	return key, value, nil
}
