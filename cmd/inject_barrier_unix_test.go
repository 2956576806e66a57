//go:build unix

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

// TestInjectBarrierCLIRefusesLockedLogDir: with a broker's fcntl lock held,
// every run is refused with exit 4 and nothing changes; the plan is still
// printed first (issue 12, defect 8: the operator can look before the
// broker is stopped), then why it cannot be applied.
func TestInjectBarrierCLIRefusesLockedLogDir(t *testing.T) {
	dir := mirrorPartition(t)
	logDir := filepath.Dir(dir)
	barriertest.HoldBrokerLock(t, filepath.Join(logDir, segment.LockName))
	before := walkState(t, logDir)
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}, {"--mode", "abort"}, {"--dry-run", "-o", "json"}} {
		code, out, stderr := injRun(t, append(append([]string{"inject-barrier"}, args...), dir)...)
		if code != ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		if !strings.Contains(out, "MIRROR_PID_RESET") {
			t.Fatalf("%v: the plan is not shown before the refusal:\n%s", args, out)
		}
	}
	assertSameState(t, before, logDir)
}

// TestMirrorCLIRefusesLockedLogDir: the same for a mirror whose
// destination's log directory a broker holds, reached through a symlinked
// log directory.
func TestMirrorCLIRefusesLockedLogDir(t *testing.T) {
	src := mirrorPartition(t)
	root := t.TempDir()
	ld := filepath.Join(root, "ld")
	if err := os.Mkdir(ld, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ld, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	barriertest.HoldBrokerLock(t, filepath.Join(ld, segment.LockName))
	before := walkState(t, ld)
	dst := filepath.Join(root, "link", filepath.Base(src))
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}} {
		code, out, stderr := injRun(t, append(append([]string{"mirror"}, args...), src, dst)...)
		if code != ExitRefused || !strings.Contains(stderr, "broker-running") || !strings.Contains(out, "Files:") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	assertSameState(t, before, ld)
}
