package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestQuietSilencesSummaries: -q leaves dump's summary lines out (text and
// table), as the README says; without it they are there.
func TestQuietSilencesSummaries(t *testing.T) {
	dir := filepath.Join("..", "testdata", "partitions", "orders-0")
	for _, output := range []string{"text", "table"} {
		loud := clitest.Run("dump", "-o", output, dir).Stdout
		r := clitest.Run("dump", "-q", "-o", output, dir)
		quiet := r.Stdout
		if !strings.Contains(loud, "batches") || !strings.Contains(loud, "tail ") {
			t.Fatalf("%s: no summary without -q:\n%s", output, loud)
		}
		if r.Code != ui.ExitOK || strings.Contains(quiet, "summary:") || strings.Contains(quiet, "validBytes") || r.Stderr != "" {
			t.Errorf("%s -q: exit %d, summaries left in:\n%s%s", output, r.Code, quiet, r.Stderr)
		}
		if !strings.Contains(strings.ToLower(quiet), "offset") {
			t.Errorf("%s -q lost the data:\n%s", output, quiet)
		}
	}
}

// TestWarningsOnStderr: the write commands' warnings are diagnostics, on
// stderr; stdout holds the plan only.
func TestWarningsOnStderr(t *testing.T) {
	ld := t.TempDir()
	src := clitest.Fixture(t, "partitions/orders-0", filepath.Join(ld, "orders-0"))
	// An orphaned time index: inject-barrier and repair warn about it.
	b, err := os.ReadFile(filepath.Join(src, "00000000000000000000.timeindex"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "00000000000000000099.timeindex"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"inject-barrier", "--dry-run", src}, "orphaned index files"},
		{[]string{"mirror", "--dry-run", src, filepath.Join(ld, "other-0")}, "not named after the source"},
		{[]string{"-o", "table", "mirror", "--dry-run", src, filepath.Join(ld, "other-0")}, "not named after the source"},
	} {
		r := clitest.Run(tc.args...)
		if strings.Contains(strings.ToLower(r.Stdout), "warning:") {
			t.Errorf("%v: a warning on stdout:\n%s", tc.args, r.Stdout)
		}
		if !strings.Contains(r.Stderr, "kseg: warning: ") || !strings.Contains(r.Stderr, tc.warn) {
			t.Errorf("%v: stderr lacks the warning %q:\n%s", tc.args, tc.warn, r.Stderr)
		}
	}
}

// TestQuietKeepsWarnings: -q silences progress and summaries, never
// warnings (README: "warnings stay on stderr"). The views dropped their
// `kseg: warning:` lines under -q, and replay-psm its warning about a
// checkpoint it could not read; the help said -q left "nothing on stderr
// but errors".
func TestQuietKeepsWarnings(t *testing.T) {
	ld := clitest.Fixture(t, "logdirs/healthy", filepath.Join(t.TempDir(), "healthy"))
	// A partition.metadata that does not parse: the views warn and go on.
	if err := os.WriteFile(filepath.Join(ld, "payments-0", "partition.metadata"), []byte("version: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A log-start checkpoint that does not parse: replay-psm warns.
	if err := os.WriteFile(filepath.Join(ld, "log-start-offset-checkpoint"), []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"groups", ld}, {"txns", ld}, {"metadata", ld}, {"replay-psm", filepath.Join(ld, "orders-0")}} {
		for _, quiet := range []bool{false, true} {
			a := args
			if quiet {
				a = append([]string{"-q"}, args...)
			}
			stderr := clitest.Run(a...).Stderr
			if !strings.Contains(stderr, "kseg: warning: ") {
				t.Errorf("%v: no warning on stderr:\n%s", a, stderr)
			}
			if !quiet {
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "kseg: warning: ") {
					t.Errorf("%v: stderr holds more than warnings under -q: %q", a, line)
				}
			}
		}
	}
	h := clitest.Run("--help")
	if !strings.Contains(h.Stdout, `leaves errors and "kseg: warning:" lines`) || strings.Contains(h.Stdout, "nothing on stderr but") {
		t.Errorf("kseg --help does not say that -q keeps warnings:\n%s", h.Stdout)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "kafka-dump-log.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "Nothing on stderr but errors") || !strings.Contains(string(doc), "`kseg: warning:` lines still go to stderr") {
		t.Error("docs/kafka-dump-log.md says -q leaves nothing on stderr but errors")
	}
}
