package psm

import (
	"os"
	"testing"
)

// TestRebuildProgress: Options.Progress sees a replay advance within a
// segment, MiB by MiB, and its calls add up to the log's size, whether the
// replay starts at the log start or from a snapshot (the bytes before it
// counted at once).
func TestRebuildProgress(t *testing.T) {
	pd := largePartition(t, 6<<20, 3)
	var total, first int64
	for i, s := range pd.Segments {
		st, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
		if i == 0 {
			first = st.Size()
		}
	}
	if len(pd.Segments) < 2 || len(pd.Snapshots) == 0 {
		t.Fatalf("want several segments and a snapshot, got %d and %d", len(pd.Segments), len(pd.Snapshots))
	}
	for _, from := range []int64{SnapshotNone, SnapshotLatest} {
		var calls []int64
		opts := DefaultOptions()
		opts.FromSnapshot = from
		opts.Progress = func(n int64) { calls = append(calls, n) }
		res, err := Rebuild(pd, opts)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, n := range calls {
			if n <= 0 {
				t.Errorf("from %d: a call of %d bytes", from, n)
			}
			sum += n
		}
		if sum != total {
			t.Errorf("from %d: calls add up to %d bytes, the log holds %d", from, sum, total)
		}
		if from == SnapshotNone && len(calls) < int(total>>20) {
			t.Errorf("from %d: %d calls for %d bytes: the replay does not report within a segment", from, len(calls), total)
		}
		if from == SnapshotLatest {
			if res.SnapshotLoaded < 0 {
				t.Fatal("no snapshot loaded")
			}
			if calls[0] < first {
				t.Errorf("from the snapshot at %d: first call %d bytes, want the %d of the segment skipped", res.SnapshotLoaded, calls[0], first)
			}
		}
	}
}
