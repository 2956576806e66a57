package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/segtest"
)

// Golden files of every command but dump (whose goldens are in
// dump_golden_test.go). Each golden file records one scenario: fixtures
// from testdata copied into a temporary working directory (and, for
// verify-chain, mirrored or damaged there by kseg itself), then the
// recorded invocations, run in-process from that directory so that paths
// are relative. Regenerate every golden, dump's included, with
//
//	go test ./cmd -run Golden -update
//
// and review the diff line by line.

// goldenRoot is testdata/golden, resolved before any test changes
// directory.
var goldenRoot = mustAbs(filepath.Join(testdataDir, "golden"))

// renderRuns renders a golden file: the header lines as comments, then for
// every run its arguments, exit code, stdout and stderr.
func renderRuns(header []string, res []runResult) []byte {
	var b bytes.Buffer
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "# Regenerate: go test ./cmd -run Golden -update\n")
	for _, r := range res {
		fmt.Fprintf(&b, "\n=== kseg %s\n", strings.Join(r.args, " "))
		fmt.Fprintf(&b, "--- exit %d\n", r.code)
		fmt.Fprintf(&b, "--- stdout\n%s", r.stdout)
		if r.stdout != "" && !strings.HasSuffix(r.stdout, "\n") {
			b.WriteString("\n(no final newline)\n")
		}
		fmt.Fprintf(&b, "--- stderr\n%s", r.stderr)
		if r.stderr != "" && !strings.HasSuffix(r.stderr, "\n") {
			b.WriteString("\n(no final newline)\n")
		}
	}
	return b.Bytes()
}

// checkGoldenPath compares got with the golden file at path, or rewrites
// it under -update.
func checkGoldenPath(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; rerun with -update and review the diff:\n%s", path, firstDiff(string(want), string(got)))
	}
}

// nowPlaceholder replaces the wall-clock milliseconds a run printed (the
// default timestamp of the batches inject-barrier writes).
const nowPlaceholder = "$NOW"

var millisRE = regexp.MustCompile(`\b1[0-9]{12}\b`)

// nowDateRE is $NOW followed by its date, as inject-barrier's plan
// prints the barrier's timestamp.
var nowDateRE = regexp.MustCompile(`\$NOW \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)`)

// goldenWork is a temporary working directory for one scenario.
type goldenWork struct {
	t          *testing.T
	dir, real  string // as created, and with symbolic links resolved
	res        []runResult
	keepChange bool // setup runs: their results are not recorded
}

// newGoldenWork creates the working directory and makes it the current
// directory for the rest of the test.
func newGoldenWork(t *testing.T) *goldenWork {
	dir := t.TempDir()
	t.Chdir(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	return &goldenWork{t: t, dir: dir, real: real}
}

// copyFixture copies testdata/<from> to <to> in the working directory.
func (w *goldenWork) copyFixture(from, to string) {
	w.t.Helper()
	src := filepath.Join(filepath.Dir(goldenRoot), from)
	if _, err := os.Stat(src); err != nil {
		w.t.Fatalf("fixture missing: %v (go run ./testdata/gen)", err)
	}
	copyTree(w.t, src, filepath.Join(w.dir, to))
}

// mkdir creates an empty directory (a partition a mirror will fill).
func (w *goldenWork) mkdir(rel string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Join(w.dir, rel), 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// setup runs kseg to prepare the scenario (a mirror, an injection); it
// must succeed, and is not recorded.
func (w *goldenWork) setup(args ...string) {
	w.t.Helper()
	if r := runKseg(args...); r.code != ui.ExitOK {
		w.t.Fatalf("setup kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
}

// run runs kseg, records the result with the working directory and the
// wall clock replaced by placeholders, and returns it as it was printed.
func (w *goldenWork) run(args ...string) runResult {
	before := time.Now().UnixMilli()
	r := runKseg(args...)
	after := time.Now().UnixMilli()
	clean := func(s string) string {
		for _, d := range []string{w.real, w.dir} {
			s = strings.ReplaceAll(s, d, workPlaceholder)
		}
		s = millisRE.ReplaceAllStringFunc(s, func(m string) string {
			if v, err := strconv.ParseInt(m, 10, 64); err == nil && v >= before && v <= after {
				return nowPlaceholder
			}
			return m
		})
		// The same instant as a date, where a plan shows both.
		return nowDateRE.ReplaceAllLiteralString(s, nowPlaceholder+" ("+nowPlaceholder+")")
	}
	rec := r
	rec.stdout, rec.stderr = clean(r.stdout), clean(r.stderr)
	w.res = append(w.res, rec)
	return r
}

// check compares the recorded runs with testdata/golden/<file>.
func (w *goldenWork) check(file string, header ...string) {
	w.t.Helper()
	checkGoldenPath(w.t, filepath.Join(goldenRoot, file), renderRuns(header, w.res))
}

// treeSum hashes every file (name, mode and contents) under the working
// directory: a dry run must leave it as it was.
func (w *goldenWork) treeSum() string {
	w.t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.dir, p)
		fmt.Fprintf(h, "%s %v\n", rel, d.Type())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// jsonLines parses the stdout of a json run (every line one object with a
// type) and returns the objects of the given type.
func jsonLines(t *testing.T, r runResult, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range checkJSONLines(t, r) {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// TestReplayPSMGolden records replay-psm over every healthy fixture, from
// the newest snapshot (as a restarting broker) and from the log alone, in
// text and JSON. Both starts must agree on the state a broker would have.
func TestReplayPSMGolden(t *testing.T) {
	for _, name := range segtest.PartitionNames {
		t.Run(name, func(t *testing.T) {
			w := newGoldenWork(t)
			w.copyFixture(filepath.Join("partitions", name), name)
			states := map[string]map[string]any{}
			for _, from := range []string{"latest", "none"} {
				text := w.run("replay-psm", "--from-snapshot", from, name)
				js := w.run("replay-psm", "--from-snapshot", from, "--output", "json", name)
				st := jsonLines(t, js, "producerState")
				if len(st) != 1 {
					t.Fatalf("kseg %s: %d producerState lines", strings.Join(js.args, " "), len(st))
				}
				states[from] = st[0]
				// Exit 3 exactly when an anomaly is an error.
				want := ui.ExitOK
				as, _ := st[0]["anomalies"].([]any)
				for _, a := range as {
					if m, _ := a.(map[string]any); m["severity"] == "error" {
						want = ui.ExitFindings
					}
				}
				for _, r := range []runResult{text, js} {
					if r.code != want || r.stderr != "" {
						t.Errorf("kseg %s: exit %d (want %d), stderr %q", strings.Join(r.args, " "), r.code, want, r.stderr)
					}
				}
				// The text names the same last stable offset.
				if lso, _ := st[0]["lastStableOffset"].(float64); !strings.Contains(text.stdout, fmt.Sprintf("last stable offset  %d", int64(lso))) {
					t.Errorf("kseg %s: the text does not show the JSON's last stable offset %d", strings.Join(text.args, " "), int64(lso))
				}
			}
			// A snapshot is the state the log rebuilds: the same log end,
			// last stable offset and open transactions whichever the
			// start, and every producer the snapshot restores is the one
			// the log rebuilds. (Not the converse: loading a snapshot drops
			// the entries already expired, such as compacted-0's producer
			// 5001 whose lastTimestamp is -1.)
			for _, k := range []string{"logEndOffset", "lastStableOffset", "firstUndecidedOffset", "ongoingTransactions"} {
				a, _ := json.Marshal(states["latest"][k])
				b, _ := json.Marshal(states["none"][k])
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs between --from-snapshot latest and none:\n  %s\n  %s", k, a, b)
				}
			}
			rebuilt := producerKeys(states["none"]["producers"])
			for _, p := range producerKeys(states["latest"]["producers"]) {
				if !slices.Contains(rebuilt, p) {
					t.Errorf("producer %s restored from the snapshot is not what the log rebuilds: %v", p, rebuilt)
				}
			}
			w.check(filepath.Join("replay-psm", name+".txt"),
				fmt.Sprintf("kseg replay-psm over a copy of testdata/partitions/%s, run from its parent directory.", name))
		})
	}
}

// producerKeys lists each producer's id, epoch, last sequence and open
// transaction: what a snapshot restores exactly (it keeps only the last
// batch, so the batch lists differ).
func producerKeys(v any) []string {
	ps, _ := v.([]any)
	var out []string
	for _, p := range ps {
		m, _ := p.(map[string]any)
		out = append(out, fmt.Sprintf("%v/%v/%v/%v", m["producerId"], m["producerEpoch"], m["lastSequence"], m["currentTxnFirstOffset"]))
	}
	return out
}

// explainCases are the batches explain is recorded on: each codec's
// first batch, a LogAppendTime batch, legacy v0 and v1 entries (a
// compressed wrapper among them), the transaction markers and both
// variants of the MIRROR_PID_RESET barrier.
var explainCases = []struct {
	offset  int64
	dir     string
	outputs []string
}{
	{0, "orders-0", []string{"text", "json"}},            // uncompressed, producer 1000
	{1, "orders-0", []string{"text"}},                    // gzip
	{3, "orders-0", []string{"text"}},                    // snappy, producer 1001
	{7, "txn-0", []string{"text"}},                       // COMMIT marker
	{11, "control-0", []string{"text", "table", "json"}}, // the barrier, version-only value
	{12, "control-0", []string{"text", "json"}},          // the barrier carrying sourceClusterId
	{0, "legacy-v0-0", []string{"text"}},                 // magic 0, null key and value
	{3, "legacy-v1-0", []string{"text", "json"}},         // magic 1 gzip wrapper
}

// TestExplainGolden records explain over batches of every kind, and checks
// that the header fields of each JSON layout tile the batch from the
// position the text names.
func TestExplainGolden(t *testing.T) {
	w := newGoldenWork(t)
	for _, name := range []string{"orders-0", "txn-0", "control-0", "legacy-v0-0", "legacy-v1-0"} {
		w.copyFixture(filepath.Join("partitions", name), name)
	}
	for _, c := range explainCases {
		for _, o := range c.outputs {
			r := w.run("explain", "--output", o, strconv.FormatInt(c.offset, 10), c.dir)
			if r.code != ui.ExitOK || r.stderr != "" {
				t.Errorf("kseg %s: exit %d, stderr %q", strings.Join(r.args, " "), r.code, r.stderr)
			}
			if o != "json" {
				continue
			}
			fields := jsonLines(t, r, "field")
			if len(fields) == 0 {
				t.Fatalf("kseg %s: no fields", strings.Join(r.args, " "))
			}
			next := -1.0
			for _, f := range fields {
				if f["depth"] != 0.0 || f["field"] == "records" {
					break
				}
				pos, n := f["position"].(float64), f["length"].(float64)
				if next >= 0 && pos != next {
					t.Errorf("kseg %s: field %v at %v, the previous one ends at %v", strings.Join(r.args, " "), f["field"], pos, next)
				}
				next = pos + n
			}
		}
	}
	// An offset no batch holds is an error of the request (exit 2), not
	// a crash.
	if r := w.run("explain", "99", "orders-0"); r.code != ui.ExitUsage || !strings.Contains(r.stderr, "offset 99 is past the end of the log (73)") {
		t.Errorf("explain 99: exit %d, stderr %q", r.code, r.stderr)
	}
	w.check(filepath.Join("explain", "explain.txt"),
		"kseg explain over copies of testdata/partitions, run from their parent directory.")
}

// verifyChainScenarios build their directories with kseg itself (mirror,
// inject-barrier) or by copying and damaging fixtures, then record
// verify-chain over them.
var verifyChainScenarios = []struct {
	name   string
	about  string
	build  func(w *goldenWork)
	dirs   []string
	exit   int
	kinds  []string // error finding kinds the JSON must report (in any order)
	status string   // the first edge's status
}{
	{
		name:  "in-sync",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 its mirror (kseg mirror).",
		build: func(w *goldenWork) {
			w.copyFixture("partitions/orders-0", "a/orders-0")
			w.mkdir("b/orders-0")
			w.setup("mirror", "--quiet", "--backup-dir", "backup/1", "a/orders-0", "b/orders-0")
		},
		dirs: []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitOK, status: "in-sync",
	},
	{
		name:  "failed-over-chain",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 mirrors it and c/orders-0 mirrors b; then b fails over (kseg inject-barrier).",
		build: func(w *goldenWork) {
			w.copyFixture("partitions/orders-0", "a/orders-0")
			w.mkdir("b/orders-0")
			w.mkdir("c/orders-0")
			w.setup("mirror", "--quiet", "--backup-dir", "backup/1", "a/orders-0", "b/orders-0")
			w.setup("mirror", "--quiet", "--backup-dir", "backup/2", "b/orders-0", "c/orders-0")
			w.setup("inject-barrier", "--quiet", "--backup-dir", "backup/3", "--source-cluster-id", "cluster-a", "b/orders-0")
		},
		dirs: []string{"a/orders-0", "b/orders-0", "c/orders-0"}, exit: ui.ExitOK, status: "failed-over",
	},
	{
		name:  "not-a-mirror",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 holds the files of testdata/partitions/txn-0 under a/orders-0's partition.metadata (the same topic id): D wrote its own batches without a barrier.",
		build: func(w *goldenWork) {
			w.copyFixture("partitions/orders-0", "a/orders-0")
			w.copyFixture("partitions/txn-0", "b/orders-0")
			meta, err := os.ReadFile(filepath.Join(w.dir, "a/orders-0/partition.metadata"))
			if err != nil {
				w.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.dir, "b/orders-0/partition.metadata"), meta, 0o644); err != nil {
				w.t.Fatal(err)
			}
		},
		dirs: []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitFindings, kinds: []string{"missing-barrier"}, status: "diverged",
	},
	{
		name:  "damaged-copy",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 its mirror with byte 120 of the first batch overwritten.",
		build: func(w *goldenWork) {
			w.copyFixture("partitions/orders-0", "a/orders-0")
			w.mkdir("b/orders-0")
			w.setup("mirror", "--quiet", "--backup-dir", "backup/1", "a/orders-0", "b/orders-0")
			f, err := os.OpenFile(filepath.Join(w.dir, "b/orders-0/00000000000000000000.log"), os.O_WRONLY, 0)
			if err != nil {
				w.t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{'Z'}, 120); err != nil {
				w.t.Fatal(err)
			}
		},
		dirs: []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitFindings, kinds: []string{"mismatch", "crc-mismatch"}, status: "diverged",
	},
}

// TestVerifyChainGolden records verify-chain over consistent and
// inconsistent topologies, and checks each one's verdict.
func TestVerifyChainGolden(t *testing.T) {
	for _, sc := range verifyChainScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := newGoldenWork(t)
			sc.build(w)
			text := w.run(append([]string{"verify-chain"}, sc.dirs...)...)
			js := w.run(append([]string{"verify-chain", "--output", "json"}, sc.dirs...)...)
			for _, r := range []runResult{text, js} {
				if r.code != sc.exit {
					t.Errorf("kseg %s: exit %d, want %d\n%s", strings.Join(r.args, " "), r.code, sc.exit, r.stderr)
				}
			}
			edges := jsonLines(t, js, "edge")
			if len(edges) != len(sc.dirs)-1 {
				t.Fatalf("%d edges, want %d", len(edges), len(sc.dirs)-1)
			}
			if edges[0]["status"] != sc.status {
				t.Errorf("edge 1 status %v, want %s", edges[0]["status"], sc.status)
			}
			var kinds []string
			for _, e := range edges {
				fs, _ := e["findings"].([]any)
				for _, f := range fs {
					if m, _ := f.(map[string]any); m["severity"] == "error" {
						kinds = append(kinds, m["kind"].(string))
					}
				}
			}
			slices.Sort(kinds)
			want := slices.Sorted(slices.Values(sc.kinds))
			if !slices.Equal(kinds, want) {
				t.Errorf("error findings %v, want %v", kinds, want)
			}
			w.check(filepath.Join("verify-chain", sc.name+".txt"), sc.about, "Run from the directory holding a/, b/ (and c/).")
			verifyChainOverDigests(t, append([]string{"verify-chain"}, sc.dirs...))
		})
	}
}

// dryRunScenarios record the plans of the three write commands. A dry run
// must change nothing (not even create its backup folder).
var dryRunScenarios = []struct {
	name  string
	about string
	build func(w *goldenWork)
	args  []string // without --dry-run and --output
	exit  int
}{
	{
		name: "inject-barrier-truncate", about: "kseg inject-barrier over a copy of testdata/partitions/txn-0: the cut at the last stable offset, iterated.",
		build: func(w *goldenWork) { w.copyFixture("partitions/txn-0", "txn-0") },
		args:  []string{"inject-barrier", "txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "inject-barrier-abort", about: "kseg inject-barrier --mode abort over a copy of testdata/partitions/txn-0: an ABORT marker for the open transaction, then the barrier.",
		build: func(w *goldenWork) { w.copyFixture("partitions/txn-0", "txn-0") },
		args:  []string{"inject-barrier", "--mode", "abort", "--source-cluster-id", "cluster-a", "txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "inject-barrier-clean", about: "kseg inject-barrier over a copy of testdata/partitions/orders-0: no transaction, nothing cut.",
		build: func(w *goldenWork) { w.copyFixture("partitions/orders-0", "orders-0") },
		args:  []string{"inject-barrier", "--bump-leader-epoch", "6", "orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "mirror-new", about: "kseg mirror from a copy of testdata/partitions/orders-0 into an empty b/orders-0, rolling at 2048 bytes.",
		build: func(w *goldenWork) { w.copyFixture("partitions/orders-0", "a/orders-0"); w.mkdir("b/orders-0") },
		args:  []string{"mirror", "--segment-bytes", "2048", "a/orders-0", "b/orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "mirror-catch-up", about: "kseg mirror from a copy of testdata/partitions/txn-0 into b/txn-0, which already mirrors it up to offset 8.",
		build: func(w *goldenWork) {
			w.copyFixture("partitions/txn-0", "a/txn-0")
			w.mkdir("b/txn-0")
			w.setup("mirror", "--quiet", "--backup-dir", "backup/1", "--upto", "8", "a/txn-0", "b/txn-0")
		},
		args: []string{"mirror", "a/txn-0", "b/txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "repair-healthy", about: "kseg repair --all over a copy of testdata/partitions/orders-0: nothing to do.",
		build: func(w *goldenWork) { w.copyFixture("partitions/orders-0", "orders-0") },
		args:  []string{"repair", "--all", "orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "repair-torn-tail", about: "kseg repair over a copy of testdata/broken/torn-tail/events-0.",
		build: func(w *goldenWork) { w.copyFixture("broken/torn-tail/events-0", "events-0") },
		args:  []string{"repair", "events-0"}, exit: ui.ExitFindings,
	},
	{
		name: "repair-crc-mismatch", about: "kseg repair over a copy of testdata/broken/crc-mismatch/events-0.",
		build: func(w *goldenWork) { w.copyFixture("broken/crc-mismatch/events-0", "events-0") },
		args:  []string{"repair", "events-0"}, exit: ui.ExitFindings,
	},
}

// TestDryRunGolden records the --dry-run plan of inject-barrier, mirror
// and repair in text and JSON, and checks that nothing changed.
func TestDryRunGolden(t *testing.T) {
	for _, sc := range dryRunScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := newGoldenWork(t)
			sc.build(w)
			before := w.treeSum()
			for _, o := range []string{"text", "json"} {
				// A backup directory outside the log directory: the dry run
				// checks it as the real run does, and the default (a folder
				// in the working directory, here the log directory) would
				// be refused.
				args := append([]string{sc.args[0], "--dry-run", "--output", o, "--backup-dir", "../backup"}, sc.args[1:]...)
				r := w.run(args...)
				if r.code != sc.exit {
					t.Errorf("kseg %s: exit %d, want %d\n%s", strings.Join(args, " "), r.code, sc.exit, r.stderr)
				}
				if o == "json" {
					checkJSONLines(t, r)
				}
				if after := w.treeSum(); after != before {
					t.Fatalf("kseg %s changed the working directory", strings.Join(args, " "))
				}
			}
			w.check(filepath.Join(sc.args[0], sc.name+".txt"), sc.about, "Recorded with --dry-run and --backup-dir ../backup, from the directory holding the partition.")
		})
	}
}
