package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/check/rules"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/finding"
)

// checkReportRun is one run of check over a tree made to hold every kind
// of item a report renders — a new finding, a missing expectation, an
// expected finding, notes below fail-on (one with a byte range), an
// ignored finding, an unreadable partition, a skipped check, and the
// whole-broker views — under a directory whose name needs escaping in
// every format (',', ':', '%', '&', '<'), with every report written by
// --report at once.
type checkReportRun struct {
	root   string
	code   int
	stdout string
	files  map[string][]byte
}

func runCheckReports(t *testing.T) *checkReportRun {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "odd,dir:100% & <x>")
	for _, n := range []string{"broken/crc-mismatch/events-0", "broken/zero-tail/events-0", "broken/bad-magic/events-0", "logdirs/broker-1"} {
		clitest.Fixture(t, n, filepath.Join(root, n))
	}
	// A partition without its .log (producer-state is skipped), and one
	// that cannot be read.
	clitest.Fixture(t, "partitions/orders-0", filepath.Join(root, "partitions/orders-0"))
	if err := os.Remove(filepath.Join(root, "partitions/orders-0/00000000000000000026.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "gone"), filepath.Join(root, "partitions/orders-0/00000000000000000026.log")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	clitest.Fixture(t, "partitions/txn-0", filepath.Join(root, "partitions/indexes-0"))
	for _, n := range []string{"00000000000000000000.log", "00000000000000000011.log"} {
		if err := os.Remove(filepath.Join(root, "partitions/indexes-0", n)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeCheckConfig(t, base, `root: "`+root+`"
ignore: [orphan-partition]
paths:
  - path: broken/crc-mismatch/events-0
    expect:
      - kind: crc-mismatch
        file: 00000000000000000000.log
        position: 214
  - path: broken/zero-tail/events-0
    expect:
      - kind: torn-tail
`)
	out := filepath.Join(base, "reports")
	clitest.Mkdir(t, out)
	args := []string{"check", "-q", "--config", cfg}
	for _, f := range checkFormats {
		args = append(args, "--report", f+"="+filepath.Join(out, f))
	}
	r := clitest.Run(append(args, root)...)
	run := &checkReportRun{root: root, code: r.Code, stdout: r.Stdout, files: map[string][]byte{}}
	for _, f := range checkFormats {
		b := testkit.ReadFile(t, filepath.Join(out, f))
		run.files[f] = b
	}
	if r.Code != ui.ExitError {
		t.Fatalf("exit %d, want 1 (an unreadable partition)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if !bytes.Equal(run.files["text"], []byte(r.Stdout)) {
		t.Errorf("--report text=FILE differs from stdout:\n%s\n---\n%s", run.files["text"], r.Stdout)
	}
	return run
}

// TestCheckReportFormats validates every report of one run: SARIF
// against the official 2.1.0 schema, JUnit against both published
// schemas (with xmllint), the github workflow commands against their
// grammar, and the JSON lines; and checks that each holds what the run
// found.
func TestCheckReportFormats(t *testing.T) {
	t.Parallel()
	run := runCheckReports(t)
	t.Run("sarif", func(t *testing.T) { checkSARIF(t, run) })
	t.Run("junit", func(t *testing.T) { checkJUnit(t, run) })
	t.Run("github", func(t *testing.T) { checkGitHub(t, run) })
	t.Run("json", func(t *testing.T) { checkJSONReport(t, run) })
	t.Run("table", func(t *testing.T) {
		// A row per line of the text report (header aside), the same
		// failures in the same order.
		rows := strings.Split(strings.TrimSpace(string(run.files["table"])), "\n")
		text := strings.Split(strings.TrimSpace(string(run.files["text"])), "\n")
		if len(rows) != len(text)+1 || !strings.HasPrefix(rows[0], "STATUS") {
			t.Fatalf("%d table rows for %d text lines:\n%s", len(rows), len(text), run.files["table"])
		}
		for i, l := range text {
			status := strings.Fields(strings.SplitN(l, ": ", 2)[1])[0]
			if !strings.HasPrefix(rows[i+1], status+" ") {
				t.Errorf("row %d %q, text %q", i+1, rows[i+1], l)
			}
		}
	})
}

// sarifSchemaFile is the official SARIF 2.1.0 schema (testdata/README.md
// says where it comes from).
var sarifSchemaFile = clitest.Testdata("schemas/sarif-schema-2.1.0.json")

func checkSARIF(t *testing.T, run *checkReportRun) {
	f, err := os.Open(sarifSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(sarifSchema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(run.files["sarif"]))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("the SARIF report does not validate: %v", err)
	}
	// And a document the schema refuses is refused: the validation is real.
	var bad map[string]any
	if err := json.Unmarshal(run.files["sarif"], &bad); err != nil {
		t.Fatal(err)
	}
	bad["version"] = "2.0.0"
	if sch.Validate(bad) == nil {
		t.Error("the schema accepts version 2.0.0")
	}

	var log sarifLog
	if err := json.Unmarshal(run.files["sarif"], &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0]
	if len(r.Tool.Driver.Rules) != len(finding.Kinds()) {
		t.Errorf("%d rules for %d kinds", len(r.Tool.Driver.Rules), len(finding.Kinds()))
	}
	states := map[string]int{}
	for _, res := range r.Results {
		states[res.BaselineState+"/"+res.Level]++
		if rule := r.Tool.Driver.Rules[res.RuleIndex]; rule.ID != res.RuleID {
			t.Errorf("result %s points at rule %s", res.RuleID, rule.ID)
		}
		switch {
		case res.RuleID == "crc-mismatch" && res.BaselineState == "unchanged":
			reg := res.Locations[0].PhysicalLocation.Region
			if reg == nil || *reg.ByteOffset != 214 || len(res.Suppressions) != 1 ||
				!strings.HasSuffix(res.Locations[0].PhysicalLocation.ArtifactLocation.URI, "/broken/crc-mismatch/events-0/00000000000000000000.log") {
				t.Errorf("expected crc-mismatch: %+v", res)
			}
		case res.RuleID == "skipped-bytes":
			if reg := res.Locations[0].PhysicalLocation.Region; reg == nil || *reg.ByteOffset != 321 || reg.ByteLength == nil || *reg.ByteLength != 107 {
				t.Errorf("skipped-bytes region: %+v", res.Locations[0])
			}
		case res.BaselineState == "absent":
			if res.RuleID != "torn-tail" || res.Locations[0].PhysicalLocation.Region.StartLine != 11 {
				t.Errorf("missing: %+v", res)
			}
		}
	}
	for _, want := range []string{"unchanged/error", "absent/error", "new/error", "new/note"} {
		if states[want] == 0 {
			t.Errorf("no %s result: %v", want, states)
		}
	}
	if n := r.Invocations[0].ToolExecutionNotifications; len(n) != 1 || r.Invocations[0].ExecutionSuccessful || r.Invocations[0].ExitCode != ui.ExitError {
		t.Errorf("invocation %+v", r.Invocations[0])
	}
}

// junitSchemas are the published JUnit schemas: Apache Ant's (windyroad)
// and Jenkins' (xunit-plugin).
var junitSchemas = []string{clitest.Testdata("schemas/JUnit.xsd"), clitest.Testdata("schemas/junit-10.xsd")}

func checkJUnit(t *testing.T, run *checkReportRun) {
	report := filepath.Join(t.TempDir(), "junit.xml")
	testkit.WriteFile(t, report, run.files["junit"])
	s := string(run.files["junit"])
	clitest.MustContain(t, s, `<testcase name="segments" classname="`, `<failure type="new" message="1 new finding: hanging-transaction"`,
		`<failure type="missing" message="1 missing expectation: torn-tail"`, `<error type="unreadable" message="open `,
		`<skipped message="no .log segment: no producer state">`, `name="groups"`, `name="txns"`, `name="metadata"`,
		`odd,dir:100% &amp; &lt;x&gt;`)
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint (Debian's libxml2-utils) is not installed: the JUnit report is not validated against its schemas")
	}
	bad := filepath.Join(t.TempDir(), "bad.xml")
	testkit.WriteFile(t, bad, []byte(strings.Replace(s, `<testcase name="segments"`, `<testcase`, 1)))
	for _, xsd := range junitSchemas {
		if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, report).CombinedOutput(); err != nil {
			t.Errorf("%s: the JUnit report does not validate: %v\n%s", filepath.Base(xsd), err, out)
		}
		if err := exec.Command(xmllint, "--noout", "--schema", xsd, bad).Run(); err == nil {
			t.Errorf("%s accepts a testcase without a name", filepath.Base(xsd))
		}
	}
}

// githubCommand is the grammar of a workflow command (actions/toolkit
// command.ts): ::NAME[ KEY=VALUE(,KEY=VALUE)*]::DATA, where a value holds
// no raw ',', ':', CR or LF and the data no raw CR or LF.
var githubCommand = regexp.MustCompile(`^::(error|warning|notice|debug)(?: ([A-Za-z]+=[^,:\r\n]*(?:,[A-Za-z]+=[^,:\r\n]*)*))?::([^\r\n]*)$`)

// githubUnescape undoes command.ts's escaping.
func githubUnescape(s string) string {
	return strings.NewReplacer("%25", "%", "%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",").Replace(s)
}

func checkGitHub(t *testing.T, run *checkReportRun) {
	sc := bufio.NewScanner(bytes.NewReader(run.files["github"]))
	kinds := map[string]int{}
	n := 0
	for sc.Scan() {
		m := githubCommand.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Errorf("not a workflow command: %q", sc.Text())
			continue
		}
		n++
		props := map[string]string{}
		for _, kv := range strings.Split(m[2], ",") {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = githubUnescape(v)
		}
		if _, err := os.Stat(props["file"]); err != nil && !strings.Contains(props["title"], "unreadable") {
			t.Errorf("file=%q: %v", props["file"], err)
		}
		if !strings.HasPrefix(props["file"], filepath.ToSlash(run.root)) && !strings.HasSuffix(props["file"], expect.ConfigName) {
			t.Errorf("file=%q is not under %s", props["file"], run.root)
		}
		title := strings.Fields(props["title"]) // kseg check: STATUS [KIND] (CHECK…)
		if title[2] == "unreadable" {
			kinds["unreadable"]++
		} else {
			kinds[title[3]]++
		}
		if githubUnescape(m[3]) == "" {
			t.Errorf("no message: %q", sc.Text())
		}
	}
	// The failures: the unreadable partition, the hanging transaction and
	// corrupt-batch (errors nobody expects), the missing torn-tail, and
	// the views' findings (orphan-partition is ignored).
	for _, k := range []string{"unreadable", "hanging-transaction", "corrupt-batch", "torn-tail", "offset-below-log-start", "missing-replica"} {
		if kinds[k] == 0 {
			t.Errorf("no %s annotation: %v", k, kinds)
		}
	}
	if kinds["orphan-partition"] > 0 || kinds["zero-tail"] > 0 {
		t.Errorf("annotations for what does not fail: %v", kinds)
	}
	if n < 7 {
		t.Errorf("%d workflow commands", n)
	}
}

func checkJSONReport(t *testing.T, run *checkReportRun) {
	lines := strings.Split(strings.TrimSpace(string(run.files["json"])), "\n")
	types := map[string]int{}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		types[m["type"].(string)]++
		if i == len(lines)-1 && (m["type"] != "summary" || m["exitCode"] != 1.0) {
			t.Errorf("last line: %s", l)
		}
	}
	for _, want := range []string{"finding", "missing", "unreadable", "skipped", "summary"} {
		if types[want] == 0 {
			t.Errorf("no %s line: %v", want, types)
		}
	}
}

// TestCheckRulesHelpEveryKind: every kind of the registry has its SARIF
// rule's help from docs/troubleshooting.md — what it means and its rows —
// and a link to its section there.
func TestCheckRulesHelpEveryKind(t *testing.T) {
	t.Parallel()
	doc := clitest.RepoFile(t, "docs/troubleshooting.md")
	anchors := map[string]bool{}
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "## ") {
			anchors[rules.MarkdownAnchor(strings.TrimPrefix(l, "## "))] = true
		}
	}
	// The page's own table of contents uses the same anchors.
	for _, a := range []string{"kseg-dump", "kseg-replay-psm", "kseg-verify-chain", "kseg-groups-kseg-txns-and-kseg-metadata"} {
		if !anchors[a] || !strings.Contains(doc, "(#"+a+")") {
			t.Errorf("anchor %s: not a heading or not linked", a)
		}
	}
	help := rules.Rules()
	for _, k := range finding.Kinds() {
		r := help[k]
		if r == nil || r.Full == "" || r.Short == "" || !strings.Contains(r.Markdown, "*what") || !anchors[r.Anchor] {
			t.Errorf("%s: no help from docs/troubleshooting.md: %+v", k, r)
		}
	}
	// A row's cells, as written.
	if r := help[finding.CRCMismatch]; !strings.Contains(r.Markdown, "`LogSegment.recover` → `batch.ensureValid`") ||
		!strings.Contains(r.Text, "LogSegment.recover → batch.ensureValid") || r.Anchor != "kseg-dump" {
		t.Errorf("crc-mismatch: %+v", r)
	}
	if cells := rules.TableCells(`| a \| b | c |`); len(cells) != 2 || cells[0] != "a | b" {
		t.Errorf("tableCells: %q", cells)
	}
}
