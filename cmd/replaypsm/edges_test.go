package replaypsm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// TestReplayPSMRejectsBadNumbers: --jobs -3 and a log start above the log
// end were accepted silently.
func TestReplayPSMRejectsBadNumbers(t *testing.T) {
	dir := filepath.Join(clitest.TestdataDir, "partitions", "txn-0")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"replay-psm", "--jobs", "-3", dir}, "--jobs"},
		{[]string{"replay-psm", "--log-start-offset", "100", dir}, "above the log end offset 19"},
	} {
		code, out, errOut := clitest.Exec(t, tc.args...)
		if code != ui.ExitUsage || !strings.Contains(errOut, tc.msg) || out != "" {
			t.Errorf("%v: exit %d\n%s%s", tc.args, code, out, errOut)
		}
	}
	if code, _, errOut := clitest.Exec(t, "replay-psm", "--log-start-offset", "19", dir); code == ui.ExitUsage {
		t.Errorf("a log start at the log end (an empty log) is valid: %s", errOut)
	}
}

// TestReplayPSMSaysWhatTheSnapshotHides: control-0's latest snapshot lies
// past both its barriers; "0 barriers" must not read as "none in the log".
// After a clean shutdown the broker loads it (after an unclean one it
// recovers the log from its start instead).
func TestReplayPSMSaysWhatTheSnapshotHides(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "control-0")
	clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, "partitions", "control-0"), dir)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), segment.CleanShutdownName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, full, _ := clitest.Exec(t, "replay-psm", "--from-snapshot", "none", dir)
	if !strings.Contains(full, ", 2 barriers,") {
		t.Fatalf("the whole log should show 2 barriers:\n%s", full)
	}
	_, out, _ := clitest.Exec(t, "replay-psm", dir)
	if !strings.Contains(out, "0 barriers after the snapshot") || !strings.Contains(out, "--from-snapshot none replays them") {
		t.Errorf("the snapshot's effect is not explained:\n%s", out)
	}
}

// TestReplayPSMHangingSeverityStable: the CLI's verdict on txn-0's open
// transaction is the same from the snapshot and from the log start.
func TestReplayPSMHangingSeverityStable(t *testing.T) {
	dir := filepath.Join(clitest.TestdataDir, "partitions", "txn-0")
	line := func(args ...string) (int, string) {
		code, out, _ := clitest.Exec(t, append(args, dir)...)
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "hanging-transaction") {
				return code, strings.Fields(l)[0]
			}
		}
		t.Fatalf("%v: no hanging-transaction line:\n%s", args, out)
		return 0, ""
	}
	c1, s1 := line("replay-psm")
	c2, s2 := line("replay-psm", "--from-snapshot", "none")
	if s1 != s2 || c1 != c2 {
		t.Errorf("latest snapshot: %s (exit %d); --from-snapshot none: %s (exit %d)", s1, c1, s2, c2)
	}
}
