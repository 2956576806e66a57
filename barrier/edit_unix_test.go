//go:build unix

package barrier

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
)

// TestEditLockThroughSymlinks: a broker holds the fcntl lock of the real log
// directory ld; the partition is reached through a symlinked partition
// directory (alias/mirror-0 -> ld/mirror-0) and through a symlinked log
// directory (ldlink -> ld). Every write command resolves the real
// directory before anything else, checks ld/.lock, and refuses
// (broker-running); nothing changes.
func TestEditLockThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	ld := filepath.Join(root, "ld")
	dir := barriertest.WritePartition(t, ld, mirrorBatches(t), 400)
	src := barriertest.WritePartition(t, filepath.Join(root, "src"), mirrorBatches(t), 400)
	if err := os.MkdirAll(filepath.Join(root, "alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "alias", "mirror-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ld, filepath.Join(root, "ldlink")); err != nil {
		t.Fatal(err)
	}
	holdBrokerLock(t, filepath.Join(ld, ".lock"))
	beforeLD, beforeSrc := snapDir(t, ld), snapDir(t, src)
	for _, path := range []string{filepath.Join(root, "alias", "mirror-0"), filepath.Join(root, "ldlink", "mirror-0")} {
		_, errI := PlanInjection(path, planOpts())
		_, errR := PlanRepair(path, RepairOptions{})
		_, errM := PlanMirror(src, path, mirrorOpts(-1))
		for what, err := range map[string]error{"inject-barrier": errI, "repair": errR, "mirror": errM} {
			var re *RefusalError
			if !errors.As(err, &re) || re.Reason != RefuseLocked {
				t.Errorf("%s %s: %v, want a %s refusal", what, path, err, RefuseLocked)
			}
		}
	}
	assertUnchanged(t, beforeLD, ld)
	assertUnchanged(t, beforeSrc, src)
}
