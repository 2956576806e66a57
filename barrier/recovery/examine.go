// Pass one: which segments recovery examines (from the one holding the
// recovery point, and below it those LogLoader.loadSegmentFiles recovers),
// each read as LogSegment.recover reads it, and the log end before and
// after the cut.

package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// readRecoveryPoint is the partition's recovery-point-offset-checkpoint
// entry; -1 when absent (a warning when unreadable): every segment is then
// examined.
func (rp *planner) readRecoveryPoint() int64 {
	rp0, err := segment.CheckpointOffset(rp.pd, segment.RecoveryPointCheckpointName)
	if err != nil {
		rp.warnf("%s unreadable (%v); every segment is examined", filepath.Join(rp.logDir, segment.RecoveryPointCheckpointName), err)
	}
	return rp0
}

// segRepair is the scan of one examined segment.
type segRepair struct {
	files   segment.SegmentFiles
	size    int64
	valid   int64
	batches int64
	next    int64 // after the last kept batch; the base when none
	framed  int64 // offset after the last batch that frames (kept or not)
	cut     *Cut
	removed int64 // framed batches after the cut

	index, timeIndex []byte // rebuilt from the kept batches
	indexEntries     int
	timeEntries      int
	// indexBad / timeBad say why the existing file is not what recovery
	// would keep ("" when it verifies against the kept batches).
	indexBad, timeBad   string
	indexKind, timeKind finding.Kind // the finding's kind (indexFinding)
}

// open lists the partition: its segments with a .log, the orphaned index
// files (segments without one), and the log start offset of the log
// directory's checkpoint (-1 when none); it warns about leftovers and a
// clean-shutdown marker.
func (rp *planner) open() (segs, orphans []segment.SegmentFiles, logStart int64, err error) {
	p := rp.p
	pd, err := segment.OpenPartitionDir(rp.dir)
	if err != nil {
		return nil, nil, 0, err
	}
	rp.pd = pd
	journalTemp, err := edit.CheckLeftovers(pd, "kseg run")
	if err != nil {
		return nil, nil, 0, err
	}
	if journalTemp != "" {
		rp.warnf("%s is left from a run interrupted before it changed anything; applying the plan removes it (a dry run leaves it)", journalTemp)
	}
	if _, err := os.Stat(filepath.Join(rp.logDir, segment.CleanShutdownName)); err == nil {
		rp.cleanShutdown = true
		rp.warnf("the log directory holds %s: a broker would take the shutdown as clean and skip recovery; kseg repairs anyway", segment.CleanShutdownName)
	}
	for _, s := range pd.Segments {
		if s.Log == "" {
			orphans = append(orphans, s)
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, nil, 0, edit.Refuse(edit.RefuseNotPartition, rp.dir, "no .log segment")
	}
	logStart, _, err = psm.LogDirCheckpoints(pd)
	if err != nil {
		rp.warnf("log directory checkpoints unreadable (%v); log start taken from the first segment", err)
		logStart = -1
	}
	p.LogStartOffset = max(logStart, segs[0].BaseOffset)
	return segs, orphans, logStart, nil
}

// scope is the index in segs of the first segment recovery examines: the
// one holding the recovery point (LogLoader.recoverLog), or the first
// (Options.All, or no recovery point). It records the scope in the plan.
func (rp *planner) scope(segs []segment.SegmentFiles) int {
	p := rp.p
	p.RecoveryPoint = rp.readRecoveryPoint()
	first := 0
	switch {
	case rp.opts.All:
		p.Scope = "every segment (--all)"
	case p.RecoveryPoint < 0:
		p.Scope = "every segment: no recovery-point-offset-checkpoint entry (a broker recovers them all after an unclean shutdown)"
	default:
		for i, s := range segs {
			if s.BaseOffset <= p.RecoveryPoint {
				first = i
			}
		}
		p.Scope = fmt.Sprintf("segments from %d, the one holding the recovery point %d, to the end", segs[first].BaseOffset, p.RecoveryPoint)
	}
	return first
}

// overlaps finds the segments whose offsets run into the next segment's
// (segment.SegmentOverlaps). Kafka's LogLoader loads them as they are;
// repair cuts each where LogSegment.truncateTo(the next base offset)
// would, keeping the segments after it, whatever the recovery point. It
// refuses when the batch at the cut begins below the next base: those
// offsets exist only in this segment.
func (rp *planner) overlaps() error {
	found, err := segment.SegmentOverlaps(rp.pd)
	if err != nil {
		return err
	}
	for _, o := range found {
		if o.Straddles {
			return edit.Refuse(RefuseOverlapStraddles, o.Log,
				"its offsets run into the next segment %s (offsets %d..%d are in both), and the batch at position %d begins below %d: a cut there would lose the offsets below %d, which only this segment holds. Compare the two segments' batches (kseg dump) and decide by hand",
				filepath.Base(o.NextLog), o.Next, o.NextOffset-1, o.Position, o.Next, o.Next)
		}
		if rp.overlapBefore == nil {
			rp.overlapBefore = map[int64]int64{}
		}
		rp.overlapBefore[o.Segment] = o.Next
	}
	return nil
}

// examine is pass 1: it scans the segments from first on until one is cut
// (cutAt is its index in segs, -1 when none is). Below the recovery point
// only a missing .index or a .txnindex failing its sanity check makes the
// broker recover a segment (LogLoader.loadSegmentFiles).
func (rp *planner) examine(segs []segment.SegmentFiles, first int) (scans []*segRepair, cutAt int, err error) {
	p := rp.p
	cutAt = -1
	for i, s := range segs {
		why := "at or above the recovery point"
		if rp.opts.All {
			why = "--all"
		} else if p.RecoveryPoint < 0 {
			why = "no recovery point"
		}
		before := rp.overlapBefore[s.BaseOffset]
		if i < first {
			why = belowRecoveryPoint(s)
			if before > 0 {
				why = fmt.Sprintf("below the recovery point, but its offsets run into the next segment %d", before)
			}
			if why == "" {
				continue
			}
		}
		sr, err := rp.scan(s, before)
		if err != nil {
			return nil, -1, err
		}
		if p.FirstExamined < 0 {
			p.FirstExamined = s.BaseOffset
		}
		scans = append(scans, sr)
		p.Segments = append(p.Segments, Segment{BaseOffset: s.BaseOffset, Log: filepath.Base(s.Log), Size: sr.size, Why: why,
			ValidBytes: sr.valid, Batches: sr.batches, NextOffset: sr.next, Cut: sr.cut})
		overlap := sr.cut != nil && sr.cut.Kind == finding.SegmentOverlap
		if sr.cut != nil && i >= first && !overlap {
			return scans, i, nil
		}
		if sr.cut != nil && !overlap {
			rp.warnf("segment %d lies below the recovery point and is truncated at position %d; the broker truncates it without deleting the later segments, and so does kseg", s.BaseOffset, sr.cut.Position)
		}
	}
	return scans, cutAt, nil
}

// logEnds works out the log end before and after the repair and what is
// removed, returns the segments after the cut (recovery can no longer
// reach them), refuses a log start above the new end, and reports the
// cuts and the unreachable segments.
func (rp *planner) logEnds(segs []segment.SegmentFiles, scans []*segRepair, cutAt int, logStart int64) ([]segment.SegmentFiles, error) {
	p := rp.p
	last := scans[len(scans)-1]
	p.NewLogEndOffset = last.next
	p.LogEndOffset = last.framed
	var dropped []segment.SegmentFiles
	if cutAt >= 0 {
		dropped = segs[cutAt+1:]
		for _, s := range dropped {
			n, end, size, err := frameSegment(s)
			if err != nil {
				return nil, err
			}
			p.Removed.Batches += n
			p.Removed.Bytes += size
			p.LogEndOffset = max(p.LogEndOffset, end)
			p.SegmentsDeleted = append(p.SegmentsDeleted, s.BaseOffset)
		}
	} else {
		// No in-scope cut: the log end is the last segment's.
		p.NewLogEndOffset = max(p.NewLogEndOffset, segs[len(segs)-1].BaseOffset)
	}
	for _, sr := range scans {
		if sr.cut != nil {
			p.Removed.Batches += sr.removed
			p.Removed.Bytes += sr.size - sr.valid
		}
	}
	p.LogEndOffset = max(p.LogEndOffset, p.NewLogEndOffset)
	p.Removed.Offsets = p.LogEndOffset - p.NewLogEndOffset
	if logStart > p.NewLogEndOffset {
		return nil, edit.Refuse(edit.RefuseBelowLogStart, rp.dir, "the log start offset %d is above the repaired log end %d: a broker would delete every segment at load (deleteSegmentsIfLogStartGreaterThanLogEnd)", logStart, p.NewLogEndOffset)
	}
	for _, sr := range scans {
		if c := sr.cut; c != nil {
			rp.find(c.Kind, sr.files.Log, c.Position, "%s", c.Message)
		}
	}
	for _, s := range dropped {
		rp.find(finding.SegmentUnreachable, s.Log, -1, "%s follows a truncated segment: recovery deletes it (LogLoader.recoverLog)", filepath.Base(s.Log))
	}
	return dropped, nil
}

// belowRecoveryPoint says why the broker would recover a segment below
// the recovery point at load (segment.LoadRecoveryReason), "" when it
// would not.
func belowRecoveryPoint(s segment.SegmentFiles) string {
	if why := segment.LoadRecoveryReason(s); why != "" {
		return "below the recovery point, but " + why
	}
	return ""
}

// frameSegment counts the batches of a segment that frame (no CRC check)
// and the offset after the last one.
func frameSegment(s segment.SegmentFiles) (batches, end, size int64, err error) {
	lf, err := segment.OpenLog(s.Log)
	if err != nil {
		return 0, 0, 0, err
	}
	defer lf.Close()
	end = s.BaseOffset
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		batches++
		end = max(end, sc.Batch().NextOffset())
	}
	return batches, end, lf.Size, sc.Err()
}

// scan reads one segment as LogSegment.recover does (segment.Recover),
// rebuilding its indexes and checking the existing ones against the kept
// batches in the same pass.
func (rp *planner) scan(s segment.SegmentFiles, before int64) (*segRepair, error) {
	ib := segment.NewIndexBuilder(s.BaseOffset, rp.opts.IndexIntervalBytes)
	iv, err := segment.NewIndexCheck(s)
	if err != nil {
		return nil, err
	}
	var ierr error
	r, err := segment.Recover(s.Log, s.BaseOffset, segment.RecoverOptions{Progress: rp.opts.Progress, Before: before, OnBatch: func(pos int64, b *decode.Batch) bool {
		iv.Batch(pos, b)
		ierr = ib.Append(b.Size(), b.LastOffset(), b.MaxTimestamp)
		return ierr == nil
	}})
	var oe *segment.OffsetOverflowError
	switch {
	case errors.As(err, &oe):
		return nil, edit.Refuse(RefuseOffsetOverflow, s.Log,
			"the batch at position %d ends at offset %d, which does not fit the segment's base offset %d; the broker splits such a segment (LogSegmentOffsetOverflowException), kseg repair does not: inspect it with kseg dump",
			oe.Position, oe.LastOffset, oe.BaseOffset)
	case err != nil:
		return nil, err
	case ierr != nil:
		return nil, fmt.Errorf("%s: %w", s.Log, ierr)
	}
	sr := &segRepair{files: s, size: r.Size, valid: r.ValidBytes, batches: r.Batches, next: r.NextOffset, framed: r.FramedEnd, removed: r.Lost}
	if c := r.Cut; c != nil {
		sr.cut = &Cut{Position: c.Position, Kind: c.Kind.FindingKind(), Bytes: c.Bytes, Message: c.Message}
	}
	if err := ib.Finish(); err != nil {
		return nil, err
	}
	if sr.index, sr.timeIndex, err = ib.Encode(); err != nil {
		return nil, err
	}
	sr.indexEntries, sr.timeEntries = len(ib.Index()), len(ib.TimeIndex())
	idx, tidx := iv.Verdict(sr.valid, sr.cut != nil)
	sr.indexBad, sr.timeBad = idx.Problem, tidx.Problem
	sr.indexKind = indexFinding(idx, finding.IndexMissing, finding.IndexMismatch, finding.IndexRebuilt)
	sr.timeKind = indexFinding(tidx, finding.TimeIndexMissing, finding.TimeIndexMismatch, finding.TimeIndexRebuilt)
	return sr, nil
}

// indexFinding is the kind of an index file's verdict v (none when it
// verifies): the defect's kind (dump's word for it: mismatch,
// index-length, index-sanity, errors; missing or index-zero-tail,
// warnings), or, when the only problem is entries past the end of a log
// this repair cuts, rebuilt, info.
func indexFinding(v segment.IndexVerdict, missing, mismatch, rebuilt finding.Kind) finding.Kind {
	switch {
	case v.Problem == "":
		return 0
	case v.Past:
		return rebuilt
	}
	switch v.Defect {
	case segment.IndexMissing:
		return missing
	case segment.IndexZeroTail:
		return finding.IndexZeroTail
	case segment.IndexLength:
		return finding.IndexLength
	case segment.IndexSanity:
		return finding.IndexSanity
	}
	return mismatch
}
