package verifymm2_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/mm2/mm2test"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/finding"
)

// TestVerifyMM2Golden: verify-mm2 over every committed MirrorMaker 2
// fixture (testdata/mm2, written by barrier/mm2/mm2test as MM2's tasks
// write): the clean replica and the replicas of a source that holds what
// MM2 does not copy exit 0; each replica with a fault planted exits 3 and
// reports that fault's kind and no other error. Text (and -v) and json;
// the goldens are testdata/golden/verify-mm2/<case>.txt. Regenerate with
//
//	go test ./cmd/verifymm2 -run Golden -update
func TestVerifyMM2Golden(t *testing.T) {
	for _, c := range mm2test.Cases {
		t.Run(c.Name, func(t *testing.T) {
			w := clitest.NewGoldenWork(t)
			w.CopyFixture("mm2", ".")
			src, tgt, syncs, cps := c.Dirs(".")
			args := append(slices.Clone(c.Verify), "--offset-syncs", syncs, "--checkpoints", cps, src, tgt)
			runs := []clitest.Result{
				w.Run(append([]string{"verify-mm2"}, args...)...),
				w.Run(append([]string{"verify-mm2", "-v"}, args...)...),
				w.Run(append([]string{"verify-mm2", "--output", "json"}, args...)...),
			}
			want := ui.ExitOK
			if c.Want != "" && kindSeverity(t, c.Want) == finding.Error {
				want = ui.ExitFindings
			}
			for _, r := range runs {
				if r.Code != want || r.Stderr != "" {
					t.Errorf("kseg %s: exit %d, want %d\n%s%s", strings.Join(r.Args, " "), r.Code, want, r.Stdout, r.Stderr)
				}
			}
			clitest.CheckJSONLines(t, runs[2])
			if got := mm2ErrorKinds(t, runs[2].Stdout); !slices.Equal(got, errorKinds(c.Want)) {
				t.Errorf("error kinds %v, want %v", got, errorKinds(c.Want))
			}
			if c.Want != "" && !strings.Contains(runs[0].Stdout, " "+c.Want+" ") {
				t.Errorf("text does not name %s:\n%s", c.Want, runs[0].Stdout)
			}
			about := fmt.Sprintf("verify-mm2 over testdata/mm2/%s (mm2test.Cases): %s.", c.Name, wantText(c.Want))
			w.Check(filepath.Join("verify-mm2", c.Name+".txt"), about, "Run from a copy of testdata/mm2.")
		})
	}
}

func wantText(kind string) string {
	if kind == "" {
		return "nothing to report"
	}
	return kind
}

func kindSeverity(t *testing.T, name string) finding.Severity {
	k, ok := finding.Lookup(name)
	if !ok {
		t.Fatalf("no kind %q", name)
	}
	return k.Severity()
}

func errorKinds(kind string) []string {
	if k, ok := finding.Lookup(kind); !ok || k.Severity() != finding.Error {
		return nil
	}
	return []string{kind}
}

// mm2ErrorKinds are the kinds of the error lines of verify-mm2's json.
func mm2ErrorKinds(t *testing.T, stdout string) []string {
	t.Helper()
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var v struct {
			Type, Kind, Severity, Verdict string
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		k := v.Kind
		if v.Verdict != "" && v.Verdict != "ok" {
			k = v.Verdict
		}
		if v.Severity == "error" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// TestVerifyMM2Refusals: what verify-mm2 does not take, and what it
// refuses.
func TestVerifyMM2Refusals(t *testing.T) {
	w := clitest.NewGoldenWork(t)
	w.CopyFixture("mm2", ".")
	clitest.CopyTree(t, filepath.Join("clean", "A.orders-0"), "A.orders-1")
	clitest.CopyTree(t, filepath.Join("clean", "A.orders-0"), "replica")
	src, tgt := filepath.Join("source", "orders-0"), filepath.Join("clean", "A.orders-0")
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{src}, ui.ExitUsage, "takes SOURCE TARGET; got 1 argument"},
		{[]string{src, src}, ui.ExitUsage, "the same directory"},
		{[]string{src, "no-such-0"}, ui.ExitError, "no such file"},
		{[]string{src, "A.orders-1"}, ui.ExitRefused, "partition 0 but A.orders-1 is partition 1"},
		{[]string{src, "replica"}, ui.ExitUsage, "not <topic>-<partition>"},
		{[]string{"--isolation-level", "read_committted", src, tgt}, ui.ExitUsage, "--isolation-level must be"},
		{[]string{"--window", "10", src, tgt}, ui.ExitUsage, "--window must be at least"},
		{[]string{"--offset-syncs", "clean", src, tgt}, ui.ExitUsage, "not <topic>-<partition>"},
		{[]string{"--output", "yaml", src, tgt}, ui.ExitUsage, "--output must be"},
	} {
		r := clitest.Run(append([]string{"verify-mm2"}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.err) {
			t.Errorf("kseg %s: exit %d %q, want %d and %q", strings.Join(r.Args, " "), r.Code, r.Stderr, c.code, c.err)
		}
	}
}

// TestVerifyMM2AllowDuplicates: --allow-duplicates turns the duplicates
// of a restart into an info finding, and the exit status to 0; the table
// output says the same as the text.
func TestVerifyMM2AllowDuplicates(t *testing.T) {
	clitest.NewGoldenWork(t).CopyFixture("mm2", ".")
	args := []string{"verify-mm2", "--allow-duplicates", filepath.Join("source", "orders-0"), filepath.Join("duplicates", "A.orders-0")}
	for _, out := range []string{"text", "table"} {
		r := clitest.Run(append(args, "--output", out)...)
		if r.Code != ui.ExitOK || !strings.Contains(r.Stdout, "duplicate-records-allowed") || !strings.Contains(r.Stdout, "Summary: consistent") {
			t.Errorf("kseg %s: exit %d\n%s%s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}
