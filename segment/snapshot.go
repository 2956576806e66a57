package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

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

// SnapshotReader is a producer snapshot file whose version, structure and
// CRC were checked, read again entry by entry when asked (Each) through a
// small buffer: a snapshot of a million producers is 46 MB on disk, and
// a []SnapshotEntry of it 56 MB more. The file stays open until Close,
// so Each reads the file that was checked.
type SnapshotReader struct {
	f    *os.File
	path string
	n    int
	crc  uint32
	buf  []byte // Open's, reused by Each
}

// snapshotReadBuffer is the buffer a SnapshotReader streams through.
const snapshotReadBuffer = 256 << 10

// OpenProducerSnapshot opens a snapshot and checks it as
// ReadProducerSnapshot does, with the same errors, reading it once
// through a small buffer.
func OpenProducerSnapshot(path string) (*SnapshotReader, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	h := make([]byte, min(size, SnapshotHeaderSize))
	if _, err := io.ReadFull(f, h); err != nil {
		f.Close()
		return nil, err
	}
	n, err := checkSnapshotHeader(h, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	// CRC-32C over [6, EOF), as readSnapshot computes it.
	crc := crc32.Update(0, castagnoli, h[snapshotEntriesOffset:])
	// Sized to the file: most snapshots hold a handful of producers.
	buf := make([]byte, min(snapshotReadBuffer, max(size-int64(len(h)), 1)))
	for {
		k, rerr := f.Read(buf)
		crc = crc32.Update(crc, castagnoli, buf[:k])
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			f.Close()
			return nil, rerr
		}
	}
	if err := checkSnapshotCRC(h, crc, path); err != nil {
		f.Close()
		return nil, err
	}
	return &SnapshotReader{f: f, path: path, n: int(n), crc: crc, buf: buf}, nil
}

// Len is the number of entries.
func (s *SnapshotReader) Len() int { return s.n }

// Each calls fn with every entry, in file order, reading the open file
// again (a broker writes a snapshot as a new file and never rewrites one
// in place, so these are the bytes that were checked).
func (s *SnapshotReader) Each(fn func(e SnapshotEntry)) error {
	r := io.NewSectionReader(s.f, SnapshotHeaderSize, int64(s.n)*SnapshotEntrySize)
	// Whole entries at a time through Open's buffer.
	buf := s.buf
	if len(buf) < SnapshotEntrySize {
		buf = make([]byte, SnapshotEntrySize)
	}
	buf = buf[:len(buf)/SnapshotEntrySize*SnapshotEntrySize]
	for left := s.n; left > 0; {
		k := min(left, len(buf)/SnapshotEntrySize)
		if _, err := io.ReadFull(r, buf[:k*SnapshotEntrySize]); err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		for i := range k {
			fn(decodeSnapshotEntry(buf[i*SnapshotEntrySize:]))
		}
		left -= k
	}
	return nil
}

// Entries reads every entry into a slice, as ReadProducerSnapshot returns
// them.
func (s *SnapshotReader) Entries() ([]SnapshotEntry, error) {
	out := make([]SnapshotEntry, 0, s.n)
	err := s.Each(func(e SnapshotEntry) { out = append(out, e) })
	return out, err
}

// Close closes the file.
func (s *SnapshotReader) Close() error { return s.f.Close() }

// decodeSnapshotEntry decodes one 46-byte entry.
func decodeSnapshotEntry(b []byte) SnapshotEntry {
	be := binary.BigEndian
	return SnapshotEntry{
		ProducerID:            int64(be.Uint64(b)),
		ProducerEpoch:         int16(be.Uint16(b[8:])),
		LastSequence:          int32(be.Uint32(b[10:])),
		LastOffset:            int64(be.Uint64(b[14:])),
		OffsetDelta:           int32(be.Uint32(b[22:])),
		Timestamp:             int64(be.Uint64(b[26:])),
		CoordinatorEpoch:      int32(be.Uint32(b[34:])),
		CurrentTxnFirstOffset: int64(be.Uint64(b[38:])),
	}
}

func parseProducerSnapshot(b []byte, path string) ([]SnapshotEntry, error) {
	n, err := checkSnapshotHeader(b[:min(len(b), SnapshotHeaderSize)], int64(len(b)), path)
	if err != nil {
		return nil, err
	}
	if err := checkSnapshotCRC(b, crc32.Checksum(b[snapshotEntriesOffset:], castagnoli), path); err != nil {
		return nil, err
	}
	entries := make([]SnapshotEntry, n)
	for i := range entries {
		entries[i] = decodeSnapshotEntry(b[SnapshotHeaderSize+i*SnapshotEntrySize:])
	}
	return entries, nil
}

// checkSnapshotHeader is readSnapshot's validation of a snapshot of size
// bytes whose first bytes are h (the header, or all of a shorter file):
// version, then the entry count against the bytes that remain. It returns
// the count.
func checkSnapshotHeader(h []byte, size int64, path string) (int32, error) {
	schema := func(pos int64, field string, class error, msg, format string, args ...any) error {
		return fileCorrupt(path, pos, field, class, "Snapshot failed schema validation: "+msg, format, args...)
	}
	if size < 2 {
		return 0, schema(0, "version", decode.ErrTruncated, "Buffer underflow",
			"%d bytes, too short for the version", size)
	}
	if v := int16(binary.BigEndian.Uint16(h)); v != ProducerSnapshotVersion {
		class := decode.ErrCorrupt
		if v > ProducerSnapshotVersion {
			class = decode.ErrUnsupported
		}
		return 0, schema(0, "version", class, fmt.Sprintf("Snapshot contained an unknown file version %d", v),
			"snapshot version %d, expected %d", v, ProducerSnapshotVersion)
	}
	if size < SnapshotHeaderSize {
		field := "crc"
		pos := int64(snapshotCRCOffset)
		if size >= snapshotEntriesOffset {
			field, pos = "producerEntries", snapshotEntriesOffset
		}
		return 0, schema(pos, field, decode.ErrTruncated, "Buffer underflow",
			"%d bytes, too short for the %d-byte header", size, SnapshotHeaderSize)
	}
	n := int32(binary.BigEndian.Uint32(h[snapshotEntriesOffset:]))
	remaining := size - SnapshotHeaderSize
	if n < 0 {
		return 0, schema(snapshotEntriesOffset, "producerEntries", decode.ErrCorrupt,
			"non-nullable field producerEntries was serialized as null",
			"negative entry count %d", n)
	}
	if need := int64(n) * SnapshotEntrySize; need > remaining {
		return 0, schema(snapshotEntriesOffset, "producerEntries", decode.ErrTruncated,
			fmt.Sprintf("Tried to allocate a collection of size %d, but there are only %d bytes remaining.", n, remaining),
			"%d entries need %d bytes, only %d remain", n, need, remaining)
	}
	return n, nil
}

// checkSnapshotCRC compares the CRC stored in header h with computed,
// the CRC-32C of [6, EOF).
func checkSnapshotCRC(h []byte, computed uint32, path string) error {
	stored := binary.BigEndian.Uint32(h[snapshotCRCOffset:])
	if stored != computed {
		return fileCorrupt(path, snapshotCRCOffset, "crc", decode.ErrCRCMismatch,
			fmt.Sprintf("Snapshot is corrupt (CRC is no longer valid). Stored crc: %d. Computed crc: %d", stored, computed),
			"stored 0x%08x, computed 0x%08x", stored, computed)
	}
	return nil
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
