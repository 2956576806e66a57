// What the injection appends at the cut: abort mode's ABORT markers, one per
// open transaction, then the barrier, in the leader epoch planEpochs
// resolves (LeaderEpochFileCache.truncateFromEnd, then assign).

package barrier

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// appended are the bytes the injection appends at the cut in the cut
// segment cs, recorded in the plan: in abort mode the markers (for the
// transactions open at the end, r0), then the barrier.
func (pl *planner) appended(r0 *psm.Result, cs *segScan) ([]byte, error) {
	p, o := pl.p, pl.opts
	var appendBytes []byte
	off, pos := p.Cut, p.CutPosition
	if o.Mode == ModeAbort {
		var err error
		if appendBytes, off, pos, err = pl.abortMarkers(r0, off, pos); err != nil {
			return nil, err
		}
	}
	bar := Build(Spec{BaseOffset: off, PartitionLeaderEpoch: p.LeaderEpoch, Timestamp: o.Timestamp, SourceClusterID: o.SourceClusterID})
	p.Appended = append(p.Appended, AppendedBatch{Kind: decode.ControlMirrorPidReset.String(), Offset: off, Position: pos, Size: len(bar),
		ProducerID: decode.NoProducerID, ProducerEpoch: decode.NoProducerEpoch, CoordinatorEpoch: -1, TxnFirstOffset: -1})
	appendBytes = append(appendBytes, bar...)
	p.BarrierOffset = off
	p.NewLogEndOffset = off + 1
	if off-cs.files.BaseOffset > 1<<31-1 {
		return nil, fmt.Errorf("offset %d does not fit in segment %d's relative offsets", off, cs.files.BaseOffset)
	}
	return appendBytes, nil
}

// abortMarkers are abort mode's ABORT markers, one for each transaction
// open at the end (r0), from offset off at position pos on: their bytes,
// and the offset and position after them. They and the transactions they
// abort are recorded in the plan.
func (pl *planner) abortMarkers(r0 *psm.Result, off, pos int64) ([]byte, int64, int64, error) {
	p, o := pl.p, pl.opts
	var out []byte
	for i, t := range r0.Ongoing {
		// r0.Producers is sorted by producer id: no map of a million
		// producers for a few open transactions.
		var e *psm.Entry
		if k, ok := slices.BinarySearchFunc(r0.Producers, t.ProducerID, func(e psm.Entry, pid int64) int { return cmp.Compare(e.ProducerID, pid) }); ok {
			e = &r0.Producers[k]
		}
		if e == nil {
			re := edit.Refuse(RefuseOpenTransactions, pl.dir,
				"producer %d's transaction from offset %d is open but the producer has no state (cleared by an earlier barrier?): an ABORT marker cannot close it",
				t.ProducerID, t.FirstOffset)
			re.Remedy = edit.RemedyTruncateMode
			return nil, 0, 0, re
		}
		ce := e.CoordinatorEpoch
		if ce < 0 {
			ce = 0
		}
		if o.CoordinatorEpoch != nil {
			if *o.CoordinatorEpoch < ce {
				pl.warnf("--coordinator-epoch %d is below producer %d's last coordinator epoch %d; a leader would reject the marker (TransactionCoordinatorFencedException)",
					*o.CoordinatorEpoch, e.ProducerID, ce)
			}
			ce = *o.CoordinatorEpoch
		}
		raw := BuildEndTxnMarker(off, p.LeaderEpoch, o.Timestamp, e.ProducerID, e.ProducerEpoch, ce, false)
		p.Appended = append(p.Appended, AppendedBatch{Kind: decode.ControlAbort.String(), Offset: off, Position: pos, Size: len(raw),
			ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, CoordinatorEpoch: ce, TxnFirstOffset: t.FirstOffset})
		// ProducerStateManager.lastStableOffset(completedTxn): the first
		// offset of the earliest other ongoing transaction, else
		// lastOffset+1. The markers complete the transactions in
		// first-offset order, so the next one is still open.
		lso := off + 1
		if i+1 < len(r0.Ongoing) {
			lso = r0.Ongoing[i+1].FirstOffset
		}
		p.AbortedTxns = append(p.AbortedTxns, segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion,
			ProducerID: e.ProducerID, FirstOffset: t.FirstOffset, LastOffset: off, LastStableOffset: lso})
		out = append(out, raw...)
		off++
		pos += int64(len(raw))
	}
	return out, off, pos, nil
}

// planEpochs resolves the leader epoch of the new batches and the
// leader-epoch-checkpoint change (LeaderEpochFileCache.truncateFromEnd,
// then assign for the first new batch).
func (pl *planner) planEpochs(kept []*segScan, cut int64, lastKept *batchMeta) error {
	p, o := pl.p, pl.opts
	var entries []segment.EpochEntry
	if pl.pd.LeaderEpochCheckpoint != "" {
		var err error
		if entries, err = segment.ReadLeaderEpochCheckpoint(pl.pd.LeaderEpochCheckpoint); err != nil {
			return err
		}
	}
	highest := int32(-1)
	for _, e := range entries {
		highest = max(highest, e.Epoch)
	}
	keptEntries, removed := segment.TruncateLeaderEpochs(entries, cut)
	p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, removed...)
	latest := int32(-1)
	if n := len(keptEntries); n > 0 {
		latest = keptEntries[n-1].Epoch
	}
	for _, s := range kept {
		if s.last != nil && s.last.Magic >= 2 {
			highest = max(highest, s.last.PLE)
		}
	}
	var epoch int32
	switch {
	case o.BumpLeaderEpoch != nil:
		epoch = *o.BumpLeaderEpoch
		if epoch <= highest {
			return &edit.OptionError{Option: "bump-leader-epoch", Detail: fmt.Sprintf("%d is not above the highest leader epoch %d the partition has recorded", epoch, highest)}
		}
	case o.LeaderEpoch != nil:
		epoch = *o.LeaderEpoch
		if epoch < latest {
			return &edit.OptionError{Option: "leader-epoch", Detail: fmt.Sprintf("%d is below the latest leader epoch %d kept in leader-epoch-checkpoint", epoch, latest)}
		}
	case highest >= 0:
		// The leader's epoch survives truncation (UnifiedLog.truncateTo
		// trims the epoch cache, not the current epoch): a cut that removes
		// every entry of epoch 7 still appends in epoch 7.
		epoch = highest
	case lastKept != nil && lastKept.Magic >= 2 && lastKept.PLE >= 0:
		epoch = lastKept.PLE
	}
	p.LeaderEpoch = epoch
	if pl.pd.LeaderEpochCheckpoint == "" {
		if o.BumpLeaderEpoch != nil {
			pl.warnf("no leader-epoch-checkpoint: epoch %d is written in the new batches but not recorded (the broker rebuilds its epoch cache from the log)", epoch)
		}
		return nil
	}
	// LeaderEpochFileCache.assign on append of the first new batch.
	if assigned := segment.AssignLeaderEpoch(keptEntries, epoch, cut); !slices.Equal(assigned, keptEntries) {
		added := assigned[len(assigned)-1]
		p.EpochEntryAdded = &added
		keptEntries = assigned
	}
	if slices.Equal(keptEntries, entries) {
		// Truncation removed an entry that assign puts straight back
		// (the same epoch from the same offset): the file stays as is.
		p.EpochEntriesRemoved, p.EpochEntryAdded = nil, nil
		return nil
	}
	if len(p.EpochEntriesRemoved) > 0 || p.EpochEntryAdded != nil {
		pl.epochContent = segment.EncodeLeaderEpochCheckpoint(keptEntries)
	}
	return nil
}
