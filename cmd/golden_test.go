package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest"
)

// Golden files of every command but dump (whose goldens are in
// cmd/dump/golden_test.go). Each golden file records one scenario: fixtures
// from testdata copied into a temporary working directory (and, for
// verify-chain, mirrored or damaged there by kseg itself), then the
// recorded invocations, run in-process from that directory so that paths
// are relative. Regenerate every golden, dump's included, with
//
//	go test ./cmd -run Golden -update
//
// and review the diff line by line.

// TestReplayPSMGolden records replay-psm over every healthy fixture, from
// the newest snapshot (as a restarting broker) and from the log alone, in
// text and JSON. Both starts must agree on the state a broker would have.
func TestReplayPSMGolden(t *testing.T) {
	for _, name := range segtest.PartitionNames {
		t.Run(name, func(t *testing.T) {
			w := clitest.NewGoldenWork(t)
			w.CopyFixture(filepath.Join("partitions", name), name)
			states := map[string]map[string]any{}
			for _, from := range []string{"latest", "none"} {
				text := w.Run("replay-psm", "--from-snapshot", from, name)
				js := w.Run("replay-psm", "--from-snapshot", from, "--output", "json", name)
				st := clitest.JSONLines(t, js, "producerState")
				if len(st) != 1 {
					t.Fatalf("kseg %s: %d producerState lines", strings.Join(js.Args, " "), len(st))
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
				for _, r := range []clitest.Result{text, js} {
					if r.Code != want || r.Stderr != "" {
						t.Errorf("kseg %s: exit %d (want %d), stderr %q", strings.Join(r.Args, " "), r.Code, want, r.Stderr)
					}
				}
				// The text names the same last stable offset.
				if lso, _ := st[0]["lastStableOffset"].(float64); !strings.Contains(text.Stdout, fmt.Sprintf("last stable offset  %d", int64(lso))) {
					t.Errorf("kseg %s: the text does not show the JSON's last stable offset %d", strings.Join(text.Args, " "), int64(lso))
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
			w.Check(filepath.Join("replay-psm", name+".txt"),
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
	w := clitest.NewGoldenWork(t)
	for _, name := range []string{"orders-0", "txn-0", "control-0", "legacy-v0-0", "legacy-v1-0"} {
		w.CopyFixture(filepath.Join("partitions", name), name)
	}
	for _, c := range explainCases {
		for _, o := range c.outputs {
			r := w.Run("explain", "--output", o, strconv.FormatInt(c.offset, 10), c.dir)
			if r.Code != ui.ExitOK || r.Stderr != "" {
				t.Errorf("kseg %s: exit %d, stderr %q", strings.Join(r.Args, " "), r.Code, r.Stderr)
			}
			if o != "json" {
				continue
			}
			fields := clitest.JSONLines(t, r, "field")
			if len(fields) == 0 {
				t.Fatalf("kseg %s: no fields", strings.Join(r.Args, " "))
			}
			next := -1.0
			for _, f := range fields {
				if f["depth"] != 0.0 || f["field"] == "records" {
					break
				}
				pos, n := f["position"].(float64), f["length"].(float64)
				if next >= 0 && pos != next {
					t.Errorf("kseg %s: field %v at %v, the previous one ends at %v", strings.Join(r.Args, " "), f["field"], pos, next)
				}
				next = pos + n
			}
		}
	}
	// An offset no batch holds is an error of the request (exit 2), not
	// a crash.
	if r := w.Run("explain", "99", "orders-0"); r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, "offset 99 is past the end of the log (73)") {
		t.Errorf("explain 99: exit %d, stderr %q", r.Code, r.Stderr)
	}
	w.Check(filepath.Join("explain", "explain.txt"),
		"kseg explain over copies of testdata/partitions, run from their parent directory.")
}

// verifyChainScenarios build their directories with kseg itself (mirror,
// inject-barrier) or by copying and damaging fixtures, then record
// verify-chain over them.
var verifyChainScenarios = []struct {
	name   string
	about  string
	build  func(w *clitest.GoldenWork)
	dirs   []string
	exit   int
	kinds  []string // error finding kinds the JSON must report (in any order)
	status string   // the first edge's status
}{
	{
		name:  "in-sync",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 its mirror (kseg mirror).",
		build: mirroredOrders,
		dirs:  []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitOK, status: "in-sync",
	},
	{
		name:  "failed-over-chain",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 mirrors it and c/orders-0 mirrors b; then b fails over (kseg inject-barrier).",
		build: func(w *clitest.GoldenWork) {
			mirroredOrders(w)
			w.Mkdir("c/orders-0")
			w.Setup("mirror", "--quiet", "--backup-dir", "backup/2", "b/orders-0", "c/orders-0")
			w.Setup("inject-barrier", "--quiet", "--backup-dir", "backup/3", "--source-cluster-id", "cluster-a", "b/orders-0")
		},
		dirs: []string{"a/orders-0", "b/orders-0", "c/orders-0"}, exit: ui.ExitOK, status: "failed-over",
	},
	{
		name:  "not-a-mirror",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 holds the files of testdata/partitions/txn-0 under a/orders-0's partition.metadata (the same topic id): D wrote its own batches without a barrier.",
		build: func(w *clitest.GoldenWork) {
			w.CopyFixture("partitions/orders-0", "a/orders-0")
			w.CopyFixture("partitions/txn-0", "b/orders-0")
			meta := testkit.ReadFile(w.T, filepath.Join(w.Dir, "a/orders-0/partition.metadata"))
			testkit.WriteFile(w.T, filepath.Join(w.Dir, "b/orders-0/partition.metadata"), meta)
		},
		dirs: []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitFindings, kinds: []string{"missing-barrier"}, status: "diverged",
	},
	{
		name:  "damaged-copy",
		about: "a/orders-0 is testdata/partitions/orders-0; b/orders-0 its mirror with byte 120 of the first batch overwritten.",
		build: func(w *clitest.GoldenWork) {
			mirroredOrders(w)
			f, err := os.OpenFile(filepath.Join(w.Dir, "b/orders-0/00000000000000000000.log"), os.O_WRONLY, 0)
			if err != nil {
				w.T.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{'Z'}, 120); err != nil {
				w.T.Fatal(err)
			}
		},
		dirs: []string{"a/orders-0", "b/orders-0"}, exit: ui.ExitFindings, kinds: []string{"mismatch", "crc-mismatch"}, status: "diverged",
	},
}

// copyFixture is a scenario whose working directory holds a copy of
// testdata/<from> at <to>.
func copyFixture(from, to string) func(w *clitest.GoldenWork) {
	return func(w *clitest.GoldenWork) { w.CopyFixture(from, to) }
}

// mirroredOrders is the working directory of most verify-chain scenarios:
// a/orders-0 a copy of testdata/partitions/orders-0, b/orders-0 its mirror.
func mirroredOrders(w *clitest.GoldenWork) {
	w.CopyFixture("partitions/orders-0", "a/orders-0")
	w.Mkdir("b/orders-0")
	w.Setup("mirror", "--quiet", "--backup-dir", "backup/1", "a/orders-0", "b/orders-0")
}

// TestVerifyChainGolden records verify-chain over consistent and
// inconsistent topologies, and checks each one's verdict.
func TestVerifyChainGolden(t *testing.T) {
	for _, sc := range verifyChainScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := clitest.NewGoldenWork(t)
			sc.build(w)
			text := w.Run(append([]string{"verify-chain"}, sc.dirs...)...)
			js := w.Run(append([]string{"verify-chain", "--output", "json"}, sc.dirs...)...)
			for _, r := range []clitest.Result{text, js} {
				if r.Code != sc.exit {
					t.Errorf("kseg %s: exit %d, want %d\n%s", strings.Join(r.Args, " "), r.Code, sc.exit, r.Stderr)
				}
			}
			edges := clitest.JSONLines(t, js, "edge")
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
			w.Check(filepath.Join("verify-chain", sc.name+".txt"), sc.about, "Run from the directory holding a/, b/ (and c/).")
			clitest.VerifyChainOverDigests(t, append([]string{"verify-chain"}, sc.dirs...))
		})
	}
}

// dryRunScenarios record the plans of the three write commands. A dry run
// must change nothing (not even create its backup folder).
var dryRunScenarios = []struct {
	name  string
	about string
	build func(w *clitest.GoldenWork)
	args  []string // without --dry-run and --output
	exit  int
}{
	{
		name: "inject-barrier-truncate", about: "kseg inject-barrier over a copy of testdata/partitions/txn-0: the cut at the last stable offset, iterated.",
		build: copyFixture("partitions/txn-0", "txn-0"),
		args:  []string{"inject-barrier", "txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "inject-barrier-abort", about: "kseg inject-barrier --mode abort over a copy of testdata/partitions/txn-0: an ABORT marker for the open transaction, then the barrier.",
		build: copyFixture("partitions/txn-0", "txn-0"),
		args:  []string{"inject-barrier", "--mode", "abort", "--source-cluster-id", "cluster-a", "txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "inject-barrier-clean", about: "kseg inject-barrier over a copy of testdata/partitions/orders-0: no transaction, nothing cut.",
		build: copyFixture("partitions/orders-0", "orders-0"),
		args:  []string{"inject-barrier", "--bump-leader-epoch", "6", "orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "mirror-new", about: "kseg mirror from a copy of testdata/partitions/orders-0 into an empty b/orders-0, rolling at 2048 bytes.",
		build: func(w *clitest.GoldenWork) { w.CopyFixture("partitions/orders-0", "a/orders-0"); w.Mkdir("b/orders-0") },
		args:  []string{"mirror", "--segment-bytes", "2048", "a/orders-0", "b/orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "mirror-catch-up", about: "kseg mirror from a copy of testdata/partitions/txn-0 into b/txn-0, which already mirrors it up to offset 8.",
		build: func(w *clitest.GoldenWork) {
			w.CopyFixture("partitions/txn-0", "a/txn-0")
			w.Mkdir("b/txn-0")
			w.Setup("mirror", "--quiet", "--backup-dir", "backup/1", "--upto", "8", "a/txn-0", "b/txn-0")
		},
		args: []string{"mirror", "a/txn-0", "b/txn-0"}, exit: ui.ExitOK,
	},
	{
		name: "repair-healthy", about: "kseg repair --all over a copy of testdata/partitions/orders-0: nothing to do.",
		build: copyFixture("partitions/orders-0", "orders-0"),
		args:  []string{"repair", "--all", "orders-0"}, exit: ui.ExitOK,
	},
	{
		name: "repair-torn-tail", about: "kseg repair over a copy of testdata/broken/torn-tail/events-0.",
		build: copyFixture("broken/torn-tail/events-0", "events-0"),
		args:  []string{"repair", "events-0"}, exit: ui.ExitFindings,
	},
	{
		name: "repair-crc-mismatch", about: "kseg repair over a copy of testdata/broken/crc-mismatch/events-0.",
		build: copyFixture("broken/crc-mismatch/events-0", "events-0"),
		args:  []string{"repair", "events-0"}, exit: ui.ExitFindings,
	},
}

// TestDryRunGolden records the --dry-run plan of inject-barrier, mirror
// and repair in text and JSON, and checks that nothing changed.
func TestDryRunGolden(t *testing.T) {
	for _, sc := range dryRunScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := clitest.NewGoldenWork(t)
			sc.build(w)
			before := clitest.WalkState(t, w.Dir)
			for _, o := range []string{"text", "json"} {
				// A backup directory outside the log directory: the dry run
				// checks it as the real run does, and the default (a folder
				// in the working directory, here the log directory) would
				// be refused.
				args := append([]string{sc.args[0], "--dry-run", "--output", o, "--backup-dir", "../backup"}, sc.args[1:]...)
				r := w.Run(args...)
				if r.Code != sc.exit {
					t.Errorf("kseg %s: exit %d, want %d\n%s", strings.Join(args, " "), r.Code, sc.exit, r.Stderr)
				}
				if o == "json" {
					clitest.CheckJSONLines(t, r)
				}
				if diffs := clitest.DiffState(before, clitest.WalkState(t, w.Dir)); len(diffs) > 0 {
					t.Fatalf("kseg %s changed the working directory:\n%s", strings.Join(args, " "), strings.Join(diffs, "\n"))
				}
			}
			w.Check(filepath.Join(sc.args[0], sc.name+".txt"), sc.about, "Recorded with --dry-run and --backup-dir ../backup, from the directory holding the partition.")
		})
	}
}
