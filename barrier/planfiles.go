package barrier

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// indexBuilder keeps one segment's sparse indexes with LogSegment's rules
// (formats.md §7.1–7.2): before a batch is counted, if more than
// index.interval.bytes went by since the last offset-index entry, the batch
// gets an entry (lastOffset, position) and the time index gets (max
// timestamp so far, offset of the batch holding it) if that timestamp is
// above its last entry's; when the segment is closed or rolled the time
// index gets the final (max timestamp, offset) entry.
type indexBuilder struct {
	base         int64
	interval     int64
	idx          []segment.IndexEntry
	tidx         []segment.TimeIndexEntry
	lastEntryPos int64 // LogSegment.recover's lastIndexEntry
	maxTs        int64 // maxTimestampAndOffsetSoFar
	maxOff       int64
}

func newIndexBuilder(base int64, interval int) *indexBuilder {
	return &indexBuilder{base: base, interval: int64(interval), maxTs: decode.NoTimestamp, maxOff: base}
}

// add accounts for the batch ending at last, starting at pos.
func (b *indexBuilder) add(pos, last, maxTs int64) {
	if maxTs > b.maxTs {
		b.maxTs, b.maxOff = maxTs, last
	}
	if pos-b.lastEntryPos > b.interval {
		b.idx = append(b.idx, segment.IndexEntry{Offset: last, Position: int32(pos)})
		b.maybeTime(b.maxTs, b.maxOff)
		b.lastEntryPos = pos
	}
}

// maybeTime is TimeIndex#maybeAppend: only a timestamp above the last
// entry's (NO_TIMESTAMP for an empty index), never an offset below it.
func (b *indexBuilder) maybeTime(ts, off int64) {
	last := segment.TimeIndexEntry{Timestamp: decode.NoTimestamp, Offset: b.base}
	if n := len(b.tidx); n > 0 {
		last = b.tidx[n-1]
	}
	if ts > last.Timestamp && off >= last.Offset {
		b.tidx = append(b.tidx, segment.TimeIndexEntry{Timestamp: ts, Offset: off})
	}
}

// finish is LogSegment.onBecomeInactiveSegment / close: the final time
// index entry.
func (b *indexBuilder) finish() { b.maybeTime(b.maxTs, b.maxOff) }

func (b *indexBuilder) encode() (idx, tidx []byte, err error) {
	idx, tidx = []byte{}, []byte{}
	for _, e := range b.idx {
		if idx, err = segment.AppendOffsetIndexEntry(idx, b.base, e); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range b.tidx {
		if tidx, err = segment.AppendTimeIndexEntry(tidx, b.base, e); err != nil {
			return nil, nil, err
		}
	}
	return idx, tidx, nil
}

// planFiles turns the plan into file operations, in commit order:
// snapshots above the cut, the segments above the cut (highest first), the
// cut segment's .txnindex, .timeindex, .index and .log, the
// leader-epoch-checkpoint, the new snapshot.
func (pl *planner) planFiles(kept, dropped []*segScan, ci int, appendBytes []byte, segMaxTs, segMaxOff int64, rebuilt *indexBuilder) error {
	p, o := pl.p, pl.opts
	cs := kept[ci]
	cut := p.Cut
	base := cs.files.BaseOffset
	var ops []FileOp

	del := func(path, why string) error {
		op, err := deleteOp(path, why)
		if err == nil {
			ops = append(ops, op)
		}
		return err
	}
	write := func(name string, content []byte, why string) error {
		op, err := writeOp(pl.dir, name, content, why)
		if op != nil {
			ops = append(ops, *op)
		}
		return err
	}

	newSnap := ""
	if !o.NoSnapshot {
		p.SnapshotOffset = p.NewLogEndOffset
		newSnap = segment.SegmentFileName(p.NewLogEndOffset, segment.SnapshotSuffix)
	}
	// Snapshots above the cut describe data that is gone
	// (ProducerStateManager.truncateAndReload deletes them too).
	for i := len(pl.pd.Snapshots) - 1; i >= 0; i-- {
		s := pl.pd.Snapshots[i]
		if s.Offset <= cut {
			continue
		}
		p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
		if filepath.Base(s.Path) == newSnap {
			continue // replaced below
		}
		if err := del(s.Path, "producer snapshot above the cut"); err != nil {
			return err
		}
	}

	// Segments wholly above the cut (LocalLog.truncateTo deletes them), and
	// those a tail repair drops (LogLoader.recoverLog).
	var later []*segScan
	later = append(later, kept[ci+1:]...)
	later = append(later, dropped...)
	slices.SortFunc(later, func(a, b *segScan) int { return cmp.Compare(b.files.BaseOffset, a.files.BaseOffset) })
	for _, s := range later {
		f := s.files
		p.SegmentsDeleted = append(p.SegmentsDeleted, f.BaseOffset)
		why := fmt.Sprintf("segment %d lies wholly above the cut", f.BaseOffset)
		if p.TailRepair != nil && f.BaseOffset > p.TailRepair.Segment {
			why = fmt.Sprintf("segment %d follows the repaired tail", f.BaseOffset)
		}
		if err := deleteSegment(f, why, &p.Index, &p.TimeIndex, &p.TxnIndex, del); err != nil {
			return err
		}
	}
	slices.Sort(p.SegmentsDeleted)
	slices.Sort(p.SnapshotsDeleted)

	// The cut segment's .txnindex: TransactionIndex.truncateTo drops the
	// entries whose lastOffset >= cut; abort mode adds its entries.
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
	if cs.files.TxnIndex != "" || len(txns) > 0 {
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
		if err := write(segment.SegmentFileName(base, segment.TxnIndexSuffix), content, why); err != nil {
			return err
		}
	}

	// The cut segment's .index and .timeindex: OffsetIndex/TimeIndex
	// .truncateTo drop entries at or above the cut, then the new batches
	// are indexed as LogSegment.append would. A missing file is rebuilt
	// (LogLoader recovers a segment whose index is missing).
	b := newIndexBuilder(base, o.IndexIntervalBytes)
	b.maxTs, b.maxOff = segMaxTs, segMaxOff
	if cs.files.Index != "" {
		x, err := segment.ReadOffsetIndex(cs.files.Index, base)
		if err != nil {
			return err
		}
		for _, e := range x.Entries {
			if e.Offset < cut {
				b.idx = append(b.idx, e)
			}
		}
		p.Index.Removed += len(x.Entries) - len(b.idx)
		p.Index.Kept = len(b.idx)
	} else {
		b.idx = append(b.idx, rebuilt.idx...)
		pl.warnf("%s has no .index; it is rebuilt", filepath.Base(cs.files.Log))
	}
	if n := len(b.idx); n > 0 {
		b.lastEntryPos = int64(b.idx[n-1].Position)
	}
	if cs.files.TimeIndex != "" {
		x, err := segment.ReadTimeIndex(cs.files.TimeIndex, base)
		if err != nil {
			return err
		}
		for _, e := range x.Entries {
			if e.Offset < cut {
				b.tidx = append(b.tidx, e)
			}
		}
		p.TimeIndex.Removed += len(x.Entries) - len(b.tidx)
		p.TimeIndex.Kept = len(b.tidx)
	} else {
		b.tidx = append(b.tidx, rebuilt.tidx...)
		pl.warnf("%s has no .timeindex; it is rebuilt", filepath.Base(cs.files.Log))
	}
	for _, a := range p.Appended {
		b.add(a.Position, a.Offset, p.Timestamp)
	}
	b.finish()
	p.Index.Added = len(b.idx) - p.Index.Kept
	p.TimeIndex.Added = len(b.tidx) - p.TimeIndex.Kept
	idxWhy := "entries at or above the cut dropped, the new batches indexed"
	if p.Mode == ModeAbort && p.TailRepair == nil {
		idxWhy = "the new batches indexed"
	}
	idx, tidx, err := b.encode()
	if err != nil {
		return err
	}
	if err := write(segment.SegmentFileName(base, segment.TimeIndexSuffix), tidx, idxWhy); err != nil {
		return err
	}
	if err := write(segment.SegmentFileName(base, segment.IndexSuffix), idx, idxWhy); err != nil {
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
	ops = append(ops, FileOp{Name: filepath.Base(cs.files.Log), Action: OpReplace, Why: why, OldSize: cs.size,
		NewSize: p.CutPosition + int64(len(appendBytes)), KeepPrefix: p.CutPosition, Content: appendBytes})

	if pl.epochContent != nil {
		why := "leader epochs starting at or above the cut dropped"
		if p.EpochEntryAdded != nil {
			why = fmt.Sprintf("epoch %d recorded from offset %d", p.EpochEntryAdded.Epoch, p.EpochEntryAdded.StartOffset)
			if len(p.EpochEntriesRemoved) > 0 {
				why = "leader epochs starting at or above the cut dropped, " + why
			}
		}
		if err := write(segment.LeaderEpochCheckpointName, pl.epochContent, why); err != nil {
			return err
		}
	}
	if newSnap != "" {
		if err := write(newSnap, segment.EncodeProducerSnapshot(nil), "empty producer state at the new log end: the barrier clears every producer"); err != nil {
			return err
		}
	}
	p.Ops = ops
	return nil
}
