package segment

import (
	"fmt"
	"math"

	"github.com/kseg/kseg/decode"
)

// Kafka's rules for a segment that batches are appended to, written once:
// every writer and planner of kseg (the Appender, repair's index rebuild,
// inject-barrier's and mirror's index maintenance) keeps a segment's
// indexes, rolls and leader epochs through these.

// IndexBuilder keeps the in-memory state LogSegment holds of one segment
// while batches are appended to it (LogSegment.append) or recovered
// (LogSegment.recover), one batch at a time (KAFKA-806), with
// formats.md §7.1–7.2's rules:
//
//   - before a batch is counted, the max timestamp so far is updated
//     (maxTimestampAndOffsetSoFar: the batch's maxTimestamp and lastOffset,
//     when above); then, if more than index.interval.bytes went by since
//     the batch the last offset-index entry names, the batch gets an entry
//     (lastOffset, position) (OffsetIndex.append) and the time index gets
//     (max timestamp so far, its offset) when that timestamp is above its
//     last entry's (TimeIndex.maybeAppend; so magic-0 data, without
//     timestamps, leaves the time index empty); the first batch of a
//     segment is never indexed;
//   - when the segment is rolled or closed the time index gets the final
//     (max timestamp, offset) entry (LogSegment.onBecomeInactiveSegment);
//   - the segment's size and the maxTimestamp of its first batch
//     (rollingBasedTimestamp) are what RollConfig.ShouldRoll reads.
//
// Errors are Kafka's: an offset-index entry whose offset is not above the
// last one's (InvalidOffsetException), or that does not fit the segment's
// relative offsets (IndexOffsetOverflowException), or whose position does
// not fit an int32; a time-index entry whose offset or timestamp is below
// the last one's (InvalidOffsetException, IllegalStateException).
type IndexBuilder struct {
	base     int64
	interval int64
	// size is the bytes of the segment so far: the position of the next
	// batch.
	size int64
	// firstBatchTs is rollingBasedTimestamp: the maxTimestamp of the
	// segment's first batch, -1 before it.
	firstBatchTs int64
	index        []IndexEntry
	timeIndex    []TimeIndexEntry
	// lastEntryPos is the position of the batch the last offset-index
	// entry names (LogSegment.recover's lastIndexEntry; LogSegment.append
	// counts bytesSinceLastIndexEntry from it).
	lastEntryPos int64
	// maxTs and maxTsOffset are maxTimestampAndOffsetSoFar; before any
	// batch LogSegment reads the time index's last entry, (-1, base).
	maxTs, maxTsOffset int64
}

// NewIndexBuilder starts an empty segment at base with the topic's
// index.interval.bytes (used as is: 0 indexes every batch but the first).
func NewIndexBuilder(base int64, indexIntervalBytes int) *IndexBuilder {
	return &IndexBuilder{base: base, interval: int64(indexIntervalBytes), firstBatchTs: -1,
		maxTs: decode.NoTimestamp, maxTsOffset: base}
}

// Base is the segment's base offset.
func (b *IndexBuilder) Base() int64 { return b.base }

// Size is the bytes of the segment so far: the position of the next batch.
func (b *IndexBuilder) Size() int64 { return b.size }

// Index and TimeIndex are the entries so far (owned by the builder).
func (b *IndexBuilder) Index() []IndexEntry         { return b.index }
func (b *IndexBuilder) TimeIndex() []TimeIndexEntry { return b.timeIndex }

// MaxTimestamp is maxTimestampAndOffsetSoFar.
func (b *IndexBuilder) MaxTimestamp() (timestamp, offset int64) { return b.maxTs, b.maxTsOffset }

// Track accounts for a batch of batchSize bytes already in the segment
// whose index entries come from the segment's files (see Keep): the size,
// the max timestamp so far and the first batch's timestamp move, the
// indexes do not. It is how LogSegment knows a segment it reopened.
func (b *IndexBuilder) Track(batchSize, lastOffset, maxTimestamp int64) {
	if maxTimestamp > b.maxTs {
		b.maxTs, b.maxTsOffset = maxTimestamp, lastOffset
	}
	if b.size == 0 {
		b.firstBatchTs = maxTimestamp
	}
	b.size += batchSize
}

// Reopen is Track of a whole reopened segment at once, from what
// LogSegment reads when it opens a segment instead of from a walk of its
// batches: its size, its first batch's maxTimestamp (rollingBasedTimestamp,
// loadFirstBatchTimestamp) and its time index's last entry
// (maxTimestampAndOffsetSoFar, read from timeIndex.lastEntry). Keep then
// gives it its entries.
func (b *IndexBuilder) Reopen(size, firstBatchTs, maxTs, maxTsOffset int64) {
	b.size, b.firstBatchTs = size, firstBatchTs
	if size == 0 {
		b.firstBatchTs = -1
	}
	b.maxTs, b.maxTsOffset = maxTs, maxTsOffset
}

// Keep replaces the entries with those kept of the segment's existing
// .index and .timeindex (after OffsetIndex/TimeIndex.truncateTo), which
// the builder appends after; the next offset-index entry counts its bytes
// from the batch the last kept entry names. Kept entries are taken as the
// broker takes a reopened index: unchecked.
func (b *IndexBuilder) Keep(index []IndexEntry, timeIndex []TimeIndexEntry) {
	b.index = append([]IndexEntry(nil), index...)
	b.timeIndex = append([]TimeIndexEntry(nil), timeIndex...)
	b.lastEntryPos = 0
	if n := len(b.index); n > 0 {
		b.lastEntryPos = int64(b.index[n-1].Position)
	}
}

// KeepRecovered is Keep for a segment batches are appended to, where the
// indexes must come out as LogSegment.recover writes them: the time-index
// entries after the last offset-index entry (those LogSegment.close
// appended at a shutdown, and onBecomeInactiveSegment, with the max
// timestamp so far) are left out. Recovery writes a time-index entry only
// with an offset-index entry and once at the segment's end, so a segment
// written in several runs gets the bytes one run writes. Call Reopen (or
// Track) first: the max timestamp so far comes from the segment, not from
// the entries kept.
func (b *IndexBuilder) KeepRecovered(index []IndexEntry, timeIndex []TimeIndexEntry) {
	lastIndexed := b.base
	if n := len(index); n > 0 {
		lastIndexed = index[n-1].Offset
	}
	n := len(timeIndex)
	for n > 0 && (len(index) == 0 || timeIndex[n-1].Offset > lastIndexed) {
		n--
	}
	b.Keep(index, timeIndex[:n])
}

// keepChecked is Keep for entries checked as they would be appended: the
// offset-index entries with OffsetIndex.append's rules, the time-index
// entries with TimeIndex.maybeAppend's.
func (b *IndexBuilder) keepChecked(index []IndexEntry, timeIndex []TimeIndexEntry) error {
	b.index, b.timeIndex = nil, nil
	for _, e := range index {
		if err := b.appendIndex(e.Offset, int64(e.Position)); err != nil {
			return err
		}
	}
	for _, e := range timeIndex {
		if err := b.maybeAppendTime(e.Timestamp, e.Offset); err != nil {
			return err
		}
	}
	b.Keep(b.index, b.timeIndex)
	return nil
}

// Append accounts for the next batch, of batchSize bytes at position
// Size(), whose offsets end at lastOffset and whose maxTimestamp is
// maxTimestamp, indexing it when its turn has come.
func (b *IndexBuilder) Append(batchSize, lastOffset, maxTimestamp int64) error {
	return b.AppendChunk(batchSize, lastOffset, maxTimestamp, lastOffset)
}

// AppendChunk is LogSegment.append of several batches at once, as a
// follower appends a fetched chunk (UnifiedLog.appendAsFollower): size
// bytes at position Size(), whose largest offset is largestOffset and
// whose highest maxTimestamp is maxTimestamp, in the batch whose last
// offset is maxTimestampOffset (shallowOffsetOfMaxTimestamp). The offset
// index gets one entry for the whole chunk, when its turn has come: the
// chunk's largest offset at the chunk's first position.
func (b *IndexBuilder) AppendChunk(size, largestOffset, maxTimestamp, maxTimestampOffset int64) error {
	if maxTimestamp > b.maxTs {
		b.maxTs, b.maxTsOffset = maxTimestamp, maxTimestampOffset
	}
	if b.size-b.lastEntryPos > b.interval {
		if err := b.appendIndex(largestOffset, b.size); err != nil {
			return err
		}
		if err := b.maybeAppendTime(b.maxTs, b.maxTsOffset); err != nil {
			return err
		}
		b.lastEntryPos = b.size
	}
	if b.size == 0 {
		b.firstBatchTs = maxTimestamp
	}
	b.size += size
	return nil
}

// Finish is LogSegment.onBecomeInactiveSegment (and close): the final
// time-index entry.
func (b *IndexBuilder) Finish() error { return b.maybeAppendTime(b.maxTs, b.maxTsOffset) }

// appendIndex is OffsetIndex.append: strictly increasing offsets that fit
// the relative offsets, positions that fit an int32.
func (b *IndexBuilder) appendIndex(offset, position int64) error {
	if n := len(b.index); n > 0 && offset <= b.index[n-1].Offset {
		return fmt.Errorf("index: offset %d is not above the last indexed offset %d", offset, b.index[n-1].Offset)
	}
	if position > math.MaxInt32 {
		return fmt.Errorf("index: position %d does not fit in an int32", position)
	}
	if _, err := RelativeOffset(b.base, offset); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	b.index = append(b.index, IndexEntry{Offset: offset, Position: int32(position)})
	return nil
}

// maybeAppendTime is TimeIndex.maybeAppend: only a timestamp above the
// last entry's is written.
func (b *IndexBuilder) maybeAppendTime(ts, offset int64) error {
	last := TimeIndexEntry{Timestamp: decode.NoTimestamp, Offset: b.base}
	n := len(b.timeIndex)
	if n > 0 {
		last = b.timeIndex[n-1]
		if offset < last.Offset {
			return fmt.Errorf("time index: offset %d is below the last entry's %d", offset, last.Offset)
		}
		if ts < last.Timestamp {
			return fmt.Errorf("time index: timestamp %d is below the last entry's %d", ts, last.Timestamp)
		}
	}
	if ts <= last.Timestamp {
		return nil
	}
	if _, err := RelativeOffset(b.base, offset); err != nil {
		return fmt.Errorf("time index: %w", err)
	}
	b.timeIndex = append(b.timeIndex, TimeIndexEntry{Timestamp: ts, Offset: offset})
	return nil
}

// Encode returns the .index and .timeindex as written at their exact size
// (a cleanly closed segment's, trimmed).
func (b *IndexBuilder) Encode() (index, timeIndex []byte, err error) {
	index, timeIndex = []byte{}, []byte{}
	for _, e := range b.index {
		if index, err = AppendOffsetIndexEntry(index, b.base, e); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range b.timeIndex {
		if timeIndex, err = AppendTimeIndexEntry(timeIndex, b.base, e); err != nil {
			return nil, nil, err
		}
	}
	return index, timeIndex, nil
}

// RollConfig is what LogSegment.shouldRoll reads of the topic's config
// (RollParams).
type RollConfig struct {
	// SegmentBytes is segment.bytes.
	SegmentBytes int64
	// SegmentMs is segment.ms, measured on record timestamps only (the
	// broker's wall-clock fallback for segments without timestamps is not
	// modelled); 0 or less disables time-based rolls.
	SegmentMs int64
	// MaxIndexSize is segment.index.bytes: the offset index is full at
	// MaxIndexSize/8 entries, the time index at MaxIndexSize/12-1
	// (TimeIndex.isFull keeps the last slot for the entry written on roll).
	MaxIndexSize int
}

// ShouldRoll is LogSegment.shouldRoll for the segment s is building,
// about to take a batch of batchSize bytes whose offsets end at lastOffset
// and whose maxTimestamp is maxTimestamp: roll when the batch would grow
// the segment beyond segment.bytes, when segment.ms went by since its
// first batch, when an index is full, or when lastOffset does not fit the
// relative offsets. An empty segment rolls only for the last reason.
func (c RollConfig) ShouldRoll(s *IndexBuilder, batchSize, lastOffset, maxTimestamp int64) bool {
	overflow := lastOffset-s.base > math.MaxInt32
	if s.size == 0 {
		return overflow
	}
	reachedRollMs := c.SegmentMs > 0 && s.firstBatchTs >= 0 && maxTimestamp-s.firstBatchTs > c.SegmentMs
	return s.size > c.SegmentBytes-batchSize || reachedRollMs ||
		len(s.index) >= c.MaxIndexSize/OffsetIndexEntrySize ||
		len(s.timeIndex) >= c.MaxIndexSize/TimeIndexEntrySize-1 ||
		overflow
}

// AssignLeaderEpoch is LeaderEpochFileCache.assign on the leader epoch
// cache epochs for a batch of leader epoch epoch starting at startOffset:
// an epoch below 0 is ignored; a new entry is added when the epoch differs
// from the latest one (or starts earlier), after removing the entries it
// supersedes (those with an epoch or start offset at least as large). It
// returns the new cache and leaves epochs as it was.
func AssignLeaderEpoch(epochs []EpochEntry, epoch int32, startOffset int64) []EpochEntry {
	if epoch < 0 {
		return epochs
	}
	if n := len(epochs); n > 0 {
		latest := epochs[n-1]
		if latest.Epoch == epoch && latest.StartOffset <= startOffset {
			return epochs
		}
	}
	kept := epochs[:0:0]
	for _, e := range epochs {
		if e.Epoch < epoch && e.StartOffset < startOffset {
			kept = append(kept, e)
		}
	}
	return append(kept, EpochEntry{Epoch: epoch, StartOffset: startOffset})
}

// TruncateLeaderEpochs is LeaderEpochFileCache.truncateFromEnd for a log
// truncated to endOffset (LocalLog.truncateTo keeps the batches below it):
// the entries starting at or above it go.
func TruncateLeaderEpochs(epochs []EpochEntry, endOffset int64) (kept, removed []EpochEntry) {
	for _, e := range epochs {
		if e.StartOffset >= endOffset {
			removed = append(removed, e)
			continue
		}
		kept = append(kept, e)
	}
	return kept, removed
}
