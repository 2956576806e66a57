package dump

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/segtest"
)

var outputs = []string{"text", "table", "json", "kafka"}

// goldenRuns lists the dump invocations recorded for one fixture; the
// fixture's path is appended to each.
func goldenRuns(name string, broken bool) [][]string {
	var runs [][]string
	for _, o := range outputs {
		runs = append(runs, []string{"dump", "--output", o})
		if broken {
			runs = append(runs, []string{"dump", "--output", o, "--deep", "--verify-index", "--index-sanity-check"})
			if name == "decompression-bomb" {
				runs = append(runs, []string{"dump", "--output", o, "--deep", "--max-decompressed-bytes", "1048576"})
			}
			continue
		}
		runs = append(runs,
			[]string{"dump", "--output", o, "--deep", "--print-data"},
			[]string{"dump", "--output", o, "--verify-index", "--index-sanity-check"})
	}
	filters := map[string][][]string{
		"orders-0": {
			{"--deep", "--offsets", "10:20"},
			{"--deep", "--producer-id", "1000"},
			{"--max-bytes", "1000"},
		},
		"txn-0": {
			{"--control-only", "--deep"},
			{"--deep", "--offsets", "8:12"},
			{"--deep", "--producer-id", "2002"},
		},
		"control-0": {
			{"--control-only"},
			{"--control-only", "--deep", "--producer-id", "-1"},
		},
		"compacted-0": {
			{"--deep", "--offsets", "5:14"},
		},
	}
	for _, f := range filters[name] {
		for _, o := range []string{"text", "json", "kafka"} {
			runs = append(runs, append([]string{"dump", "--output", o}, f...))
		}
	}
	return runs
}

// goldenFixture copies one fixture into a temporary directory, runs every
// invocation from its parent (so paths in the output are relative and
// stable), and returns the results with the temporary directory replaced
// by a placeholder.
func goldenFixture(t *testing.T, kind, name string) []clitest.Result {
	w := clitest.NewGoldenWork(t)
	w.CopyFixture(kind+"/"+name, name)
	for _, args := range goldenRuns(name, kind == "broken") {
		w.Run(append(slices.Clone(args), name)...)
	}
	return w.Res
}

// placeholdWork replaces the working directory a run was made from (and
// its real path) by clitest.WorkPlaceholder, so the golden is stable.
func placeholdWork(r *clitest.Result, work string) {
	real, err := filepath.EvalSymlinks(work)
	if err != nil {
		real = work
	}
	for _, w := range []string{real, work} {
		r.Stdout = strings.ReplaceAll(r.Stdout, w, clitest.WorkPlaceholder)
		r.Stderr = strings.ReplaceAll(r.Stderr, w, clitest.WorkPlaceholder)
	}
}

func renderGolden(kind, name string, res []clitest.Result) []byte {
	return clitest.RenderRuns([]string{fmt.Sprintf("kseg dump over a copy of testdata/%s/%s, run from its parent directory.", kind, name)}, res)
}

func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	clitest.CheckGoldenPath(t, filepath.Join(goldenAbs(t), file), got)
}

// goldenAbsDir is the golden directory as an absolute path, resolved at
// package initialisation, before any test changes directory.
var goldenAbsDir = clitest.MustAbs(clitest.Testdata("golden/dump"))

func goldenAbs(*testing.T) string { return goldenAbsDir }

// TestDumpGoldenPartitions runs dump over every healthy fixture in every
// output and records the results. Every run must exit 0 with nothing on
// stderr but kafka-dump-log's own notes.
func TestDumpGoldenPartitions(t *testing.T) {
	for _, name := range segtest.PartitionNames {
		t.Run(name, func(t *testing.T) {
			res := goldenFixture(t, "partitions", name)
			for _, r := range res {
				if r.Code != ui.ExitOK {
					t.Errorf("kseg %s: exit %d, want 0\nstderr: %s", strings.Join(r.Args, " "), r.Code, r.Stderr)
				}
				for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
					// kafka-dump-log's own stderr reports (formats.md §9.6).
					if l != "" && !strings.HasPrefix(l, "Ignoring unknown file ") &&
						!strings.HasPrefix(l, "Non-consecutive offsets in ") && !strings.Contains(l, " is followed by ") {
						t.Errorf("kseg %s: unexpected stderr line %q", strings.Join(r.Args, " "), l)
					}
				}
				if clitest.IsJSONRun(r.Args) {
					for _, m := range clitest.CheckJSONLines(t, r) {
						if m["type"] == "finding" {
							t.Errorf("kseg %s: finding on a healthy fixture: %v", strings.Join(r.Args, " "), m)
						}
					}
				}
			}
			checkGolden(t, name+".txt", renderGolden("partitions", name, res))
		})
	}
}

// brokenExpect is what the deep, verifying JSON run must report for a
// broken sibling: the exit code, and the first error (or, for zero-tail,
// warning) finding's kind, file and exact byte position.
var brokenExpect = map[string]struct {
	exit     int
	severity string
	kind     string
	file     string
	position int64
	// shallowExit is the exit of the plain (batch-level) run: a defect
	// inside the records is only found when records are decoded.
	shallowExit int
}{
	// The batch at offset 4 starts at 214.
	"crc-mismatch": {ui.ExitFindings, "error", "crc-mismatch", ".log", 214, ui.ExitFindings},
	// The last batch starts at 535; 40 of its 111 bytes are there.
	"torn-tail": {ui.ExitFindings, "error", "torn-tail", ".log", 535, ui.ExitFindings},
	// 646 bytes of batches, then zeros: a warning, exit 0.
	"zero-tail": {ui.ExitOK, "warning", "zero-tail", ".log", 646, ui.ExitOK},
	// The batch at offset 6 starts at 321; its magic byte is at 337.
	"bad-magic": {ui.ExitFindings, "error", "corrupt-batch", ".log", 337, ui.ExitFindings},
	// recordsCount of the batch at 214 is at 214+57.
	"negative-count": {ui.ExitFindings, "error", "corrupt-records", ".log", 271, ui.ExitOK},
	// batchLength of the batch at 321 (the field at 329) claims 2 GiB, but
	// a valid batch follows at 428: a corrupt length, not a torn tail.
	"huge-length": {ui.ExitFindings, "error", "corrupt-batch", ".log", 329, ui.ExitFindings},
	// The seventh batch starts at 646; its record's offsetDelta varint at
	// 646+61+3.
	"bad-varint": {ui.ExitFindings, "error", "corrupt-records", ".log", 710, ui.ExitOK},
	// The bomb's records section starts at 646+61.
	"decompression-bomb": {ui.ExitFindings, "error", "corrupt-records", ".log", 707, ui.ExitOK},
	// The third index entry (byte 16) points 4096 bytes past the log.
	"index-past-eof": {ui.ExitFindings, "error", "index-mismatch", ".index", 16, ui.ExitOK},
}

// brokenKafkaExit: --output kafka stops where kafka-dump-log throws and
// reads on where it reads on (segment/scan/dumplog.go), whatever kseg's other
// outputs make of the defect. A zero-filled tail longer than 17 bytes is
// FileLogInputStream's "record size 0" exception; a magic above 2 is read
// as a v2 batch whose crc holds. With --index-sanity-check, dumpIndex
// returns after the check, so the index entry past the end is not
// verified.
var brokenKafkaExit = map[string]int{
	"zero-tail":      ui.ExitFindings,
	"bad-magic":      ui.ExitOK,
	"index-past-eof": ui.ExitOK,
}

// TestDumpGoldenBroken runs dump over every broken sibling and checks,
// besides the golden files, the exit codes and the finding (kind, file,
// exact position) each defect must produce.
func TestDumpGoldenBroken(t *testing.T) {
	for _, name := range segtest.BrokenNames {
		t.Run(name, func(t *testing.T) {
			want, ok := brokenExpect[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			res := goldenFixture(t, "broken", name)
			for _, r := range res {
				deep := slices.Contains(r.Args, "--deep")
				wantExit := want.exit
				if !deep {
					wantExit = want.shallowExit
				}
				if k, ok := brokenKafkaExit[name]; ok && slices.Contains(r.Args, "kafka") {
					wantExit = k
				}
				if r.Code != wantExit {
					t.Errorf("kseg %s: exit %d, want %d\nstderr: %s", strings.Join(r.Args, " "), r.Code, wantExit, r.Stderr)
				}
				if !clitest.IsJSONRun(r.Args) {
					continue
				}
				var first map[string]any
				for _, m := range clitest.CheckJSONLines(t, r) {
					if m["type"] == "finding" && m["severity"] == want.severity {
						first = m
						break
					}
				}
				if !deep || !slices.Contains(r.Args, "--verify-index") {
					continue
				}
				if first == nil {
					t.Errorf("kseg %s: no %s finding", strings.Join(r.Args, " "), want.severity)
					continue
				}
				pos, _ := first["position"].(float64)
				file, _ := first["file"].(string)
				if first["kind"] != want.kind || int64(pos) != want.position || !strings.HasSuffix(file, want.file) {
					t.Errorf("kseg %s: first %s finding %v, want kind %s at %s position %d",
						strings.Join(r.Args, " "), want.severity, first, want.kind, want.file, want.position)
				}
			}
			if name == "decompression-bomb" {
				// Under a 1 MiB cap the bomb is refused before inflating.
				for _, r := range res {
					if slices.Contains(r.Args, "--max-decompressed-bytes") && !strings.Contains(r.Stdout+r.Stderr, "decompressed size above limit") {
						t.Errorf("kseg %s: the cap was not reported", strings.Join(r.Args, " "))
					}
				}
			}
			checkGolden(t, "broken-"+name+".txt", renderGolden("broken", name, res))
		})
	}
}
