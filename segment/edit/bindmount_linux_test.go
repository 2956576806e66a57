package edit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment/edit"
)

// TestEditSeesBrokerThroughBindMount is issue 28's item 14: a partition
// directory bind-mounted elsewhere has another parent there, without the
// broker's .lock, and kseg run through that path did not see the broker.
// The mount table says where else the directory is mounted: a broker
// holding the lock of the log directory there is seen (broker-running,
// naming the other path) by the plan and the apply, and nothing changes.
// It bind-mounts, and skips where it cannot (not root, no mount
// permission).
func TestEditSeesBrokerThroughBindMount(t *testing.T) {
	root := t.TempDir()
	dir := writeFixtureIn(t, filepath.Join(root, "broker"))
	alias := filepath.Join(root, "elsewhere", "mirror-0")
	if err := os.MkdirAll(alias, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", dir, alias).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", alias).Run() })
	p := mustPlan(t, alias, planOpts())
	barriertest.HoldBrokerLock(t, filepath.Join(filepath.Dir(dir), ".lock"))
	refusedUnchanged(t, dir, alias, p, edit.RefuseLocked, filepath.Dir(dir), "through the bind mount "+alias)
}
