//go:build unix

package edit_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/barrier/repair"
	"github.com/kseg/kseg/segment/edit"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

// TestEditLockThroughSymlinks: a broker holds the fcntl lock of the real log
// directory ld; the partition is reached through a symlinked partition
// directory (alias/mirror-0 -> ld/mirror-0) and through a symlinked log
// directory (ldlink -> ld). Every write command resolves the real
// directory before anything else, checks ld/.lock, and refuses
// (broker-running); nothing changes.
func TestEditLockThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	ld := filepath.Join(root, "ld")
	dir := barriertest.WritePartition(t, ld, barriertest.MirrorBatches(t), 400)
	src := barriertest.WritePartition(t, filepath.Join(root, "src"), barriertest.MirrorBatches(t), 400)
	if err := os.MkdirAll(filepath.Join(root, "alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "alias", "mirror-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ld, filepath.Join(root, "ldlink")); err != nil {
		t.Fatal(err)
	}
	barriertest.HoldBrokerLock(t, filepath.Join(ld, ".lock"))
	beforeLD, beforeSrc := barriertest.SnapDir(t, ld), barriertest.SnapDir(t, src)
	for _, path := range []string{filepath.Join(root, "alias", "mirror-0"), filepath.Join(root, "ldlink", "mirror-0")} {
		_, errI := barrier.PlanInjection(path, planOpts())
		_, errR := repair.PlanRepair(path, repair.Options{})
		_, errM := mirror.PlanMirror(src, path, mirrorOpts(-1))
		for what, err := range map[string]error{"inject-barrier": errI, "repair": errR, "mirror": errM} {
			var re *edit.RefusalError
			if !errors.As(err, &re) || re.Reason != edit.RefuseLocked {
				t.Errorf("%s %s: %v, want a %s refusal", what, path, err, edit.RefuseLocked)
			}
		}
	}
	barriertest.AssertUnchanged(t, beforeLD, ld)
	barriertest.AssertUnchanged(t, beforeSrc, src)
}
