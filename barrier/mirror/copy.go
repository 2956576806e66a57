// The copy: the source's batches from the destination's end on, appended to
// the destination's segments as a broker's append would (LogSegment.append,
// the roll rules of UnifiedLog.maybeRoll, LeaderEpochFileCache.assign), with
// the producer state they leave, segment by segment.

package mirror

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/internal/planedit"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// dstSeg is a destination segment the plan writes: an existing one the
// copy continues (or Align cuts), or a new one.
type dstSeg struct {
	base     int64
	existing segment.SegmentFiles // empty Log for a new segment
	oldSize  int64                // the existing .log's size
	keep     int64                // bytes of the existing .log kept
	// ib is LogSegment's state of the segment: its size after the copy so
	// far, its indexes, the timestamp its time-based roll counts from.
	ib       *segment.IndexBuilder
	keptIdx  int
	keptTidx int
	txns     []segment.AbortedTxn
	keptTxn  int
	srcs     []edit.SourceRange
	appended int
}

func (s *dstSeg) addSource(path string, pos, n int64) {
	if k := len(s.srcs); k > 0 && s.srcs[k-1].Path == path && s.srcs[k-1].Pos+s.srcs[k-1].Len == pos {
		s.srcs[k-1].Len += n
		return
	}
	s.srcs = append(s.srcs, edit.SourceRange{Path: path, Pos: pos, Len: n})
}

// copyRun is the state of one copy: the segment being written and those
// written so far, the destination's log end so far, the snapshots the
// rolls take.
type copyRun struct {
	mp        *mirrorPlanner
	to        int64 // the exclusive offset the copy stops at
	lazy      bool  // the source's log end is not known yet (lazyEnd)
	cur       *dstSeg
	segs      []*dstSeg // written segments: the continued one first, then the new ones
	next      int64     // the destination's log end so far
	snapshots map[int64]bool
	snaps     []snapshotPlan
	// lastMsg says why the copy stopped before a batch it could not take
	// whole ("" when none).
	lastMsg string
}

// copyAndFiles plans the copy from the source cursor's batch on and turns
// everything into file operations.
func (mp *mirrorPlanner) copyAndFiles(sc *logCursor, cont *continuation) error {
	p, o := mp.p, mp.opts
	r := &copyRun{mp: mp, to: p.SrcLog.End, lazy: mp.lazyEnd, next: cont.end, snapshots: mp.dstSnapshots()}
	if mp.lazyEnd {
		r.to = math.MaxInt64
	}
	if o.Upto >= 0 && o.Upto < r.to {
		r.to = o.Upto
	}
	if cont.seg != nil {
		s, err := mp.continueSegment(*cont.seg, cont.keep, cont.end)
		if err != nil {
			return err
		}
		r.cur = s
		r.segs = append(r.segs, s)
		p.AppendSegment = s.base
	}
	p.From = r.next
	if r.cur == nil && sc.Batch() != nil {
		p.From = sc.Batch().BaseOffset
	}
	p.To = p.From
	err := r.walk(sc)
	if r.lazy && err != errEagerEnd {
		if eerr := mp.checkEnd(sc, err); eerr != nil {
			return eerr
		}
	}
	if err != nil {
		return err
	}
	if dm := sc.Damage; dm != nil && (o.Upto < 0 || dm.Offset < o.Upto) {
		// The damage lies inside the range to copy. Copying up to it
		// would pass off a truncated source as the whole of it.
		return &CorruptSourceError{Path: filepath.Join(p.Src, dm.File), Position: dm.Position, Offset: dm.Offset, Kind: dm.Kind,
			Err: errors.New(dm.Message)}
	}
	if r.lastMsg != "" {
		mp.warnf("%s", r.lastMsg)
	}
	p.NewLogEndOffset = max(r.next, p.To)
	if p.Copied.Batches == 0 && p.Truncation == nil {
		mp.nothingCopied(r.lastMsg)
		return nil
	}
	if r.cur != nil {
		if err := r.cur.ib.Finish(); err != nil {
			return err
		}
	}
	for _, s := range r.snaps {
		p.SnapshotsCreated = append(p.SnapshotsCreated, s.offset)
	}
	return mp.files(r.segs, r.snaps, cont)
}

// walk copies the source cursor's batches below r.to, rolling segments as
// the broker would.
func (r *copyRun) walk(sc *logCursor) error {
	mp, o := r.mp, r.mp.opts
	for b := sc.Batch(); b != nil; {
		if b.LastOffset() >= r.to {
			if r.lazy {
				return errEagerEnd
			}
			if b.BaseOffset < r.to && o.Upto >= 0 {
				r.lastMsg = fmt.Sprintf("--upto %d falls inside the batch with offsets %d..%d; the copy stops before it", o.Upto, b.BaseOffset, b.LastOffset())
			}
			break
		}
		if err := mp.copyable(sc, r.next); err != nil {
			return err
		}
		if err := r.place(b); err != nil {
			return err
		}
		if err := mp.copyBatch(r.cur, sc); err != nil {
			return err
		}
		r.next = b.LastOffset() + 1
		mp.p.To = r.next
		if !sc.Next() {
			break
		}
		b = sc.Batch()
	}
	return sc.Err()
}

// place makes r.cur the segment b is appended to: a new one for the
// first batch of a new log, or when the broker would roll
// (RollConfig.ShouldRoll).
func (r *copyRun) place(b *decode.Batch) error {
	mp := r.mp
	size, last := b.Size(), b.LastOffset()
	switch {
	case r.cur == nil:
		r.cur = mp.newSegment(b.BaseOffset)
		r.segs = append(r.segs, r.cur)
	case mp.roll.ShouldRoll(r.cur.ib, size, last, b.MaxTimestamp):
		if r.cur.ib.Size() == 0 {
			return fmt.Errorf("offsets %d..%d do not fit in the empty segment %d, which would have to be replaced", b.BaseOffset, last, r.cur.base)
		}
		newBase := max(b.BaseOffset, r.next)
		if err := r.roll(newBase); err != nil {
			return err
		}
		r.cur = mp.newSegment(newBase)
		r.segs = append(r.segs, r.cur)
		if last-r.cur.base > math.MaxInt32 {
			return fmt.Errorf("offsets %d..%d do not fit in one segment", b.BaseOffset, last)
		}
	}
	return nil
}

// roll finishes the current segment and takes the producer snapshot a
// broker takes at the roll to newBase (UnifiedLog.roll).
func (r *copyRun) roll(newBase int64) error {
	if err := r.cur.ib.Finish(); err != nil {
		return err
	}
	// A broker's own snapshot at that offset describes the same state;
	// one above Align's cut describes data that is gone.
	if tr := r.mp.p.Truncation; !r.snapshots[newBase] || (tr != nil && newBase > tr.Offset) {
		r.snaps = append(r.snaps, snapshotPlan{offset: newBase, entries: r.mp.m.Snapshot()})
	}
	return nil
}

// dstSnapshots are the offsets of the destination's producer snapshots.
func (mp *mirrorPlanner) dstSnapshots() map[int64]bool {
	snapshots := map[int64]bool{}
	if mp.dstPD != nil {
		for _, s := range mp.dstPD.Snapshots {
			snapshots[s.Offset] = true
		}
	}
	return snapshots
}

// copyable checks the source cursor's current batch can be copied after
// next (the destination's log end so far): above it, its CRC valid
// (CorruptSourceError), no larger than a segment.
func (mp *mirrorPlanner) copyable(sc *logCursor, next int64) error {
	p, b := mp.p, sc.Batch()
	if next >= 0 && b.BaseOffset < next {
		return fmt.Errorf("%s: batch at position %d (offsets %d..%d) is below the destination's log end %d", sc.File(), sc.Pos(), b.BaseOffset, b.LastOffset(), next)
	}
	if !sc.CRCValid() {
		return &CorruptSourceError{Path: filepath.Join(p.Src, sc.File()), Position: sc.Pos(), Offset: b.BaseOffset,
			Err: fmt.Errorf("%w: stored 0x%08x, computed 0x%08x", decode.ErrCRCMismatch, b.CRC, b.ComputeCRC())}
	}
	if size := b.Size(); size > mp.opts.SegmentBytes {
		return &edit.OptionError{Option: "segment-bytes", Detail: fmt.Sprintf("%d is smaller than the batch at offset %d (%d bytes)", mp.opts.SegmentBytes, b.BaseOffset, size)}
	}
	return nil
}

// checkEnd, after a copy walked without knowing the source's log end
// (lazyEnd) and ended with err (nil: at the log's end), finds that end
// and asks for a plan made with it first (errEagerEnd) if that plan would
// have stopped earlier: before a copied batch, or before the batch err is
// about, ending beyond it (a segment's offsets above the next one's).
func (mp *mirrorPlanner) checkEnd(sc *logCursor, err error) error {
	end, eerr := mp.srcEnd(sc)
	if eerr != nil {
		return eerr
	}
	if b := sc.Batch(); (mp.p.Copied.Batches > 0 && mp.p.To > end) || (err != nil && b != nil && b.LastOffset() >= end) {
		return errEagerEnd
	}
	return nil
}

// copyBatch adds the source cursor's current batch to the segment cur as
// a broker's append would (LogSegment.append: max timestamp, then an
// index entry when more than index.interval.bytes went by since the last
// one; LeaderEpochFileCache.assign), and its producer state, aborted
// transactions, barriers and counts to the plan.
func (mp *mirrorPlanner) copyBatch(cur *dstSeg, sc *logCursor) error {
	p, b := mp.p, sc.Batch()
	size, last := b.Size(), b.LastOffset()
	if err := cur.ib.Append(size, last, b.MaxTimestamp); err != nil {
		return fmt.Errorf("%s: %w", segment.SegmentFileName(cur.ib.Base(), segment.LogSuffix), err)
	}
	cur.addSource(filepath.Join(p.Src, sc.File()), sc.Pos(), size)
	cur.appended++
	if b.Magic >= 2 {
		mp.epochs = segment.AssignLeaderEpoch(mp.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
	} else {
		mp.epochs = nil
	}
	nAborted := len(mp.m.Aborted())
	_ = mp.m.ApplyBatch(b)
	for _, t := range mp.m.Aborted()[nAborted:] {
		a := segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: t.ProducerID, FirstOffset: t.FirstOffset,
			LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset}
		cur.txns = append(cur.txns, a)
		p.AbortedTxns = append(p.AbortedTxns, a)
	}
	if barrier.Is(b) {
		p.Barriers = append(p.Barriers, b.BaseOffset)
	}
	p.Copied.Batches++
	if b.RecordCount >= 0 {
		p.Copied.Records += int64(b.RecordCount)
	} else {
		p.Copied.Records++
	}
	p.Copied.Bytes += size
	return nil
}

// nothingCopied marks a plan that copies no batch (and truncates nothing)
// as having nothing to do, saying why; lastMsg is why the copy stopped
// before the batch it could not take whole ("" when none).
func (mp *mirrorPlanner) nothingCopied(lastMsg string) {
	p, o := mp.p, mp.opts
	p.NothingToDo = true
	switch {
	case o.Upto >= 0 && o.Upto <= p.From:
		p.Reason = fmt.Sprintf("the destination already ends at %d, at or beyond --upto %d", p.From, o.Upto)
	case lastMsg != "":
		p.Reason = lastMsg
	default:
		p.Reason = fmt.Sprintf("the destination already holds every batch of the source (its log end is %d)", p.From)
	}
}

type snapshotPlan struct {
	offset  int64
	entries []segment.SnapshotEntry
}

// holdState keeps the producer state as it is now as the start state of
// the segment at base (Plan.segStates).
func (mp *mirrorPlanner) holdState(base int64) {
	if mp.p.segStates != nil {
		mp.p.segStates[base] = mp.m.Clone()
	}
}

// newSegment starts a segment at base.
func (mp *mirrorPlanner) newSegment(base int64) *dstSeg {
	if len(mp.p.SegmentsCreated) == 0 {
		// The later new segments are read back after this one: their
		// replay carries on from its.
		mp.holdState(base)
	}
	mp.p.SegmentsCreated = append(mp.p.SegmentsCreated, base)
	return &dstSeg{base: base, ib: segment.NewIndexBuilder(base, mp.opts.IndexIntervalBytes)}
}

// continueSegment loads the state LogSegment keeps for an existing segment
// the copy appends to: its kept bytes, index entries (those below end),
// max timestamp, the timestamp its time-based roll counts from, and its
// aborted transactions.
func (mp *mirrorPlanner) continueSegment(f segment.SegmentFiles, keep, end int64) (*dstSeg, error) {
	size, err := fileSize(f.Log)
	if err != nil {
		return nil, err
	}
	s := &dstSeg{base: f.BaseOffset, existing: f, oldSize: size, keep: keep,
		ib: segment.NewIndexBuilder(f.BaseOffset, mp.opts.IndexIntervalBytes)}
	// Planning from the tail reopens the segment as LogSegment does, from
	// its size, its first batch and its indexes; otherwise its kept
	// batches are walked.
	reopen := mp.tail != nil && mp.tail.log == f.Log && mp.tail.size == keep && size == keep
	if !reopen {
		if err := trackKept(s.ib, f.Log, keep); err != nil {
			return nil, err
		}
	}
	idx, tidx, err := mp.keptIndexes(f, keep, end)
	if err != nil {
		return nil, err
	}
	if reopen {
		if len(tidx) == 0 {
			return nil, fmt.Errorf("%s: no time index entry to reopen it from", f.TimeIndex)
		}
		last := tidx[len(tidx)-1]
		s.ib.Reopen(keep, mp.tail.firstTs, last.Timestamp, last.Offset)
	}
	// The copy's indexes are recovery's, whatever the number of runs that
	// wrote it: the close entry of the last run goes.
	s.ib.KeepRecovered(idx, tidx)
	s.keptIdx, s.keptTidx = len(idx), len(s.ib.TimeIndex())
	mp.p.TimeIndex.Removed += len(tidx) - s.keptTidx
	if f.TxnIndex != "" {
		x, err := segment.ReadTxnIndex(f.TxnIndex)
		if err != nil {
			return nil, err
		}
		for _, t := range x.Entries {
			if t.LastOffset < end {
				s.txns = append(s.txns, t)
			}
		}
		mp.p.TxnIndex.Removed += len(x.Entries) - len(s.txns)
	}
	s.keptTxn = len(s.txns)
	return s, nil
}

// trackKept walks the batches of the segment log below position keep
// into ib, as LogSegment.recover does.
func trackKept(ib *segment.IndexBuilder, log string, keep int64) error {
	lf, err := segment.OpenLog(log)
	if err != nil {
		return err
	}
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() && sc.Pos() < keep {
		b := sc.Batch()
		ib.Track(b.Size(), b.LastOffset(), b.MaxTimestamp)
	}
	sc.Close()
	if err := cmp.Or(sc.Err(), lf.Close()); err != nil {
		return err
	}
	if ib.Size() != keep {
		return fmt.Errorf("%s: the batches before position %d end at %d", log, keep, ib.Size())
	}
	return nil
}

// keptIndexes are the entries of the segment's .index and .timeindex
// below end (and, for .index, below position keep), read from the files
// or, where one is missing, rebuilt as LogLoader recovers such a segment.
// What the files hold beyond them is counted as removed.
func (mp *mirrorPlanner) keptIndexes(f segment.SegmentFiles, keep, end int64) ([]segment.IndexEntry, []segment.TimeIndexEntry, error) {
	var rebuiltIdx, rebuiltTidx []byte
	rebuilt := false
	rebuild := func() error { // once, for whichever index is missing
		if rebuilt {
			return nil
		}
		var err error
		rebuiltIdx, rebuiltTidx, err = segment.RebuildIndexes(f.Log, f.BaseOffset, mp.opts.IndexIntervalBytes)
		rebuilt = err == nil
		return err
	}
	idx, err := keptEntries(mp, f, keep, planedit.OffsetIndex, f.Index, &mp.p.Index,
		func() ([]byte, error) { err := rebuild(); return rebuiltIdx, err },
		func(e segment.IndexEntry) bool { return e.Offset < end && int64(e.Position) < keep })
	if err != nil {
		return nil, nil, err
	}
	tidx, err := keptEntries(mp, f, keep, planedit.TimeIndex, f.TimeIndex, &mp.p.TimeIndex,
		func() ([]byte, error) { err := rebuild(); return rebuiltTidx, err },
		func(e segment.TimeIndexEntry) bool { return e.Offset < end })
	if err != nil {
		return nil, nil, err
	}
	return idx, tidx, nil
}

// keptEntries is keptIndexes for one index ix of the segment f, its file
// at path ("" when the segment has none, and rebuilt gives the bytes
// rebuilt for it when batches are kept): the entries kept says to keep;
// c counts what the file loses.
func keptEntries[E any](mp *mirrorPlanner, f segment.SegmentFiles, keep int64, ix planedit.Index[E], path string, c *edit.IndexChange, rebuilt func() ([]byte, error), kept func(E) bool) ([]E, error) {
	var all []E
	if path != "" {
		var err error
		if all, err = ix.Read(path, f.BaseOffset); err != nil {
			return nil, err
		}
	} else if keep > 0 {
		b, err := rebuilt()
		if err != nil {
			return nil, err
		}
		all = ix.Parse(b, f.BaseOffset)
		mp.warnf("%s has no %s; it is rebuilt", filepath.Base(f.Log), ix.Suffix)
	}
	k := planedit.Kept(all, kept)
	if path != "" {
		c.Removed += len(all) - len(k)
	}
	return k, nil
}
