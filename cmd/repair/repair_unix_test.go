//go:build unix

package repair_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// TestRepairCLIRefusesLockedLogDir: with a broker's fcntl lock held on the
// log directory's .lock (barriertest.HoldBrokerLock), the dry run and the repair are refused with exit 4 and nothing changes.
func TestRepairCLIRefusesLockedLogDir(t *testing.T) {
	dir := repairCase(t, "events-0/torn-tail/40")
	logDir := filepath.Dir(dir)
	barriertest.HoldBrokerLock(t, filepath.Join(logDir, segment.LockName))
	before := clitest.WalkState(t, logDir)
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}, {"--all", "-o", "json"}} {
		code, out, stderr := clitest.Exec(t, append(append([]string{"repair"}, args...), dir)...)
		if code != ui.ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		// The plan first (issue 12, defect 8), then the refusal.
		if !strings.Contains(out, "torn") {
			t.Fatalf("%v: the plan is not shown before the refusal:\n%s", args, out)
		}
	}
	clitest.AssertSameState(t, before, logDir)
}

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }
