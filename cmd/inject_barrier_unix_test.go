//go:build unix

package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

func TestInjectBarrierCLIRefusesLockedLogDir(t *testing.T) {
	dir := mirrorPartition(t)
	logDir := filepath.Dir(dir)
	barriertest.HoldBrokerLock(t, filepath.Join(logDir, segment.LockName))
	before := walkState(t, logDir)
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}, {"--mode", "abort"}} {
		code, out, stderr := injRun(t, append(append([]string{"inject-barrier"}, args...), dir)...)
		if code != ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	assertSameState(t, before, logDir)
}
