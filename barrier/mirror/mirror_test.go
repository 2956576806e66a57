package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/kafkatest"
	"github.com/kseg/kseg/segment/segtest"
)

// mirrorOpts are small segments and a small index interval, so that the
// fixture's 18 offsets span several segments and index entries.
func mirrorOpts(upto int64) Options {
	o := DefaultOptions()
	o.Upto, o.SegmentBytes, o.IndexIntervalBytes = upto, 300, 100
	return o
}

func mustMirror(t testing.TB, src, dst string, o Options) *Report {
	t.Helper()
	p, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatalf("plan mirror %s -> %s: %v", src, dst, err)
	}
	rep, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")})
	if err != nil {
		t.Fatalf("apply mirror %s -> %s: %v", src, dst, err)
	}
	if v := rep.Verification; v != nil && !v.OK() {
		t.Fatalf("mirror verification: %+v", v)
	}
	return rep
}

// kafkaFileSet is the content of every Kafka file of a partition
// directory except producer snapshots (which the mirror writes at rolls
// and segment.Appender does not).
func kafkaFileSet(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range barriertest.ContentOf(barriertest.SnapDir(t, dir)) {
		if strings.HasSuffix(k, ".snapshot") {
			continue
		}
		out[k] = v
	}
	return out
}

func sameFiles(t testing.TB, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s differs (or is missing on one side)", what, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s only on one side", what, k)
		}
	}
}

// TestMirrorMatchesAppender: mirroring the fixture into a new directory in
// one go gives the files segment.Appender writes for the same batches;
// mirroring it in two steps gives what Appender then ResumeAppender write
// (the second step continues the active segment and its indexes).
func TestMirrorMatchesAppender(t *testing.T) {
	batches := mirrorBatches(t)
	src := writeFixtureSeg(t, batches, 400)
	aopts := segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}

	one := filepath.Join(t.TempDir(), "logs", "mirror-0")
	os.MkdirAll(filepath.Dir(one), 0o755)
	rep := mustMirror(t, src, one, mirrorOpts(-1))
	if rep.Plan.Copied.Batches != int64(len(batches)) || rep.Plan.From != 0 || rep.Plan.To != 18 {
		t.Fatalf("copied %+v [%d, %d)", rep.Plan.Copied, rep.Plan.From, rep.Plan.To)
	}
	ref := kafkatest.WritePartitionWith(t, t.TempDir(), barriertest.Topic, 0, batches, aopts)
	sameFiles(t, "one step", kafkaFileSet(t, ref), kafkaFileSet(t, one))

	two := filepath.Join(t.TempDir(), "logs", "mirror-0")
	os.MkdirAll(filepath.Dir(two), 0o755)
	mustMirror(t, src, two, mirrorOpts(9))
	rep = mustMirror(t, src, two, mirrorOpts(-1))
	if rep.Plan.From != 9 || rep.Plan.AppendSegment < 0 {
		t.Fatalf("second step from %d, append segment %d", rep.Plan.From, rep.Plan.AppendSegment)
	}
	// batches[:6] are the offsets below 9.
	ref2 := kafkatest.WritePartitionWith(t, t.TempDir(), barriertest.Topic, 0, batches[:6], aopts)
	barriertest.AppendLocal(t, ref2, batches[6:], aopts)
	sameFiles(t, "two steps", kafkaFileSet(t, ref2), kafkaFileSet(t, two))

	// The snapshots the mirror took at its rolls hold what a replay
	// computes there.
	pd := segtest.OpenDir(t, two)
	if len(pd.Snapshots) == 0 {
		t.Fatal("no snapshot taken at the rolls")
	}
	o := psm.DefaultOptions()
	checks, _, err := psm.CheckSnapshots(pd, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Match() {
			t.Errorf("snapshot %d: %s %s %v", c.Offset, c.Status, c.Reason, c.Differences)
		}
	}
}

// TestMirrorRefusesDivergedAndAligns: a destination that holds its own
// batch below its end is refused with the exact offset and left as it
// was; --align truncates it there and mirrors the rest.
func TestMirrorRefusesDivergedAndAligns(t *testing.T) {
	batches := mirrorBatches(t)
	src := writeFixtureSeg(t, batches, 400)
	dst := filepath.Join(t.TempDir(), "logs", "mirror-0")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	mustMirror(t, src, dst, mirrorOpts(11))
	// dst fails over at 11 and writes its own batch.
	barriertest.AppendLocal(t, dst, [][]byte{barrier.Build(barrier.Spec{BaseOffset: 0, Timestamp: injectTs})}, segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100})
	barriertest.AppendLocal(t, dst, [][]byte{dataBatch(t, 0, 1, 7007, 0, 0, false, 0)}, segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100})
	before := barriertest.SnapDir(t, dst)
	_, err := PlanMirror(src, dst, mirrorOpts(-1))
	var de *DivergedError
	if !errors.As(err, &de) || de.Offset != 11 {
		t.Fatalf("want divergence at 11, got %v", err)
	}
	barriertest.AssertUnchanged(t, before, dst)

	o := mirrorOpts(-1)
	o.Align = true
	rep := mustMirror(t, src, dst, o)
	p := rep.Plan
	if p.Truncation == nil || p.Truncation.Offset != 11 || p.From != 11 || p.To != 18 {
		t.Fatalf("truncation %+v, copied [%d, %d)", p.Truncation, p.From, p.To)
	}
	r, err := VerifyEdge(src, dst, ChainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != EdgeInSync || !r.OK() {
		t.Fatalf("after align: %s %+v", r.Status, r.Findings)
	}
}

// TestMirrorWritesEndSnapshot: a mirror leaves the producer snapshot a
// broker's clean shutdown writes at the log end (UnifiedLog.close), which
// a rebuild from the log alone matches; the next mirror writes the one at
// its new end and deletes the old end's, which is not at a segment base
// (ProducerStateManager.removeStraySnapshots would). Before, a mirror
// left no snapshot at its end, and the next one replayed the whole
// destination.
func TestMirrorWritesEndSnapshot(t *testing.T) {
	src, dst := segmentedPair(t)
	o := mirrorOpts(9)
	o.SegmentBytes = 1 << 20
	first := mustMirror(t, src, dst, o).Plan
	o.Upto = -1
	second := mustMirror(t, src, dst, o).Plan
	if first.EndSnapshot != first.NewLogEndOffset || second.EndSnapshot != second.NewLogEndOffset || first.EndSnapshot == second.EndSnapshot {
		t.Fatalf("end snapshots %d and %d, log ends %d and %d", first.EndSnapshot, second.EndSnapshot, first.NewLogEndOffset, second.NewLogEndOffset)
	}
	if len(second.SnapshotsDeleted) != 1 || second.SnapshotsDeleted[0] != first.EndSnapshot {
		t.Errorf("the second mirror deletes snapshots %v, want the old end's %d", second.SnapshotsDeleted, first.EndSnapshot)
	}
	pd := segtest.OpenDir(t, dst)
	if len(pd.Snapshots) != 1 || pd.Snapshots[0].Offset != second.EndSnapshot {
		t.Fatalf("snapshots %+v, want only the one at %d", pd.Snapshots, second.EndSnapshot)
	}
	checks, _, err := psm.CheckSnapshots(pd, psm.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || !checks[0].Match() {
		t.Fatalf("the end snapshot does not match a rebuild from the log: %+v", checks)
	}
}
