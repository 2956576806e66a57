package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

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
