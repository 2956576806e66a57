package psm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment"
)

// realFixtures is ../shared/fixtures/real relative to the repository.
func realFixtures(t testing.TB) string {
	t.Helper()
	root := filepath.Join("..", "..", "shared", "fixtures", "real")
	if _, err := os.Stat(root); err != nil {
		t.Skip("../shared/fixtures/real (beside the repository) is not present: skipping the real-broker tests")
	}
	return root
}

// snapshotDirs are the partition directories under the real fixtures that
// hold both a .log and at least one producer snapshot.
func snapshotDirs(t testing.TB, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".snapshot" {
			return err
		}
		dir := filepath.Dir(p)
		if seen[dir] {
			return nil
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) == 0 {
			return nil
		}
		seen[dir] = true
		dirs = append(dirs, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestCheckSnapshotsRealFixtures is the acceptance test: every producer
// snapshot a real broker wrote next to its log is reproduced exactly by
// replaying the log from the start with the default (log) clock.
func TestCheckSnapshotsRealFixtures(t *testing.T) {
	root := realFixtures(t)
	dirs := snapshotDirs(t, root)
	total := 0
	for _, dir := range dirs {
		pd, err := segment.OpenPartitionDir(dir)
		if err != nil {
			t.Fatal(err)
		}
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
		for _, c := range checks {
			total++
			rel, _ := filepath.Rel(root, c.Path)
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
	if total != 11 {
		t.Errorf("checked %d snapshots, want the 11 that lie next to a log", total)
	}
}
