package cmd

import (
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/psm"
)

// jsonReplayPSMPrinter writes the rebuilt state as ONE JSON object (type
// "producerState"), with Kafka's snapshot field names. An entry without
// batch metadata has lastSequence and lastOffset -1, exactly as a snapshot
// stores it; currentTxnFirstOffset and snapshotLoaded are null when absent.
type jsonReplayPSMPrinter struct {
	s *Streams
	j jsonw
}

// producer writes one producer entry's fields, with Kafka's snapshot
// names; arr writes an array.
func (p *jsonReplayPSMPrinter) producer(e *psm.Entry, arr func(k string, n int, item func(i int))) {
	j := &p.j
	j.int("producerId", e.ProducerID)
	j.int("producerEpoch", int64(e.ProducerEpoch))
	j.int("lastSequence", int64(e.LastSeq()))
	j.int("lastOffset", e.LastDataOffset())
	j.int("offsetDelta", int64(e.LastOffsetDelta()))
	j.int("lastTimestamp", e.LastTimestamp)
	j.int("coordinatorEpoch", int64(e.CoordinatorEpoch))
	j.optInt("currentTxnFirstOffset", e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
	arr("batches", len(e.Batches), func(k int) {
		bm := e.Batches[k]
		j.int("firstSequence", int64(bm.FirstSeq()))
		j.int("lastSequence", int64(bm.LastSeq))
		j.int("lastOffset", bm.LastOffset)
		j.int("offsetDelta", int64(bm.OffsetDelta))
		j.int("timestamp", bm.Timestamp)
	})
}

func (p *jsonReplayPSMPrinter) Print(v *replayPSMView) error {
	r := v.Result
	j := &p.j
	j.b = j.b[:0]
	j.begin()
	j.str("type", "producerState")
	j.str("partition", r.Partition)
	j.int("logStartOffset", r.LogStartOffset)
	j.int("logEndOffset", r.LogEndOffset)
	j.int("highWatermark", r.HighWatermark)
	j.int("lastStableOffset", r.LastStableOffset)
	j.optInt("firstUndecidedOffset", r.FirstUndecidedOffset, r.FirstUndecidedOffset >= 0)
	j.optInt("snapshotLoaded", r.SnapshotLoaded, r.SnapshotLoaded >= 0)
	j.int("replayedFrom", r.ReplayedFrom)
	j.int("batchesReplayed", r.BatchesReplayed)
	if r.RebuildSkipped {
		j.bool("rebuildSkipped", true)
	}
	if r.Recovery != nil {
		p.recovery(r.Recovery)
	}
	j.optInt("clock", r.Clock, r.Clock >= 0)

	// The object is written out as it grows: a million producers make
	// hundreds of MB of JSON, which must not be held whole.
	var werr error
	flush := func() {
		if len(j.b) >= 256<<10 && werr == nil {
			_, werr = p.s.Out.Write(j.b)
			j.b = j.b[:0]
		}
	}
	arr := func(k string, n int, item func(i int)) {
		j.key(k)
		j.b = append(j.b, '[')
		for i := 0; i < n; i++ {
			if i > 0 {
				j.b = append(j.b, ',')
			}
			j.begin()
			item(i)
			j.end()
			flush()
		}
		j.b = append(j.b, ']')
		j.first = false
	}
	arr("barriers", len(r.Barriers), func(i int) {
		b := r.Barriers[i]
		j.int("offset", b.Offset)
		j.int("producersCleared", int64(b.ProducersCleared))
		if b.SourceClusterID != nil {
			j.str("sourceClusterId", *b.SourceClusterID)
		}
	})
	arr("producers", len(r.Producers), func(i int) { p.producer(&r.Producers[i], arr) })
	arr("ongoingTransactions", len(r.Ongoing), func(i int) {
		j.int("producerId", r.Ongoing[i].ProducerID)
		j.int("firstOffset", r.Ongoing[i].FirstOffset)
	})
	arr("abortedTransactions", len(r.Aborted), func(i int) {
		a := r.Aborted[i]
		j.int("producerId", a.ProducerID)
		j.int("firstOffset", a.FirstOffset)
		j.int("lastOffset", a.LastOffset)
		j.int("lastStableOffset", a.LastStableOffset)
	})
	arr("anomalies", len(r.Anomalies), func(i int) {
		a := r.Anomalies[i]
		j.str("kind", a.Kind.String())
		j.str("severity", a.Severity().String())
		j.int("offset", a.Offset)
		j.optInt("producerId", a.ProducerID, a.ProducerID >= 0)
		j.str("message", a.Message)
	})
	if v.Checked {
		arr("snapshots", len(v.Checks), func(i int) {
			c := v.Checks[i]
			j.int("offset", c.Offset)
			j.str("file", filepath.Base(c.Path))
			j.bool("match", c.Match())
			j.str("status", c.Status)
			if c.Reason != "" {
				j.str("reason", c.Reason)
			}
			if c.Status == psm.CheckMatch || c.Status == psm.CheckMismatch {
				j.int("rebuiltProducers", int64(c.Rebuilt))
				j.int("snapshotProducers", int64(c.OnDisk))
			}
			arr("differences", len(c.Differences), func(k int) {
				d := c.Differences[k]
				j.int("producerId", d.ProducerID)
				j.str("field", d.Field)
				j.int("rebuilt", d.Rebuilt)
				j.int("snapshot", d.OnDisk)
				j.str("message", d.String())
			})
		})
	}
	if v.Written != "" {
		j.str("snapshotWritten", v.Written)
	}
	j.end()
	j.b = append(j.b, '\n')
	if werr != nil {
		return werr
	}
	_, err := p.s.Out.Write(j.b)
	return err
}

// recovery writes the recovery a loading broker runs (psm.Result.Recovery).
func (p *jsonReplayPSMPrinter) recovery(rec *psm.Recovery) {
	j := &p.j
	j.key("recovery")
	j.begin()
	j.optInt("recoveryPoint", rec.RecoveryPoint, rec.RecoveryPoint >= 0)
	j.key("segments")
	j.b = append(j.b, '[')
	for i, o := range rec.Segments {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.b = strconv.AppendInt(j.b, o, 10)
	}
	j.b = append(j.b, ']')
	j.first = false
	j.optInt("truncatedAt", rec.TruncatedAt, rec.TruncatedAt >= 0)
	j.end()
}
