package barrier

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// TestInjectRealBrokerPartitions injects a barrier into a copy of every
// broker-written partition under ../shared/fixtures/real (never into the
// fixtures themselves): each is either refused for its legacy message
// format (or, for the KRaft metadata log, as no mirror partition), or
// planned, applied and verified, and its kept prefix stays as it was.
func TestInjectRealBrokerPartitions(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	var parts []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && segment.IsPartitionDir(p) {
			parts = append(parts, p)
		}
		return nil
	})
	if len(parts) < 5 {
		t.Fatalf("only %d partitions found under %s", len(parts), root)
	}
	for _, src := range parts {
		rel, _ := filepath.Rel(root, src)
		t.Run(rel, func(t *testing.T) {
			logDir := t.TempDir()
			dir := filepath.Join(logDir, filepath.Base(src))
			barriertest.CopyTree(t, src, dir)
			for _, name := range []string{segment.LogStartOffsetCheckpointName, segment.ReplicationOffsetCheckpointName} {
				if b, err := os.ReadFile(filepath.Join(filepath.Dir(src), name)); err == nil {
					os.WriteFile(filepath.Join(logDir, name), b, 0o644)
				}
			}
			before := barriertest.SnapDir(t, dir)
			p, err := PlanInjection(dir, planOpts())
			var re *edit.RefusalError
			if errors.As(err, &re) && (re.Reason == RefuseLegacyFormat || re.Reason == edit.RefuseNotPartition) {
				t.Logf("refused: %v", err)
				barriertest.AssertUnchanged(t, before, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			barriertest.AssertUnchanged(t, before, dir)
			rep, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Verification.OK() {
				t.Fatalf("verification: %+v", rep.Verification)
			}
			after := segmentLogs(t, dir)
			seg := after[p.CutSegment]
			old, _ := os.ReadFile(filepath.Join(src, segment.SegmentFileName(p.CutSegment, segment.LogSuffix)))
			if int64(len(seg)) < p.CutPosition || string(seg[:p.CutPosition]) != string(old[:p.CutPosition]) {
				t.Fatal("the kept prefix changed")
			}
			pd, _ := segment.OpenPartitionDir(dir)
			o := psm.DefaultOptions()
			o.FromSnapshot = psm.SnapshotLatest
			r, err := psm.Rebuild(pd, o)
			if err != nil || len(r.Producers) != 0 || len(r.Ongoing) != 0 {
				t.Fatalf("a restarting broker's state: %d producers, %d open transactions, %v", len(r.Producers), len(r.Ongoing), err)
			}
			t.Logf("cut %d (LSO %d, log end %d), barrier at %d clears %d producers", p.Cut, p.LastStableOffset, p.LogEndOffset, p.BarrierOffset, p.ProducersCleared)
		})
	}
}
