package check

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/check/tree"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// checkTree copies fixtures into a fresh temporary tree: each name is a
// path under testdata (a partition or a log directory), copied to the
// same relative path.
func checkFixtureTree(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		clitest.Fixture(t, n, filepath.Join(root, n))
	}
	return root
}

// writeCheckConfig writes a kseg-check.yaml into dir and returns its path.
func writeCheckConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, expect.ConfigName)
	testkit.WriteFile(t, p, []byte(body))
	return p
}

// runCheckJSON runs check with -o json and returns its exit code
// and lines by type.
func runCheckJSON(t *testing.T, args ...string) (int, map[string][]map[string]any, clitest.Result) {
	t.Helper()
	r := clitest.Run(append([]string{"check", "-o", "json"}, args...)...)
	lines := map[string][]map[string]any{}
	for _, m := range clitest.CheckJSONLines(t, r) {
		typ, _ := m["type"].(string)
		lines[typ] = append(lines[typ], m)
	}
	return r.Code, lines, r
}

// findingsWith are the finding lines of a status.
func findingsWith(lines map[string][]map[string]any, status string) []map[string]any {
	var out []map[string]any
	for _, l := range lines["finding"] {
		if l["status"] == status {
			out = append(out, l)
		}
	}
	return out
}

// TestCheckOutcomes: the three outcomes and an unreadable partition, over
// a copy of broken/crc-mismatch (one crc-mismatch at position 214,
// offset 4) and partitions/orders-0 (healthy).
func TestCheckOutcomes(t *testing.T) {
	t.Parallel()
	root := checkFixtureTree(t, "broken/crc-mismatch/events-0", "partitions/orders-0")
	expectCRC := "paths:\n  - path: broken/crc-mismatch/events-0\n    expect:\n      - kind: crc-mismatch\n        file: 00000000000000000000.log\n        position: 214\n        offset: 4\n"

	t.Run("pass", func(t *testing.T) {
		cfg := writeCheckConfig(t, t.TempDir(), "root: "+root+"\n"+expectCRC)
		code, lines, r := runCheckJSON(t, "--config", cfg, root)
		if code != ui.ExitOK || len(findingsWith(lines, statusExpected)) != 1 || len(findingsWith(lines, statusNew)) != 0 {
			t.Fatalf("exit %d, want 0 with one expected finding\n%s%s", code, r.Stdout, r.Stderr)
		}
		if s := lines["summary"][0]; s["expected"] != 1.0 || s["failed"] != 0.0 || s["exitCode"] != 0.0 {
			t.Errorf("summary %v", s)
		}
	})
	t.Run("new", func(t *testing.T) {
		r := clitest.Run("check", "--config", writeCheckConfig(t, t.TempDir(), "root: "+root+"\n"), root)
		want := filepath.Join(root, "broken/crc-mismatch/events-0/00000000000000000000.log") + ": new crc-mismatch (error) at position 214, offset 4 [segments]: "
		if r.Code != ui.ExitFindings || !strings.Contains(r.Stdout, want) {
			t.Fatalf("exit %d, want 3 and a line %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	})
	t.Run("missing", func(t *testing.T) {
		body := "root: " + root + "\n" + expectCRC +
			"  - path: partitions/orders-0\n    expect:\n      - kind: zero-tail\n        file: 00000000000000000053.log\n"
		cfg := writeCheckConfig(t, t.TempDir(), body)
		r := clitest.Run("check", "--config", cfg, root)
		want := cfg + ":11:9: missing zero-tail in " + relToWD(t, filepath.Join(root, "partitions/orders-0/00000000000000000053.log")) +
			": expected, not found [segments]"
		if r.Code != ui.ExitFindings || !strings.Contains(r.Stdout, want) || strings.Contains(r.Stdout, ": new ") {
			t.Fatalf("exit %d, want 3 and a line %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		// A segment that cannot be opened (a dangling link where the .log
		// was): the run goes on with the other partition.
		tree := checkFixtureTree(t, "broken/crc-mismatch/events-0", "partitions/orders-0")
		log := filepath.Join(tree, "partitions/orders-0/00000000000000000026.log")
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(tree, "gone"), log); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		cfg := writeCheckConfig(t, t.TempDir(), "root: "+tree+"\n"+expectCRC)
		code, lines, r := runCheckJSON(t, "--config", cfg, tree)
		u := lines["unreadable"]
		if code != ui.ExitError || len(u) != 1 || u[0]["check"] != checkSegments || !strings.Contains(u[0]["error"].(string), "00000000000000000026.log") {
			t.Fatalf("exit %d, want 1 with one unreadable segments check\n%s%s", code, r.Stdout, r.Stderr)
		}
		if len(findingsWith(lines, statusExpected)) != 1 {
			t.Errorf("the other partition was not checked:\n%s", r.Stdout)
		}
		if s := lines["summary"][0]; s["unreadable"] != 1.0 || s["exitCode"] != 1.0 {
			t.Errorf("summary %v", s)
		}
	})
}

// relToWD is p as check reports a path of the expectations file: relative
// to the working directory.
func relToWD(t *testing.T, p string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// TestCheckSettings: ignore, fail-on and count, top level and per path,
// the nearest path's fail-on winning.
func TestCheckSettings(t *testing.T) {
	t.Parallel()
	// zero-tail: a warning; bad-magic and huge-length: a corrupt-batch
	// error and a skipped-bytes warning each.
	root := checkFixtureTree(t, "broken/zero-tail/events-0", "broken/bad-magic/events-0", "broken/huge-length/events-0")
	for _, tc := range []struct {
		name, body string
		code       int
		statuses   map[string]int
	}{
		{"defaults", "", ui.ExitFindings, map[string]int{statusNew: 2, statusNote: 3}},
		{"fail-on warning", "fail-on: warning\n", ui.ExitFindings, map[string]int{statusNew: 5}},
		{"fail-on per path, nearest wins", "fail-on: warning\npaths:\n  - path: broken\n    fail-on: error\n  - path: broken/zero-tail/events-0\n    fail-on: info\n",
			ui.ExitFindings, map[string]int{statusNew: 3, statusNote: 2}},
		{"ignore", "ignore: [corrupt-batch]\npaths:\n  - path: broken/zero-tail\n    ignore: [zero-tail]\n", ui.ExitOK,
			map[string]int{statusIgnored: 3, statusNote: 2}},
		{"count met", "fail-on: info\npaths:\n  - path: broken\n    expect:\n      - kind: corrupt-batch\n      - kind: skipped-bytes\n        count: 2\n      - kind: zero-tail\n        count: 1\n",
			ui.ExitOK, map[string]int{statusExpected: 5}},
		{"count above what is found", "paths:\n  - path: broken\n    expect:\n      - kind: corrupt-batch\n        count: 3\n",
			ui.ExitFindings, map[string]int{statusExpected: 2, statusMissing: 1, statusNote: 3}},
		{"count below what is found", "fail-on: warning\npaths:\n  - path: broken\n    expect:\n      - kind: corrupt-batch\n        count: 1\n      - kind: skipped-bytes\n      - kind: zero-tail\n",
			ui.ExitFindings, map[string]int{statusExpected: 4, statusNew: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeCheckConfig(t, t.TempDir(), "root: "+root+"\n"+tc.body)
			code, lines, r := runCheckJSON(t, "--config", cfg, root)
			got := map[string]int{}
			for _, l := range lines["finding"] {
				got[l["status"].(string)]++
			}
			if n := len(lines["missing"]); n > 0 {
				got[statusMissing] = n
			}
			if code != tc.code || !mapsEqual(got, tc.statuses) {
				t.Errorf("exit %d %v, want %d %v\n%s%s", code, got, tc.code, tc.statuses, r.Stdout, r.Stderr)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCheckConfigStrict: what the expectations file gets wrong is a usage
// error (exit 2) naming the file, line and column, before anything is
// read.
func TestCheckConfigStrict(t *testing.T) {
	t.Parallel()
	root := checkFixtureTree(t, "broken/crc-mismatch/events-0")
	entry := "paths:\n  - path: broken/crc-mismatch/events-0\n"
	for _, tc := range []struct{ name, body, where, says string }{
		{"unknown top-level key", "fail_on: error\n", ":2:1:", `unknown key "fail_on" in the file`},
		{"unknown entry key", entry + "    expects: []\n", ":4:5:", `unknown key "expects" in a path entry`},
		{"unknown expectation key", entry + "    expect:\n      - kind: crc-mismatch\n        pos: 214\n", ":6:9:", `unknown key "pos" in an expected finding`},
		{"position of the wrong type", entry + "    expect:\n      - kind: crc-mismatch\n        position: \"214\"\n", ":6:19:", "position must be a whole number"},
		{"negative offset", entry + "    expect:\n      - kind: crc-mismatch\n        offset: -1\n", ":6:17:", "offset must be a whole number"},
		{"unknown kind", entry + "    expect:\n      - kind: crc-mismatches\n", ":5:15:", `"crc-mismatches" is no finding kind`},
		{"expectation without a kind", entry + "    expect:\n      - file: 00000000000000000000.log\n", ":5:9:", "needs a kind"},
		{"count 0", entry + "    expect:\n      - kind: crc-mismatch\n        count: 0\n", ":6:16:", "count must be 1 or more"},
		{"bad fail-on", "fail-on: fatal\n", ":2:10:", "fail-on must be error, warning or info"},
		{"ignore not a list", "ignore: zero-tail\n", ":2:9:", "ignore must be a list"},
		{"deep not a bool", "deep: yes please\n", ":2:7:", "deep must be true or false"},
		{"paths not a list", "paths:\n  path: x\n", ":3:3:", "paths must be a list"},
		{"path that does not exist", "paths:\n  - path: broken/crc-mismatch/events-1\n", ":3:11:", `path "broken/crc-mismatch/events-1": no such file or directory`},
		{"glob matching nothing", "paths:\n  - path: broken/*/nothing-0\n", ":3:11:", "matches no directory"},
		{"expected file that does not exist", entry + "    expect:\n      - kind: crc-mismatch\n        file: 00000000000000000001.log\n", ":6:15:", "no such file or directory"},
		{"edge end that does not exist", entry + "    edges:\n      - upstream: .\n        downstream: ../events-1\n", ":6:21:", `downstream "../events-1" is not a directory`},
		{"version 2", "version: 2\n", ":2:10:", "version must be 1"},
		{"not YAML", "paths: [\n", "", "yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeCheckConfig(t, t.TempDir(), "root: "+root+"\n"+tc.body)
			r := clitest.Run("check", "--config", cfg, root)
			if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, cfg+tc.where) || !strings.Contains(r.Stderr, tc.says) || r.Stdout != "" {
				t.Errorf("exit %d, want 2 with %q and %q on stderr:\n%s%s", r.Code, cfg+tc.where, tc.says, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestCheckConfigFoundUpward: kseg-check.yaml is looked for in the
// directory and every one above it; the nearest wins.
func TestCheckConfigFoundUpward(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	clitest.Mkdir(t, deep)
	if p, err := expect.Find(deep); err != nil || p != "" {
		t.Fatalf("found %q %v in a tree without one", p, err)
	}
	top := writeCheckConfig(t, root, "")
	mid := writeCheckConfig(t, filepath.Join(root, "a"), "")
	for _, tc := range []struct{ from, want string }{{deep, mid}, {filepath.Join(root, "a"), mid}, {root, top}} {
		if p, err := expect.Find(tc.from); err != nil || p != tc.want {
			t.Errorf("from %s: %q %v, want %s", tc.from, p, err, tc.want)
		}
	}
}

// TestCheckWalk: partitions are found at any depth; a directory named
// like a partition but holding no partition file, hidden directories and
// everything else are skipped; a partition's parent inside a PATH is its
// log directory, and the internal topics there decide the views.
func TestCheckWalk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	clitest.Fixture(t, "logdirs/healthy", filepath.Join(root, "repo", "kafka-logs-1"))
	clitest.Fixture(t, "partitions/orders-0", filepath.Join(root, "deeper", "still", "orders-0"))
	clitest.Fixture(t, "partitions/txn-0", filepath.Join(root, ".git", "txn-0"))
	for _, d := range []string{"notes-1", "docs/pages-2"} {
		clitest.Mkdir(t, filepath.Join(root, d))
		testkit.WriteFile(t, filepath.Join(root, d, "README.md"), []byte("not Kafka\n"))
	}
	walked, err := tree.Walk([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range walked.Partitions {
		rel, _ := filepath.Rel(root, p.Path)
		parts = append(parts, filepath.ToSlash(rel))
	}
	healthy, err := os.ReadDir(clitest.Testdata("logdirs/healthy"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"deeper/still/orders-0"}
	for _, e := range healthy {
		if e.IsDir() {
			want = append(want, "repo/kafka-logs-1/"+e.Name())
		}
	}
	slices.Sort(want)
	if !slices.Equal(parts, want) {
		t.Errorf("partitions\n%v\nwant\n%v", parts, want)
	}
	var lds []string
	for _, ld := range walked.LogDirs {
		rel, _ := filepath.Rel(root, ld.Path)
		lds = append(lds, filepath.ToSlash(rel))
		if rel == "repo/kafka-logs-1" && (!ld.Topics["__consumer_offsets"] || !ld.Topics["__transaction_state"] || !ld.Topics["__cluster_metadata"]) {
			t.Errorf("%s: internal topics %v", rel, ld.Topics)
		}
	}
	if !slices.Equal(lds, []string{"deeper/still", "repo/kafka-logs-1"}) {
		t.Errorf("log directories %v", lds)
	}
	// A PATH inside a partition's parent: the parent is no log directory
	// of this run.
	walked, err = tree.Walk([]string{filepath.Join(root, "deeper", "still", "orders-0")})
	if err != nil || len(walked.Partitions) != 1 || len(walked.LogDirs) != 0 || walked.Partitions[0].LogDir != -1 {
		t.Errorf("a partition as PATH: %+v %v", walked, err)
	}
	if r := clitest.Run("check", filepath.Join(root, "docs")); r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, "no Kafka partition directory") {
		t.Errorf("a tree without Kafka data: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := clitest.Run("check", filepath.Join(root, "nowhere")); r.Code != ui.ExitError {
		t.Errorf("a PATH that does not exist: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestCheckBaselineRoundTrip: --write-baseline writes what a run finds;
// the next run passes; once a fault is taken out of a fixture copy, the
// run fails naming the expectation that is no longer met; a second
// --write-baseline removes it and keeps the rest of the file as it was.
func TestCheckBaselineRoundTrip(t *testing.T) {
	t.Parallel()
	root := checkFixtureTree(t, "broken/zero-tail/events-0", "broken/crc-mismatch/events-0", "partitions/txn-0")
	cfg := filepath.Join(t.TempDir(), "sub", "kseg-check.yaml")
	clitest.Mkdir(t, filepath.Dir(cfg))
	// A file to start from: its comment and settings must survive.
	testkit.WriteFile(t, cfg, []byte("# ours\nroot: "+root+"\nfail-on: warning # pin warnings too\n"))
	if r := clitest.Run("check", "--config", cfg, "--write-baseline", root); r.Code != ui.ExitOK || !strings.Contains(r.Stderr, "3 expectations added") {
		t.Fatalf("--write-baseline: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	b := testkit.ReadFile(t, cfg)
	clitest.MustContain(t, string(b), "# ours\n", "fail-on: warning # pin warnings too\n", "path: broken/zero-tail/events-0\n",
		"kind: zero-tail\n", "file: 00000000000000000000.log\n", "position: 646\n",
		"kind: crc-mismatch\n", "position: 214\n", "offset: 4\n", "kind: hanging-transaction\n")
	if r := clitest.Run("check", "--config", cfg, root); r.Code != ui.ExitOK {
		t.Fatalf("check after --write-baseline: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Take the zero tail out: the segment ends at its last batch.
	log := filepath.Join(root, "broken/zero-tail/events-0/00000000000000000000.log")
	if err := os.Truncate(log, 646); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run("check", "--config", cfg, root)
	if r.Code != ui.ExitFindings || !strings.Contains(r.Stdout, "missing zero-tail in "+relToWD(t, log)+" at position 646: expected, not found [segments]") {
		t.Fatalf("after the fault was removed: exit %d, want 3 naming the missing zero-tail\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run("check", "--config", cfg, "--write-baseline", root); r.Code != ui.ExitOK || !strings.Contains(r.Stderr, "0 expectations added, 1 expectation removed") {
		t.Fatalf("second --write-baseline: exit %d\n%s", r.Code, r.Stderr)
	}
	after := testkit.ReadFile(t, cfg)
	if strings.Contains(string(after), "zero-tail") || !strings.HasPrefix(string(after), "# ours\n") || !strings.Contains(string(after), "kind: crc-mismatch") {
		t.Errorf("second baseline:\n%s", after)
	}
	if r := clitest.Run("check", "--config", cfg, "--write-baseline", root); r.Code != ui.ExitOK || !strings.Contains(r.Stderr, "left as it is") {
		t.Errorf("third --write-baseline: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := clitest.Run("check", "--config", cfg, root); r.Code != ui.ExitOK {
		t.Errorf("check after the second baseline: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestCheckProjectExpectations: testdata/ meets testdata/kseg-check.yaml
// (what .ci/run checks), and every fixture of testdata/broken has an
// expectation there.
func TestCheckProjectExpectations(t *testing.T) {
	t.Parallel()
	cfg := clitest.Testdata(expect.ConfigName)
	code, lines, r := runCheckJSON(t, "--config", cfg, clitest.TestdataDir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, r.Stdout, r.Stderr)
	}
	broken, err := os.ReadDir(clitest.Testdata("broken"))
	if err != nil {
		t.Fatal(err)
	}
	b := testkit.ReadFile(t, cfg)
	for _, d := range broken {
		if !strings.Contains(string(b), "path: broken/"+d.Name()+"/events-0\n  expect:") {
			t.Errorf("%s: broken/%s has no expectations", cfg, d.Name())
		}
	}
	if n := len(findingsWith(lines, statusExpected)); n < len(broken) {
		t.Errorf("%d expected findings", n)
	}
}

// TestCheckRealFixtures: ../shared/fixtures/real meets
// testdata/real-check.yaml.
func TestCheckRealFixtures(t *testing.T) {
	t.Parallel()
	src := testkit.RealRootOrSkip(t)
	r := clitest.Run("check", "-q", "--config", clitest.Testdata("real-check.yaml"), src)
	if r.Code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestCheckGitHubByDefault: under GitHub Actions the report is workflow
// commands unless -o says otherwise.
func TestCheckGitHubByDefault(t *testing.T) {
	t.Parallel()
	root := checkFixtureTree(t, "broken/crc-mismatch/events-0")
	for _, tc := range []struct {
		args   []string
		prefix string
	}{{nil, "::error file="}, {[]string{"-o", "text"}, root}} {
		s, out, _ := ui.TestStreams()
		s.Env = func(k string) (string, bool) { return "true", k == "GITHUB_ACTIONS" }
		code := clitest.RunStreams(t.Context(), s, append(append([]string{"check", "-q"}, tc.args...), root)...)
		if code != ui.ExitFindings || !strings.HasPrefix(out.String(), tc.prefix) {
			t.Errorf("%v: exit %d\n%s", tc.args, code, out)
		}
	}
}

// TestCheckEdges: an edge of the file is verified as verify-chain
// verifies it, for every directory a glob entry names, and its findings
// are the downstream partition's.
func TestCheckEdges(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, fix := range []string{"chain1", "chain2"} {
		a := filepath.Join(root, fix, "a", "orders-0")
		clitest.Fixture(t, "partitions/orders-0", a)
		b := filepath.Join(root, fix, "b", "orders-0")
		clitest.Mkdir(t, filepath.Dir(b))
		if code, out, stderr := clitest.Exec(t, "mirror", "-q", "--backup-dir", filepath.Join(t.TempDir(), "bk"), a, b); code != ui.ExitOK {
			t.Fatalf("mirror: exit %d\n%s%s", code, out, stderr)
		}
	}
	cfg := writeCheckConfig(t, root, "paths:\n  - path: chain*\n    edges:\n      - upstream: a/orders-0\n        downstream: b/orders-0\n")
	code, lines, r := runCheckJSON(t, "--config", cfg, root)
	chains := 0
	for _, l := range append(lines["skipped"], lines["finding"]...) {
		if l["check"] == checkChain {
			chains++
		}
	}
	if code != ui.ExitOK || chains != 0 || !strings.Contains(clitest.Run("check", "-v", "-o", "junit", "--config", cfg, root).Stdout, `name="chain from `) {
		t.Fatalf("in sync: exit %d, %d chain lines\n%s%s", code, chains, r.Stdout, r.Stderr)
	}
	// chain2's mirror diverges: its last batch's timestamp changed (and
	// its CRC recomputed, so that only the comparison sees it).
	logs, err := filepath.Glob(filepath.Join(root, "chain2", "b", "orders-0", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatal(logs, err)
	}
	log := logs[len(logs)-1]
	b := testkit.ReadFile(t, log)
	b = flipLastBatchTimestamp(t, b)
	testkit.WriteFile(t, log, b)
	code, lines, r = runCheckJSON(t, "--config", cfg, root)
	var got []string
	for _, l := range findingsWith(lines, statusNew) {
		f := l["finding"].(map[string]any)
		got = append(got, l["check"].(string)+" "+f["kind"].(string)+" "+filepath.Base(filepath.Dir(filepath.Dir(l["unit"].(string)))))
	}
	chain2 := slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "chain ") && strings.HasSuffix(s, " chain2") })
	if code != ui.ExitFindings || !chain2 || slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "chain1") }) {
		t.Errorf("diverged: exit %d, new %v\n%s%s", code, got, r.Stdout, r.Stderr)
	}
}

// flipLastBatchTimestamp changes the maxTimestamp of log's last v2 batch
// and recomputes its CRC-32C: a batch that frames and validates, and
// differs from the one it was copied from.
func flipLastBatchTimestamp(t *testing.T, log []byte) []byte {
	t.Helper()
	last := -1
	for pos := 0; pos+12 <= len(log); {
		last = pos
		pos += 12 + int(binary.BigEndian.Uint32(log[pos+8:]))
	}
	if last < 0 || log[last+16] != 2 {
		t.Fatal("no v2 batch")
	}
	// maxTimestamp is at +35 (baseOffset 8, batchLength 4, leader epoch
	// 4, magic 1, crc 4, attributes 2, lastOffsetDelta 4, baseTimestamp 8).
	log[last+42] ^= 1
	end := last + 12 + int(binary.BigEndian.Uint32(log[last+8:]))
	binary.BigEndian.PutUint32(log[last+17:], decode.CRC32C(log[last+21:end]))
	return log
}
