//go:build unix

package clitest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// RefusedWhileLocked holds a broker's fcntl lock on the .lock of dir's log
// directory (barriertest.HoldBrokerLock: the test binary needs its
// TestHelperFcntlLockHolder) and runs `kseg command ARGS... dir` for each
// ARGS of runs: every run is refused with exit 4 (broker-running), after
// its plan (which holds planned) is shown — issue 12, defect 8: the
// operator can look before the broker is stopped — and nothing under the
// log directory changes.
func RefusedWhileLocked(t *testing.T, command, dir, planned string, runs ...[]string) {
	t.Helper()
	logDir := filepath.Dir(dir)
	barriertest.HoldBrokerLock(t, filepath.Join(logDir, segment.LockName))
	before := WalkState(t, logDir)
	for _, args := range runs {
		code, out, stderr := Exec(t, append(append([]string{command}, args...), dir)...)
		if code != ui.ExitRefused || !strings.Contains(stderr, "broker-running") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		if !strings.Contains(out, planned) {
			t.Fatalf("%v: the plan is not shown before the refusal:\n%s", args, out)
		}
	}
	AssertSameState(t, before, logDir)
}
