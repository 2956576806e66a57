// The destination against the source: how far it is the source's prefix
// (compare, in lockstep; fromTail in tail.go reads only its last batch), the
// divergence where it stops being one, and Align's cut there
// (LocalLog.truncateTo), as failback needs before mirroring back.

package mirror

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/digest"
)

// continuation is where the copy resumes in the destination.
type continuation struct {
	end   int64                 // the destination's log end after any truncation
	seg   *segment.SegmentFiles // the segment the copy continues; nil for none
	keep  int64                 // bytes of it kept
	cut   bool                  // Align truncates
	after []segment.SegmentFiles
}

// compare walks the destination against the source. On return the
// source cursor is at the first batch to copy (or exhausted) and the
// producer-state manager holds the destination's state at its (possibly
// truncated) end.
func (mp *mirrorPlanner) compare(sc *logCursor, dc *logCursor) (*continuation, error) {
	p := mp.p
	sHas := sc.Next()
	cont := &continuation{end: -1}
	if dc == nil || len(dc.segs) == 0 {
		// A new log: it starts with the source's first batch.
		p.DstLog = OffsetRange{Start: -1, End: -1}
		return cont, mp.srcErr(sc, sHas)
	}
	dEnd, err := logEnd(mp.dstPD)
	if err != nil {
		return nil, err
	}
	p.DstLog = OffsetRange{Start: dc.Start(), End: dEnd}
	start := max(sc.Start(), dc.Start())
	for sHas && sc.Batch().LastOffset() < start {
		sHas = sc.Next()
	}
	var prev *batchRef
	var div *Divergence
	for dc.Next() {
		b := dc.Batch()
		if b.LastOffset() < start {
			mp.keepBatch(b)
			r := refOf(dc)
			prev = &r
			continue
		}
		d, err := mp.diverges(dc, sc, prev, sHas)
		if err != nil {
			return nil, err
		}
		if d != nil {
			div = d
			break
		}
		if b.PartitionLeaderEpoch != sc.Batch().PartitionLeaderEpoch {
			p.EpochDifferences++
		}
		p.Compared++
		mp.keepBatch(b)
		r := refOf(dc)
		prev = &r
		sHas = sc.Next()
	}
	if err := dc.Err(); err != nil {
		return nil, err
	}
	if div == nil && dc.Damage != nil {
		div = &Divergence{Offset: dc.Damage.Offset, Reason: "the destination's tail is damaged: " + dc.Damage.Message,
			DstFile: dc.Damage.File, DstPosition: dc.Damage.Position, SrcPosition: -1}
		if sHas {
			div.SrcFile, div.SrcPosition = sc.File(), sc.Pos()
		}
	}
	if div == nil {
		if err := mp.atPrefixEnd(dc, prev, cont); err != nil {
			return nil, err
		}
		return cont, mp.srcErr(sc, sHas)
	}
	p.Divergence = div
	if !mp.opts.Align {
		return nil, &DivergedError{Src: p.Src, Dst: p.Dir, Divergence: *div}
	}
	return cont, mp.truncate(dc, sc, cont, prev)
}

// diverges is the divergence at the destination cursor's batch, or nil
// when it is the source cursor's (sHas: the source has a batch there;
// prev: the destination's batch before it).
func (mp *mirrorPlanner) diverges(dc, sc *logCursor, prev *batchRef, sHas bool) (*Divergence, error) {
	return divergenceAt(&dirCursor{logCursor: dc}, &dirCursor{logCursor: sc}, prev, sHas, 0, func() (int64, error) { return mp.srcEnd(sc) })
}

// divergenceAt is the divergence at the destination cursor dc's batch, or
// nil when it is the source cursor sc's batch (partitionLeaderEpoch
// aside). sHas says the source has a batch there, prev is the
// destination's batch before it, srcEnd the source's log end (asked for
// only when the source has no batch there) and h the hash a digest among
// the two carries. PlanMirror and PlanFromDigest compare by it.
func divergenceAt(dc, sc chainCursor, prev *batchRef, sHas bool, h digest.Hash, srcEnd func() (int64, error)) (*Divergence, error) {
	b := dc.Batch()
	d := &Divergence{Offset: b.BaseOffset, DstFile: dc.File(), DstPosition: dc.Pos(), SrcPosition: -1}
	switch {
	case prev != nil && b.BaseOffset < prev.next():
		d.Reason = fmt.Sprintf("the destination's batch at %s position %d (offsets %d..%d) starts before the end of the batch before it", dc.File(), dc.Pos(), b.BaseOffset, b.LastOffset())
	case !sHas:
		end, err := srcEnd()
		if err != nil {
			return nil, err
		}
		d.Reason = fmt.Sprintf("the destination holds offsets from %d, at or beyond the source's end %d", b.BaseOffset, end)
	default:
		s := sc.Batch()
		d.SrcFile, d.SrcPosition = sc.File(), sc.Pos()
		if s.BaseOffset != b.BaseOffset {
			d.Reason = fmt.Sprintf("the destination's batch at %s position %d starts at offset %d, the source's at %s position %d at %d",
				dc.File(), dc.Pos(), b.BaseOffset, sc.File(), sc.Pos(), s.BaseOffset)
		} else if i, located := diffBatches(dc, sc, h); i >= 0 {
			why := "its own data (a failover's barrier or writes)"
			if !dc.crcValid() {
				why = "a batch that fails its CRC"
			}
			at := "first difference at byte"
			if !located {
				at = "first difference in its records, at or after byte"
			}
			d.Reason = fmt.Sprintf("the destination holds %s at offset %d: %s %d (%s position %d; the source's %s position %d)",
				why, b.BaseOffset, at, i, dc.File(), dc.Pos()+int64(i), sc.File(), sc.Pos()+int64(i))
		} else {
			return nil, nil
		}
	}
	return d, nil
}

// atPrefixEnd sets cont to continue the destination's last segment after
// its last batch (prev), the destination being a prefix of the source; a
// destination ending below the source's log start is a *GapError.
func (mp *mirrorPlanner) atPrefixEnd(dc *logCursor, prev *batchRef, cont *continuation) error {
	p := mp.p
	cont.end = max(dc.segs[len(dc.segs)-1].BaseOffset, dc.Start())
	if prev != nil {
		cont.end = max(cont.end, prev.next())
	}
	last := dc.segs[len(dc.segs)-1]
	cont.seg = &last
	size, err := fileSize(last.Log)
	if err != nil {
		return err
	}
	cont.keep = 0
	if prev != nil && prev.file == filepath.Base(last.Log) {
		cont.keep = prev.pos + prev.size
	}
	if cont.keep < size {
		mp.warnf("%s: %d zero bytes of preallocation after position %d are removed", filepath.Base(last.Log), size-cont.keep, cont.keep)
	}
	if cont.end < p.SrcLog.Start && !(prev == nil && cont.end <= p.SrcLog.Start) {
		return &GapError{Src: p.Src, Dst: p.Dir, DstEnd: cont.end, SrcStart: p.SrcLog.Start}
	}
	return nil
}

// srcErr is the source cursor's I/O error, if it stopped on one.
func (mp *mirrorPlanner) srcErr(sc *logCursor, has bool) error {
	if !has {
		return sc.Err()
	}
	return nil
}

// keepBatch accounts for a destination batch that stays: its producer
// state, and its leader epoch when there is no checkpoint file.
func (mp *mirrorPlanner) keepBatch(b *decode.Batch) {
	_ = mp.m.ApplyBatch(b)
	if !mp.epochsOK {
		if b.Magic >= 2 {
			mp.epochs = segment.AssignLeaderEpoch(mp.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
		} else {
			mp.epochs = nil
		}
	}
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// truncate plans Align's cut at the divergence: LocalLog.truncateTo keeps
// the segments whose base is at or below the cut, truncates the one the
// cut falls in, and deletes the later ones.
func (mp *mirrorPlanner) truncate(dc, sc *logCursor, cont *continuation, prev *batchRef) error {
	p := mp.p
	cut := p.Divergence.Offset
	var cs segment.SegmentFiles
	for _, s := range dc.segs {
		if s.BaseOffset <= cut {
			cs = s
		}
	}
	if cs.Log == "" {
		cs = dc.segs[0]
	}
	if sc.Batch() != nil && sc.Batch().BaseOffset < cs.BaseOffset {
		return &DivergedError{Src: p.Src, Dst: p.Dir, Divergence: Divergence{Offset: cut, DstFile: p.Divergence.DstFile, DstPosition: p.Divergence.DstPosition,
			SrcFile: sc.File(), SrcPosition: sc.Pos(),
			Reason: p.Divergence.Reason + "; the source's next batch starts below the destination segment the cut falls in, so it cannot be aligned"}}
	}
	tr, err := removedAt(dc, cs, cut, prev)
	if err != nil {
		return err
	}
	var after []segment.SegmentFiles
	for _, s := range dc.segs {
		if s.BaseOffset > cs.BaseOffset {
			after = append(after, s)
			tr.SegmentsDeleted = append(tr.SegmentsDeleted, s.BaseOffset)
			if n, err := fileSize(s.Log); err == nil {
				tr.Removed.Bytes += n
			}
		}
	}
	tr.Removed.Offsets = max(0, p.DstLog.End-cut)
	p.Truncation = tr
	cont.cut = true
	cont.seg = &cs
	cont.keep = tr.Position
	cont.after = after
	cont.end = cut
	if prev != nil && prev.next() < cut {
		cont.end = prev.next()
	}
	cont.end = max(cont.end, cs.BaseOffset)
	var removed []segment.EpochEntry
	mp.epochs, removed = segment.TruncateLeaderEpochs(mp.epochs, cut)
	p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, removed...)
	return nil
}

// removedAt is the cut at offset cut in the segment cs: where it falls in
// cs, and the batches, records, producers and bytes of cs it removes —
// the destination cursor's batch at the divergence and every one after
// it (the later segments' bytes are the caller's to add).
func removedAt(dc *logCursor, cs segment.SegmentFiles, cut int64, prev *batchRef) (*Truncation, error) {
	tr := &Truncation{Offset: cut, Segment: cs.BaseOffset, Position: -1, SegmentsDeleted: []int64{}}
	removedPIDs := map[int64]bool{}
	count := func(b *decode.Batch, file string, pos int64) {
		if tr.Position < 0 && file == filepath.Base(cs.Log) {
			tr.Position = pos
		}
		tr.Removed.Batches++
		n := int64(b.RecordCount)
		if n < 0 {
			n = 1
		}
		tr.Removed.Records += n
		if b.HasProducerID() {
			removedPIDs[b.ProducerID] = true
		}
	}
	if b := dc.Batch(); b != nil {
		// The divergence is at this batch: it goes, and all after it.
		count(b, dc.File(), dc.Pos())
		for dc.Next() {
			count(dc.Batch(), dc.File(), dc.Pos())
		}
		if err := dc.Err(); err != nil {
			return nil, err
		}
	}
	if dm := dc.Damage; dm != nil && tr.Position < 0 && dm.File == filepath.Base(cs.Log) {
		tr.Position = dm.Position
	}
	if tr.Position < 0 {
		// The cut falls at the end of the cut segment's batches.
		tr.Position = 0
		if prev != nil && prev.file == filepath.Base(cs.Log) {
			tr.Position = prev.pos + prev.size
		}
	}
	size, err := fileSize(cs.Log)
	if err != nil {
		return nil, err
	}
	tr.Removed.Bytes = size - tr.Position
	for pid := range removedPIDs {
		tr.Removed.Producers = append(tr.Removed.Producers, pid)
	}
	slices.Sort(tr.Removed.Producers)
	return tr, nil
}
