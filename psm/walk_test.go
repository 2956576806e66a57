package psm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// TestWalkReplacesTheFiles: a replay given a Walk of every segment reads
// no segment file — it gives the same result with the .log files gone —
// and a segment missing from the walk is read from its file.
func TestWalkReplacesTheFiles(t *testing.T) {
	for _, name := range []string{"txn-0", "orders-0", "control-0", "compacted-0"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join("..", "testdata", "partitions", name)
			if err := segtest.CopyTree(src, dir); err != nil {
				t.Fatal(err)
			}
			pd, err := segment.OpenPartitionDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			opts := psm.DefaultOptions()
			opts.VerifyCRC = false
			wantChecks, want, err := psm.CheckSnapshots(pd, opts)
			if err != nil {
				t.Fatal(err)
			}
			walk := psm.NewWalk()
			var first string
			for _, s := range pd.Segments {
				if s.Log == "" {
					continue
				}
				if first == "" {
					first = s.Log
				}
				lf, err := segment.OpenLog(s.Log)
				if err != nil {
					t.Fatal(err)
				}
				rec := walk.Segment(s.Log)
				sc := lf.Scanner(segment.ScanOptions{})
				for sc.Next() {
					rec.Add(sc.Pos(), sc.Batch())
				}
				rec.End(sc.Tail())
				sc.Close()
				lf.Close()
			}
			// The first segment only from its file; the rest only from the
			// walk.
			walk.Drop(first)
			for _, s := range pd.Segments {
				if s.Log != "" && s.Log != first {
					if err := os.Rename(s.Log, s.Log+".gone"); err != nil {
						t.Fatal(err)
					}
				}
			}
			opts.Walk = walk
			gotChecks, got, err := psm.CheckSnapshots(pd, opts)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := sprint(got, gotChecks), sprint(want, wantChecks); g != w {
				t.Errorf("from the walk:\n%s\nfrom the files:\n%s", g, w)
			}
		})
	}
}

// sprint prints a replay's result and snapshot checks whole.
func sprint(res *psm.Result, checks []psm.SnapshotCheck) string {
	b, err := json.Marshal(struct {
		R *psm.Result
		C []psm.SnapshotCheck
	}{res, checks})
	if err != nil {
		return err.Error()
	}
	return string(b)
}
