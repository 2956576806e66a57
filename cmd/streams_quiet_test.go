package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuietSilencesSummaries: -q leaves dump's summary lines out (text and
// table), as the README says; without it they are there.
func TestQuietSilencesSummaries(t *testing.T) {
	dir := filepath.Join("..", "testdata", "partitions", "orders-0")
	for _, output := range []string{"text", "table"} {
		s, out, _ := TestStreams()
		Run(context.Background(), []string{"dump", "-o", output, dir}, s)
		loud := out.String()
		s, out, errb := TestStreams()
		code := Run(context.Background(), []string{"dump", "-q", "-o", output, dir}, s)
		quiet := out.String()
		if !strings.Contains(loud, "batches") || !strings.Contains(loud, "tail ") {
			t.Fatalf("%s: no summary without -q:\n%s", output, loud)
		}
		if code != ExitOK || strings.Contains(quiet, "summary:") || strings.Contains(quiet, "validBytes") || errb.Len() != 0 {
			t.Errorf("%s -q: exit %d, summaries left in:\n%s%s", output, code, quiet, errb)
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
	src := filepath.Join(ld, "orders-0")
	copyInputDir(t, filepath.Join("..", "testdata", "partitions", "orders-0"), src)
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
		s, out, errb := TestStreams()
		Run(context.Background(), tc.args, s)
		if strings.Contains(strings.ToLower(out.String()), "warning:") {
			t.Errorf("%v: a warning on stdout:\n%s", tc.args, out)
		}
		if !strings.Contains(errb.String(), "kseg: warning: ") || !strings.Contains(errb.String(), tc.warn) {
			t.Errorf("%v: stderr lacks the warning %q:\n%s", tc.args, tc.warn, errb)
		}
	}
}
