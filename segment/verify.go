package segment

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync/atomic"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// IndexProblemKind names the failed check of an IndexProblem: the checks
// kafka-dump-log's --verify-index-only runs (DumpLogSegments.dumpIndex /
// dumpTimeIndex), and order. Each is reported as an index-mismatch or
// timeindex-mismatch finding (FindingKind).
type IndexProblemKind string

// IndexProblem kinds.
const (
	// ProblemIndexMismatch: the batch at the entry's position does not end
	// at the entry's offset ("Mismatches in :…"). Outside kafka-dump-log's
	// checks (VerifyOptions.DumpLogSegments) only an entry a lookup gets
	// wrong is one: its offset lies below the first offset of the batch at
	// its position (see OffsetIndexEntryOK).
	ProblemIndexMismatch IndexProblemKind = "index-mismatch"
	// ProblemIndexPastEnd: the entry's offset lies beyond the segment's
	// last offset (the log was cut and the index was not).
	ProblemIndexPastEnd IndexProblemKind = "index-past-end"
	// ProblemIndexPosition: no batch starts at the entry's position, or the
	// position is past the end of the log.
	ProblemIndexPosition IndexProblemKind = "index-position"
	// ProblemTimeIndexNotFound: no batch ends at the entry's offset ("The
	// following indexed offsets are not found in the log").
	ProblemTimeIndexNotFound IndexProblemKind = "timeindex-offset-not-found"
	// ProblemTimeIndexTimestamp: the batch's max timestamp differs from the
	// entry's ("Found timestamp mismatch").
	ProblemTimeIndexTimestamp IndexProblemKind = "timeindex-timestamp-mismatch"
	// ProblemTimeIndexOrder: a timestamp not above the previous entry's
	// ("Found out of order timestamp").
	ProblemTimeIndexOrder IndexProblemKind = "timeindex-out-of-order"
	// ProblemIndexOrder: an offset-index entry whose offset or position is
	// not above the previous entry's. OffsetIndex#append never writes one
	// (InvalidOffsetException) and lookups binary-search the entries, so
	// such an index sends reads to the wrong place; kafka-dump-log does not
	// check it.
	ProblemIndexOrder IndexProblemKind = "index-out-of-order"
)

// IndexProblem is one failed index check.
type IndexProblem struct {
	Kind IndexProblemKind
	Path string // the index file
	Slot int    // entry number in the index file
	// IndexOffset/IndexTimestamp come from the entry; LogOffset and
	// LogTimestamp from the log (-1 when no batch was found).
	IndexOffset    int64
	IndexTimestamp int64
	Position       int64
	LogOffset      int64
	LogTimestamp   int64
	// PrevPosition is the previous entry's position (ProblemIndexOrder,
	// whose LogOffset is the previous entry's offset).
	PrevPosition int64
}

func (p IndexProblem) String() string {
	switch p.Kind {
	case ProblemIndexMismatch:
		return fmt.Sprintf("%s: entry %d: index offset %d at position %d, but the batch there ends at log offset %d", p.Path, p.Slot, p.IndexOffset, p.Position, p.LogOffset)
	case ProblemIndexPosition:
		return fmt.Sprintf("%s: entry %d: index offset %d points at position %d, where no batch starts", p.Path, p.Slot, p.IndexOffset, p.Position)
	case ProblemIndexPastEnd:
		return fmt.Sprintf("%s: entry %d: index offset %d at position %d lies beyond the segment's last offset %d", p.Path, p.Slot, p.IndexOffset, p.Position, p.LogOffset)
	case ProblemTimeIndexNotFound:
		return fmt.Sprintf("%s: entry %d: indexed offset %d not found in the log (found log offset %d)", p.Path, p.Slot, p.IndexOffset, p.LogOffset)
	case ProblemTimeIndexTimestamp:
		return fmt.Sprintf("%s: entry %d: index timestamp %d, log timestamp %d (offset %d)", p.Path, p.Slot, p.IndexTimestamp, p.LogTimestamp, p.IndexOffset)
	case ProblemTimeIndexOrder:
		return fmt.Sprintf("%s: entry %d: index timestamp %d is not above the previously indexed timestamp %d", p.Path, p.Slot, p.IndexTimestamp, p.LogTimestamp)
	case ProblemIndexOrder:
		return fmt.Sprintf("%s: entry %d: index offset %d at position %d is out of order: the previous entry has offset %d at position %d (entries must increase)", p.Path, p.Slot, p.IndexOffset, p.Position, p.LogOffset, p.PrevPosition)
	}
	return string(p.Kind)
}

// FindingKind is the finding a problem is reported as: timeindex-mismatch
// for a time index's, index-mismatch for an offset index's.
func (p IndexProblem) FindingKind() finding.Kind {
	switch p.Kind {
	case ProblemTimeIndexNotFound, ProblemTimeIndexTimestamp, ProblemTimeIndexOrder:
		return finding.TimeIndexMismatch
	}
	return finding.IndexMismatch
}

// VerifyIndexes checks an offset index and a time index (either may be
// nil) against their log in one pass over the log's batch headers: linear
// in the segment size, where kafka-dump-log rescans the log once per
// time-index entry. An offset-index entry must point at the start of a
// batch and name an offset a lookup finds from there (OffsetIndexEntryOK:
// what LogSegment.append writes on a leader and on a follower); a
// time-index entry's offset must be an offset Kafka's writers put there
// for some batch (TimeIndexOffsetOK), that batch's maxTimestamp must be
// the entry's timestamp, and timestamps must increase.
//
// The log is mapped: the walk touches only each batch's header, so the
// pages of its records are never copied. A log truncated under the walk
// faults; that fault is recovered here and returned as an error.
func VerifyIndexes(log *LogFile, idx *OffsetIndex, tidx *TimeIndex) (probs []IndexProblem, err error) {
	return VerifyIndexesWith(log, idx, tidx, VerifyOptions{})
}

// VerifyOptions changes how VerifyIndexesWith judges the entries.
type VerifyOptions struct {
	// DumpLogSegments judges the entries as kafka-dump-log's
	// --verify-index-only does: an offset-index entry must hold the
	// lastOffset of the batch at its position (dumpIndex), so a
	// follower's entry (OffsetIndexEntryOK) is a ProblemIndexMismatch;
	// a time-index entry is found only at the lastOffset of its batch
	// (dumpTimeIndex), so an entry a broker before Kafka 3.8 wrote inside
	// an uncompressed or LogAppendTime batch (TimeIndexOffsetOK) is
	// reported as ProblemTimeIndexNotFound with that batch's lastOffset,
	// and its timestamp is not checked.
	DumpLogSegments bool
}

// OffsetIndexEntryOK reports whether an offset-index entry naming offset
// and pointing at the start of batch b sends every lookup to the right
// place. OffsetIndex.lookup(target) returns the position of the last
// entry whose offset is at most target, and the read scans forward from
// there to the first batch whose lastOffset reaches target
// (LogSegment.translateOffset): the entry is right when b begins at or
// below offset, so that no offset the entry answers for lies before b.
// LogSegment.append writes (largest offset appended, position of the
// append): on a leader one batch, whose lastOffset it is; on a follower a
// fetched chunk of several batches (UnifiedLog.appendAsFollower), whose
// entry names the last offset of a later batch than the one at its
// position. Both are right; so is any offset inside b. An offset beyond
// the segment's last offset is judged when the walk has seen the whole
// segment (ProblemIndexPastEnd).
func OffsetIndexEntryOK(b *decode.Batch, offset int64) bool { return offset >= b.BaseOffset }

// VerifyIndexesWith is VerifyIndexes with options.
func VerifyIndexesWith(log *LogFile, idx *OffsetIndex, tidx *TimeIndex, opts VerifyOptions) (probs []IndexProblem, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			probs, err = nil, fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", log.Path, e)
		}
	}()
	return verifyIndexes(log, idx, tidx, opts)
}

func verifyIndexes(log *LogFile, idx *OffsetIndex, tidx *TimeIndex, opts VerifyOptions) ([]IndexProblem, error) {
	v := NewIndexVerifier(idx, tidx, opts)
	m := &v.m
	probs, ok, err := m.halves(log)
	if err != nil {
		return nil, err
	}
	if !ok {
		if probs, err = m.walk(log); err != nil {
			return probs, err
		}
	}
	sortProblems(probs)
	return probs, nil
}

// IndexVerifier is VerifyIndexes for a caller that walks the log itself
// and hands it each batch in log order (kseg check feeds it the walk its
// dump makes, so that the log is read once for every check): the same
// checks, the same problems.
type IndexVerifier struct{ m indexMatcher }

// NewIndexVerifier checks the entries' own order now and the rest as
// batches come (either index may be nil).
func NewIndexVerifier(idx *OffsetIndex, tidx *TimeIndex, opts VerifyOptions) *IndexVerifier {
	v := &IndexVerifier{m: indexMatcher{idx: idx, tidx: tidx, opts: opts}}
	m := &v.m
	if idx != nil {
		for i, e := range idx.Entries {
			m.byPos = append(m.byPos, slotRef{i, int64(e.Position)})
			if i > 0 {
				if p := idx.Entries[i-1]; e.Offset <= p.Offset || e.Position <= p.Position {
					m.probs = append(m.probs, IndexProblem{Kind: ProblemIndexOrder, Path: idx.Path, Slot: i, IndexOffset: e.Offset,
						Position: int64(e.Position), LogOffset: p.Offset, PrevPosition: int64(p.Position), LogTimestamp: -1})
				}
			}
		}
		sort.SliceStable(m.byPos, func(a, b int) bool { return m.byPos[a].key < m.byPos[b].key })
	}
	if tidx != nil {
		for i, e := range tidx.Entries {
			m.byOff = append(m.byOff, slotRef{i, e.Offset})
		}
		sort.SliceStable(m.byOff, func(a, b int) bool { return m.byOff[a].key < m.byOff[b].key })
		prev := int64(-1)
		for i, e := range tidx.Entries {
			if prev >= e.Timestamp {
				m.probs = append(m.probs, IndexProblem{Kind: ProblemTimeIndexOrder, Path: tidx.Path, Slot: i, IndexOffset: e.Offset,
					IndexTimestamp: e.Timestamp, LogTimestamp: prev, Position: -1, LogOffset: -1})
			}
			prev = e.Timestamp
		}
	}
	return v
}

// Batch matches the entries up to batch b at pos. Batches come in log
// order; after structural damage, from the next valid batch on (Resync),
// as VerifyIndexes's own walk reads them.
func (v *IndexVerifier) Batch(pos int64, b *decode.Batch) { v.m.batch(pos, b) }

// Problems reports the entries no batch matched and returns every
// problem, sorted by file and slot.
func (v *IndexVerifier) Problems() []IndexProblem {
	v.m.rest(v.m.maxLast)
	probs := v.m.probs
	sortProblems(probs)
	return probs
}

func sortProblems(probs []IndexProblem) {
	sort.SliceStable(probs, func(a, b int) bool {
		if probs[a].Path != probs[b].Path {
			return probs[a].Path < probs[b].Path
		}
		return probs[a].Slot < probs[b].Slot
	})
}

// slotRef is an index entry by its key (position or offset) and slot.
type slotRef struct {
	slot int
	key  int64
}

// indexMatcher matches index entries, sorted by position (byPos) and by
// offset (byOff), with the batches of a walk over the log, in log order.
type indexMatcher struct {
	idx   *OffsetIndex
	tidx  *TimeIndex
	opts  VerifyOptions
	byPos []slotRef
	byOff []slotRef
	// ip and tp are the next entries to match; probs what was found.
	ip, tp int
	probs  []IndexProblem
	dec    decode.Decoder
	// ahead are offset-index entries naming an offset above the lastOffset
	// of the batch at their position (a follower's); maxLast is the highest
	// lastOffset met: rest judges them against the segment's last offset.
	ahead   []slotRef
	maxLast int64
}

// batch matches the entries up to batch b at pos: an offset-index entry
// must point at a batch's start, the start of the batch whose lastOffset
// it holds; a time-index entry is matched with the first batch whose
// lastOffset reaches its offset.
func (m *indexMatcher) batch(pos int64, b *decode.Batch) {
	last := b.LastOffset()
	for m.ip < len(m.byPos) && m.byPos[m.ip].key <= pos {
		e := m.idx.Entries[m.byPos[m.ip].slot]
		if m.byPos[m.ip].key < pos {
			m.probs = append(m.probs, IndexProblem{Kind: ProblemIndexPosition, Path: m.idx.Path, Slot: m.byPos[m.ip].slot,
				IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: -1, LogTimestamp: -1})
		} else if last != e.Offset {
			switch {
			case m.opts.DumpLogSegments || !OffsetIndexEntryOK(b, e.Offset):
				m.probs = append(m.probs, IndexProblem{Kind: ProblemIndexMismatch, Path: m.idx.Path, Slot: m.byPos[m.ip].slot,
					IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: last, LogTimestamp: -1})
			case e.Offset > last:
				m.ahead = append(m.ahead, m.byPos[m.ip])
			}
		}
		m.ip++
	}
	m.maxLast = max(m.maxLast, last)
	for m.tp < len(m.byOff) && m.byOff[m.tp].key <= last {
		m.timeEntry(pos, b)
	}
}

// timeEntry matches time-index entry tp with batch b at pos.
func (m *indexMatcher) timeEntry(pos int64, b *decode.Batch) {
	last := b.LastOffset()
	e := m.tidx.Entries[m.byOff[m.tp].slot]
	switch {
	case last != e.Offset && (m.opts.DumpLogSegments || !TimeIndexOffsetOK(&m.dec, b, e.Offset)):
		m.probs = append(m.probs, IndexProblem{Kind: ProblemTimeIndexNotFound, Path: m.tidx.Path, Slot: m.byOff[m.tp].slot,
			IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: pos, LogOffset: last, LogTimestamp: -1})
	case b.MaxTimestamp != e.Timestamp:
		m.probs = append(m.probs, IndexProblem{Kind: ProblemTimeIndexTimestamp, Path: m.tidx.Path, Slot: m.byOff[m.tp].slot,
			IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: pos, LogOffset: last, LogTimestamp: b.MaxTimestamp})
	}
	m.tp++
}

// rest reports the entries no batch of the walk matched: nothing starts
// at their position, nothing holds their offset; and the entries that
// name an offset beyond maxLast, the segment's last offset.
func (m *indexMatcher) rest(maxLast int64) {
	for _, r := range m.ahead {
		if e := m.idx.Entries[r.slot]; e.Offset > maxLast {
			m.probs = append(m.probs, IndexProblem{Kind: ProblemIndexPastEnd, Path: m.idx.Path, Slot: r.slot,
				IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: maxLast, LogTimestamp: -1})
		}
	}
	for ; m.ip < len(m.byPos); m.ip++ {
		e := m.idx.Entries[m.byPos[m.ip].slot]
		m.probs = append(m.probs, IndexProblem{Kind: ProblemIndexPosition, Path: m.idx.Path, Slot: m.byPos[m.ip].slot,
			IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: -1, LogTimestamp: -1})
	}
	for ; m.tp < len(m.byOff); m.tp++ {
		e := m.tidx.Entries[m.byOff[m.tp].slot]
		m.probs = append(m.probs, IndexProblem{Kind: ProblemTimeIndexNotFound, Path: m.tidx.Path, Slot: m.byOff[m.tp].slot,
			IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: -1, LogOffset: -1, LogTimestamp: -1})
	}
}

// walk matches every entry in one walk over the log's batch headers.
// After structural damage the walk resynchronises on the next valid batch
// (Resync), so that entries pointing past the damage are checked against
// what is really there.
func (m *indexMatcher) walk(log *LogFile) ([]IndexProblem, error) {
	start, minOffset := int64(0), int64(-1)
	for {
		sc := log.Scanner(ScanOptions{Start: start, Mmap: true})
		for sc.Next() {
			b := sc.Batch()
			m.batch(sc.Pos(), b)
			minOffset = b.LastOffset() + 1
		}
		if err := sc.Err(); err != nil {
			return m.probs, err
		}
		t := sc.Tail()
		if t.Kind != TailCorrupt && t.Kind != TailTornBatch {
			break
		}
		pos, found, err := Resync(log.ReaderAt(), t.ValidBytes+1, t.End, ResyncOptions{MinBaseOffset: minOffset})
		if err != nil && !errors.Is(err, ErrResyncBudget) {
			return m.probs, err
		}
		if !found {
			break
		}
		start = pos
	}
	m.rest(m.maxLast)
	return m.probs, nil
}

// halvesMinBytes: a log at least this large with an offset index is
// walked in two halves on two goroutines (halves). A variable for tests.
var halvesMinBytes int64 = 64 << 20

// halvesUsed counts the calls halves answered, for tests.
var halvesUsed atomic.Int64

// halfWalk is what halves needs of the walk of one half.
type halfWalk struct {
	end       int64 // where its last batch ends
	clean     bool  // its scan ended without damage, at its limit
	firstPos  int64
	firstLast int64
	firstBase int64
	err       error
}

// walkHalf matches the batches of log from position from to limit (0:
// the end) with mt's entries; second says it is the second half, whose
// time-index entries start at its first batch's baseOffset.
func (mt *indexMatcher) walkHalf(log *LogFile, from, limit int64, second bool) (h halfWalk) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			h.err = fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", log.Path, e)
		}
	}()
	sc := log.Scanner(ScanOptions{Start: from, Limit: limit, Mmap: true})
	defer sc.Close()
	h.end, h.firstPos = from, -1
	for sc.Next() {
		bt := sc.Batch()
		if h.firstPos < 0 {
			h.firstPos, h.firstBase, h.firstLast = sc.Pos(), bt.BaseOffset, bt.LastOffset()
			if second {
				mt.tp = sort.Search(len(mt.byOff), func(i int) bool { return mt.byOff[i].key >= bt.BaseOffset })
			}
		}
		mt.batch(sc.Pos(), bt)
		h.end = sc.Pos() + bt.Size()
	}
	if h.err = sc.Err(); h.err != nil {
		return h
	}
	// The first half must end cleanly at split; the second as one walk
	// ends without resyncing (walk).
	t := sc.Tail()
	h.clean = t.Kind == TailClean || (second && t.Kind != TailCorrupt && t.Kind != TailTornBatch)
	return h
}

// halves walks the log in two halves at once, split at the position of
// the offset-index entry nearest the middle, and matches each half's
// entries with its own batches: the same problems as one walk, in half
// the time on two cores. The first half must end exactly where the
// second begins, and neither may end on damage; otherwise ok is false
// and nothing is reported (the caller walks the log in one go, resyncing
// past damage as it does).
func (m *indexMatcher) halves(log *LogFile) (probs []IndexProblem, ok bool, err error) {
	if log.Size < halvesMinBytes || len(m.byPos) < 2 || runtime.GOMAXPROCS(0) < 2 {
		return nil, false, nil
	}
	k := sort.Search(len(m.byPos), func(i int) bool { return m.byPos[i].key >= log.Size/2 })
	if k == 0 || k == len(m.byPos) {
		return nil, false, nil
	}
	split := m.byPos[k].key
	// The first half matches the entries before split, the second those
	// from it; time-index entries go to the second half from the second
	// half's first baseOffset on, the rest to the first (those between the
	// first half's last batch and that baseOffset match no batch there, and
	// are the second's first batch's as one walk would have them: below its
	// baseOffset, so not found at its position).
	a := &indexMatcher{idx: m.idx, tidx: m.tidx, opts: m.opts, byPos: m.byPos[:k], byOff: m.byOff}
	b := &indexMatcher{idx: m.idx, tidx: m.tidx, opts: m.opts, byPos: m.byPos[k:], byOff: m.byOff}
	done := make(chan halfWalk, 1)
	go func() { done <- b.walkHalf(log, split, 0, true) }()
	ha := a.walkHalf(log, 0, split, false)
	hb := <-done
	if err := cmp.Or(ha.err, hb.err); err != nil {
		return nil, false, err
	}
	if !ha.clean || !hb.clean || ha.end != split || hb.firstPos != split {
		return nil, false, nil
	}
	// The first half's time-index entries stop at its last batch; those
	// from there to the second half's first baseOffset would have met the
	// second half's first batch.
	b0 := sort.Search(len(m.byOff), func(i int) bool { return m.byOff[i].key >= hb.firstBase })
	if b0 < a.tp {
		// The second half starts below the first's last offset: one walk
		// would match those entries differently.
		return nil, false, nil
	}
	var gap []IndexProblem
	for _, r := range m.byOff[a.tp:b0] {
		e := m.tidx.Entries[r.slot]
		gap = append(gap, IndexProblem{Kind: ProblemTimeIndexNotFound, Path: m.tidx.Path, Slot: r.slot,
			IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: hb.firstPos, LogOffset: hb.firstLast, LogTimestamp: -1})
	}
	a.byOff = m.byOff[:a.tp] // its unmatched time entries are the gap's
	last := max(a.maxLast, b.maxLast)
	a.rest(last)
	b.rest(last)
	probs = append(append(append(m.probs, a.probs...), gap...), b.probs...)
	halvesUsed.Add(1)
	return probs, true, nil
}

// TimeIndexOffsetOK reports whether off is an offset a Kafka broker writes
// into a .timeindex entry for batch b. LogSegment.append indexes the
// segment's max timestamp with the offset its caller hands over
// (shallowOffsetOfMaxTimestamp), and that offset depends on the writer:
//
//   - the batch's lastOffset: compressed batches
//     (LogValidator.validateMessagesAndAssignOffsetsCompressed), follower
//     appends (UnifiedLog.analyzeAndValidateRecords), indexes rebuilt by
//     LogSegment.recover, and every leader append since KAFKA-16341 /
//     KAFKA-16310 (Kafka 3.8);
//   - before Kafka 3.8, for an uncompressed batch on the leader, the offset
//     of the FIRST record carrying the batch's highest timestamp
//     (LogValidator.assignOffsetsNonCompressed kept the offset where
//     record.timestamp() > maxTimestamp last held), and for a LogAppendTime
//     batch the first offset it assigned (offsetOfMaxTimestamp =
//     initialOffset).
//
// Anything else is an entry no broker wrote. Only an uncompressed v2 batch
// whose entry points inside it is decoded.
func TimeIndexOffsetOK(dec *decode.Decoder, b *decode.Batch, off int64) bool {
	if off == b.LastOffset() {
		return true
	}
	if b.IsLegacy() || off < b.BaseOffset || off > b.LastOffset() {
		return false
	}
	if b.TimestampType() == decode.LogAppendTime {
		return off == b.BaseOffset
	}
	if b.Compression() != decode.CompressionNone {
		return false
	}
	first := int64(-1)
	err := dec.Records(b, func(r *decode.Record) error {
		if first < 0 && r.Timestamp == b.MaxTimestamp {
			first = r.Offset
		}
		return nil
	})
	return err == nil && first == off
}

// VerifySegmentIndexes reads segment s's .index and .timeindex back the
// way a write command's read-back check must: the broker's load-time
// checks (OffsetIndex/TimeIndex.sanityCheck) and dump --verify-index's
// (VerifyIndexes), every problem as one line. An index or log that cannot
// be read is an error.
func VerifySegmentIndexes(s SegmentFiles) ([]string, error) {
	lf, err := OpenLog(s.Log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	idx, tidx, err := readSegmentIndexes(s)
	if err != nil {
		return nil, err
	}
	var out []string
	if idx != nil {
		if err := SanityCheckOffsetIndex(idx); err != nil {
			out = append(out, err.Error())
		}
	}
	if tidx != nil {
		if err := SanityCheckTimeIndex(tidx); err != nil {
			out = append(out, err.Error())
		}
	}
	probs, err := VerifyIndexes(lf, idx, tidx)
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		out = append(out, p.String())
	}
	return out, nil
}
