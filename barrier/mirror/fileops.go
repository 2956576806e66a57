// The plan as file operations, in the order the edit engine commits them:
// partition.metadata, what Align's cut deletes, each written segment's
// files, the producer snapshots at the rolls and at the new log end, and
// leader-epoch-checkpoint.

package mirror

import (
	"fmt"
	"slices"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/plural"
)

// files turns the plan into file operations, in commit order:
// partition.metadata, snapshots above the cut, segments above the cut
// (highest first), the continued segment's .txnindex, .timeindex, .index
// and .log, the new segments (each .log, .index, .timeindex, .txnindex),
// the new snapshots, leader-epoch-checkpoint.
func (mp *mirrorPlanner) files(segs []*dstSeg, snaps []snapshotPlan, cont *continuation) error {
	p := mp.p
	ol := &edit.OpList{Dir: p.Dir, Create: p.CreateDir}
	if p.TopicID != "" && (mp.dstPD == nil || mp.dstPD.PartitionMetadata == "") {
		b, err := segment.ReadFileLimit(mp.srcPD.PartitionMetadata, segment.MaxPartitionMetadataBytes, "partition.metadata")
		if err != nil {
			return err
		}
		if _, err := ol.Write(segment.PartitionMetadataName, b, "the source's topic id "+p.TopicID+" (a mirror keeps it)"); err != nil {
			return err
		}
	}
	rewritten := map[int64]bool{}
	for _, s := range snaps {
		rewritten[s.offset] = true
	}
	if tr := p.Truncation; tr != nil {
		for i := len(mp.dstPD.Snapshots) - 1; i >= 0; i-- {
			s := mp.dstPD.Snapshots[i]
			if s.Offset <= tr.Offset || rewritten[s.Offset] {
				continue
			}
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := ol.Delete(s.Path, "producer snapshot above the cut"); err != nil {
				return err
			}
		}
		slices.Sort(p.SnapshotsDeleted)
		for i := len(cont.after) - 1; i >= 0; i-- {
			f := cont.after[i]
			why := fmt.Sprintf("segment %d lies wholly above the cut", f.BaseOffset)
			if err := edit.DeleteSegment(f, why, &p.Index, &p.TimeIndex, &p.TxnIndex, ol.Delete); err != nil {
				return err
			}
		}
	}
	for _, s := range segs {
		if err := mp.segmentOps(ol, s); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if _, err := ol.Write(segment.SegmentFileName(s.offset, segment.SnapshotSuffix), segment.EncodeProducerSnapshot(s.entries),
			fmt.Sprintf("producer state at the roll to segment %d (%s), as UnifiedLog.roll takes it", s.offset, nProducers(len(s.entries)))); err != nil {
			return err
		}
	}
	if err := mp.endSnapshot(ol, segs, snaps, cont); err != nil {
		return err
	}
	if err := mp.epochOps(ol); err != nil {
		return err
	}
	p.Ops = ol.List
	return nil
}

// endSnapshot plans the producer snapshot at the new log end that a
// broker's clean shutdown writes (UnifiedLog.close →
// ProducerStateManager.takeSnapshot), so that the next mirror, like a
// broker's next load, starts from the state there instead of replaying
// the log; and the deletion of the destination's snapshot at its old end
// when that is not a segment base offset: no longer the latest, it is a
// stray snapshot ProducerStateManager.removeStraySnapshots deletes at the
// next load anyway.
func (mp *mirrorPlanner) endSnapshot(ol *edit.OpList, segs []*dstSeg, snaps []snapshotPlan, cont *continuation) error {
	p := mp.p
	end := p.NewLogEndOffset
	if slices.ContainsFunc(snaps, func(s snapshotPlan) bool { return s.offset == end }) {
		return nil
	}
	entries := mp.m.Snapshot()
	if _, err := ol.Write(segment.SegmentFileName(end, segment.SnapshotSuffix), segment.EncodeProducerSnapshot(entries),
		fmt.Sprintf("producer state at the new log end (%s), as a broker's clean shutdown takes it (UnifiedLog.close)", nProducers(len(entries)))); err != nil {
		return err
	}
	p.EndSnapshot = end
	if mp.dstPD == nil || p.Truncation != nil {
		// Align deletes the snapshots above its cut already.
		return nil
	}
	bases := map[int64]bool{}
	for _, s := range mp.dstPD.Segments {
		bases[s.BaseOffset] = true
	}
	for _, s := range segs {
		bases[s.base] = true
	}
	for _, s := range mp.dstPD.Snapshots {
		if s.Offset == cont.end && s.Offset != end && !bases[s.Offset] {
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := ol.Delete(s.Path, "producer snapshot at the old log end, no longer the latest (ProducerStateManager.removeStraySnapshots deletes it at the next load)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// segmentOps are the file operations of one written segment: a continued
// one's .txnindex, .timeindex, .index and .log, or a new one's .log,
// .index, .timeindex and .txnindex. The index counts go to the plan.
func (mp *mirrorPlanner) segmentOps(ol *edit.OpList, s *dstSeg) error {
	p := mp.p
	idx, tidx, err := s.ib.Encode()
	if err != nil {
		return err
	}
	p.Index.Kept += s.keptIdx
	p.Index.Added += len(s.ib.Index()) - s.keptIdx
	p.TimeIndex.Kept += s.keptTidx
	p.TimeIndex.Added += len(s.ib.TimeIndex()) - s.keptTidx
	p.TxnIndex.Kept += s.keptTxn
	p.TxnIndex.Added += len(s.txns) - s.keptTxn
	var txn []byte
	for _, t := range s.txns {
		txn = segment.AppendAbortedTxn(txn, t)
	}
	name := func(suffix string) string { return segment.SegmentFileName(s.base, suffix) }
	if s.existing.Log == "" {
		lwhy := "new segment: " + nBatches(s.appended) + " copied from the source"
		ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpCreate, Why: lwhy, OldSize: -1, NewSize: s.ib.Size(), Sources: s.srcs})
		ol.Add(edit.FileOp{Name: name(segment.IndexSuffix), Action: edit.OpCreate, Why: "its offset index", OldSize: -1, NewSize: int64(len(idx)), Content: idx})
		ol.Add(edit.FileOp{Name: name(segment.TimeIndexSuffix), Action: edit.OpCreate, Why: "its time index", OldSize: -1, NewSize: int64(len(tidx)), Content: tidx})
		if len(txn) > 0 {
			ol.Add(edit.FileOp{Name: name(segment.TxnIndexSuffix), Action: edit.OpCreate, Why: fmt.Sprintf("the aborted transactions of %d copied ABORT markers", len(s.txns)),
				OldSize: -1, NewSize: int64(len(txn)), Content: txn})
		}
		return nil
	}
	why := "the copied batches indexed"
	// Without a cut the continued segment's indexes only grow, as a
	// broker's do while the segment is active: their new entries are
	// appended in place when the files hold exactly the kept ones.
	write := ol.WriteAppending
	if p.Truncation != nil && p.Truncation.Segment == s.base {
		why = "entries at or above the cut dropped, the copied batches indexed"
		write = ol.Write
	}
	if s.existing.TxnIndex != "" || len(s.txns) > 0 {
		if txn == nil {
			txn = []byte{}
		}
		twhy := fmt.Sprintf("the aborted transactions of %d copied ABORT markers added", len(s.txns)-s.keptTxn)
		if len(s.txns) == s.keptTxn {
			twhy = "aborted transactions ending at or above the cut dropped"
		}
		if _, err := write(name(segment.TxnIndexSuffix), txn, twhy); err != nil {
			return err
		}
	}
	if _, err := write(name(segment.TimeIndexSuffix), tidx, why); err != nil {
		return err
	}
	if _, err := write(name(segment.IndexSuffix), idx, why); err != nil {
		return err
	}
	if s.keep == s.oldSize && len(s.srcs) == 0 {
		return nil
	}
	lwhy := "append " + nBatches(s.appended) + " copied from the source"
	if s.keep < s.oldSize {
		lwhy = fmt.Sprintf("truncate at position %d, then %s", s.keep, lwhy)
		if s.appended == 0 {
			lwhy = fmt.Sprintf("truncate at position %d", s.keep)
		}
	}
	if s.keep == s.oldSize {
		// Every byte of the segment stays: the copy is appended in place,
		// as LogSegment.append writes the active segment (no backup copy,
		// no staged copy of the kept bytes; see edit.OpAppend).
		ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpAppend, Why: lwhy, OldSize: s.oldSize,
			NewSize: s.ib.Size(), Sources: s.srcs})
		return nil
	}
	ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpReplace, Why: lwhy, OldSize: s.oldSize,
		NewSize: s.ib.Size(), KeepPrefix: s.keep, Sources: s.srcs})
	return nil
}

// epochOps writes leader-epoch-checkpoint: the kept entries, then assign
// for every copied batch (LeaderEpochFileCache.assign).
func (mp *mirrorPlanner) epochOps(ol *edit.OpList) error {
	p := mp.p
	var before []segment.EpochEntry
	if mp.dstPD != nil && mp.dstPD.LeaderEpochCheckpoint != "" {
		var err error
		if before, err = segment.ReadLeaderEpochCheckpoint(mp.dstPD.LeaderEpochCheckpoint); err != nil {
			return err
		}
	}
	for _, e := range mp.epochs {
		if !slices.Contains(before, e) {
			p.EpochEntriesAdded = append(p.EpochEntriesAdded, e)
		}
	}
	if !mp.epochsOK && len(mp.epochs) == 0 {
		return nil
	}
	why := "leader epochs of the copied batches recorded"
	if len(p.EpochEntriesRemoved) > 0 {
		why = "leader epochs starting at or above the cut dropped"
		if len(p.EpochEntriesAdded) > 0 {
			why += ", those of the copied batches recorded"
		}
	}
	_, err := ol.Write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(mp.epochs), why)
	return err
}

func nBatches(n int) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}

func nProducers(n int) string {
	if n == 1 {
		return "1 producer"
	}
	return plural.N(n, "producer")
}
