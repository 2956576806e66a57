//go:build unix

package repair_test

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestRepairCLIRefusesLockedLogDir: with a broker's fcntl lock held on the
// log directory's .lock (barriertest.HoldBrokerLock), the dry run and the repair are refused with exit 4 and nothing changes.
func TestRepairCLIRefusesLockedLogDir(t *testing.T) {
	// The plan names the torn tail it would cut.
	clitest.RefusedWhileLocked(t, "repair", repairCase(t, "events-0/torn-tail/40"), "torn",
		[]string{"--dry-run"}, []string{"--backup-dir", filepath.Join(t.TempDir(), "b")}, []string{"--all", "-o", "json"})
}

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }
