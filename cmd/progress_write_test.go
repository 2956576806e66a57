package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestLongCommandsDrawProgress: every long command draws its byte-based
// progress line on a terminal's stderr — replay-psm, verify-chain, and the
// plans and applies of mirror, inject-barrier and repair (these four used
// to show none) — erases it before it prints, leaves stdout as it is when
// piped, and draws nothing with -q or when stderr is not a terminal.
func TestLongCommandsDrawProgress(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "orders-0"), filepath.Join(root, "b", "orders-0")
	clitest.Fixture(t, "partitions/orders-0", a)
	clitest.Mkdir(t, filepath.Dir(b))
	torn := clitest.Fixture(t, "broken/torn-tail/events-0", filepath.Join(root, "t", "events-0"))
	backups := t.TempDir()
	env := func(k string) (string, bool) { return "0", k == ui.ProgressDelayEnv }
	for _, tc := range []struct {
		args   []string
		labels []string
	}{
		{[]string{"replay-psm", a}, []string{"replaying"}},
		{[]string{"mirror", "--dry-run", a, b}, []string{"planning"}},
		{[]string{"mirror", "--backup-dir", filepath.Join(backups, "m"), a, b}, []string{"planning", "applying"}},
		{[]string{"verify-chain", a, b}, []string{"comparing"}},
		{[]string{"inject-barrier", "--dry-run", "--timestamp", "1700000009000", b}, []string{"planning"}},
		{[]string{"inject-barrier", "--backup-dir", filepath.Join(backups, "i"), b}, []string{"planning", "applying"}},
		{[]string{"repair", "--dry-run", torn}, []string{"examining"}},
		{[]string{"repair", "--backup-dir", filepath.Join(backups, "r"), torn}, []string{"examining", "applying"}},
	} {
		name := strings.Join(tc.args[:len(tc.args)-1], " ")
		// Piped (and, for a write, on a copy: the run changes the
		// partition): nothing on stderr.
		if strings.Contains(name, "--dry-run") || tc.args[0] == "replay-psm" || tc.args[0] == "verify-chain" {
			piped := clitest.Run(tc.args...)
			s, out, errb := ui.TTYTestStreams(false)
			s.Env = env
			code := Run(t.Context(), tc.args, s)
			if code != piped.Code || out.String() != piped.Stdout {
				t.Errorf("%s: on a terminal exit %d and stdout\n%s\npiped exit %d and stdout\n%s", name, code, out, piped.Code, piped.Stdout)
			}
			if piped.Stderr != "" {
				t.Errorf("%s piped: stderr %q", name, piped.Stderr)
			}
			checkProgressLine(t, name, errb.String(), tc.labels)
			s, _, errb = ui.TTYTestStreams(false)
			s.Env = env
			Run(t.Context(), append([]string{"-q"}, tc.args...), s)
			if errb.String() != "" {
				t.Errorf("-q %s on a terminal: stderr %q", name, errb.String())
			}
			continue
		}
		s, _, errb := ui.TTYTestStreams(false)
		s.Env = env
		if code := Run(t.Context(), tc.args, s); code != ui.ExitOK {
			t.Fatalf("%s: exit %d\n%s", name, code, errb)
		}
		checkProgressLine(t, name, errb.String(), tc.labels)
	}
	// A rollback copies the backups back.
	crashed := filepath.Join(root, "c", "events-0")
	clitest.InterruptedRepair(t, crashed, filepath.Join(backups, "c"))
	s, _, errb := ui.TTYTestStreams(false)
	s.Env = env
	if code := Run(t.Context(), []string{"repair", "--rollback", crashed}, s); code != ui.ExitOK {
		t.Fatalf("repair --rollback: exit %d\n%s", code, errb)
	}
	checkProgressLine(t, "repair --rollback", errb.String(), []string{"rolling back"})
}

// checkProgressLine: stderr holds each label's line, drawn with \r and
// erased again, and nothing else.
func checkProgressLine(t *testing.T, name, stderr string, labels []string) {
	t.Helper()
	for _, l := range labels {
		if !strings.Contains(stderr, "\r"+l+" ") {
			t.Errorf("%s: no %q progress line on stderr %q", name, l, stderr)
		}
	}
	if !strings.HasSuffix(stderr, "\r\x1b[K") {
		t.Errorf("%s: the progress line is not erased: %q", name, stderr)
	}
	rest := stderr
	for _, part := range strings.Split(stderr, "\r") {
		if part != "" && part != "\x1b[K" && !strings.HasSuffix(part, "\x1b[K") {
			t.Errorf("%s: stderr holds more than the progress line: %q", name, rest)
			break
		}
	}
}
