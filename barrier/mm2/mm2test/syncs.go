package mm2test

import (
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/segment"
)

// syncWriter is OffsetSyncWriter for one partition: its PartitionState
// (when to emit a sync) and its pending and delayed syncs.
type syncWriter struct {
	maxOffsetLag int64

	previousUpstream, previousDownstream, lastSyncDownstream int64
	shouldSync                                               bool

	pending, delayed *mm2.OffsetSync
}

func newSyncWriter(maxOffsetLag int64) *syncWriter {
	return &syncWriter{maxOffsetLag: maxOffsetLag, previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1}
}

// update is PartitionState.update: true when a sync should go out now.
func (w *syncWriter) update(upstream, downstream int64) bool {
	noPreviousSyncThisLifetime := w.lastSyncDownstream == -1
	// OffsetSync translation is one past the last sync, hence the +1.
	translatedOffsetTooStale := downstream-(w.lastSyncDownstream+1) >= w.maxOffsetLag
	skippedUpstreamRecord := upstream-w.previousUpstream != 1
	truncatedDownstreamTopic := downstream < w.previousDownstream
	if noPreviousSyncThisLifetime || translatedOffsetTooStale || skippedUpstreamRecord || truncatedDownstreamTopic {
		w.lastSyncDownstream = downstream
		w.shouldSync = true
	}
	w.previousUpstream, w.previousDownstream = upstream, downstream
	return w.shouldSync
}

// queue is maybeQueueOffsetSyncs: a sync due now is pending (and replaces
// a delayed one), any other is delayed to the next commit.
func (w *syncWriter) queue(upstream, downstream int64) {
	s := &mm2.OffsetSync{UpstreamOffset: upstream, DownstreamOffset: downstream}
	if w.update(upstream, downstream) {
		w.delayed, w.pending = nil, s
		w.shouldSync = false
		return
	}
	w.delayed = s
}

// promoteDelayed is promoteDelayedOffsetSyncs.
func (w *syncWriter) promoteDelayed() {
	if w.delayed != nil {
		w.pending, w.delayed = w.delayed, nil
	}
}

func (w *syncWriter) takePending() []mm2.OffsetSync {
	if w.pending == nil {
		return nil
	}
	s := *w.pending
	w.pending = nil
	return []mm2.OffsetSync{s}
}

// translate is OffsetSyncStore.translateDownstream over the syncs of one
// partition in the order they were written: the latest sync at or below
// the upstream offset among those since the last upstream rewind (a
// rewind clears the store), one past it when the group is past the sync;
// ok is false when no sync is at or below it.
func translate(syncs []mm2.OffsetSync, upstream int64) (int64, bool) {
	var kept []mm2.OffsetSync
	for _, s := range syncs {
		if len(kept) > 0 && s.UpstreamOffset < kept[len(kept)-1].UpstreamOffset {
			kept = kept[:0]
		}
		kept = append(kept, s)
	}
	i := len(kept) - 1
	for i >= 0 && kept[i].UpstreamOffset > upstream {
		i--
	}
	if i < 0 {
		return 0, false
	}
	s := kept[i]
	if s.UpstreamOffset == upstream {
		return s.DownstreamOffset, true
	}
	return s.DownstreamOffset + 1, true
}

// checkpoints plays MirrorCheckpointTask for the groups: one checkpoint
// per group for the replica (checkpointsForGroup), written to the
// checkpoints partition.
func (r *replicator) checkpoints() error {
	a, err := segment.OpenAppender(r.p.Checkpoints, segment.AppenderOptions{SegmentMs: -1})
	if err != nil {
		return err
	}
	f := r.opts.Fault
	var cps []mm2.Checkpoint
	for i, g := range r.opts.Groups {
		d, ok := translate(r.res.Syncs, g.Upstream)
		if !ok {
			continue // no checkpoint for a group behind every sync
		}
		if f.Kind == CheckpointAhead && i == 0 {
			d += f.N
		}
		cps = append(cps, mm2.Checkpoint{Group: g.Name, Topic: r.remote, Partition: r.srcTP.Partition, UpstreamOffset: g.Upstream, DownstreamOffset: d})
	}
	if f.Kind == CheckpointUnmirrored {
		alias := mm2.TopicOf(filepath.Base(r.p.Checkpoints)).Alias
		cps = append(cps, mm2.Checkpoint{Group: "billing", Topic: alias + ".payments", Partition: 0, UpstreamOffset: 10, DownstreamOffset: 10})
	}
	for _, c := range cps {
		key, value, err := (&mm2.Record{Kind: mm2.Checkpoints, Checkpoint: &c}).Encode()
		if err != nil {
			return err
		}
		raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: a.LogEndOffset(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]decode.RecordSpec{{Timestamp: r.ts, Key: key, Value: value}})
		if err != nil {
			return err
		}
		if err := a.Append(raw); err != nil {
			return err
		}
	}
	r.res.Checkpoints = cps
	return a.Close()
}
