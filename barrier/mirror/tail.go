package mirror

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// Planning from the tail (issue 16). A destination that holds most of
// its source was compared byte for byte with it, and replayed, from its
// first batch: reading two whole logs to append the last per cent. A
// follower does not do that: it trusts its log below the high watermark
// and fetches from its log end (ReplicaFetcherThread, after
// truncating to the leader's epoch end offset). kseg does the same when
// everything about the destination's tail adds up:
//
//   - its last batch is found cheaply: from the last .index entry of its
//     last segment (validated: inside the file, a batch starting there
//     whose offsets hold the entry's), then a header walk to the end of the
//     file, which must end exactly at that batch's end;
//   - the source's batch with the same base offset (its segment by base
//     offset, its .index, a header walk) is byte for byte that batch
//     (partitionLeaderEpoch aside, as compare takes it) with a valid CRC;
//   - the producer state at the destination's end comes from its latest
//     producer snapshot at or below that end, the destination's batches
//     after the snapshot replayed (as ProducerStateManager does on load);
//   - its leader-epoch-checkpoint exists (otherwise the epochs would be
//     replayed from the whole log too), and its last segment has both
//     indexes and a time index entry (LogSegment reopens a segment from
//     them: maxTimestampAndOffsetSoFar is the last .timeindex entry).
//
// Anything else (no match, damage, a destination starting below the
// source's log start, a missing or odd index, no snapshot) falls back to
// the full comparison, unchanged; so does Options.FullCompare.

// tailState is what planning from the tail learnt of the destination's
// last segment, for continueSegment to reopen it without walking it.
type tailState struct {
	log     string // the segment's .log
	size    int64  // its size: the end of its last batch
	lastPos int64  // its last batch's position
	firstTs int64  // its first batch's maxTimestamp (rollingBasedTimestamp)
}

// fromTail plans the comparison from the destination's tail: on success
// the source cursor is at the first batch to copy, mp.m holds the
// destination's producer state at its end, and the continuation is
// returned; nil (and no error) when it does not apply, the cursors
// untouched, for compare to do the whole comparison.
func (mp *mirrorPlanner) fromTail(sc, dc *logCursor) (*continuation, error) {
	p := mp.p
	if mp.opts.FullCompare || dc == nil || len(dc.segs) == 0 || !mp.epochsOK || dc.Start() < sc.Start() {
		return nil, nil
	}
	last := dc.segs[len(dc.segs)-1]
	if last.Index == "" || last.TimeIndex == "" {
		return nil, nil
	}
	if tx, err := segment.ReadTimeIndex(last.TimeIndex, last.BaseOffset); err != nil || len(tx.Entries) == 0 {
		return nil, nil
	}
	tail, dstLast, ok, err := lastBatchOf(last)
	if err != nil || !ok {
		return nil, err
	}
	if dstLast.BaseOffset < dc.Start() {
		return nil, nil
	}
	// The source's batch at the same base offset. A mirror copies the
	// source's segments byte for byte, so it is usually at the same
	// position of the source's segment with the same base offset: that
	// guess is tried first (and checked as any find is), which needs no
	// .index (a source without one would be header-walked from its
	// segment's start); then the segment by base offset, its .index, a
	// header walk (locate).
	si, pos := -1, int64(-1)
	for i, s := range sc.segs {
		if s.BaseOffset == last.BaseOffset {
			if b, ok, err := batchAt(s.Log, tail.lastPos); err == nil && ok && b.BaseOffset == dstLast.BaseOffset {
				si, pos = i, tail.lastPos
			}
		}
	}
	if si < 0 {
		file, at, ok := locate(mp.srcPD, dstLast.BaseOffset)
		if !ok {
			return nil, nil
		}
		for i, s := range sc.segs {
			if filepath.Base(s.Log) == file {
				si, pos = i, at
			}
		}
		if si < 0 {
			return nil, nil
		}
	}
	file := filepath.Base(sc.segs[si].Log)
	srcLast, ok, err := batchAt(sc.segs[si].Log, pos)
	if err != nil || !ok || srcLast.BaseOffset != dstLast.BaseOffset || !srcLast.CRCValid() || sameBatch(dstLast.Raw, srcLast.Raw) >= 0 {
		return nil, err
	}
	end := max(last.BaseOffset, dstLast.NextOffset())
	m, ok, err := mp.stateAt(dc, end, dstLast.BaseOffset)
	if err != nil || !ok {
		return nil, err
	}

	// Taken: the destination is the source's up to its end.
	mp.m, mp.tail = m, tail
	p.DstLog = OffsetRange{Start: dc.Start(), End: end}
	p.Compared, p.ComparedLastBatch = 1, true
	if dstLast.PartitionLeaderEpoch != srcLast.PartitionLeaderEpoch {
		p.EpochDifferences = 1
	}
	cont := &continuation{end: end, seg: &last, keep: tail.size}
	sc.seek(si, pos)
	if !sc.Next() || sc.Batch().BaseOffset != dstLast.BaseOffset {
		return nil, cmpErr(sc.Err(), fmt.Errorf("%s position %d: the batch at offset %d is gone (did the source change?)", file, pos, dstLast.BaseOffset))
	}
	return cont, mp.srcErr(sc, sc.Next())
}

// cmpErr is err, else alt.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// lastBatchOf finds the last batch of a segment from its last offset
// index entry, validated (inside the file; a batch starts there whose
// offsets hold the entry's), walking the batch headers from there (from
// the start without entries) to the end of the file, where the last
// batch must end. ok is false when anything is odd.
func lastBatchOf(seg segment.SegmentFiles) (_ *tailState, _ *decode.Batch, ok bool, _ error) {
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return nil, nil, false, err
	}
	defer lf.Close()
	size := lf.Size
	if size == 0 {
		return nil, nil, false, nil
	}
	x, err := segment.ReadOffsetIndex(seg.Index, seg.BaseOffset)
	if err != nil {
		return nil, nil, false, nil
	}
	from := int64(0)
	if n := len(x.Entries); n > 0 {
		e := x.Entries[n-1]
		b, ok, err := batchAt(seg.Log, int64(e.Position))
		if err != nil || !ok || b.BaseOffset > e.Offset || b.LastOffset() < e.Offset {
			return nil, nil, false, err
		}
		from = int64(e.Position)
	}
	s := lf.Scanner(segment.ScanOptions{Start: from, BufferSize: 256 << 10})
	lastPos, lastEnd := int64(-1), int64(-1)
	for s.Next() {
		lastPos, lastEnd = s.Pos(), s.Pos()+s.Batch().Size()
	}
	err = s.Err()
	clean := s.Tail().Kind == segment.TailClean
	s.Close()
	if err != nil || !clean || lastPos < 0 || lastEnd != size {
		return nil, nil, false, err
	}
	first, ok, err := batchAt(seg.Log, 0)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	b, ok, err := batchAt(seg.Log, lastPos)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	return &tailState{log: seg.Log, size: size, lastPos: lastPos, firstTs: first.MaxTimestamp}, b, true, nil
}

// batchAt reads the batch at pos of a .log (its Raw a copy of its own);
// ok is false when none frames there.
func batchAt(path string, pos int64) (*decode.Batch, bool, error) {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return nil, false, err
	}
	defer lf.Close()
	if pos < 0 || pos >= lf.Size {
		return nil, false, nil
	}
	s := lf.Scanner(segment.ScanOptions{Start: pos, BufferSize: 64 << 10})
	defer s.Close()
	if !s.Next() || s.Pos() != pos {
		return nil, false, s.Err()
	}
	b, err := decode.ParseBatch(append([]byte(nil), s.Batch().Raw...))
	if err != nil {
		return nil, false, nil
	}
	return &b, true, nil
}

// stateAt is the destination's producer state at its end: its latest
// producer snapshot at or below end (ProducerStateManager.loadFromSnapshot)
// and its batches from there on, replayed (the last must be the one at
// lastBase). ok is false without a usable snapshot.
func (mp *mirrorPlanner) stateAt(dc *logCursor, end, lastBase int64) (*psm.Manager, bool, error) {
	var snap *segment.SnapshotFile
	for i := range mp.dstPD.Snapshots {
		s := &mp.dstPD.Snapshots[i]
		if s.Offset <= end && s.Offset >= dc.Start() && (snap == nil || s.Offset > snap.Offset) {
			snap = s
		}
	}
	if snap == nil {
		return nil, false, nil
	}
	entries, err := segment.ReadProducerSnapshot(snap.Path)
	if err != nil {
		return nil, false, nil
	}
	m := psm.NewManager(psm.DefaultOptions())
	m.Load(entries, snap.Offset, psm.NowFromClock)
	if snap.Offset == end {
		return m, true, nil
	}
	file, pos, ok := locate(mp.dstPD, snap.Offset)
	if !ok {
		return nil, false, nil
	}
	rc, err := openCursor(mp.p.Dir)
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	si := -1
	for i, s := range rc.segs {
		if filepath.Base(s.Log) == file {
			si = i
		}
	}
	if si < 0 {
		return nil, false, nil
	}
	rc.seek(si, pos)
	seen := int64(-1)
	for rc.Next() {
		b := rc.Batch()
		if seen < 0 && b.BaseOffset != snap.Offset {
			return nil, false, nil
		}
		_ = m.ApplyBatch(b)
		seen = b.BaseOffset
	}
	if err := rc.Err(); err != nil {
		return nil, false, err
	}
	if rc.Damage != nil || seen != lastBase {
		return nil, false, nil
	}
	return m, true, nil
}
