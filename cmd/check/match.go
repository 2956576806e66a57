package check

import (
	"fmt"
	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/check/tree"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/finding"
)

// The three outcomes of kseg check: each finding is expected (the
// expectations file names it), new (it does not, and its severity reaches
// fail-on), or neither (ignored by kind, or a note below fail-on); each
// expectation that no finding meets is missing — the fixture meant to be
// broken no longer is, or kseg stopped seeing the fault.

// Item statuses. new and missing fail the check.
const (
	statusExpected = "expected"
	statusNew      = "new"
	statusMissing  = "missing"
	statusIgnored  = "ignored"
	statusNote     = "note" // not expected, below fail-on
)

// checkItem is one line of a case's outcome: a finding with its status,
// or a missing expectation.
type checkItem struct {
	status  string
	finding finding.Finding // unset for missing
	inst    *checkInstance  // the expectation met (expected) or not met (missing)
	// failOn is the threshold the finding was judged against.
	failOn finding.Severity
}

// failed reports a failing item.
func (it *checkItem) failed() bool { return it.status == statusNew || it.status == statusMissing }

// checkInstance is an expectation at one directory its entry names.
type checkInstance struct {
	exp   *expect.Expect
	entry *expect.Entry
	dir   string // absolute
	file  string // absolute; "" when the expectation names none
	found int64  // findings it took
}

// want is how many findings it takes: count, or any number from one.
func (in *checkInstance) full() bool { return in.exp.Count >= 0 && in.found >= in.exp.Count }

// missing reports an expectation not met.
func (in *checkInstance) missing() bool {
	return in.found == 0 || (in.exp.Count >= 0 && in.found < in.exp.Count)
}

// describe is the expectation in words: kind, file, position, offset,
// paths as cfg shows them.
func (in *checkInstance) describe(cfg *expect.Config) string {
	s := in.exp.Kind.String()
	if in.file != "" {
		s += " in " + cfg.Display(in.file)
	} else {
		s += " under " + cfg.Display(in.dir)
	}
	if in.exp.Position >= 0 {
		s += fmt.Sprintf(" at position %d", in.exp.Position)
	}
	if in.exp.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", in.exp.Offset)
	}
	if in.exp.Subject != "" {
		s += " about " + in.exp.Subject
	}
	if in.exp.Count >= 0 {
		s += fmt.Sprintf(" (%d expected, %d found)", in.exp.Count, in.found)
	}
	return s
}

// checkResult is a run judged against the expectations.
type checkResult struct {
	cfg   *expect.Config
	cases []checkCase
	items [][]checkItem // per case
	// Counts of items by status, and of cases that could not be read.
	counts     map[string]int
	unreadable int
}

// exitCode is check's exit status: 1 when a unit could not be read (the
// others still ran), 3 for a new or missing finding, else 0.
func (r *checkResult) exitCode() int {
	switch {
	case r.unreadable > 0:
		return ui.ExitError
	case r.counts[statusNew]+r.counts[statusMissing] > 0:
		return ui.ExitFindings
	}
	return ui.ExitOK
}

// caseFailed reports a failing case: unreadable, or an item that fails.
func (r *checkResult) caseFailed(i int) bool {
	if r.cases[i].err != nil {
		return true
	}
	for j := range r.items[i] {
		if r.items[i][j].failed() {
			return true
		}
	}
	return false
}

// checkScope is what the expectations say about the directories of one
// run, indexed by directory.
type checkScope struct {
	cfg *expect.Config
	// byDir: the entries naming each directory; instances: the
	// expectations to meet there (only those inside a PATH).
	byDir     map[string][]*expect.Entry
	instances map[string][]*checkInstance
	order     []*checkInstance
}

func newCheckScope(cfg *expect.Config, tree *tree.Tree) *checkScope {
	sc := &checkScope{cfg: cfg, byDir: map[string][]*expect.Entry{}, instances: map[string][]*checkInstance{}}
	for _, e := range cfg.Entries {
		for _, m := range e.Matches {
			sc.byDir[m] = append(sc.byDir[m], e)
			if !tree.Inside(m) {
				continue // not checked this run
			}
			for _, x := range e.Expect {
				in := &checkInstance{exp: x, entry: e, dir: m}
				if x.File != "" {
					in.file = filepath.Join(m, filepath.FromSlash(x.File))
				}
				sc.instances[m] = append(sc.instances[m], in)
				sc.order = append(sc.order, in)
			}
		}
	}
	return sc
}

// ancestors calls fn with p and every directory above it, nearest first,
// until fn returns false.
func ancestors(p string, fn func(dir string) bool) {
	for {
		if !fn(p) {
			return
		}
		parent := filepath.Dir(p)
		if parent == p {
			return
		}
		p = parent
	}
}

// settings are the ignore list, fail-on and deep that apply at p: the
// top level's and every entry naming p or a directory above it; fail-on
// and deep from the nearest one that sets them.
func (sc *checkScope) settings(p string) (ignore []finding.Kind, failOn finding.Severity, deep bool) {
	ignore = sc.cfg.Ignore
	failOn, deep = 0, sc.cfg.Deep
	deepSet := false
	ancestors(p, func(dir string) bool {
		es := sc.byDir[dir]
		for i := len(es) - 1; i >= 0; i-- {
			e := es[i]
			ignore = append(ignore[:len(ignore):len(ignore)], e.Ignore...)
			if failOn == 0 && e.FailOn != 0 {
				failOn = e.FailOn
			}
			if !deepSet && e.Deep != nil {
				deep, deepSet = *e.Deep, true
			}
		}
		return true
	})
	if failOn == 0 {
		failOn = sc.cfg.FailOn
	}
	return ignore, failOn, deep
}

// findingPath is where a finding is: its file, else its partition, else
// the unit of its case; absolute.
func findingPath(f *finding.Finding, c *checkCase) string {
	p := c.abs
	switch {
	case f.File != "":
		p = f.File
	case f.PartitionDir != "":
		p = f.PartitionDir
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// meets reports whether finding f at path p meets the expectation.
func (in *checkInstance) meets(f *finding.Finding, p, file string) bool {
	x := in.exp
	switch {
	case f.Kind != x.Kind,
		in.file != "" && file != in.file,
		x.Position >= 0 && f.Position != x.Position,
		x.Offset >= 0 && f.Offset != x.Offset,
		x.Subject != "" && f.Subject != x.Subject:
		return false
	}
	return tree.PathWithin(p, in.dir)
}

// judge sorts every finding of every case into its outcome, then adds
// the expectations nothing met.
func (sc *checkScope) judge(cases []checkCase) *checkResult {
	r := &checkResult{cfg: sc.cfg, cases: cases, items: make([][]checkItem, len(cases)), counts: map[string]int{}}
	for i := range cases {
		c := &cases[i]
		if c.err != nil {
			r.unreadable++
		}
		for _, f := range c.findings {
			p := findingPath(&f, c)
			file := ""
			if f.File != "" {
				file = p
			}
			it := checkItem{finding: f}
			it.inst = sc.take(&f, p, file)
			if it.inst != nil {
				it.status = statusExpected
			} else {
				ignore, failOn, _ := sc.settings(p)
				it.failOn = failOn
				switch {
				case slices.Contains(ignore, f.Kind):
					it.status = statusIgnored
				case f.Severity() >= failOn:
					it.status = statusNew
				default:
					it.status = statusNote
				}
			}
			r.items[i] = append(r.items[i], it)
			r.counts[it.status]++
		}
	}
	sc.addMissing(r)
	return r
}

// take finds the expectation f meets, nearest directory first, and counts
// f against it; nil when none with room is met.
func (sc *checkScope) take(f *finding.Finding, p, file string) *checkInstance {
	var met *checkInstance
	ancestors(p, func(dir string) bool {
		for _, in := range sc.instances[dir] {
			if !in.full() && in.meets(f, p, file) {
				met = in
				return false
			}
		}
		return true
	})
	if met != nil {
		met.found++
	}
	return met
}

// addMissing adds each expectation nothing met to the case that would
// have reported it: the check that reports its kind, on the unit that
// holds what it names (a case of its own when no unit does).
func (sc *checkScope) addMissing(r *checkResult) {
	units := map[string]int{} // absolute unit → its first case
	for i := range r.cases {
		if _, ok := units[r.cases[i].abs]; !ok {
			units[r.cases[i].abs] = i
		}
	}
	for _, in := range sc.order {
		if !in.missing() {
			continue
		}
		target := in.dir
		if in.file != "" {
			target = in.file
		}
		ci := -1
		ancestors(target, func(dir string) bool {
			if i, ok := units[dir]; ok {
				ci = sc.caseFor(r, i, in.exp.Kind)
				return false
			}
			return true
		})
		if ci < 0 {
			r.cases = append(r.cases, checkCase{suite: sc.cfg.DisplayFile(), unit: sc.cfg.Display(in.dir), abs: in.dir, check: "expectations"})
			r.items = append(r.items, nil)
			ci = len(r.cases) - 1
		}
		r.items[ci] = append(r.items[ci], checkItem{status: statusMissing, inst: in})
		r.counts[statusMissing]++
	}
}

// caseFor is the case of unit (whose first case is first) that reports
// kind k, created when the unit has none.
func (sc *checkScope) caseFor(r *checkResult, first int, k finding.Kind) int {
	u := r.cases[first]
	logDir := u.check == checkCheckpoints || u.check == checkGroups || u.check == checkTxns || u.check == checkMetadata
	want := checkOfKind(k, logDir)
	for i := first; i < len(r.cases) && r.cases[i].abs == u.abs; i++ {
		if r.cases[i].check == want {
			return i
		}
	}
	r.cases = append(r.cases, checkCase{suite: u.suite, unit: u.unit, abs: u.abs, check: want})
	r.items = append(r.items, nil)
	return len(r.cases) - 1
}

// checkOfKind is the check that reports kind k on a partition, or on a
// log directory (logDir).
func checkOfKind(k finding.Kind, logDir bool) string {
	switch {
	case k == finding.PendingEdit:
		return checkPendingEdit
	case k >= finding.Mismatch && k <= finding.LeaderEpochMismatch:
		return checkChain
	case k == finding.OffsetBelowLogStart, k == finding.OffsetAboveLogEnd, k == finding.PartitionNotReplayed:
		return checkGroups
	case k == finding.CoordinatorPartitionsMissing:
		return checkTxns
	case k >= finding.ImageIncomplete && k <= finding.LeaderEpochNotCompared:
		return checkMetadata
	case k >= finding.SequenceGap && k <= finding.UnknownTxnCompletion,
		k == finding.SnapshotMismatch, k == finding.StaleSnapshot, k == finding.SnapshotIgnored,
		k == finding.SnapshotAboveLogEnd, k == finding.CleanShutdownNoSnapshot:
		if !logDir {
			return checkProducerState
		}
	}
	if logDir {
		return checkCheckpoints
	}
	return checkSegments
}
