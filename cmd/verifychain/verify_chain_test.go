package verifychain_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/verifychain"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

func TestVerifyChainCLIUsage(t *testing.T) {
	src, dst := clitest.Mirrored(t, -1)
	for _, args := range [][]string{
		{"verify-chain", src},
		{"verify-chain", "--output", "kafka", src, dst},
		{"verify-chain", "--edge", "1=3", src, dst},
		{"verify-chain", "--edge", "1-2", src, dst},
		{"verify-chain", "--edge", "1=1", src, dst},
		{"verify-chain", src, t.TempDir()},
	} {
		if code, out, stderr := clitest.Exec(t, args...); code != ui.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, ui.ExitUsage, out, stderr)
		}
	}
	if code, _, _ := clitest.Exec(t, "verify-chain", src, filepath.Join(t.TempDir(), "nope-0")); code != ui.ExitUsage && code != ui.ExitError {
		t.Errorf("a missing directory: exit %d", code)
	}
	code, out, _ := clitest.Exec(t, "verify-chain", "--help")
	if code != ui.ExitOK || !strings.Contains(out, "EXIT STATUS") || !strings.Contains(out, "--edge") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestVerifyChainCLIOutputs: an edge given by paths equals the same edge
// by positions; table and json render the same report; a broken mirror
// exits 3 in every format.
func TestVerifyChainCLIOutputs(t *testing.T) {
	src, dst := clitest.Mirrored(t, -1)
	_, byPos, _ := clitest.Exec(t, "verify-chain", "--edge", "1=2", src, dst)
	code, byPath, _ := clitest.Exec(t, "verify-chain", "--edge", src+"="+dst, src, dst)
	if code != ui.ExitOK || byPos != byPath || !strings.Contains(byPath, "in sync") {
		t.Fatalf("exit %d\n%s\n%s", code, byPos, byPath)
	}
	code, out, _ := clitest.Exec(t, "verify-chain", "--output", "table", src, dst)
	if code != ui.ExitOK || !strings.Contains(out, "in-sync") || !strings.Contains(out, "Summary: 1 edge, 1 consistent") {
		t.Fatalf("table: exit %d\n%s", code, out)
	}

	// Break one byte of the mirror's first segment.
	log := filepath.Join(dst, "00000000000000000000.log")
	b := testkit.ReadFile(t, log)
	b[100] ^= 0xff
	testkit.WriteFile(t, log, b)
	clitest.VerifyChainOverDigests(t, []string{"verify-chain", src, dst})
	for _, f := range []string{"text", "table", "json"} {
		code, out, _ := clitest.Exec(t, "verify-chain", "--output", f, src, dst)
		if code != ui.ExitFindings || !strings.Contains(out, "mismatch") {
			t.Errorf("--output %s: exit %d\n%s", f, code, out)
		}
	}
	_, out, _ = clitest.Exec(t, "verify-chain", "--output", "json", src, dst)
	ls := strings.Split(strings.TrimSpace(out), "\n")
	var edge verifychain.EdgeJSON
	var sum verifychain.SummaryJSON
	if len(ls) != 2 || json.Unmarshal([]byte(ls[0]), &edge) != nil || json.Unmarshal([]byte(ls[1]), &sum) != nil {
		t.Fatalf("json lines:\n%s", out)
	}
	if edge.Type != "edge" || edge.Consistent || len(edge.Findings) == 0 || edge.Findings[0].Kind != "mismatch" ||
		edge.Findings[0].Position != 100 || edge.Findings[0].UpstreamPosition != 100 || sum.Type != "summary" || sum.Errors == 0 {
		t.Fatalf("edge %+v\nsummary %+v", edge, sum)
	}
}

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
	p := func(n string) string { return clitest.Testdata("partitions/" + n) }
	code, out, errOut := clitest.Exec(t, "verify-chain", p("orders-0"), p("txn-0"))
	if code != ui.ExitRefused || !strings.Contains(errOut, "topic name and partition") || out != "" {
		t.Errorf("different topics: exit %d\n%s%s", code, out, errOut)
	}
	d := clitest.MirrorCopies(t, 2)
	pm := filepath.Join(d[1], "partition.metadata")
	b := testkit.ReadFile(t, pm)
	other := regexp.MustCompile(`topic_id: \S+`).ReplaceAll(b, []byte("topic_id: AAAAAAAAAAAAAAAAAAAAAQ"))
	testkit.WriteFile(t, pm, other)
	code, out, errOut = clitest.Exec(t, "verify-chain", d[0], d[1])
	if code != ui.ExitRefused || !strings.Contains(errOut, "topic id") || out != "" {
		t.Errorf("different topic ids: exit %d\n%s%s", code, out, errOut)
	}
}
