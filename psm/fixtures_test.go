package psm

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// snapshotsNextToLog counts, in the fixtures README's SHA-256 lists (both
// sets), the producer snapshots whose directory also has a .log: what
// realdata.SnapshotDirs must find, derived from the README, not from the walk.
func snapshotsNextToLog(t testing.TB, root string) int {
	t.Helper()
	n, err := realdata.SnapshotsNextToLog(root)
	if err != nil {
		t.Fatal(err)
	}
	if n < 11 {
		t.Fatalf("the README lists only %d producer snapshots next to a log", n)
	}
	return n
}

// TestCheckSnapshotsRealFixtures is the acceptance test: every producer
// snapshot a real broker wrote next to its log is reproduced exactly by
// replaying the log from the start with the default (log) clock, or, when
// it lies at or below the log start offset, skipped as the broker skips
// it (ProducerStateManager.truncateAndReload deletes it at load).
func TestCheckSnapshotsRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	dirs := realdata.SnapshotDirs(t, root)
	total := 0
	for _, dir := range dirs {
		pd := segtest.OpenDir(t, dir)
		opts := DefaultOptions()
		ls, hw, err := LogDirCheckpoints(pd)
		if err != nil {
			t.Fatal(err)
		}
		opts.LogStartOffset, opts.HighWatermark = ls, hw
		checks, res, err := CheckSnapshots(pd, opts)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		logStart := max(ls, 0)
		if len(pd.Segments) > 0 {
			logStart = max(logStart, pd.Segments[0].BaseOffset)
		}
		for _, c := range checks {
			total++
			rel, _ := filepath.Rel(root, c.Path)
			if c.Status == CheckSkipped && c.Offset <= logStart && len(c.Differences) == 0 {
				t.Logf("%s: SKIPPED at or below the log start %d", rel, logStart)
				continue
			}
			if !c.Match() {
				t.Errorf("%s: %s %s %v", rel, c.Status, c.Reason, c.Differences)
				continue
			}
			t.Logf("%s: MATCH (%d producers)", rel, c.Rebuilt)
		}
		if res.HasErrors() {
			t.Errorf("%s: anomalies %+v", dir, res.Anomalies)
		}
	}
	if want := snapshotsNextToLog(t, root); total != want {
		t.Errorf("checked %d snapshots, want the %d that lie next to a log (fixtures README)", total, want)
	}
}
