package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/kseg/kseg/decode"
)

// Producer snapshot layout (ProducerStateManager#readSnapshot/#writeSnapshot,
// schema storage/src/main/resources/message/ProducerSnapshot.json v1):
//
//	off 0  int16  version = 1
//	off 2  uint32 crc     CRC-32C over bytes [6, EOF)
//	off 6  int32  N       producerEntries array length
//	off 10 N × 46-byte entries:
//	       int64 producerId, int16 epoch, int32 lastSequence, int64 lastOffset,
//	       int32 offsetDelta, int64 timestamp, int32 coordinatorEpoch,
//	       int64 currentTxnFirstOffset
const (
	ProducerSnapshotVersion = 1
	SnapshotHeaderSize      = 10 // version + crc + array length
	SnapshotEntrySize       = 46
	snapshotCRCOffset       = 2
	snapshotEntriesOffset   = 6 // PRODUCER_ENTRIES_OFFSET: where the CRC starts
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SnapshotEntry is one producer in a snapshot, with the field values
// writeSnapshot stores. LastOffset == -1 means "no batch metadata" (a
// producer known only from markers or an empty batch); with it,
// LastSequence is -1 and OffsetDelta 0. CurrentTxnFirstOffset == -1 means
// no ongoing transaction; CoordinatorEpoch == -1 means never set.
type SnapshotEntry struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastOffset            int64
	OffsetDelta           int32
	Timestamp             int64 // the entry's lastTimestamp, not necessarily the last batch's
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64
}

// HasBatchMetadata reports whether readSnapshot restores a BatchMetadata
// for the entry (lastOffset >= 0, KAFKA-9144).
func (e SnapshotEntry) HasBatchMetadata() bool { return e.LastOffset >= 0 }

// ParseProducerSnapshot decodes a producer snapshot file's bytes.
//
// Checks run in Kafka's order: version (must be 1), structure (the entry
// count is checked against the bytes that remain before anything is
// allocated), then the CRC-32C over [6, EOF). Bytes after the entry array
// are covered by the CRC but otherwise ignored, as Kafka's schema reader
// ignores them. Every failure is a *decode.CorruptError whose KafkaMessage
// is the CorruptSnapshotException text; Path is empty (ReadProducerSnapshot
// fills it in).
func ParseProducerSnapshot(b []byte) ([]SnapshotEntry, error) {
	return parseProducerSnapshot(b, "")
}

// ReadProducerSnapshot reads and decodes a snapshot file read-only. I/O
// errors are returned as they are, not as corruption (Kafka likewise lets
// Files.readAllBytes IOExceptions through unwrapped).
func ReadProducerSnapshot(path string) ([]SnapshotEntry, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseProducerSnapshot(b, path)
}

func parseProducerSnapshot(b []byte, path string) ([]SnapshotEntry, error) {
	schema := func(pos int64, field string, class error, msg, format string, args ...any) error {
		return fileCorrupt(path, pos, field, class, "Snapshot failed schema validation: "+msg, format, args...)
	}
	if len(b) < 2 {
		return nil, schema(0, "version", decode.ErrTruncated, "Buffer underflow",
			"%d bytes, too short for the version", len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != ProducerSnapshotVersion {
		class := decode.ErrCorrupt
		if v > ProducerSnapshotVersion {
			class = decode.ErrUnsupported
		}
		return nil, schema(0, "version", class, fmt.Sprintf("Snapshot contained an unknown file version %d", v),
			"snapshot version %d, expected %d", v, ProducerSnapshotVersion)
	}
	if len(b) < SnapshotHeaderSize {
		field := "crc"
		pos := int64(snapshotCRCOffset)
		if len(b) >= snapshotEntriesOffset {
			field, pos = "producerEntries", snapshotEntriesOffset
		}
		return nil, schema(pos, field, decode.ErrTruncated, "Buffer underflow",
			"%d bytes, too short for the %d-byte header", len(b), SnapshotHeaderSize)
	}
	n := int32(binary.BigEndian.Uint32(b[snapshotEntriesOffset:]))
	remaining := int64(len(b) - SnapshotHeaderSize)
	if n < 0 {
		return nil, schema(snapshotEntriesOffset, "producerEntries", decode.ErrCorrupt,
			"non-nullable field producerEntries was serialized as null",
			"negative entry count %d", n)
	}
	if need := int64(n) * SnapshotEntrySize; need > remaining {
		return nil, schema(snapshotEntriesOffset, "producerEntries", decode.ErrTruncated,
			fmt.Sprintf("Tried to allocate a collection of size %d, but there are only %d bytes remaining.", n, remaining),
			"%d entries need %d bytes, only %d remain", n, need, remaining)
	}
	stored := binary.BigEndian.Uint32(b[snapshotCRCOffset:])
	computed := crc32.Checksum(b[snapshotEntriesOffset:], castagnoli)
	if stored != computed {
		return nil, fileCorrupt(path, snapshotCRCOffset, "crc", decode.ErrCRCMismatch,
			fmt.Sprintf("Snapshot is corrupt (CRC is no longer valid). Stored crc: %d. Computed crc: %d", stored, computed),
			"stored 0x%08x, computed 0x%08x", stored, computed)
	}
	entries := make([]SnapshotEntry, n)
	// The count was checked against the bytes above, so these reads cannot
	// fail; the cursor names each field as ProducerSnapshot.json does.
	c := decode.NewCursor(b[SnapshotHeaderSize:], SnapshotHeaderSize)
	for i := range entries {
		entries[i] = SnapshotEntry{
			ProducerID:            c.Int64("producerId"),
			ProducerEpoch:         c.Int16("epoch"),
			LastSequence:          c.Int32("lastSequence"),
			LastOffset:            c.Int64("lastOffset"),
			OffsetDelta:           c.Int32("offsetDelta"),
			Timestamp:             c.Int64("timestamp"),
			CoordinatorEpoch:      c.Int32("coordinatorEpoch"),
			CurrentTxnFirstOffset: c.Int64("currentTxnFirstOffset"),
		}
	}
	return entries, nil
}

// EncodeProducerSnapshot encodes entries as a version-1 snapshot, in the
// given order (Kafka writes HashMap order; keeping the caller's order lets
// a parsed file be re-encoded byte for byte).
func EncodeProducerSnapshot(entries []SnapshotEntry) []byte {
	b := make([]byte, SnapshotHeaderSize, SnapshotHeaderSize+len(entries)*SnapshotEntrySize)
	binary.BigEndian.PutUint16(b, ProducerSnapshotVersion)
	binary.BigEndian.PutUint32(b[snapshotEntriesOffset:], uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.ProducerEpoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.LastSequence))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OffsetDelta))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
	}
	// ByteUtils.writeUnsignedInt(buffer, CRC_OFFSET, crc) after serialising.
	binary.BigEndian.PutUint32(b[snapshotCRCOffset:], crc32.Checksum(b[snapshotEntriesOffset:], castagnoli))
	return b
}

// WriteProducerSnapshotFile writes entries as a snapshot at path, durably
// and atomically (temp file, fsync, rename, fsync directory).
//
// Kafka's writeSnapshot opens the target CREATE|WRITE without truncation,
// so overwriting a longer file would leave a stale tail and a CRC failure;
// writing a new file and renaming it avoids that. Unless force is true an
// existing file at path is an error (wrapping ErrTargetExists): replacing a
// broker's snapshot is a repair decision the caller must make explicitly.
func WriteProducerSnapshotFile(path string, entries []SnapshotEntry, force bool) error {
	return writeFileAtomic(path, EncodeProducerSnapshot(entries), 0o644, force)
}

// SnapshotDeleted is a producer snapshot a loading broker deletes, and
// why.
type SnapshotDeleted struct {
	Offset int64
	Why    string
}

// SnapshotsDeletedAtLoad is what a loading broker deletes of the producer
// snapshots at offsets (sorted, ascending) of a partition whose segments
// start at bases (sorted, ascending), with the log start offset logStart
// and the log end offset logEnd (-1: do not judge the log end), before it
// reads any: ProducerStateManager.removeStraySnapshots keeps the
// snapshots at segment base offsets and the newest other one ("stray")
// when it lies above the last segment's base, and
// ProducerStateManager.truncateAndReload then deletes those at or below
// the log start and above the log end. In ascending order.
func SnapshotsDeletedAtLoad(offsets, bases []int64, logStart, logEnd int64) []SnapshotDeleted {
	isBase := make(map[int64]bool, len(bases))
	for _, b := range bases {
		isBase[b] = true
	}
	lastStray := int64(-1)
	for _, o := range offsets {
		if !isBase[o] {
			lastStray = o
		}
	}
	var out []SnapshotDeleted
	for _, o := range offsets {
		switch {
		case !isBase[o] && o != lastStray:
			out = append(out, SnapshotDeleted{o, "is not at a segment base offset and is not the newest such file; the broker deletes it at load (removeStraySnapshots)"})
		case !isBase[o] && len(bases) > 0 && o < bases[len(bases)-1]:
			out = append(out, SnapshotDeleted{o, "is not at a segment base offset and lies below the last segment; the broker deletes it at load (removeStraySnapshots)"})
		case o <= logStart:
			out = append(out, SnapshotDeleted{o, fmt.Sprintf("is at or below the log start offset %d; the broker deletes it at load (truncateAndReload)", logStart)})
		case logEnd >= 0 && o > logEnd:
			out = append(out, SnapshotDeleted{o, fmt.Sprintf("lies above the log end offset %d; the broker deletes it at load (truncateAndReload)", logEnd)})
		}
	}
	return out
}
