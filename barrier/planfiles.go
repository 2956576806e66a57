package barrier

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/barrier/internal/planedit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// planFiles turns the plan into file operations, in commit order:
// snapshots above the cut, the segments above the cut (highest first), the
// cut segment's .txnindex, .timeindex, .index and .log, the
// leader-epoch-checkpoint, the new snapshot.
//
// rebuilt holds the cut segment's kept batches, indexed from scratch: its
// entries stand in for a missing .index or .timeindex.
func (pl *planner) planFiles(kept, dropped []*segScan, ci int, appendBytes []byte, rebuilt *segment.IndexBuilder) error {
	p, o := pl.p, pl.opts
	cs := kept[ci]
	cut := p.Cut
	pl.ops = edit.OpList{Dir: pl.dir}

	newSnap := ""
	if !o.NoSnapshot {
		p.SnapshotOffset = p.NewLogEndOffset
		newSnap = segment.SegmentFileName(p.NewLogEndOffset, segment.SnapshotSuffix)
	}
	if err := pl.snapshotOps(newSnap); err != nil {
		return err
	}
	if err := pl.straySnapshotOps(kept[:ci+1]); err != nil {
		return err
	}
	later := append(append([]*segScan{}, kept[ci+1:]...), dropped...)
	if err := pl.laterSegmentOps(later); err != nil {
		return err
	}
	if err := pl.txnIndexOps(cs); err != nil {
		return err
	}
	if err := pl.indexOps(cs, rebuilt); err != nil {
		return err
	}

	// The cut segment's .log: the kept prefix, byte for byte, then the new
	// batches.
	why := "append the barrier"
	if p.Mode == ModeAbort && len(p.Appended) > 1 {
		why = fmt.Sprintf("append %d ABORT markers and the barrier", len(p.Appended)-1)
	}
	if cs.size > p.CutPosition {
		why = fmt.Sprintf("truncate at position %d (offset %d), then %s", p.CutPosition, cut, why)
	}
	pl.ops.Add(edit.FileOp{Name: filepath.Base(cs.files.Log), Action: edit.OpReplace, Why: why, OldSize: cs.size,
		NewSize: p.CutPosition + int64(len(appendBytes)), KeepPrefix: p.CutPosition, Content: appendBytes})

	if pl.epochContent != nil {
		why := "leader epochs starting at or above the cut dropped"
		if p.EpochEntryAdded != nil {
			why = fmt.Sprintf("epoch %d recorded from offset %d", p.EpochEntryAdded.Epoch, p.EpochEntryAdded.StartOffset)
			if len(p.EpochEntriesRemoved) > 0 {
				why = "leader epochs starting at or above the cut dropped, " + why
			}
		}
		if _, err := pl.ops.Write(segment.LeaderEpochCheckpointName, pl.epochContent, why); err != nil {
			return err
		}
	}
	if newSnap != "" {
		if _, err := pl.ops.Write(newSnap, segment.EncodeProducerSnapshot(nil), "empty producer state at the new log end: the barrier clears every producer"); err != nil {
			return err
		}
	}
	p.Ops = pl.ops.List
	return nil
}

// snapshotOps deletes the snapshots above the cut: they describe data
// that is gone (ProducerStateManager.truncateAndReload deletes them too).
// newSnap, the snapshot written at the new log end, is replaced instead.
func (pl *planner) snapshotOps(newSnap string) error {
	p := pl.p
	for i := len(pl.pd.Snapshots) - 1; i >= 0; i-- {
		s := pl.pd.Snapshots[i]
		if s.Offset <= p.Cut {
			continue
		}
		p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
		if filepath.Base(s.Path) == newSnap {
			continue // replaced below
		}
		if err := pl.ops.Delete(s.Path, "producer snapshot above the cut"); err != nil {
			return err
		}
	}
	return nil
}

// straySnapshotOps deletes the snapshots a broker deletes at its next load
// once the new one is written (segment.SnapshotsDeletedAtLoad): the old
// log end's, a stray beside the new one (removeStraySnapshots keeps only
// the newest), and those at or below the log start (truncateAndReload).
// remaining are the segments up to the cut one.
func (pl *planner) straySnapshotOps(remaining []*segScan) error {
	p := pl.p
	var offsets []int64
	for _, s := range pl.pd.Snapshots {
		if s.Offset <= p.Cut && s.Offset != p.SnapshotOffset {
			offsets = append(offsets, s.Offset)
		}
	}
	if p.SnapshotOffset >= 0 {
		offsets = append(offsets, p.SnapshotOffset)
	}
	bases := make([]int64, len(remaining))
	for i, s := range remaining {
		bases[i] = s.files.BaseOffset
	}
	logStart := max(pl.logStart, bases[0])
	for _, d := range segment.SnapshotsDeletedAtLoad(offsets, bases, logStart, p.NewLogEndOffset) {
		if d.Offset == p.SnapshotOffset {
			continue // the broker rebuilds it; the new one is written anyway
		}
		p.SnapshotsDeleted = append(p.SnapshotsDeleted, d.Offset)
		name := segment.SegmentFileName(d.Offset, segment.SnapshotSuffix)
		if err := pl.ops.Delete(filepath.Join(pl.dir, name), "producer snapshot that "+d.Why); err != nil {
			return err
		}
	}
	return nil
}

// laterSegmentOps deletes, highest first, the segments wholly above the
// cut (LocalLog.truncateTo deletes them) and those a tail repair drops
// (LogLoader.recoverLog).
func (pl *planner) laterSegmentOps(later []*segScan) error {
	p := pl.p
	slices.SortFunc(later, func(a, b *segScan) int { return cmp.Compare(b.files.BaseOffset, a.files.BaseOffset) })
	for _, s := range later {
		f := s.files
		p.SegmentsDeleted = append(p.SegmentsDeleted, f.BaseOffset)
		why := fmt.Sprintf("segment %d lies wholly above the cut", f.BaseOffset)
		if p.TailRepair != nil && f.BaseOffset > p.TailRepair.Segment {
			why = fmt.Sprintf("segment %d follows the repaired tail", f.BaseOffset)
		}
		if err := edit.DeleteSegment(f, why, &p.Index, &p.TimeIndex, &p.TxnIndex, pl.ops.Delete); err != nil {
			return err
		}
	}
	slices.Sort(p.SegmentsDeleted)
	slices.Sort(p.SnapshotsDeleted)
	return nil
}

// txnIndexOps writes the cut segment cs's .txnindex:
// TransactionIndex.truncateTo drops the entries whose lastOffset >= cut;
// abort mode adds its entries.
func (pl *planner) txnIndexOps(cs *segScan) error {
	p, cut := pl.p, pl.p.Cut
	var txns []segment.AbortedTxn
	if cs.files.TxnIndex != "" {
		x, err := segment.ReadTxnIndex(cs.files.TxnIndex)
		if err != nil {
			return err
		}
		for _, t := range x.Entries {
			if t.LastOffset < cut {
				txns = append(txns, t)
			}
		}
		p.TxnIndex.Kept = len(txns)
		p.TxnIndex.Removed += len(x.Entries) - len(txns)
	}
	txns = append(txns, p.AbortedTxns...)
	p.TxnIndex.Added = len(p.AbortedTxns)
	if cs.files.TxnIndex == "" && len(txns) == 0 {
		return nil
	}
	var content []byte
	for _, t := range txns {
		content = segment.AppendAbortedTxn(content, t)
	}
	if content == nil {
		content = []byte{}
	}
	why := "aborted transactions ending at or above the cut dropped"
	if len(p.AbortedTxns) > 0 {
		why = fmt.Sprintf("%d aborted transactions of the new ABORT markers added", len(p.AbortedTxns))
	}
	_, err := pl.ops.Write(segment.SegmentFileName(cs.files.BaseOffset, segment.TxnIndexSuffix), content, why)
	return err
}

// indexOps writes the cut segment cs's .index and .timeindex:
// OffsetIndex/TimeIndex.truncateTo drop entries at or above the cut, then
// the new batches are indexed as LogSegment.append would. A missing file
// is rebuilt (LogLoader recovers a segment whose index is missing) from
// rebuilt, the kept batches indexed from scratch.
func (pl *planner) indexOps(cs *segScan, rebuilt *segment.IndexBuilder) error {
	p, base := pl.p, cs.files.BaseOffset
	damaged, err := pl.indexDamage(cs, rebuilt)
	if err != nil {
		return err
	}
	idxKept, tidxKept, err := pl.keptIndexEntries(cs, rebuilt, damaged)
	if err != nil {
		return err
	}
	// The kept batches end at the cut position, where the new ones go. The
	// time index's close entry (LogSegment.close, at the last shutdown)
	// goes: recovery writes none, and Finish writes the segment's last.
	b := rebuilt
	b.KeepRecovered(idxKept, tidxKept)
	if n := len(b.TimeIndex()); n < len(tidxKept) {
		p.TimeIndex.Removed += len(tidxKept) - n
		p.TimeIndex.Kept = n
	}
	for _, a := range p.Appended {
		if err := b.Append(int64(a.Size), a.Offset, p.Timestamp); err != nil {
			return err
		}
	}
	if err := b.Finish(); err != nil {
		return err
	}
	p.Index.Added = len(b.Index()) - p.Index.Kept
	p.TimeIndex.Added = len(b.TimeIndex()) - p.TimeIndex.Kept
	why := "entries at or above the cut dropped, the new batches indexed"
	if p.Mode == ModeAbort && p.TailRepair == nil {
		why = "the new batches indexed"
	}
	if damaged {
		why = "damaged before the injection: rebuilt from the kept batches, the new batches indexed"
	}
	idx, tidx, err := b.Encode()
	if err != nil {
		return err
	}
	if _, err := pl.ops.Write(segment.SegmentFileName(base, segment.TimeIndexSuffix), tidx, why); err != nil {
		return err
	}
	_, err = pl.ops.Write(segment.SegmentFileName(base, segment.IndexSuffix), idx, why)
	return err
}

// indexDamage reports whether the cut segment's indexes are damaged now.
// Damage the injection did not cause must not be blamed on it: the
// read-back check verifies this segment's indexes, so whatever is wrong
// with them now (an entry pointing where no batch starts, say) is found
// here, shown in the plan, and repaired in the same edit by indexing the
// kept batches from scratch (rebuilt), as LogSegment.recover rebuilds the
// indexes of a segment it recovers.
func (pl *planner) indexDamage(cs *segScan, rebuilt *segment.IndexBuilder) (bool, error) {
	p := pl.p
	damage, err := segment.VerifySegmentIndexes(cs.files)
	if err != nil {
		return false, err
	}
	p.IndexDamage = damage
	for _, d := range damage {
		pl.warnf("damage found before the injection, repaired by it (the cut segment's indexes are rebuilt from its log): %s", d)
	}
	if len(damage) > 0 {
		// The rebuilt entries stand in for every kept one.
		f := cs.files
		p.Index.Removed += planedit.OffsetIndex.Count(f.Index, f.BaseOffset)
		p.TimeIndex.Removed += planedit.TimeIndex.Count(f.TimeIndex, f.BaseOffset)
		p.Index.Kept, p.TimeIndex.Kept = len(rebuilt.Index()), len(rebuilt.TimeIndex())
	}
	return len(damage) > 0, nil
}

// keptIndexEntries are the entries of the cut segment's .index and
// .timeindex below the cut, as OffsetIndex/TimeIndex.truncateTo keep
// them; those of rebuilt where a file is missing or damaged.
func (pl *planner) keptIndexEntries(cs *segScan, rebuilt *segment.IndexBuilder, damaged bool) ([]segment.IndexEntry, []segment.TimeIndexEntry, error) {
	cut := pl.p.Cut
	idx, err := keptEntries(pl, cs, planedit.OffsetIndex, cs.files.Index, damaged, rebuilt.Index(), &pl.p.Index,
		func(e segment.IndexEntry) bool { return e.Offset < cut })
	if err != nil {
		return nil, nil, err
	}
	tidx, err := keptEntries(pl, cs, planedit.TimeIndex, cs.files.TimeIndex, damaged, rebuilt.TimeIndex(), &pl.p.TimeIndex,
		func(e segment.TimeIndexEntry) bool { return e.Offset < cut })
	if err != nil {
		return nil, nil, err
	}
	return idx, tidx, nil
}

// keptEntries is keptIndexEntries for one index ix of the segment, its
// file at path ("" when the segment has none): the file's entries kept
// says to keep, or rebuilt's when the file is missing or damaged; c
// counts what the file keeps and loses.
func keptEntries[E any](pl *planner, cs *segScan, ix planedit.Index[E], path string, damaged bool, rebuilt []E, c *edit.IndexChange, kept func(E) bool) ([]E, error) {
	if path == "" {
		pl.warnf("%s has no %s; it is rebuilt", filepath.Base(cs.files.Log), ix.Suffix)
		return rebuilt, nil
	}
	if damaged {
		return rebuilt, nil
	}
	all, err := ix.Read(path, cs.files.BaseOffset)
	if err != nil {
		return nil, err
	}
	k := planedit.Kept(all, kept)
	c.Removed += len(all) - len(k)
	c.Kept = len(k)
	return k, nil
}
