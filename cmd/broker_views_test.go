package cmd

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
)

// The whole-broker views (groups, txns, metadata) on the bundled example
// log directories, copied to a temporary directory: golden outputs for
// every format (testdata/golden/views, regenerate with -update), and the
// facts the generator put there, checked in the JSON; damage in their
// internal topics named as dump names it. kseg status, whose golden is
// beside theirs, is at the end (TestStatusGolden).

var viewsGoldenDir = clitest.Testdata("golden/views")

// viewsGoldenAbs is viewsGoldenDir as an absolute path, resolved before
// any test changes directory.
var viewsGoldenAbs = clitest.MustAbs(viewsGoldenDir)

func viewRuns() [][]string {
	var runs [][]string
	for _, o := range []string{"text", "table", "json"} {
		runs = append(runs,
			[]string{"groups", "--output", o},
			[]string{"txns", "--output", o},
			[]string{"metadata", "--output", o})
	}
	runs = append(runs,
		[]string{"groups", "--group", "billing", "--topic", "orders"},
		[]string{"txns", "--transaction-state-partitions", "50"},
		[]string{"metadata", "--at", fmt.Sprint(clustertest.EventsRemovedAt)},
		[]string{"metadata", "--topic", "events"})
	return runs
}

func TestViewsGolden(t *testing.T) {
	work := t.TempDir()
	for _, name := range clustertest.LogDirNames {
		clitest.Fixture(t, "logdirs/"+name, filepath.Join(work, name))
	}
	if *clitest.Update {
		os.RemoveAll(viewsGoldenDir)
		os.MkdirAll(viewsGoldenDir, 0o755)
	}
	for _, name := range clustertest.LogDirNames {
		var b strings.Builder
		for _, args := range viewRuns() {
			r := clitest.Run(append(args, filepath.Join(work, name))...)
			r.Stdout = strings.ReplaceAll(r.Stdout, work, clitest.WorkPlaceholder)
			r.Stderr = strings.ReplaceAll(r.Stderr, work, clitest.WorkPlaceholder)
			writeRun(&b, strings.Join(args, " ")+" "+clitest.WorkPlaceholder+"/"+name, "", r)
			want := ui.ExitOK
			// Every view has a finding on broker-1 (orders-0's epoch even
			// --at 66), except a filter on the healthy group billing.
			if name == "broker-1" && !slices.Contains(args, "billing") {
				want = ui.ExitFindings
			}
			// healthy has no topic events, and its metadata log ends
			// before offset 66: questions it cannot answer (exit 2).
			if name == "healthy" && (slices.Contains(args, "--at") || slices.Contains(args, "events")) {
				want = ui.ExitUsage
			}
			if r.Code != want {
				t.Errorf("%s on %s: exit %d, want %d\n%s%s", strings.Join(args, " "), name, r.Code, want, r.Stdout, r.Stderr)
			}
		}
		clitest.CheckGoldenPath(t, filepath.Join(viewsGoldenDir, name+".txt"), []byte(b.String()))
	}
}

func TestViewsJSON(t *testing.T) {
	dir := clitest.Testdata("logdirs/broker-1")

	r := clitest.Run("groups", "-o", "json", dir)
	g := clitest.JSONByType(t, r)
	if r.Code != ui.ExitFindings || len(g["group"]) != 2 || len(g["finding"]) != 1 || g["finding"][0]["kind"] != "offset-below-log-start" {
		t.Fatalf("groups: exit %d %v", r.Code, g)
	}
	audit := g["group"][0]["offsets"].([]any)[0].(map[string]any)
	if g["group"][0]["group"] != "audit" || audit["committedOffset"] != float64(clustertest.AuditCommitted) || audit["logStartOffset"] != float64(clustertest.OrdersLogStart) || audit["lag"] != nil {
		t.Errorf("audit: %v", g["group"][0])
	}

	r = clitest.Run("txns", "-o", "json", dir) // 1 partition, as the metadata image says
	x := clitest.JSONByType(t, r)
	if r.Code != ui.ExitFindings || len(x["transaction"]) != 2 || len(x["openTransaction"]) != 1 || len(x["unanswerable"]) != 0 {
		t.Fatalf("txns: exit %d %v", r.Code, x)
	}
	o := x["openTransaction"][0]
	if o["verdict"] != "hanging" || o["producerId"] != float64(clustertest.PayOnePID) || o["transactionalId"] != "pay-1" || o["coordinatorState"] != "CompleteAbort" ||
		!strings.Contains(o["abortCommand"].(string), "--topic payments --partition 0 --start-offset 0") {
		t.Errorf("open transaction %v", o)
	}
	// Told there are 50 coordinator partitions, 49 are missing: said, and
	// the coordinator's record still decides (it is present).
	r = clitest.Run("txns", "-o", "json", "--transaction-state-partitions", "50", dir)
	if x := clitest.JSONByType(t, r); len(x["unanswerable"]) != 1 || x["openTransaction"][0]["verdict"] != "hanging" {
		t.Errorf("txns with 50 partitions: %v", x)
	}

	r = clitest.Run("metadata", "-o", "json", dir)
	m := clitest.JSONByType(t, r)
	if r.Code != ui.ExitFindings || len(m["metadataImage"]) != 1 || len(m["finding"]) != 3 {
		t.Fatalf("metadata: exit %d %v", r.Code, m)
	}
	im := m["metadataImage"][0]
	if im["offset"] != float64(69) || im["snapshotEndOffset"] != float64(clustertest.MetadataSnapshotAt) || len(im["topics"].([]any)) != 5 || len(im["brokers"].([]any)) != 2 {
		t.Errorf("image %v", im)
	}
}

func TestViewsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"groups"}, ui.ExitUsage},
		{[]string{"txns", "-o", "kafka", "."}, ui.ExitUsage},
		{[]string{"metadata", "--at", "-5", "."}, ui.ExitUsage},
		{[]string{"txns", "--now", "yesterday", "."}, ui.ExitUsage},
		{[]string{"groups", "--consumer-offsets-partitions", "-1", "."}, ui.ExitUsage},
		{[]string{"groups", clitest.Testdata("README.md")}, ui.ExitUsage},
		{[]string{"groups", clitest.Testdata("no-such-dir")}, ui.ExitError},
		{[]string{"metadata", clitest.Testdata("partitions")}, ui.ExitUsage}, // no __cluster_metadata-0: unanswerable
	} {
		if r := clitest.Run(c.args...); r.Code != c.code {
			t.Errorf("kseg %s: exit %d, want %d\n%s", strings.Join(c.args, " "), r.Code, c.code, r.Stderr)
		}
	}
}

// TestHealthyLogDirIsClean: the healthy example log directory is what its
// name says to every command that reads a whole log directory. dump
// --verify-index used to exit 3 on it: the generated KRaft snapshot's
// header and footer batches carried partitionLeaderEpoch 0 between data
// batches of the snapshot's epoch (a leader-epoch-regression), where a real
// snapshot writer uses the snapshot epoch in every batch.
func TestHealthyLogDirIsClean(t *testing.T) {
	dir := clitest.Testdata("logdirs/healthy")
	for _, args := range [][]string{
		{"dump", "--verify-index", "--index-sanity-check"},
		{"replay-psm"},
		{"groups"},
		{"txns"},
		{"metadata"},
		// Before orders, payments and __transaction_state were created:
		// their directories are of later records, not orphans.
		{"metadata", "--at", "30"},
	} {
		for _, o := range []string{"text", "json"} {
			r := clitest.Run(append(append(args, "-o", o), dir)...)
			if r.Code != ui.ExitOK {
				t.Errorf("%v -o %s: exit %d, want 0\n%s%s", args, o, r.Code, r.Stdout, r.Stderr)
			}
			if strings.Contains(r.Stderr, "warning") {
				t.Errorf("%v -o %s: a warning\n%s", args, o, r.Stderr)
			}
			if o == "json" {
				byType := clitest.JSONByType(t, r)
				if len(byType) == 0 {
					t.Errorf("%v: no output", args)
				}
				for _, typ := range []string{"finding", "unanswerable"} {
					if fs := byType[typ]; len(fs) > 0 {
						t.Errorf("%v: %d %s lines on the healthy directory: %v", args, len(fs), typ, fs)
					}
				}
				for _, ps := range byType["producerState"] {
					if as, _ := ps["anomalies"].([]any); len(as) > 0 {
						t.Errorf("%v: %s has anomalies %v", args, ps["partition"], as)
					}
				}
				continue
			}
			for _, line := range strings.Split(r.Stdout, "\n") {
				if f := strings.Fields(line); len(f) > 0 && (f[0] == "ERROR" || f[0] == "WARN" || f[0] == "WARNING" || f[0] == "INFO") {
					t.Errorf("%v: a finding on the healthy directory: %s", args, line)
				}
			}
		}
	}
}

// TestJSONDocCoversTheViews: docs/json.md documents every line type the
// views write and every key of each (nested keys included), in its
// section after "## The whole-broker views". The keys are taken from the
// views' own output on both example directories, so a key added to a
// printer without a word in the schema fails here.
func TestJSONDocCoversTheViews(t *testing.T) {
	doc := clitest.RepoFile(t, "docs/json.md")
	i := strings.Index(doc, "\n## The whole-broker views")
	if i < 0 {
		t.Fatal(`docs/json.md has no "## The whole-broker views" section`)
	}
	doc = doc[i+1:]
	// section returns the words in backticks of the ### section whose
	// heading names typ in backticks.
	tick := regexp.MustCompile("`([^`]*)`")
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	section := func(typ string) map[string]bool {
		var body []string
		in := false
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "#") {
				in = strings.HasPrefix(line, "### ") && strings.Contains(line, "`"+typ+"`")
				continue
			}
			if in {
				body = append(body, line)
			}
		}
		if body == nil {
			return nil
		}
		words := map[string]bool{}
		for _, m := range tick.FindAllStringSubmatch(strings.Join(body, "\n"), -1) {
			for _, w := range word.FindAllString(m[1], -1) {
				words[w] = true
			}
		}
		return words
	}
	keys := map[string]map[string]bool{}
	var walk func(typ string, v any)
	walk = func(typ string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys[typ][k] = true
				walk(typ, x)
			}
		case []any:
			for _, x := range v {
				walk(typ, x)
			}
		}
	}
	for _, name := range clustertest.LogDirNames {
		dir := clitest.Testdata("logdirs/" + name)
		for _, args := range [][]string{{"groups"}, {"txns"}, {"txns", "--transaction-state-partitions", "50"}, {"metadata"},
			{"metadata", "find", "/"}, {"status"}} {
			r := clitest.Run(append(append(args, "-o", "json"), dir)...)
			for typ, lines := range clitest.JSONByType(t, r) {
				if keys[typ] == nil {
					keys[typ] = map[string]bool{}
				}
				for _, l := range lines {
					walk(typ, l)
				}
			}
		}
	}
	for _, typ := range []string{"group", "transaction", "openTransaction", "unanswerable", "metadataImage", "diskPartition", "finding",
		"metadataNode", "partitionStatus", "logDirStatus"} {
		if keys[typ] == nil {
			t.Errorf("the views wrote no %q line on the example directories", typ)
		}
	}
	for typ, ks := range keys {
		words := section(typ)
		if words == nil {
			t.Errorf("docs/json.md: no ### section for the views' %q lines", typ)
			continue
		}
		for k := range ks {
			if !words[k] && k != "type" {
				t.Errorf("docs/json.md: the %q section does not name the key %q", typ, k)
			}
		}
	}
}

// TestStatusGolden: kseg status on a healthy partition, one with a hanging
// transaction, a torn tail, and a log directory, as text, as a table on a
// 100-column terminal, and as json, against
// testdata/golden/views/status.txt (go test ./cmd -run TestStatusGolden
// -update). Run from a copy's parent, so paths are relative.
func TestStatusGolden(t *testing.T) {
	work := t.TempDir()
	for _, src := range []string{"partitions/orders-0", "partitions/txn-0", "broken/torn-tail/events-0", "logdirs/broker-1"} {
		clitest.Fixture(t, src, filepath.Join(work, filepath.FromSlash(src)))
	}
	t.Chdir(work)
	var b strings.Builder
	for _, tc := range []struct {
		width int
		args  []string
		code  int
	}{
		{0, []string{"status", "partitions/orders-0"}, ui.ExitOK},
		{0, []string{"status", "partitions/txn-0"}, ui.ExitFindings},
		{0, []string{"status", "broken/torn-tail/events-0"}, ui.ExitFindings},
		{0, []string{"status", "logdirs/broker-1"}, ui.ExitOK},
		{100, []string{"status", "logdirs/broker-1"}, ui.ExitOK},
		{100, []string{"status", "-o", "wide", "logdirs/broker-1"}, ui.ExitOK},
		{0, []string{"status", "partitions/orders-0", "partitions/txn-0"}, ui.ExitFindings},
		{0, []string{"status", "-o", "json", "partitions/txn-0", "logdirs/broker-1"}, ui.ExitFindings},
	} {
		r, where := runWhere(tc.width, tc.args...)
		if r.Code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, r.Code, tc.code, r.Stdout, r.Stderr)
		}
		writeRun(&b, strings.Join(tc.args, " "), where, r)
	}
	clitest.CheckGoldenPath(t, filepath.Join(viewsGoldenAbs, "status.txt"), []byte(b.String()))
}

// TestViewsNameDamageAsDumpDoes: a view that meets damage in an internal
// topic's log reports it with the kind dump gives the same bytes
// (crc-mismatch, corrupt-batch, torn-tail, corrupt-records), not words of
// its own (it said corrupt-log and corrupt-record). Each internal partition
// of the healthy example directory is damaged in four ways, and the view's
// damage findings must be exactly dump's error kinds for that partition.
func TestViewsNameDamageAsDumpDoes(t *testing.T) {
	// The views' own kinds: what the damage makes them conclude, beyond
	// the damage itself (a lost record can leave a replica missing).
	viewOwn := []string{"offset-below-log-start", "offset-above-log-end", "hanging-transaction", "coordinator-partitions-missing",
		"partition-not-replayed", "image-incomplete", "orphan-partition", "missing-replica", "leader-epoch-ahead"}
	damages := map[string]func(log []byte, pos []int64) []byte{
		// one byte of the last batch's records flipped
		"crc-mismatch": func(log []byte, pos []int64) []byte {
			log[len(log)-2] ^= 0x55
			return log
		},
		// the last batch cut short
		"torn-tail": func(log []byte, pos []int64) []byte {
			return log[:len(log)-5]
		},
		// the magic of the last batch but one set to 7: a batch follows
		"corrupt-batch": func(log []byte, pos []int64) []byte {
			log[pos[len(pos)-2]+16] = 7
			return log
		},
		// recordsCount of the last batch set to -1, CRC recomputed
		"corrupt-records": func(log []byte, pos []int64) []byte {
			b := log[pos[len(pos)-1]:]
			binary.BigEndian.PutUint32(b[57:], 0xffffffff)
			binary.BigEndian.PutUint32(b[17:], decode.CRC32C(b[21:]))
			return log
		},
	}
	for view, part := range map[string]string{"groups": "__consumer_offsets-9", "txns": "__transaction_state-0", "metadata": "__cluster_metadata-0"} {
		for damage, fn := range damages {
			t.Run(view+"/"+damage, func(t *testing.T) {
				ld := filepath.Join(t.TempDir(), "healthy")
				clitest.Fixture(t, "logdirs/healthy", ld)
				damageLog(t, filepath.Join(ld, part, "00000000000000000000.log"), fn)
				d := clitest.Run("dump", "-o", "json", "--deep", filepath.Join(ld, part))
				var dumpKinds []string
				for _, f := range clitest.JSONLines(t, d, "finding") {
					if f["severity"] == "error" && !slices.Contains(dumpKinds, f["kind"].(string)) {
						dumpKinds = append(dumpKinds, f["kind"].(string))
					}
				}
				v := clitest.Run(view, "-o", "json", ld)
				var viewKinds []string
				for _, f := range clitest.JSONLines(t, v, "finding") {
					k := f["kind"].(string)
					if !slices.Contains(viewOwn, k) && !slices.Contains(viewKinds, k) {
						viewKinds = append(viewKinds, k)
					}
				}
				slices.Sort(dumpKinds)
				slices.Sort(viewKinds)
				if !slices.Equal(dumpKinds, []string{damage}) {
					t.Fatalf("dump reports %v, want [%s]: the damage is not what the test meant\n%s", dumpKinds, damage, d.Stdout)
				}
				if !slices.Equal(viewKinds, dumpKinds) || v.Code != ui.ExitFindings {
					t.Errorf("%s: exit %d, damage kinds %v, dump says %v\n%s%s", view, v.Code, viewKinds, dumpKinds, v.Stdout, v.Stderr)
				}
				if !strings.Contains(v.Stdout, `"partitionDir":"`+filepath.Join(ld, part)+`"`) {
					t.Errorf("%s: no finding names %s\n%s", view, part, v.Stdout)
				}
			})
		}
	}
}

// damageLog rewrites the .log at path as damage returns it, given its
// bytes and the positions of its batches (at least two).
func damageLog(t *testing.T, path string, damage func(log []byte, pos []int64) []byte) {
	t.Helper()
	log := testkit.ReadFile(t, path)
	pos := batchPositions(t, path)
	if len(pos) < 2 {
		t.Fatalf("%s: %d batches, the damages need two", path, len(pos))
	}
	testkit.WriteFile(t, path, damage(log, pos))
}

// batchPositions are the byte positions of a segment's batches.
func batchPositions(t *testing.T, path string) []int64 {
	t.Helper()
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	var pos []int64
	for sc.Next() {
		pos = append(pos, sc.Pos())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pos
}
