package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// overlapped copies testdata's orders-0 (segments 0, 26 and 53, log end
// 73) and appends segment 53's batches to segment 26, as mirror's in-place
// append did through a hard link into a source seeded with cp -al
// (issue 28, item 4): segment 26 then holds offsets 26..72 and overlaps
// segment 53.
func overlapped(t *testing.T) (dir string, orig26 []byte) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "orders-0")
	clitest.Fixture(t, "partitions/orders-0", dir)
	orig26 = testkit.ReadFile(t, filepath.Join(dir, segment.SegmentFileName(26, segment.LogSuffix)))
	seg53 := testkit.ReadFile(t, filepath.Join(dir, segment.SegmentFileName(53, segment.LogSuffix)))
	testkit.WriteFile(t, filepath.Join(dir, segment.SegmentFileName(26, segment.LogSuffix)), append(bytes.Clone(orig26), seg53...))
	return dir, orig26
}

// TestOverlappingSegmentsAreAnErrorEverywhere: a segment whose offsets run
// into the next segment's is a segment-overlap error in dump
// --verify-index, replay-psm, repair --dry-run and verify-chain (they
// called it healthy, or reported duplicate sequences and a reordered
// batch), and repair cuts it where LogSegment.truncateTo(53) would,
// keeping segment 53: afterwards every command is clean and segment 26
// holds its own bytes again.
func TestOverlappingSegmentsAreAnErrorEverywhere(t *testing.T) {
	dir, orig26 := overlapped(t)
	src := clitest.Testdata("partitions/orders-0")
	for _, args := range [][]string{
		{"dump", "-q", "--verify-index", dir},
		{"replay-psm", "-q", dir},
		{"repair", "--dry-run", dir},
		{"verify-chain", src, dir},
	} {
		r := clitest.Run(args...)
		if r.Code != ui.ExitFindings || !strings.Contains(r.Stdout+r.Stderr, "segment-overlap") {
			t.Errorf("%v: exit %d, want a segment-overlap error (exit 3):\n%s%s", args[0], r.Code, r.Stdout, r.Stderr)
		}
	}
	r := clitest.Run("repair", "-q", "--backup-dir", t.TempDir(), dir)
	if r.Code != ui.ExitOK {
		t.Fatalf("repair: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := testkit.ReadFile(t, filepath.Join(dir, segment.SegmentFileName(26, segment.LogSuffix)))
	if !bytes.Equal(got, orig26) {
		t.Errorf("segment 26 after the repair: %d bytes, its own were %d", len(got), len(orig26))
	}
	if _, err := os.Stat(filepath.Join(dir, segment.SegmentFileName(53, segment.LogSuffix))); err != nil {
		t.Errorf("segment 53 is gone: %v", err)
	}
	for _, args := range [][]string{{"dump", "-q", "--verify-index", dir}, {"replay-psm", "-q", dir}} {
		if r := clitest.Run(args...); r.Code != ui.ExitOK {
			t.Errorf("%v after the repair: exit %d\n%s%s", args[0], r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestOverlapStraddlingTheBaseIsRefused: when the batch where the overlap
// begins starts below the next segment's base, a cut would lose offsets
// only the earlier segment holds: repair refuses and changes nothing.
func TestOverlapStraddlingTheBaseIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	clitest.Fixture(t, "partitions/orders-0", dir)
	// Segment 26's last batch ends at 52: name the next segment 52, so
	// that the batch holding 52 begins below it.
	last := "00000000000000000052"
	for _, suffix := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.SnapshotSuffix} {
		if err := os.Rename(filepath.Join(dir, segment.SegmentFileName(53, suffix)), filepath.Join(dir, last+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	before := clitest.WalkState(t, dir)
	r := clitest.Run("repair", "--dry-run", dir)
	if r.Code != ui.ExitRefused || !strings.Contains(r.Stderr, "segment-overlap") {
		t.Errorf("repair --dry-run: exit %d, want refused (segment-overlap):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run("dump", "-q", "--verify-index", dir); r.Code != ui.ExitFindings || !strings.Contains(r.Stdout, "segment-overlap") {
		t.Errorf("dump: exit %d\n%s", r.Code, r.Stdout)
	}
	if diffs := clitest.DiffState(before, clitest.WalkState(t, dir)); len(diffs) > 0 {
		t.Errorf("the refusal changed the directory:\n%s", strings.Join(diffs, "\n"))
	}
}
