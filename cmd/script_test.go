package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/segtest"
)

// TestMain makes the test binary double as the kseg command (and the
// ttyrun helper) for the testscript end-to-end tests: testscript copies
// the binary into $PATH under those names and runs it as a real process,
// with real pipes, exit codes and, through ttyrun, a real terminal.
func TestMain(m *testing.M) {
	clitest.Register(Run)
	testscript.Main(m, map[string]func(){
		"kseg":   func() { os.Exit(Main()) },
		"ttyrun": func() { os.Exit(ttyRun(os.Args[1:])) },
	})
}

// TestScripts runs cmd/testdata/script/*.txtar. Each script starts in a
// work directory holding a copy of the repository's testdata/partitions,
// testdata/broken, testdata/logdirs and testdata/mm2 under testdata/, so
// commands read as in the README: `kseg dump testdata/partitions/orders-0`.
//
// Beyond testscript's built-ins, scripts have:
//
//	exitcode N prog args...  run prog (like exec) and require exit status N
//	exec ttyrun [-stdout] prog args...
//	                         run prog with stderr (and with -stdout also
//	                         stdout) on a pseudo-terminal; what the
//	                         terminal shows comes back as ttyrun's stderr
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, filepath.Join("testdata", "script")))
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	t.Helper()
	fixtures, err := filepath.Abs(clitest.TestdataDir)
	if err != nil {
		t.Fatal(err)
	}
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			for _, sub := range []string{"partitions", "broken", "logdirs", "mm2"} {
				if err := segtest.CopyTree(filepath.Join(fixtures, sub), filepath.Join(env.WorkDir, "testdata", sub)); err != nil {
					return err
				}
			}
			// kseg check's expectations of those fixtures (docs/ci.md).
			if b, err := os.ReadFile(filepath.Join(fixtures, expect.ConfigName)); err != nil {
				return err
			} else if err := os.WriteFile(filepath.Join(env.WorkDir, "testdata", expect.ConfigName), b, 0o644); err != nil {
				return err
			}
			// A terminal-less, colour-neutral environment, whatever the
			// developer's shell exports.
			for _, k := range []string{"NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", ui.ProgressDelayEnv} {
				env.Setenv(k, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	}
}

// cmdExitCode: exitcode N prog args... — testscript's exec only tells zero
// from non-zero, and kseg's exit codes are part of its interface.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// ttyRun is the ttyrun helper: it runs args[0] with its stderr (and, after
// -stdout, its stdout) on the slave side of a new pseudo-terminal of 100
// columns, copies everything the terminal shows to its own stderr, and
// exits with the child's status.
func ttyRun(args []string) int {
	stdoutToo := len(args) > 0 && args[0] == "-stdout"
	if stdoutToo {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ttyrun [-stdout] prog args...")
		return 2
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ttyrun:", err)
		return 125
	}
	defer ptmx.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 100})
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, tty
	if stdoutToo {
		c.Stdout = tty
	}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "ttyrun:", err)
		return 125
	}
	tty.Close() // only the child holds the slave now: EIO on ptmx at its exit
	copied := make(chan struct{})
	go func() {
		io.Copy(os.Stderr, ptmx)
		close(copied)
	}()
	err = c.Wait()
	<-copied
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ttyrun:", err)
		return 125
	}
	return 0
}
