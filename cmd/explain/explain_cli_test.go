package explain_test

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestExplainLegacyWrapper: explaining an offset inside a compressed v0
// wrapper names the offsets it holds and lists its inner messages (it used
// to say "batch 5..5" for offsets 3..5).
func TestExplainLegacyWrapper(t *testing.T) {
	code, out, errOut := clitest.Exec(t, "explain", "3", clitest.Testdata("partitions/legacy-v0-0"))
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "holding offsets 3..5") || strings.Contains(out, "batch 5..5") {
		t.Errorf("header does not name the inner offsets:\n%s", out)
	}
	clitest.MustContain(t, out, "inner messages", "offset 3 magic 0 keySize 2 valueSize 12", "offset 4 ", "offset 5 ")
}

// TestExplainNonLogFile: explain of an index file is a usage error naming
// what explain takes (it used to be "read at position -1 … negative
// offset").
func TestExplainNonLogFile(t *testing.T) {
	idx := clitest.Testdata("partitions/orders-0/00000000000000000000.index")
	code, out, errOut := clitest.Exec(t, "explain", "3", idx)
	if code != ui.ExitUsage || !strings.Contains(errOut, "not a .log segment") || strings.Contains(errOut, "negative") || out != "" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
