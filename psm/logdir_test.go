package psm

import (
	"slices"
	"testing"

	"github.com/kseg/kseg/segment/finding"
)

// LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd: a log start offset
// above the log end makes the broker delete every segment at load. Rebuild
// reports it as an error and, unlike UnifiedLog.updateHighWatermark with a
// log start it never keeps above the end, never puts the high watermark
// past the log end.
func TestLogStartAboveLogEnd(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 3, false)
	r := replayOne(t, l, func(o *Options) { o.LogStartOffset, o.HighWatermark = 10, 12 })
	a := anomalies(r, finding.LogStartAboveLogEnd)
	if len(a) != 1 || a[0].Severity() != finding.Error || a[0].Offset != 10 {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	if r.LogEndOffset != 3 || r.HighWatermark > r.LogEndOffset || r.LastStableOffset > r.HighWatermark || len(r.Producers) != 0 {
		t.Errorf("log end %d, hw %d, lso %d, producers %+v", r.LogEndOffset, r.HighWatermark, r.LastStableOffset, r.Producers)
	}
	if r := replayOne(t, l, func(o *Options) { o.LogStartOffset = 3 }); len(anomalies(r, finding.LogStartAboveLogEnd)) != 0 {
		t.Errorf("log start at the log end: %+v", r.Anomalies)
	}
}

// Partition.createLog restores the high watermark from
// replication-offset-checkpoint, or 0 without an entry.
func TestBrokerHighWatermark(t *testing.T) {
	if hw := (LogDirState{HighWatermark: -1}).BrokerHighWatermark(); hw != 0 {
		t.Errorf("no entry: %d", hw)
	}
	if hw := (LogDirState{HighWatermark: 42}).BrokerHighWatermark(); hw != 42 {
		t.Errorf("entry 42: %d", hw)
	}
	l := newLog(t, 0)
	l.data(1, 0, 0, 5, true)
	r := replayOne(t, l, func(o *Options) { o.LogStartOffset, o.HighWatermark = 2, 0 })
	if r.HighWatermark != 2 || r.LastStableOffset != 2 {
		t.Errorf("hw %d lso %d, want the log start 2", r.HighWatermark, r.LastStableOffset)
	}
}

// The snapshots a loading broker deletes (removeStraySnapshots: strays
// below the last segment and all but the newest stray; truncateAndReload:
// at or below the log start, above the log end, before any is read) are
// snapshot-ignored notes in the default run and under --check-snapshots
// alike, even a corrupt one above the log end, which the broker never
// reads.
func TestSnapshotIgnoredSameWithAndWithoutCheckSnapshots(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	for i := int32(0); i < 4; i++ {
		s0.data(1, 0, i, 1, false)
	}
	p.segment(0, s0)
	s1 := newLog(t, 4)
	s1.Ts = s0.Ts
	s1.data(1, 0, 4, 2, false)
	p.segment(4, s1)
	p.snapshot(1, p.state(1, nil)) // at the log start (1): deleted
	p.snapshot(2, p.state(2, nil)) // a stray below the last segment: deleted
	p.snapshot(4, p.state(4, nil)) // kept, loaded
	path := p.snapshot(9, nil)     // above the log end 6, and corrupt
	if err := writeFile(path, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.LogStartOffset = 1
	offsets := func(r *Result) []int64 {
		var out []int64
		for _, a := range anomalies(r, finding.SnapshotIgnored) {
			out = append(out, a.Offset)
		}
		return out
	}
	r := p.rebuild(o)
	if r.SnapshotLoaded != 4 || r.HasErrors() {
		t.Fatalf("loaded %d, anomalies %+v", r.SnapshotLoaded, r.Anomalies)
	}
	_, res, err := CheckSnapshots(p.open(), o)
	if err != nil {
		t.Fatal(err)
	}
	got, want := offsets(res), offsets(r)
	if len(want) != 3 || !slices.Equal(got, want) {
		t.Errorf("snapshot-ignored at %v under --check-snapshots, %v in the default run; want 1, 2, 9 in both", got, want)
	}
	if res.HasErrors() {
		t.Errorf("--check-snapshots: %+v", res.Anomalies)
	}
}
