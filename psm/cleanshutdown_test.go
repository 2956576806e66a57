package psm

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/segment/finding"
)

// With .kafka_cleanshutdown in the log directory and no producer snapshot
// left after ProducerStateManager.removeStraySnapshots,
// UnifiedLog.rebuildProducerState takes its upgrade short-cut
// (reloadFromCleanShutdown and latestSnapshotOffset empty): it reads no
// batch and takes empty snapshots at the last two segment bases and the
// log end. The broker starts with no producers and no open transaction,
// so its LSO is the high watermark. Rebuild reports exactly that state,
// and one clean-shutdown-no-snapshot error naming what the log holds.
func TestCleanShutdownWithoutSnapshotStartsEmpty(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	s0.data(1, 0, 0, 2, false)
	open := s0.data(2, 0, 0, 1, true) // an open transaction
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(1, 0, 2, 1, false)
	p.segment(s0.next, s1)
	end := s1.next

	o := DefaultOptions()
	o.CleanShutdown = true
	r := p.rebuild(o)
	if !r.RebuildSkipped || len(r.Producers) != 0 || len(r.Ongoing) != 0 || r.BatchesReplayed != 0 || r.ReplayedFrom != end {
		t.Fatalf("skipped %v, producers %+v, ongoing %+v, %d batches from %d", r.RebuildSkipped, r.Producers, r.Ongoing, r.BatchesReplayed, r.ReplayedFrom)
	}
	if r.LogEndOffset != end || r.HighWatermark != end || r.LastStableOffset != r.HighWatermark || r.FirstUndecidedOffset != -1 {
		t.Errorf("log end %d, hw %d, lso %d, fuo %d: want the LSO at the high watermark", r.LogEndOffset, r.HighWatermark, r.LastStableOffset, r.FirstUndecidedOffset)
	}
	onlyAnomalies(t, r, finding.CleanShutdownNoSnapshot)
	a := anomalies(r, finding.CleanShutdownNoSnapshot)
	if len(a) != 1 || a[0].Severity() != finding.Error || a[0].Offset != end || a[0].ProducerID != 2 ||
		!strings.Contains(a[0].Message, "2 producer(s)") || !strings.Contains(a[0].Message, "1 open transaction(s) (oldest: producer 2 from offset "+i64s(open)+")") {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}

	// --from-snapshot none is the log, not the broker's short-cut.
	o.FromSnapshot = SnapshotNone
	if n := p.rebuild(o); n.RebuildSkipped || len(n.Producers) != 2 || len(n.Ongoing) != 1 || n.LastStableOffset != open {
		t.Errorf("from the log: %+v", n)
	}
	// --check-snapshots (the log alone) names the same loss.
	o.FromSnapshot = SnapshotLatest
	if _, res, err := CheckSnapshots(p.open(), o); err != nil || len(anomalies(res, finding.CleanShutdownNoSnapshot)) != 1 {
		t.Errorf("check-snapshots: %v %+v", err, res.Anomalies)
	}
	if !SkipsRebuild(p.open(), true) || SkipsRebuild(p.open(), false) {
		t.Error("SkipsRebuild")
	}
	// A stray snapshot below the last segment is deleted before the test:
	// the short-cut still applies.
	p.snapshot(1, nil)
	if r := p.rebuild(func() Options { o := DefaultOptions(); o.CleanShutdown = true; return o }()); !r.RebuildSkipped {
		t.Errorf("with a stray snapshot below the last segment: not skipped")
	}
	// A snapshot at a segment base survives it: a normal load.
	p.snapshot(s0.next, p.state(s0.next, nil))
	if r := p.rebuild(func() Options { o := DefaultOptions(); o.CleanShutdown = true; return o }()); r.RebuildSkipped || r.SnapshotLoaded != s0.next || len(r.Ongoing) != 1 {
		t.Errorf("with a snapshot: skipped %v, loaded %d, ongoing %+v", r.RebuildSkipped, r.SnapshotLoaded, r.Ongoing)
	}
	if SkipsRebuild(p.open(), true) {
		t.Error("SkipsRebuild with a snapshot at a segment base")
	}

	// A log without producer state loses nothing: no anomaly.
	q := newPartition(t)
	plain := newLog(t, 0)
	plain.plain(3)
	q.segment(0, plain)
	if r := q.rebuild(func() Options { o := DefaultOptions(); o.CleanShutdown = true; return o }()); !r.RebuildSkipped || len(r.Anomalies) != 0 {
		t.Errorf("no producers: skipped %v, anomalies %+v", r.RebuildSkipped, r.Anomalies)
	}
}
