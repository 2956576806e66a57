package mirror

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

// TestProgressMovesWithinASegment: a mirror's plan and a chain's
// verification tell Options.Progress the bytes they read every MiB or so,
// not once a segment: over one 6 MiB segment the line moves several times,
// and the plan's count is the source's size (no destination yet); the
// verification's is at most the upstream log plus the downstream log
// twice (the walk, then the replay).
func TestProgressMovesWithinASegment(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "a", "big-0")
	_, st, err := segtest.LargeSegmentFile(src, 6<<20, segtest.LargeOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	size := st.Bytes
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "b", "big-0")

	var sum int64
	calls := 0
	o := DefaultOptions()
	o.Progress = func(n int64) { sum += n; calls++ }
	p, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum != size || calls < 5 {
		t.Errorf("plan: %d bytes told in %d calls, want %d in at least 5", sum, calls, size)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")}); err != nil {
		t.Fatal(err)
	}

	sum, calls = 0, 0
	rep, err := VerifyChain([]string{src, dst}, nil, ChainOptions{Progress: func(n int64) { sum += n; calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("the mirror does not verify: %+v", rep.Edges[0].Findings)
	}
	if sum < 2*size || sum > 3*size || calls < 10 {
		t.Errorf("verify-chain: %d bytes told in %d calls, want between %d and %d in at least 10", sum, calls, 2*size, 3*size)
	}
}
