package replaypsm

import (
	"path/filepath"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment/finding"
)

// jsonReplayPSMPrinter writes the rebuilt state as ONE JSON object (type
// "producerState"), with Kafka's snapshot field names. An entry without
// batch metadata has lastSequence and lastOffset -1, exactly as a snapshot
// stores it; currentTxnFirstOffset and snapshotLoaded are null when absent.
type jsonReplayPSMPrinter struct {
	s *ui.Streams
	j ui.JSONWriter
	// werr is the first error writing out what the object has grown to
	// (flush).
	werr error
}

// flush writes out the object as it grows: a million producers make
// hundreds of MB of JSON, which must not be held whole.
func (p *jsonReplayPSMPrinter) flush() {
	j := &p.j
	if len(j.B) >= 256<<10 && p.werr == nil {
		_, p.werr = p.s.Out.Write(j.B)
		j.B = j.B[:0]
	}
}

// arr writes the array k of objects, one per element of xs, each
// written by item, writing out what the object has grown to as it goes.
func arr[T any](p *jsonReplayPSMPrinter, k string, xs []T, item func(x *T)) {
	ui.Objects(&p.j, k, xs, func(x *T) {
		p.flush()
		item(x)
	})
}

// producer writes one producer entry's fields, with Kafka's snapshot
// names.
func (p *jsonReplayPSMPrinter) producer(e *psm.Entry) {
	j := &p.j
	j.Int("producerId", e.ProducerID)
	j.Int("producerEpoch", int64(e.ProducerEpoch))
	j.Int("lastSequence", int64(e.LastSeq()))
	j.Int("lastOffset", e.LastDataOffset())
	j.Int("offsetDelta", int64(e.LastOffsetDelta()))
	j.Int("lastTimestamp", e.LastTimestamp)
	j.Int("coordinatorEpoch", int64(e.CoordinatorEpoch))
	j.OptInt("currentTxnFirstOffset", e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
	arr(p, "batches", e.Batches, func(bm *psm.BatchMetadata) {
		j.Int("firstSequence", int64(bm.FirstSeq()))
		j.Int("lastSequence", int64(bm.LastSeq))
		j.Int("lastOffset", bm.LastOffset)
		j.Int("offsetDelta", int64(bm.OffsetDelta))
		j.Int("timestamp", bm.Timestamp)
	})
}

func (p *jsonReplayPSMPrinter) Print(v *replayPSMView) error {
	r := v.Result
	j := &p.j
	j.B, p.werr = j.B[:0], nil
	j.BeginLine("producerState")
	p.offsets(r)
	p.state(r)
	arr(p, "anomalies", r.Anomalies, func(a *finding.Finding) {
		j.Str("kind", a.Kind.String())
		j.Str("severity", a.Severity().String())
		j.Int("offset", a.Offset)
		j.OptInt("producerId", a.ProducerID, a.ProducerID >= 0)
		j.Str("message", a.Message)
	})
	if v.Checked {
		p.snapshots(v.Checks)
	}
	if v.Written != "" {
		j.Str("snapshotWritten", v.Written)
	}
	j.EndLine()
	if p.werr != nil {
		return p.werr
	}
	_, err := p.s.Out.Write(j.B)
	return err
}

// offsets writes the object's head after its type: the partition's
// offsets, where the replay started and the recovery a loading broker
// runs.
func (p *jsonReplayPSMPrinter) offsets(r *psm.Result) {
	j := &p.j
	j.Str("partition", r.Partition)
	j.LogOffsets(r.LogStartOffset, r.LogEndOffset, r.HighWatermark, r.LastStableOffset)
	j.OptInt("firstUndecidedOffset", r.FirstUndecidedOffset, r.FirstUndecidedOffset >= 0)
	j.OptInt("snapshotLoaded", r.SnapshotLoaded, r.SnapshotLoaded >= 0)
	j.Int("replayedFrom", r.ReplayedFrom)
	j.Int("batchesReplayed", r.BatchesReplayed)
	if r.RebuildSkipped {
		j.Bool("rebuildSkipped", true)
	}
	if r.Recovery != nil {
		p.recovery(r.Recovery)
	}
	j.OptInt("clock", r.Clock, r.Clock >= 0)
}

// state writes the rebuilt state: the barriers, the producers, the open
// and the aborted transactions.
func (p *jsonReplayPSMPrinter) state(r *psm.Result) {
	j := &p.j
	arr(p, "barriers", r.Barriers, func(b *psm.Barrier) {
		j.Int("offset", b.Offset)
		j.Int("producersCleared", int64(b.ProducersCleared))
		if b.SourceClusterID != nil {
			j.Str("sourceClusterId", *b.SourceClusterID)
		}
	})
	arr(p, "producers", r.Producers, p.producer)
	arr(p, "ongoingTransactions", r.Ongoing, func(t *psm.Txn) {
		j.Int("producerId", t.ProducerID)
		j.Int("firstOffset", t.FirstOffset)
	})
	arr(p, "abortedTransactions", r.Aborted, func(a *psm.AbortedTxn) {
		j.Int("producerId", a.ProducerID)
		j.Int("firstOffset", a.FirstOffset)
		j.Int("lastOffset", a.LastOffset)
		j.Int("lastStableOffset", a.LastStableOffset)
	})
}

// snapshots writes --check-snapshots' verdict on every snapshot.
func (p *jsonReplayPSMPrinter) snapshots(checks []psm.SnapshotCheck) {
	j := &p.j
	arr(p, "snapshots", checks, func(c *psm.SnapshotCheck) {
		j.Int("offset", c.Offset)
		j.Str("file", filepath.Base(c.Path))
		j.Bool("match", c.Match())
		j.Str("status", c.Status)
		if c.Reason != "" {
			j.Str("reason", c.Reason)
		}
		if c.Status == psm.CheckMatch || c.Status == psm.CheckMismatch {
			j.Int("rebuiltProducers", int64(c.Rebuilt))
			j.Int("snapshotProducers", int64(c.OnDisk))
		}
		arr(p, "differences", c.Differences, func(d *psm.Difference) {
			j.Int("producerId", d.ProducerID)
			j.Str("field", d.Field)
			j.Int("rebuilt", d.Rebuilt)
			j.Int("snapshot", d.OnDisk)
			j.Str("message", d.String())
		})
	})
}

// recovery writes the recovery a loading broker runs (psm.Result.Recovery).
func (p *jsonReplayPSMPrinter) recovery(rec *psm.Recovery) {
	j := &p.j
	j.Key("recovery")
	j.Begin()
	j.OptInt("recoveryPoint", rec.RecoveryPoint, rec.RecoveryPoint >= 0)
	ui.Ints(j, "segments", rec.Segments)
	j.OptInt("truncatedAt", rec.TruncatedAt, rec.TruncatedAt >= 0)
	j.End()
}
