package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// The write commands' plans as printed: summarised (summary.go), and as
// a table.

// A mirror of a partition holding many aborted transactions: its plan
// adds a .txnindex entry for each, and the text plan shows the first and
// last few (issue 15: 573 lines for a 512 MiB partition).
func TestMirrorPlanSummarisesTxnIndex(t *testing.T) {
	const aborted = 300
	var batches [][]byte
	for i := range aborted {
		pid := int64(10000 + i)
		batches = append(batches,
			barriertest.DataBatch(t, int64(2*i), 1, pid, 0, 0, true, 0),
			barriertest.MarkerBatch(t, int64(2*i+1), pid, false, 0))
	}
	src := barriertest.WritePartition(t, filepath.Join(t.TempDir(), "a"), batches, 0)
	dst := filepath.Join(t.TempDir(), barriertest.Topic+"-0") // created by the mirror
	// Small segments: the file list is long too.
	args := []string{"mirror", "--dry-run", "--segment-bytes", "1024", src, dst}

	code, out, errs := clitest.Exec(t, args...)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := clitest.CountLines(out, ".txnindex += "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d .txnindex lines, want %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	clitest.MustContain(t, out,
		fmt.Sprintf("… %d more .txnindex entries (%d in all; --verbose lists them) …", aborted-ui.ListHead-ui.ListTail, aborted),
		"firstOffset 0 lastOffset 1 ", fmt.Sprintf("firstOffset %d lastOffset %d ", 2*aborted-2, 2*aborted-1),
		"more files (", "more …, ") // the file list, and the inline list of new segments
	if n := clitest.CountLines(out, "  create  "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d file lines, want %d", n, ui.ListHead+ui.ListTail)
	}

	code, out, _ = clitest.Exec(t, append([]string{"mirror", "--verbose"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != aborted || strings.Contains(out, "more") {
		t.Errorf("--verbose: exit %d, %d .txnindex lines, want %d and no summary line", code, clitest.CountLines(out, ".txnindex += "), aborted)
	}
	code, out, _ = clitest.Exec(t, append([]string{"mirror", "-o", "table"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != ui.ListHead+ui.ListTail || !strings.Contains(out, "more files (") {
		t.Errorf("table: exit %d\n%s", code, out)
	}

	code, out, _ = clitest.Exec(t, append([]string{"mirror", "-o", "json"}, args[1:]...)...)
	if code != ui.ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	plan := clitest.JSONLine(t, out, "mirror-plan")
	if n := len(plan["abortedTxns"].([]any)); n != aborted {
		t.Errorf("json: %d abortedTxns, want %d", n, aborted)
	}
	if n := len(plan["files"].([]any)); n <= ui.ListWhole {
		t.Errorf("json: %d files; the test wants a file list longer than %d", n, ui.ListWhole)
	}
}

// inject-barrier --mode abort over a partition with many open
// transactions: an ABORT marker (and a .txnindex entry) for each, all
// summarised in text, complete with --verbose and in json.
func TestInjectBarrierAbortPlanSummarised(t *testing.T) {
	const open = 250
	var batches [][]byte
	for i := range open {
		batches = append(batches, barriertest.DataBatch(t, int64(i), 1, int64(20000+i), 0, 0, true, 0))
	}
	dir := barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), batches, 0)
	args := []string{"inject-barrier", "--dry-run", "--mode", "abort", "--timestamp", clitest.InjectTs, dir}

	code, out, errs := clitest.Exec(t, args...)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := clitest.CountLines(out, "  ABORT  "); n > ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d ABORT lines, want at most %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	if n := clitest.CountLines(out, ".txnindex += "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d .txnindex lines, want %d", n, ui.ListHead+ui.ListTail)
	}
	clitest.MustContain(t, out,
		fmt.Sprintf("%d open transactions: producer 20000 from 0; ", open),
		fmt.Sprintf("(%d in all)\n", open), // the inline list of open transactions
		fmt.Sprintf("more .txnindex entries (%d in all; --verbose lists them) …", open),
		fmt.Sprintf("more batches (%d in all; --verbose lists them) …", open+1)) // the markers and the barrier

	code, out, _ = clitest.Exec(t, append([]string{"inject-barrier", "-v"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != open || clitest.CountLines(out, "  ABORT  ") != open ||
		strings.Contains(out, "in all") {
		t.Errorf("-v: exit %d, %d .txnindex and %d ABORT lines, want %d each and no summary\n%s",
			code, clitest.CountLines(out, ".txnindex += "), clitest.CountLines(out, "  ABORT  "), open, out)
	}

	code, out, _ = clitest.Exec(t, append([]string{"inject-barrier", "-o", "json"}, args[1:]...)...)
	if code != ui.ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	plan := clitest.JSONLine(t, out, "plan")
	if len(plan["abortedTxns"].([]any)) != open || len(plan["ongoing"].([]any)) != open || len(plan["appended"].([]any)) != open+1 {
		t.Errorf("json: %d abortedTxns, %d ongoing, %d appended; want %d, %d, %d",
			len(plan["abortedTxns"].([]any)), len(plan["ongoing"].([]any)), len(plan["appended"].([]any)), open, open, open+1)
	}
}

// TestWriteCommandsTableOutput: inject-barrier and mirror render their
// plan's file operations as a table with --output table, and still change
// nothing on a dry run.
func TestWriteCommandsTableOutput(t *testing.T) {
	dir := t.TempDir()
	part := clitest.Fixture(t, "partitions/txn-0", filepath.Join(dir, "txn-0"))
	if err := os.Mkdir(filepath.Join(dir, "mirror"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inject-barrier", "--dry-run", "-o", "table", "--timestamp", "1700003700000", part},
		{"mirror", "--dry-run", "-o", "table", part, filepath.Join(dir, "mirror", "txn-0")},
	} {
		r := clitest.Run(args...)
		if r.Code != ui.ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
		got := r.Stdout
		for _, want := range []string{"ACTION", "FILE", "WHY", "\ncreate  ", "Dry run: nothing was changed"} {
			if !strings.Contains(got, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, got)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mirror", "txn-0")); !os.IsNotExist(err) {
		t.Errorf("mirror --dry-run created its destination: %v", err)
	}
}
