//go:build unix

package barrier

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

func TestInjectRefusesFcntlLockedLogDir(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	// Plan while the lock is free, so ApplyInjection meets the broker too.
	p := mustPlan(t, dir, planOpts())
	barriertest.RefusedWhileLocked(t, filepath.Dir(dir),
		func() error { _, err := PlanInjection(dir, planOpts()); return err },
		func() error {
			_, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
			return err
		})
}

// TestInjectHoldsLockWhileApplying: during ApplyInjection kseg holds the lock a
// broker needs, so a broker started meanwhile cannot open the directory.
func TestInjectHoldsLockWhileApplying(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	lockPath := filepath.Join(filepath.Dir(dir), segment.LockName)
	p := mustPlan(t, dir, planOpts())
	checked := false
	_, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
		if step != "journal:committing" {
			return nil
		}
		checked = true
		// A second process trying what a broker tries must fail.
		if out := barriertest.TryBrokerLock(lockPath); out != "busy" {
			t.Errorf("another process trying the broker's lock while kseg was writing got %q, want busy", out)
		}
		return nil
	}})
	if err != nil || !checked {
		t.Fatalf("apply: %v (checked %v)", err, checked)
	}
}
