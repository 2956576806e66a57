package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/decode"
)

// Entry sizes (OffsetIndex.ENTRY_SIZE, TimeIndex.ENTRY_SIZE).
const (
	OffsetIndexEntrySize = 8
	TimeIndexEntrySize   = 12
)

// DefaultMaxIndexSize is segment.index.bytes' default (10 MiB). An active
// segment's indexes are preallocated to it, rounded down to a whole number
// of entries (AbstractIndex: roundDownToExactMultiple).
const DefaultMaxIndexSize = 10 * 1024 * 1024

// ErrOffsetOverflow is returned by the index encoders for an offset that
// does not fit in an index entry's int32 relative offset
// (AbstractIndex.toRelative → IndexOffsetOverflowException).
var ErrOffsetOverflow = errors.New("offset does not fit in a relative offset")

// fileCorrupt builds the CorruptError for a damaged file.
func fileCorrupt(path string, pos int64, field string, class error, kafkaMsg, format string, args ...any) *decode.CorruptError {
	return &decode.CorruptError{
		Path:       path,
		Pos:        pos,
		BaseOffset: decode.NoBaseOffset,
		Field:      field,
		Err:        &decode.KafkaError{Class: class, Detail: fmt.Sprintf(format, args...), Message: kafkaMsg},
	}
}

// absPath is Java's File#getAbsolutePath: made absolute, not resolved.
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// IndexEntry is one offset-index entry (OffsetPosition): the batch that
// ends at Offset starts at byte Position of the .log.
type IndexEntry struct {
	Offset   int64 // absolute: baseOffset + relativeOffset
	Position int32
}

// TimeIndexEntry is one time-index entry (TimestampOffset): the largest
// timestamp seen up to and including the batch ending at Offset.
type TimeIndexEntry struct {
	Timestamp int64
	Offset    int64 // absolute
}

// OffsetIndex is a decoded .index file.
//
// Kafka counts every whole 8-byte slot of an existing file as an entry
// (AbstractIndex: position = roundDown(length, entrySize)), including the
// zero-filled tail a preallocated active index keeps after an unclean
// shutdown. Slots is that count. Entries stops where kafka-dump-log stops
// (DumpLogSegments.dumpIndex): at the first slot i > 0 whose offset equals
// the base offset. Only Entries is kept in memory, so a 10 MiB
// preallocated file costs what its real entries cost.
type OffsetIndex struct {
	Path       string
	BaseOffset int64
	Length     int64        // file size in bytes
	Slots      int          // Length / 8: AbstractIndex.entries()
	Entries    []IndexEntry // slots before the zero tail
	// LastSlot is OffsetIndex#lastEntry(): the last slot (zero tail
	// included), or (BaseOffset, 0) when Slots == 0. sanityCheck uses it.
	LastSlot IndexEntry
	// TailZero reports that every byte after Entries, trailing partial
	// bytes included, is zero: a clean preallocation tail rather than
	// garbage.
	TailZero bool
}

// TrailingBytes is the number of bytes after the last whole slot.
func (x *OffsetIndex) TrailingBytes() int64 { return x.Length % OffsetIndexEntrySize }

// TailSlots is the number of whole slots after the valid entries.
func (x *OffsetIndex) TailSlots() int { return x.Slots - len(x.Entries) }

// Lookup returns the entry with the largest offset ≤ target among the
// valid entries, or (BaseOffset, 0) if there is none (OffsetIndex#lookup
// on a well-formed index).
func (x *OffsetIndex) Lookup(target int64) IndexEntry {
	lo, hi := 0, len(x.Entries)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.Entries[m].Offset <= target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return IndexEntry{Offset: x.BaseOffset}
	}
	return x.Entries[lo-1]
}

// TimeIndex is a decoded .timeindex file; see OffsetIndex for Slots,
// Entries and the zero tail. kafka-dump-log stops its time-index dump at
// the first slot i > 0 whose offset equals the base offset
// (DumpLogSegments.dumpTimeIndex), whatever its timestamp.
type TimeIndex struct {
	Path       string
	BaseOffset int64
	Length     int64
	Slots      int              // Length / 12
	Entries    []TimeIndexEntry // slots before the zero tail
	// LastSlot is TimeIndex#lastEntry(): the last slot, or
	// (-1, BaseOffset) when Slots == 0.
	LastSlot TimeIndexEntry
	TailZero bool
}

// TrailingBytes is the number of bytes after the last whole slot.
func (x *TimeIndex) TrailingBytes() int64 { return x.Length % TimeIndexEntrySize }

// TailSlots is the number of whole slots after the valid entries.
func (x *TimeIndex) TailSlots() int { return x.Slots - len(x.Entries) }

// ReadOffsetIndex reads a .index file read-only, streaming it so memory
// is bounded by the valid entries, not the preallocated size.
func ReadOffsetIndex(path string, baseOffset int64) (OffsetIndex, error) {
	return readIndex(path, baseOffset, parseOffsetIndex, OffsetIndex{Path: path, BaseOffset: baseOffset})
}

// ParseOffsetIndex decodes .index bytes held in memory.
func ParseOffsetIndex(b []byte, baseOffset int64) OffsetIndex {
	x, _ := parseOffsetIndex(bytes.NewReader(b), int64(len(b)), "", baseOffset)
	return x
}

// ReadTimeIndex reads a .timeindex file read-only; see ReadOffsetIndex.
func ReadTimeIndex(path string, baseOffset int64) (TimeIndex, error) {
	return readIndex(path, baseOffset, parseTimeIndex, TimeIndex{Path: path, BaseOffset: baseOffset})
}

// readIndex streams the index file at path through parse; unopenable, it
// is unread (the error with the index as nothing read).
func readIndex[X any](path string, baseOffset int64, parse func(io.Reader, int64, string, int64) (X, error), unread X) (X, error) {
	r, n, closeFile, err := openIndexFile(path)
	if err != nil {
		return unread, err
	}
	defer closeFile()
	return parse(r, n, path, baseOffset)
}

// ParseTimeIndex decodes .timeindex bytes held in memory.
func ParseTimeIndex(b []byte, baseOffset int64) TimeIndex {
	x, _ := parseTimeIndex(bytes.NewReader(b), int64(len(b)), "", baseOffset)
	return x
}

// openIndexFile opens a regular file read-only and returns a buffered
// reader over it with its size.
func openIndexFile(path string) (io.Reader, int64, func(), error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, 0, nil, err
	}
	// A buffer no larger than the file: dumping a log directory reads
	// thousands of small indexes.
	return bufio.NewReaderSize(f, int(min(size, 64<<10))), size, func() { _ = f.Close() }, nil
}

// indexSlots walks n bytes of an index with entries of size sz. visit is
// called for each whole slot until it returns false (the valid prefix has
// ended); the remaining slots are only checked for zero bytes. It returns
// the number of whole slots, the last whole slot's bytes and whether the
// tail after the valid prefix is all zero.
func indexSlots(r io.Reader, n int64, sz int, visit func(i int, slot []byte) bool) (slots int, last []byte, tailZero bool, err error) {
	slots = int(n / int64(sz))
	buf := make([]byte, sz)
	last = make([]byte, sz)
	valid := true
	tailZero = true
	for i := 0; i < slots; i++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return 0, nil, false, fmt.Errorf("index changed while reading: %w", err)
		}
		if valid && !visit(i, buf) {
			valid = false
		}
		if !valid && tailZero && !allZero(buf) {
			tailZero = false
		}
		if i == slots-1 {
			copy(last, buf)
		}
	}
	rest := make([]byte, n%int64(sz))
	if _, err := io.ReadFull(r, rest); err != nil {
		return 0, nil, false, fmt.Errorf("index changed while reading: %w", err)
	}
	if !allZero(rest) {
		tailZero = false
	}
	return slots, last, tailZero, nil
}

// indexEntries reads an index of slots of sz bytes (indexSlots): the
// entries dec decodes, up to the first after the first whose offset is
// the base offset (atBase; DumpLogSegments: the zero tail); the slots;
// the last slot decoded (none when there is none); and whether the tail
// after the entries is all zero. On an error the entries read so far come
// back, with none and no slots.
func indexEntries[E any](r io.Reader, n int64, sz int, none E, dec func([]byte) E, atBase func(E) bool) (entries []E, slots int, lastSlot E, tailZero bool, err error) {
	slots, last, tailZero, err := indexSlots(r, n, sz, func(i int, b []byte) bool {
		e := dec(b)
		if i > 0 && atBase(e) {
			return false
		}
		entries = append(entries, e)
		return true
	})
	if err != nil {
		return entries, 0, none, false, err
	}
	if slots == 0 {
		return entries, 0, none, tailZero, nil
	}
	return entries, slots, dec(last), tailZero, nil
}

func parseOffsetIndex(r io.Reader, n int64, path string, base int64) (OffsetIndex, error) {
	x := OffsetIndex{Path: path, BaseOffset: base, Length: n}
	dec := func(b []byte) IndexEntry {
		return IndexEntry{
			Offset:   base + int64(int32(binary.BigEndian.Uint32(b[0:4]))),
			Position: int32(binary.BigEndian.Uint32(b[4:8])),
		}
	}
	var err error
	x.Entries, x.Slots, x.LastSlot, x.TailZero, err = indexEntries(r, n, OffsetIndexEntrySize, IndexEntry{Offset: base}, dec,
		func(e IndexEntry) bool { return e.Offset == base })
	return x, err
}

func parseTimeIndex(r io.Reader, n int64, path string, base int64) (TimeIndex, error) {
	x := TimeIndex{Path: path, BaseOffset: base, Length: n}
	dec := func(b []byte) TimeIndexEntry {
		return TimeIndexEntry{
			Timestamp: int64(binary.BigEndian.Uint64(b[0:8])),
			Offset:    base + int64(int32(binary.BigEndian.Uint32(b[8:12]))),
		}
	}
	var err error
	x.Entries, x.Slots, x.LastSlot, x.TailZero, err = indexEntries(r, n, TimeIndexEntrySize, TimeIndexEntry{Timestamp: -1, Offset: base}, dec,
		func(e TimeIndexEntry) bool { return e.Offset == base })
	return x, err
}

// SanityCheckOffsetIndex applies OffsetIndex#sanityCheck, in Kafka's
// order, and returns a *decode.CorruptError whose KafkaMessage is the text
// of Kafka's CorruptIndexException. A broker that fails this check on a
// segment it must load rebuilds the index.
func SanityCheckOffsetIndex(x *OffsetIndex) error {
	if x.Slots != 0 && x.LastSlot.Offset < x.BaseOffset {
		return fileCorrupt(x.Path, int64(x.Slots-1)*OffsetIndexEntrySize, "relativeOffset", decode.ErrCorrupt,
			fmt.Sprintf("Corrupt index found, index file %s has non-zero size but the last offset is %d which is less than the base offset %d",
				absPath(x.Path), x.LastSlot.Offset, x.BaseOffset),
			"last offset %d is less than the base offset %d", x.LastSlot.Offset, x.BaseOffset)
	}
	return lengthCheck(x.Path, "Index file", x.Length, x.Slots, OffsetIndexEntrySize)
}

// lengthCheck is the last of the index sanity checks: a length that is a
// multiple of the entry size. kafkaName starts Kafka's message ("Index
// file", "Time index file").
func lengthCheck(path, kafkaName string, length int64, slots int, entrySize int64) error {
	if length%entrySize == 0 {
		return nil
	}
	return fileCorrupt(path, int64(slots)*entrySize, "length", decode.ErrTruncated,
		fmt.Sprintf("%s %s is corrupt, found %d bytes which is neither positive nor a multiple of %d",
			kafkaName, absPath(path), length, entrySize),
		"%d bytes is not a multiple of %d", length, entrySize)
}

// SanityCheckTimeIndex applies TimeIndex#sanityCheck, in Kafka's order.
// Note that, like Kafka, it compares the last *slot*: a preallocated index
// with a zero tail fails the timestamp check (last timestamp 0).
func SanityCheckTimeIndex(x *TimeIndex) error {
	if x.Slots != 0 && len(x.Entries) > 0 && x.LastSlot.Timestamp < x.Entries[0].Timestamp {
		first := x.Entries[0].Timestamp
		return fileCorrupt(x.Path, int64(x.Slots-1)*TimeIndexEntrySize, "timestamp", decode.ErrCorrupt,
			fmt.Sprintf("Corrupt time index found, time index file (%s) has non-zero size but the last timestamp is %d which is less than the first timestamp %d",
				absPath(x.Path), x.LastSlot.Timestamp, first),
			"last timestamp %d is less than the first timestamp %d", x.LastSlot.Timestamp, first)
	}
	if x.Slots != 0 && x.LastSlot.Offset < x.BaseOffset {
		return fileCorrupt(x.Path, int64(x.Slots-1)*TimeIndexEntrySize+8, "relativeOffset", decode.ErrCorrupt,
			fmt.Sprintf("Corrupt time index found, time index file (%s) has non-zero size but the last offset is %d which is less than the first offset %d",
				absPath(x.Path), x.LastSlot.Offset, x.BaseOffset),
			"last offset %d is less than the base offset %d", x.LastSlot.Offset, x.BaseOffset)
	}
	return lengthCheck(x.Path, "Time index file", x.Length, x.Slots, TimeIndexEntrySize)
}

// RelativeOffset converts an absolute offset to an index entry's relative
// offset, rejecting what AbstractIndex.toRelative rejects (a result outside
// [0, 2^31-1]).
func RelativeOffset(baseOffset, offset int64) (int32, error) {
	rel := offset - baseOffset
	if offset < baseOffset || rel > math.MaxInt32 {
		return 0, fmt.Errorf("%w: offset %d, base offset %d", ErrOffsetOverflow, offset, baseOffset)
	}
	return int32(rel), nil
}

// AppendOffsetIndexEntry appends the 8-byte encoding of e to dst, for
// writers that rebuild an index (OffsetIndex#append). It does not enforce
// Kafka's strictly-increasing-offset rule; that is the caller's loop.
func AppendOffsetIndexEntry(dst []byte, baseOffset int64, e IndexEntry) ([]byte, error) {
	rel, err := RelativeOffset(baseOffset, e.Offset)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(rel))
	return binary.BigEndian.AppendUint32(dst, uint32(e.Position)), nil
}

// AppendTimeIndexEntry appends the 12-byte encoding of e to dst
// (TimeIndex#maybeAppend).
func AppendTimeIndexEntry(dst []byte, baseOffset int64, e TimeIndexEntry) ([]byte, error) {
	rel, err := RelativeOffset(baseOffset, e.Offset)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(rel)), nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
