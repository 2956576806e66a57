//go:build unix

package cmd

import (
	"bufio"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/segment"
)

const injectLockEnv = "KSEG_TEST_CMD_HOLD_FCNTL_LOCK"

// TestHelperInjectLockHolder is not a test: re-executed as a child by
// TestInjectBarrierCLIRefusesLockedLogDir, it takes the lock a broker's
// LogManager takes on <log dir>/.lock (FileChannel.tryLock: an fcntl
// F_SETLK write lock over [0, Long.MAX_VALUE)) and holds it until stdin
// closes.
func TestHelperInjectLockHolder(t *testing.T) {
	path := os.Getenv(injectLockEnv)
	if path == "" {
		t.Skip("helper process")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(2)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: math.MaxInt64}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// holdLogDirLock starts TestHelperInjectLockHolder as a child process that
// holds a broker's fcntl lock on logDir's .lock until the test ends.
func holdLogDirLock(t *testing.T, logDir string) {
	t.Helper()
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
}

func TestInjectBarrierCLIRefusesLockedLogDir(t *testing.T) {
	dir := mirrorPartition(t)
	logDir := filepath.Dir(dir)
	holdLogDirLock(t, logDir)
	before := walkState(t, logDir)
	for _, args := range [][]string{{"--dry-run"}, {"--backup-dir", filepath.Join(t.TempDir(), "b")}, {"--mode", "abort"}} {
		code, out, stderr := injRun(t, append(append([]string{"inject-barrier"}, args...), dir)...)
		if code != ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	assertSameState(t, before, logDir)
}
