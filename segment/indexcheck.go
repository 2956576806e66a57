// The verdict on a segment's .index and .timeindex against the batches a
// recovery keeps (IndexCheck): what LogSegment.recover would rebuild, and
// why.

package segment

import (
	"fmt"

	"github.com/kseg/kseg/decode"
)

// IndexDefect classifies what keeps broker recovery from keeping an index
// file as it is.
type IndexDefect int

const (
	// IndexOK: the file verifies against the kept batches.
	IndexOK IndexDefect = iota
	// IndexMissing: there is no file (LogLoader recovers a segment whose
	// .index is missing, and rebuilds its .timeindex).
	IndexMissing
	// IndexLength: the file is not a whole number of entries.
	IndexLength
	// IndexSanity: the file fails the broker's sanity check
	// (OffsetIndex/TimeIndex.sanityCheck).
	IndexSanity
	// IndexZeroTail: zero-filled slots follow the entries: a preallocated
	// index an unclean shutdown left untrimmed.
	IndexZeroTail
	// IndexMismatch: an entry does not follow the one before it, does not
	// match the batch it names, or lies past the valid log.
	IndexMismatch
)

// IndexVerdict is IndexCheck's judgement of one index file.
type IndexVerdict struct {
	// Problem is the first problem found, "" when the file verifies.
	Problem string
	Defect  IndexDefect
	// Past: the only problem is entries past the end of the valid log of
	// a log that is cut (they point into what the cut removes): a
	// consequence of the cut, not damage.
	Past bool
}

// IndexCheck judges whether broker recovery would keep a segment's
// existing .index and .timeindex: it checks them against the batches
// recovery keeps (Recover's OnBatch), in that scan's single pass
// (kafka-dump-log's checks, plus order), and notes what else recovery
// would not leave as it is: a missing file, a partial entry, a failed
// sanity check (LogSegment.sanityCheck, OffsetIndex/TimeIndex.sanityCheck),
// a preallocated zero tail. It keeps the first problem of each file: one
// is enough to rebuild it.
type IndexCheck struct {
	idx  *OffsetIndex
	tidx *TimeIndex
	ip   int
	tp   int
	// the first problem found with each file
	index, time IndexVerdict
	dec         decode.Decoder
	// ahead is the first offset-index entry naming an offset above the
	// lastOffset of the batch at its position (a follower's entry), -1
	// when none is pending; maxLast the highest lastOffset met.
	ahead   int
	maxLast int64
}

// NewIndexCheck reads the indexes of segment s (an I/O error is an error).
func NewIndexCheck(s SegmentFiles) (*IndexCheck, error) {
	idx, tidx, err := readSegmentIndexes(s)
	if err != nil {
		return nil, err
	}
	return NewIndexCheckOf(idx, tidx), nil
}

// readSegmentIndexes reads segment s's .index and .timeindex (nil where
// the segment has none).
func readSegmentIndexes(s SegmentFiles) (*OffsetIndex, *TimeIndex, error) {
	var idx *OffsetIndex
	var tidx *TimeIndex
	if s.Index != "" {
		x, err := ReadOffsetIndex(s.Index, s.BaseOffset)
		if err != nil {
			return nil, nil, err
		}
		idx = &x
	}
	if s.TimeIndex != "" {
		x, err := ReadTimeIndex(s.TimeIndex, s.BaseOffset)
		if err != nil {
			return nil, nil, err
		}
		tidx = &x
	}
	return idx, tidx, nil
}

// fileVerdict is what an .index and a .timeindex are checked for alike,
// the first failure in this order: a length (trailing bytes after the
// whole entries of entrySize), the broker's sanity check (sanity; before
// the zero tail, since a preallocated time index fails it, its last
// timestamp being 0, as dump --index-sanity-check says), tail zero-filled
// slots after the entries, then an entry that does not follow the one
// before it (unordered(i) says how entry i does not, or ""). The zero
// verdict passes.
func fileVerdict(length, trailing, entrySize int64, sanity func() error, tail, entries int, unordered func(i int) string) IndexVerdict {
	if trailing != 0 {
		return IndexVerdict{Problem: fmt.Sprintf("%d bytes is not a whole number of %d-byte entries", length, entrySize), Defect: IndexLength}
	}
	if err := sanity(); err != nil {
		return IndexVerdict{Problem: "fails the broker's sanity check: " + err.Error(), Defect: IndexSanity}
	}
	if tail > 0 {
		return IndexVerdict{Problem: fmt.Sprintf("%d zero-filled slots after its %d entries (preallocated, not trimmed: an unclean shutdown)", tail, entries), Defect: IndexZeroTail}
	}
	for i := 1; i < entries; i++ {
		if p := unordered(i); p != "" {
			return IndexVerdict{Problem: p, Defect: IndexMismatch}
		}
	}
	return IndexVerdict{}
}

// NewIndexCheckOf is NewIndexCheck of indexes already read (nil: the
// file is missing): those a writer is about to commit, say.
func NewIndexCheckOf(idx *OffsetIndex, tidx *TimeIndex) *IndexCheck {
	missing := IndexVerdict{Problem: "missing", Defect: IndexMissing}
	c := &IndexCheck{idx: idx, tidx: tidx, ahead: -1, index: missing, time: missing}
	if x := idx; x != nil {
		c.index = fileVerdict(x.Length, x.TrailingBytes(), OffsetIndexEntrySize, func() error { return SanityCheckOffsetIndex(x) }, x.TailSlots(), len(x.Entries),
			func(i int) string {
				if e, p := x.Entries[i], x.Entries[i-1]; e.Offset <= p.Offset || e.Position <= p.Position {
					return fmt.Sprintf("entry %d (offset %d, position %d) does not follow entry %d (offset %d, position %d)", i, e.Offset, e.Position, i-1, p.Offset, p.Position)
				}
				return ""
			})
	}
	if x := tidx; x != nil {
		c.time = fileVerdict(x.Length, x.TrailingBytes(), TimeIndexEntrySize, func() error { return SanityCheckTimeIndex(x) }, x.TailSlots(), len(x.Entries),
			func(i int) string {
				if e, p := x.Entries[i], x.Entries[i-1]; e.Offset < p.Offset || e.Timestamp <= p.Timestamp {
					return fmt.Sprintf("entry %d (timestamp %d, offset %d) does not follow entry %d (timestamp %d, offset %d)", i, e.Timestamp, e.Offset, i-1, p.Timestamp, p.Offset)
				}
				return ""
			})
	}
	return c
}

// Skip takes the first nIdx offset-index and nTidx time-index entries as
// checked: a writer that appended batches to a segment and kept the
// entries before them unchanged (the kept prefix of the index it wrote)
// checks only the entries of the batches it appended, fed to Batch from
// the first appended one.
func (c *IndexCheck) Skip(nIdx, nTidx int) {
	if c.idx != nil {
		c.ip = min(nIdx, len(c.idx.Entries))
	}
	if c.tidx != nil {
		c.tp = min(nTidx, len(c.tidx.Entries))
	}
}

// Batch checks the entries that point at the kept batch b at pos, the
// batch after those checked before. Entries are in order (or already
// condemned). A time-index entry may name any offset Kafka's writers put
// there (TimeIndexOffsetOK), not only the batch's last offset: such an
// index verifies and is kept.
func (c *IndexCheck) Batch(pos int64, b *decode.Batch) {
	last, ts := b.LastOffset(), b.MaxTimestamp
	if c.idx != nil && c.index.Problem == "" {
		for c.ip < len(c.idx.Entries) && int64(c.idx.Entries[c.ip].Position) <= pos {
			e := c.idx.Entries[c.ip]
			switch {
			case int64(e.Position) < pos:
				c.index = IndexVerdict{Problem: fmt.Sprintf("entry %d points at position %d, where no batch starts", c.ip, e.Position), Defect: IndexMismatch}
			case !OffsetIndexEntryOK(b, e.Offset):
				c.index = IndexVerdict{Problem: fmt.Sprintf("entry %d gives offset %d for the batch at position %d, which begins at %d: a lookup of offsets %d..%d reads from past them", c.ip, e.Offset, pos, b.BaseOffset, e.Offset, b.BaseOffset-1), Defect: IndexMismatch}
			case e.Offset > last && c.ahead < 0:
				// A follower's entry: judged against the segment's last
				// offset in Verdict (the entries after it name higher ones).
				c.ahead = c.ip
			}
			c.ip++
		}
	}
	c.maxLast = max(c.maxLast, last)
	if c.tidx != nil && c.time.Problem == "" {
		for c.tp < len(c.tidx.Entries) && c.tidx.Entries[c.tp].Offset <= last {
			e := c.tidx.Entries[c.tp]
			switch {
			case e.Offset != last && !TimeIndexOffsetOK(&c.dec, b, e.Offset):
				c.time = IndexVerdict{Problem: fmt.Sprintf("entry %d's offset %d is neither its batch's last offset nor the first offset carrying its max timestamp", c.tp, e.Offset), Defect: IndexMismatch}
			case e.Timestamp != ts:
				c.time = IndexVerdict{Problem: fmt.Sprintf("entry %d gives timestamp %d for offset %d, whose batch has maxTimestamp %d", c.tp, e.Timestamp, e.Offset, ts), Defect: IndexMismatch}
			}
			c.tp++
		}
	}
}

// Verdict is the judgement of each file once the kept batches are
// checked, validBytes being the end of the valid log: entries left over
// lie past it. With cut (the log is cut there) such entries are only
// Past; past the end of a log nothing cuts they are as wrong as any other
// entry, and dump --verify-index calls them index-mismatch /
// timeindex-mismatch errors: one meaning, one verdict.
func (c *IndexCheck) Verdict(validBytes int64, cut bool) (index, timeIndex IndexVerdict) {
	if c.idx != nil && c.index.Problem == "" && c.ahead >= 0 {
		// Offsets increase: the last entry matched names the highest.
		if e := c.idx.Entries[c.ip-1]; e.Offset > c.maxLast {
			c.index = IndexVerdict{Problem: fmt.Sprintf("entry %d (offset %d) lies beyond the last valid offset %d", c.ip-1, e.Offset, c.maxLast),
				Defect: IndexMismatch, Past: cut}
		}
	}
	if c.idx != nil && c.index.Problem == "" && c.ip < len(c.idx.Entries) {
		e := c.idx.Entries[c.ip]
		c.index = IndexVerdict{Problem: fmt.Sprintf("entry %d (offset %d) points at position %d, at or past the end of the valid log (%d)", c.ip, e.Offset, e.Position, validBytes),
			Defect: IndexMismatch, Past: cut}
	}
	if c.tidx != nil && c.time.Problem == "" && c.tp < len(c.tidx.Entries) {
		e := c.tidx.Entries[c.tp]
		c.time = IndexVerdict{Problem: fmt.Sprintf("entry %d's offset %d lies past the last valid batch", c.tp, e.Offset), Defect: IndexMismatch, Past: cut}
	}
	return c.index, c.time
}
