//go:build unix

package barriertest

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"golang.org/x/sys/unix"
)

// lockHolderEnv makes a test binary, re-executed as a child, hold an fcntl
// lock on the named file the way a broker does.
const lockHolderEnv = "KSEG_TEST_HOLD_FCNTL_LOCK"

// RunLockHolder is the body of the TestHelperFcntlLockHolder a package
// that calls HoldBrokerLock defines: run as a child process, it takes the
// lock Kafka's LogManager takes on a log directory's .lock —
// FileChannel.tryLock(), i.e. fcntl(F_SETLK) with a write lock over
// [0, Long.MAX_VALUE) — says "locked" and holds it until its stdin closes
// (or says "busy" when it cannot have it). Outside such a child it skips.
func RunLockHolder(t *testing.T) {
	path := os.Getenv(lockHolderEnv)
	if path == "" {
		t.Skip("helper process for the lock tests")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(2)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: math.MaxInt64}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			os.Stdout.WriteString("busy\n") // what LogManager reports as "Failed to acquire lock"
		}
		os.Exit(3)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// lockHolder is the test binary re-executed as the lock holder of path.
func lockHolder(path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFcntlLockHolder$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+path)
	return cmd
}

// HoldBrokerLock starts a child process holding an fcntl write lock on
// path, as a running broker does, and returns once it holds it; the lock
// goes when the test ends. The calling package must define
// TestHelperFcntlLockHolder to call RunLockHolder.
func HoldBrokerLock(t *testing.T, path string) {
	t.Helper()
	cmd := lockHolder(path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "locked" {
			return
		}
	}
	t.Fatalf("lock holder did not take the lock: %v", cmd.Wait())
}

// TryBrokerLock tries what a starting broker tries on path, from another
// process, and gives the lock up at once: "locked" when it could take the
// lock, "busy" when another process holds it.
func TryBrokerLock(path string) string {
	cmd := lockHolder(path)
	cmd.Stdin = strings.NewReader("")
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// RefusedWhileLocked holds a broker's lock on logDir's .lock
// (HoldBrokerLock), then runs plan and apply: each must be refused as
// broker-running (edit.RefuseLocked) with a message naming the process
// holding the lock, and nothing under logDir may change.
func RefusedWhileLocked(t *testing.T, logDir string, plan, apply func() error) {
	t.Helper()
	HoldBrokerLock(t, filepath.Join(logDir, segment.LockName))
	before := SnapDir(t, logDir)
	for _, step := range []struct {
		name string
		run  func() error
	}{{"plan", plan}, {"apply", apply}} {
		if err := step.run(); !IsRefusal(err, edit.RefuseLocked) || !strings.Contains(err.Error(), "process ") {
			t.Fatalf("%s while a broker holds %s: %v, want a %s refusal naming the holder", step.name, logDir, err, edit.RefuseLocked)
		}
	}
	AssertUnchanged(t, before, logDir)
}
