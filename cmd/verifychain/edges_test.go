package verifychain_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestVerifyChainEdgesSupplyDirectories: a fan-out given only as edges
// needs no DIR arguments.
func TestVerifyChainEdgesSupplyDirectories(t *testing.T) {
	d := clitest.MirrorCopies(t, 3)
	code, out, errOut := clitest.Exec(t, "verify-chain", "--edge", d[0]+"="+d[1], "--edge", d[0]+"="+d[2])
	if code != ui.ExitOK || strings.Count(out, "Edge ") != 2 || !strings.Contains(out, d[2]) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestVerifyChainSameDirectoryRefusedAlike: X X is the --edge 1=1 mistake
// and gets the same answer (it used to be "consistent").
func TestVerifyChainSameDirectoryRefusedAlike(t *testing.T) {
	d := clitest.MirrorCopies(t, 2)
	for _, args := range [][]string{
		{"verify-chain", d[0], d[0]},
		{"verify-chain", d[0], d[0] + string(filepath.Separator)},
		{"verify-chain", "--edge", "1=1", d[0], d[1]},
	} {
		code, out, errOut := clitest.Exec(t, args...)
		if code != ui.ExitUsage || !strings.Contains(errOut, "does not mirror itself") || out != "" {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestVerifyChainRefusesUnrelatedPartitions: partitions of different
// topics, or with different topic ids, are no mirror of each other.
func TestVerifyChainRefusesUnrelatedPartitions(t *testing.T) {
	p := func(n string) string { return filepath.Join(clitest.TestdataDir, "partitions", n) }
	code, out, errOut := clitest.Exec(t, "verify-chain", p("orders-0"), p("txn-0"))
	if code != ui.ExitRefused || !strings.Contains(errOut, "topic name and partition") || out != "" {
		t.Errorf("different topics: exit %d\n%s%s", code, out, errOut)
	}
	d := clitest.MirrorCopies(t, 2)
	pm := filepath.Join(d[1], "partition.metadata")
	b, err := os.ReadFile(pm)
	if err != nil {
		t.Fatal(err)
	}
	other := regexp.MustCompile(`topic_id: \S+`).ReplaceAll(b, []byte("topic_id: AAAAAAAAAAAAAAAAAAAAAQ"))
	if err := os.WriteFile(pm, other, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = clitest.Exec(t, "verify-chain", d[0], d[1])
	if code != ui.ExitRefused || !strings.Contains(errOut, "topic id") || out != "" {
		t.Errorf("different topic ids: exit %d\n%s%s", code, out, errOut)
	}
}
