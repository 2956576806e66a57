//go:build unix

package cmd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
)

// TestRepairCLIRefusesLockedLogDir: with a broker's fcntl lock held on the
// log directory's .lock (TestHelperInjectLockHolder, a child process), the
// dry run and the repair are refused with exit 4 and nothing changes.
func TestRepairCLIRefusesLockedLogDir(t *testing.T) {
	dir := repairCase(t, "events-0/torn-tail/40")
	logDir := filepath.Dir(dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperInjectLockHolder$")
	cmd.Env = append(os.Environ(), injectLockEnv+"="+filepath.Join(logDir, segment.LockName))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "locked" {
		t.Fatalf("lock holder: %q", sc.Text())
	}
	before := walkState(t, logDir)
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}, {"--all", "-o", "json"}} {
		code, out, stderr := injRun(t, append(append([]string{"repair"}, args...), dir)...)
		if code != ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	assertSameState(t, before, logDir)
}
