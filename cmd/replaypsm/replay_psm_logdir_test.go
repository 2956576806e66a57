package replaypsm_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// TestReplayPSMLogDir: a log directory is replayed partition by partition
// on --jobs workers, and the output is the same, in partition order,
// whatever the number of workers.
func TestReplayPSMLogDir(t *testing.T) {
	dir := clitest.Fixture(t, "partitions", t.TempDir())
	// Plant a stale snapshot: control-0's snapshot at 14 lies after its
	// barriers at 11 and 12; one holding a producer from before them is a
	// stale-snapshot error, so the whole run must exit 3 (txn-0's hanging
	// transaction is the other partition with findings).
	stale := segment.EncodeProducerSnapshot([]segment.SnapshotEntry{{ProducerID: 3000, ProducerEpoch: 0, LastSequence: 1,
		LastOffset: 7, OffsetDelta: 1, Timestamp: 1700000000050, CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1}})
	testkit.WriteFile(t, filepath.Join(dir, "control-0", "00000000000000000014.snapshot"), stale)
	code1, out1, _ := clitest.Exec(t, "replay-psm", "-o", "json", "--jobs", "1", dir)
	code2, out2, _ := clitest.Exec(t, "replay-psm", "-o", "json", "--jobs", "3", dir)
	if out1 != out2 || code1 != code2 {
		t.Fatalf("--jobs 1 and --jobs 3 differ (exit %d vs %d)", code1, code2)
	}
	if code1 != ui.ExitFindings {
		t.Fatalf("exit %d, want %d", code1, ui.ExitFindings)
	}
	var parts []string
	for _, v := range clitest.TypedLines[struct{ Partition string }](t, out1, "producerState") {
		parts = append(parts, v.Partition)
	}
	// A log directory's JSON is its partitions' producerState lines and
	// nothing else (TypedLines passes lines of other types over).
	if lines := strings.Count(strings.TrimSpace(out1), "\n") + 1; lines != len(parts) {
		t.Fatalf("%d JSON lines, %d of them producerState:\n%s", lines, len(parts), out1)
	}
	want := "compacted-0 control-0 legacy-v0-0 legacy-v1-0 orders-0 txn-0"
	if got := strings.Join(parts, " "); got != want {
		t.Fatalf("partitions %q, want %q", got, want)
	}
	code, out, errs := clitest.Exec(t, "replay-psm", dir)
	if code != ui.ExitFindings || !strings.Contains(out, "control-0") || !strings.Contains(out, "FINDINGS") ||
		!strings.Contains(out, "6 partitions replayed: 2 with findings, 0 failed") {
		t.Fatalf("text summary (exit %d):\n%s%s", code, out, errs)
	}
	if code, _, _ := clitest.Exec(t, "replay-psm", "--write-snapshot", filepath.Join(t.TempDir(), "x"), dir); code != ui.ExitUsage {
		t.Fatalf("--write-snapshot on a log directory: exit %d, want %d", code, ui.ExitUsage)
	}
}

// TestReplayPSMLogDirRealSnapshots checks every snapshot of a real broker's
// log directory in one run (skips without ../shared).
func TestReplayPSMLogDirRealSnapshots(t *testing.T) {
	dir := filepath.Join(testkit.RealRootOrSkip(t), "eric-kimm__stock-market-pipeline", "kafka", "data")
	code, out, errb := clitest.Exec(t, "replay-psm", "--check-snapshots", dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	if n := strings.Count(out, "2/2 match ok"); n != 2 {
		t.Fatalf("want both partitions' snapshots to match:\n%s", out)
	}
}
