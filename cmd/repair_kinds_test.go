package cmd

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// One finding kind has one severity and one meaning in every command
// (issue 11): for each damaged index of the corruption corpus, repair
// --dry-run reports the file with the kind and severity dump
// --verify-index --index-sanity-check gives the same defect (the
// generator's expectation), and both exit 3. Repair's action (rebuild) is
// in its plan, not in the kind.
func TestRepairNamesIndexDefectsAsDump(t *testing.T) {
	t.Parallel()
	c := clitest.Corpus(t)
	n := 0
	for i := range c.Cases {
		cc := &c.Cases[i]
		e := cc.Expect
		if !strings.HasSuffix(e.File, segment.IndexSuffix) && !strings.HasSuffix(e.File, segment.TimeIndexSuffix) && !strings.HasSuffix(e.File, segment.TxnIndexSuffix) {
			continue
		}
		n++
		dir, err := c.Write(cc, filepath.Join(t.TempDir(), strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		code, out, _ := runCaught(t, cc.Name, []string{"dump", "-o", "json", "--verify-index", "--index-sanity-check", dir})
		d := parseCorpusDump(t, out)
		if code != ui.ExitFindings || !d.has(e.Kind, e.File, e.Position, e.Severity) {
			t.Errorf("%s: dump exit %d, want a %s %s finding in %s:\n%s", cc.Name, code, e.Severity, e.Kind, e.File, d)
			continue
		}
		r, plan := repairDryRun(t, dir)
		got := ""
		for _, f := range plan.Findings {
			if f.File == e.File {
				got = f.Severity + " " + f.Kind
			}
		}
		if r.Code != ui.ExitFindings || got != e.Severity+" "+e.Kind {
			t.Errorf("%s: repair --dry-run exit %d, reports %s as %q; dump says %q", cc.Name, r.Code, e.File, got, e.Severity+" "+e.Kind)
		}
	}
	if n < 6 {
		t.Fatalf("%d index cases in the corpus", n)
	}
}

// testdata/broken/index-past-eof: an offset-index entry points past the end
// of a log repair does not cut. dump --verify-index calls it an
// index-mismatch error; so does repair --dry-run, which exits 3 (it used
// to call it an INFO index-rebuilt and exit 0).
func TestRepairIndexPastEOFIsAnError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events-0")
	clitest.Fixture(t, "broken/index-past-eof/events-0", dir)
	if d := clitest.Run("dump", "--verify-index", dir); d.Code != ui.ExitFindings || !strings.Contains(d.Stdout, "ERROR index-mismatch") {
		t.Fatalf("dump: exit %d\n%s", d.Code, d.Stdout)
	}
	r, plan := repairDryRun(t, dir)
	idx := segment.SegmentFileName(0, segment.IndexSuffix)
	ok := false
	for _, f := range plan.Findings {
		ok = ok || (f.File == idx && f.Kind == "index-mismatch" && f.Severity == "error")
	}
	if r.Code != ui.ExitFindings || !ok {
		t.Fatalf("repair --dry-run: exit %d %+v", r.Code, plan.Findings)
	}
	text := clitest.Run("repair", "--dry-run", dir)
	if text.Code != ui.ExitFindings || !strings.Contains(text.Stdout, "ERROR index-mismatch "+idx) {
		t.Errorf("repair --dry-run (text): exit %d\n%s", text.Code, text.Stdout)
	}
}

// A preallocated, untrimmed index (zero-filled slots after the entries, an
// unclean shutdown): the time index then fails the broker's sanity check
// (its last timestamp is 0), which dump --index-sanity-check and repair
// both call an index-sanity error; the offset index passes it, dump says
// nothing, and repair trims it as an index-zero-tail warning (exit 0).
func TestRepairPreallocatedIndexesAsDump(t *testing.T) {
	for _, c := range []struct {
		suffix, kind, sev string
		slot              int64
		exit              int
	}{
		{segment.TimeIndexSuffix, "index-sanity", "error", 12, ui.ExitFindings},
		{segment.IndexSuffix, "index-zero-tail", "warning", 8, ui.ExitOK},
	} {
		dir := filepath.Join(t.TempDir(), "orders-0")
		clitest.Fixture(t, "partitions/orders-0", dir)
		name := segment.SegmentFileName(0, c.suffix)
		path := filepath.Join(dir, name)
		b := testkit.ReadFile(t, path)
		testkit.WriteFile(t, path, append(b, make([]byte, 3*c.slot)...))
		code, out, _ := runCaught(t, name, []string{"dump", "-o", "json", "--verify-index", "--index-sanity-check", dir})
		d := parseCorpusDump(t, out)
		dumpSays := ""
		for _, f := range d.findings {
			if filepath.Base(f.File) == name {
				dumpSays = f.Severity + " " + f.Kind
			}
		}
		r, plan := repairDryRun(t, dir)
		got := ""
		for _, f := range plan.Findings {
			if f.File == name {
				got = f.Severity + " " + f.Kind
			}
		}
		if got != c.sev+" "+c.kind || r.Code != c.exit {
			t.Errorf("%s: repair --dry-run exit %d, %q; want exit %d, %q", name, r.Code, got, c.exit, c.sev+" "+c.kind)
		}
		if c.sev == "error" && (dumpSays != got || code != ui.ExitFindings) {
			t.Errorf("%s: dump exit %d says %q, repair %q", name, code, dumpSays, got)
		}
		if c.sev != "error" && (dumpSays != "" || code != ui.ExitOK) {
			t.Errorf("%s: dump exit %d says %q", name, code, dumpSays)
		}
	}
}

// zero-tail (a preallocated .log, not trimmed) is a warning in dump,
// replay-psm and repair alike; replay-psm used to call it info.
func TestZeroTailIsAWarningEverywhere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events-0")
	clitest.Fixture(t, "broken/zero-tail/events-0", dir)
	if d := clitest.Run("dump", dir); d.Code != ui.ExitOK || !strings.Contains(d.Stdout, "WARNING zero-tail") {
		t.Errorf("dump: exit %d\n%s", d.Code, d.Stdout)
	}
	if r, v := replayJSON(t, "--from-snapshot", "none", dir); r.Code != ui.ExitOK || anomalyKinds(v)["zero-tail"] != "warning" {
		t.Errorf("replay-psm: exit %d %v", r.Code, anomalyKinds(v))
	}
	r, plan := repairDryRun(t, dir)
	sev := ""
	for _, f := range plan.Findings {
		if f.Kind == "zero-tail" {
			sev = f.Severity
		}
	}
	if r.Code != ui.ExitOK || sev != "warning" {
		t.Errorf("repair --dry-run: exit %d %+v", r.Code, plan.Findings)
	}
}

// TestFollowerIndexesAreHealthy: a follower appends a fetched chunk of
// several batches in one LogSegment.append, which writes one offset-index
// entry for it: the chunk's largest offset at the position of its first
// batch. A lookup still lands right, and the broker keeps the file (issue
// 27, item 6). dump --verify-index called every such entry an
// index-mismatch error (exit 3) and repair --all planned to replace the
// healthy files; kafka-dump-log --verify-index-only still prints what
// Kafka's tool prints for them.
func TestFollowerIndexesAreHealthy(t *testing.T) {
	dirs, err := segtest.BrokerShaped(t.TempDir(), "follower-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if r := clitest.Run("dump", "-q", "--verify-index", "--index-sanity-check", dir); r.Code != ui.ExitOK || findingLines(r.Stdout) != "" {
			t.Errorf("%s: dump --verify-index: exit %d\n%s%s", dir, r.Code, findingLines(r.Stdout), r.Stderr)
		}
		r, plan := repairDryRunAll(t, dir)
		if r.Code != ui.ExitOK || len(plan.Files) > 0 {
			t.Errorf("%s: repair --all --dry-run: exit %d, plans %+v", dir, r.Code, plan.Files)
		}
		index := filepath.Join(dir, segment.SegmentFileName(0, segment.IndexSuffix))
		k := clitest.Run("kafka-dump-log", "--verify-index-only", "--files", index)
		if !strings.Contains(k.Stdout+k.Stderr, "Mismatches in :") || !strings.Contains(k.Stdout+k.Stderr, "Index offset: 9, log offset: 6") {
			t.Errorf("kafka-dump-log --verify-index-only no longer prints what Kafka's tool prints for a follower's entries:\n%s%s", k.Stdout, k.Stderr)
		}
	}
}
