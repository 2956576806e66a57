// D's producer state (item 4 of the relation): D replayed with its barriers
// honoured and ignored, what each barrier clears, the anomalies of D's own
// region and those its barriers avert.

package mirror

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// anomalyKey identifies an anomaly across two replays.
type anomalyKey struct {
	kind   finding.Kind
	offset int64
	pid    int64
}

// replays are D's producer-state replays: the one honouring its
// barriers starts before the walk (it reads D on its own and needs nothing
// from it) and runs beside it.
type replays struct {
	wg      sync.WaitGroup
	opts    psm.Options
	with    *psm.Result
	errWith error
}

// startReplays starts the replay of D honouring its barriers (nil: D has
// no segment).
func (w *edgeWalk) startReplays() *replays {
	pd := w.dn.replayDir()
	if !slices.ContainsFunc(pd.Segments, func(s segment.SegmentFiles) bool { return s.Log != "" }) {
		return nil
	}
	o := psm.DefaultOptions()
	o.FromSnapshot = psm.SnapshotNone
	o.LogStartOffset = w.dn.logStartCheckpoint()
	o.Source = w.dn.source()
	rp := &replays{opts: o}
	rp.wg.Add(1)
	go func() {
		defer rp.wg.Done()
		honoured := o // the replay that counts towards the progress line
		honoured.Progress = w.opts.Progress
		rp.with, rp.errWith = psm.Rebuild(pd, honoured)
	}()
	return rp
}

// without replays D as if it held no barrier, for the anomalies its
// barriers avert. Only sequence and epoch anomalies are taken from it, so
// it skips the CRC checks (a mismatch is reported, never acted on, by a
// replay). A replay that met no barrier is its own replay without
// barriers (Manager.applyBarrier is the only step IgnoreBarriers changes),
// so none is made then.
func (rp *replays) without(pd *segment.PartitionDir) (*psm.Result, error) {
	if len(rp.with.Barriers) == 0 {
		return rp.with, nil
	}
	o := rp.opts
	o.IgnoreBarriers, o.VerifyCRC = true, false
	return psm.Rebuild(pd, o)
}

// producerState replays D with its barriers honoured and ignored (item 4
// of the relation), reports what the honoured replay finds in D's own
// region, what the barriers avert, stale snapshots, and whether every
// mirrored barrier clears D's state.
func (w *edgeWalk) producerState(rp *replays) error {
	rep, pd := w.rep, w.dn.replayDir()
	if rp == nil {
		return nil
	}
	rp.wg.Wait()
	with := rp.with
	if err := rp.errWith; err != nil {
		return fmt.Errorf("replaying %s: %w", w.dn.Name(), err)
	}
	without, err := rp.without(pd)
	if err != nil {
		return fmt.Errorf("replaying %s without barriers: %w", w.dn.Name(), err)
	}
	w.barriersCleared(with)
	own := w.ownFrom
	if own < 0 {
		own = rep.Mirrored.End
		if rep.Status == EdgeInSync || rep.Status == EdgeLagging {
			own = max(rep.DownstreamLog.End, own) // D has nothing of its own
		}
	}
	seen := map[anomalyKey]bool{}
	var located int
	for _, a := range with.Anomalies {
		seen[anomalyKey{a.Kind, a.Offset, a.ProducerID}] = true
		if !w.aboutTheMirror(a) {
			continue
		}
		if a.Offset < own {
			w.inherited(pd, a)
			continue
		}
		f := finding.Finding{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID, Position: -1, UpstreamPosition: -1, Message: a.Message}
		if located < 64 {
			if file, pos, ok := w.dn.locate(a.Offset); ok {
				f.File, f.Position = file, pos
			}
			located++
		}
		w.add(f)
	}
	for _, a := range without.Anomalies {
		switch a.Kind {
		case finding.PIDCollision, finding.EpochRegression, finding.SequenceGap, finding.DuplicateSequence,
			finding.NonTxnInOpenTxn, finding.UnknownTxnCompletion:
		default:
			continue
		}
		if seen[anomalyKey{a.Kind, a.Offset, a.ProducerID}] {
			continue
		}
		rep.Averted = append(rep.Averted, AvertedAnomaly{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID})
		if a.Kind == finding.PIDCollision {
			rep.CollisionsAverted++
		}
	}
	return nil
}

// barriersCleared notes what each barrier clears in the replay honouring
// them; a mirrored barrier that clears nothing there was not applied.
func (w *edgeWalk) barriersCleared(with *psm.Result) {
	rep := w.rep
	cleared := map[int64]int{}
	for _, b := range with.Barriers {
		cleared[b.Offset] = b.ProducersCleared
	}
	for i := range rep.MirroredBarriers {
		mb := &rep.MirroredBarriers[i]
		n, ok := cleared[mb.Offset]
		mb.ProducersCleared, mb.Applied = n, ok
		if !ok {
			w.add(finding.Finding{Kind: finding.BarrierNotApplied, Offset: mb.Offset, ProducerID: -1, Position: -1,
				Message: fmt.Sprintf("the barrier at %d, mirrored from U, does not clear D's producer state in a replay of D", mb.Offset)})
		}
	}
	if rep.Barrier != nil {
		rep.Barrier.ProducersCleared = cleared[rep.Barrier.Offset]
	}
}

// aboutTheMirror reports an anomaly of the honoured replay that the edge
// reports as its own; a stale or corrupt snapshot is reported here, and
// what is not about the mirror relation (an open transaction at the end of
// a mirror is normal; damage is reported by the walk) or only informs is
// left out.
func (w *edgeWalk) aboutTheMirror(a finding.Finding) bool {
	switch a.Kind {
	case finding.StaleSnapshot, finding.SnapshotCorrupt:
		w.add(finding.Finding{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID,
			File: segment.SegmentFileName(a.Offset, segment.SnapshotSuffix), Position: -1, UpstreamPosition: -1, Message: a.Message})
		return false
	case finding.HangingTransaction, finding.OpenTransaction, finding.ZeroTail, finding.BarrierIgnored, finding.MarkerWithoutTxn, finding.ExpiredOnLoad,
		finding.SnapshotIgnored, finding.CorruptLog:
		return false
	}
	return a.Severity() != finding.Info
}

// inherited accounts for an anomaly of the mirrored region, which D holds
// as U does: an open transaction at a barrier and an invalid batch are
// findings (an invalid batch is one wherever a command reads it, README
// "Exit status"), other errors are counted as inherited.
func (w *edgeWalk) inherited(pd *segment.PartitionDir, a finding.Finding) {
	switch {
	case a.Kind == finding.OpenTxnAtBarrier:
		w.add(finding.Finding{Kind: finding.MirroredOpenTxnAtBarrier, Offset: a.Offset, ProducerID: a.ProducerID, Position: -1, UpstreamPosition: -1,
			Message: "mirrored from U: " + a.Message})
	case a.Kind == finding.CRCMismatch:
		f := finding.Finding{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID, Position: -1, UpstreamPosition: -1,
			Message: "in the mirrored region (as in U): " + a.Message}
		if file, pos, ok := locate(pd, a.Offset); ok {
			f.File, f.Position = file, pos
		}
		w.add(f)
	case a.Severity() == finding.Error:
		w.rep.InheritedAnomalies++
	}
}
