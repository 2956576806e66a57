//go:build unix

package barrier

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

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/segment"
)

// lockHolderEnv makes the test binary, re-executed as a child, hold an
// fcntl lock on the named file the way a broker does.
const lockHolderEnv = "KSEG_TEST_HOLD_FCNTL_LOCK"

// TestHelperFcntlLockHolder is not a test: run as a child process by
// holdBrokerLock, it takes the lock Kafka's LogManager takes on a log
// directory's .lock — FileChannel.tryLock(), i.e. fcntl(F_SETLK) with a
// write lock over [0, Long.MAX_VALUE) — says "locked" and holds it until
// its stdin closes.
func TestHelperFcntlLockHolder(t *testing.T) {
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

// holdBrokerLock starts a child process holding an fcntl write lock on
// path and returns once it holds it.
func holdBrokerLock(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFcntlLockHolder$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+path)
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

func TestInjectRefusesFcntlLockedLogDir(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	logDir := filepath.Dir(dir)
	lockPath := filepath.Join(logDir, segment.LockName)
	// Plan while the lock is free, so Apply meets the broker too.
	p := mustPlan(t, dir, planOpts())
	holdBrokerLock(t, lockPath)
	before := snapDir(t, logDir)

	_, err := PlanInjection(dir, planOpts())
	var re *RefusalError
	if !errors.As(err, &re) || re.Reason != RefuseLocked {
		t.Fatalf("plan: %v", err)
	}
	if !strings.Contains(err.Error(), "process ") {
		t.Errorf("the refusal does not name the holder: %v", err)
	}
	_, err = Apply(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b")})
	if !errors.As(err, &re) || re.Reason != RefuseLocked {
		t.Fatalf("apply: %v", err)
	}
	assertUnchanged(t, before, logDir)
}

// TestInjectHoldsLockWhileApplying: during Apply kseg holds the lock a
// broker needs, so a broker started meanwhile cannot open the directory.
func TestInjectHoldsLockWhileApplying(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	lockPath := filepath.Join(filepath.Dir(dir), segment.LockName)
	p := mustPlan(t, dir, planOpts())
	checked := false
	_, err := Apply(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
		if step != "journal:committing" {
			return nil
		}
		checked = true
		// A second process trying what a broker tries must fail.
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFcntlLockHolder$")
		cmd.Env = append(os.Environ(), lockHolderEnv+"="+lockPath)
		cmd.Stdin = strings.NewReader("")
		out, _ := cmd.Output()
		if strings.TrimSpace(string(out)) != "busy" {
			t.Errorf("another process trying the broker's lock while kseg was writing got %q, want busy", out)
		}
		return nil
	}})
	if err != nil || !checked {
		t.Fatalf("apply: %v (checked %v)", err, checked)
	}
}
