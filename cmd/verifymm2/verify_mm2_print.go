package verifymm2

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kseg/kseg/barrier/mm2"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/finding"
)

// mm2Line is one finding of a verify-mm2 report as the printers list it:
// a run, a finding met reading the logs, an offset sync or a checkpoint
// that is not right.
type mm2Line struct {
	kind    finding.Kind
	where   string // offsets, in words
	message string
}

// mm2Lines gathers everything a report found, in the order printers list
// it: runs by kind, then findings, syncs and checkpoints.
func mm2Lines(r *mm2.Report) []mm2Line {
	var out []mm2Line
	for _, run := range r.Runs {
		out = append(out, mm2Line{run.Kind, runWhere(run), ui.Esc(run.Message)})
	}
	for _, f := range r.Findings {
		where := ui.Esc(f.Subject)
		if f.File != "" {
			where = fmt.Sprintf("%s position %d", ui.Esc(f.File), f.Position)
		}
		out = append(out, mm2Line{f.Kind, where, ui.Esc(f.Message)})
	}
	for _, s := range r.OffsetSyncs {
		if s.Kind != 0 {
			out = append(out, mm2Line{s.Kind, fmt.Sprintf("sync %d -> %d", s.UpstreamOffset, s.DownstreamOffset), ui.Esc(s.Message)})
		}
	}
	for _, c := range r.Checkpoints {
		if c.Kind != 0 {
			out = append(out, mm2Line{c.Kind, fmt.Sprintf("group %s: %d -> %d", ui.Esc(c.Group), c.UpstreamOffset, c.DownstreamOffset), ui.Esc(c.Message)})
		}
	}
	// Errors first, then by kind (the registry's order), in report order
	// within a kind.
	slices.SortStableFunc(out, func(a, b mm2Line) int {
		return cmp.Or(cmp.Compare(b.kind.Severity(), a.kind.Severity()), cmp.Compare(a.kind, b.kind))
	})
	return out
}

// runWhere says where a run is: "source 120..134 / target 151..180".
func runWhere(r mm2.Run) string {
	var parts []string
	if r.Source.First >= 0 {
		parts = append(parts, "source "+offsetSpan(r.Source))
	}
	if r.Target.First >= 0 {
		parts = append(parts, "target "+offsetSpan(r.Target))
	}
	return strings.Join(parts, " / ")
}

func offsetSpan(r mm2.Range) string {
	if r.First == r.Last {
		return ui.I64(r.First)
	}
	return fmt.Sprintf("%d..%d", r.First, r.Last)
}

func sideText(s mm2.Side) string {
	t := fmt.Sprintf("%s: log [%d, %d), %s", ui.Esc(s.Dir), s.LogStart, s.LogEnd, ui.Plural(int(s.Records), "record"))
	var extra []string
	if s.ControlRecords > 0 {
		extra = append(extra, ui.Plural(int(s.ControlRecords), "control record"))
	}
	if s.Aborted > 0 {
		extra = append(extra, fmt.Sprintf("%d of aborted transactions", s.Aborted))
	}
	if s.LastStable >= 0 {
		extra = append(extra, fmt.Sprintf("%d at and after the last stable offset %d", s.Uncommitted, s.LastStable))
	}
	if s.Holes > 0 {
		extra = append(extra, fmt.Sprintf("%d offsets without a record (compacted)", s.Holes))
	}
	if s.CleanerCheckpoint >= 0 {
		extra = append(extra, fmt.Sprintf("cleaned below %d", s.CleanerCheckpoint))
	}
	if len(extra) > 0 {
		t += " (not compared: " + strings.Join(extra, ", ") + ")"
	}
	return t
}

func isolationText(r *mm2.Report) string {
	if r.Isolation == mm2.ReadCommitted {
		return "read_committed: aborted transactions and records at and after the last stable offset are not copied"
	}
	return "read_uncommitted (MM2's default): records of aborted and open transactions are copied too"
}

func mirroredText(r *mm2.Report) string {
	if r.Mirrored.First < 0 {
		return "nothing: no target record copies a source record"
	}
	return fmt.Sprintf("source offsets %d..%d: %d of %d source records copied, %s in the target",
		r.Mirrored.First, r.Mirrored.Last, r.Matched, r.Source.Records, copiesText(r.Copies))
}

func copiesText(n int64) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}

// countsText is "missing-records 15 (1 run), duplicate-records 30 (1 run)".
func countsText(r *mm2.Report) string {
	var parts []string
	for _, k := range finding.Kinds() {
		if n := r.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", k, n, ui.Plural(int(r.RunCounts[k]), "run")))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func syncsText(r *mm2.Report) string {
	var ok, bad, unverified int
	for _, s := range r.OffsetSyncs {
		switch s.Kind {
		case 0:
			ok++
		case finding.SyncNotVerified:
			unverified++
		default:
			bad++
		}
	}
	t := fmt.Sprintf("%s for %s-%d: %d pair records of the same content", ui.Plural(len(r.OffsetSyncs), "sync"), ui.Esc(r.Source.Topic), r.Source.Partition, ok)
	if bad > 0 {
		t += fmt.Sprintf(", %d do not", bad)
	}
	if unverified > 0 {
		t += fmt.Sprintf(", %d not verified", unverified)
	}
	if r.SyncsOther > 0 {
		t += fmt.Sprintf(" (%d for other partitions)", r.SyncsOther)
	}
	return t
}

func checkpointsText(r *mm2.Report) string {
	var ok, ahead int
	var behind int64
	for _, c := range r.Checkpoints {
		if c.Kind == 0 {
			ok++
			behind = max(behind, c.Behind)
		} else {
			ahead++
		}
	}
	t := fmt.Sprintf("%s for %s-%d: %d at or below the exact translation", ui.Plural(len(r.Checkpoints), "checkpoint"), ui.Esc(r.Target.Topic), r.Target.Partition, ok)
	if ok > 0 {
		t += fmt.Sprintf(" (up to %s behind)", ui.Plural(int(behind), "record"))
	}
	if ahead > 0 {
		t += fmt.Sprintf(", %d past it", ahead)
	}
	if r.CheckpointsOther > 0 {
		t += fmt.Sprintf(" (%d for other partitions)", r.CheckpointsOther)
	}
	return t
}

// firstLastByKind calls item for every line shown: a kind with at most
// kindWhole lines whole, a more frequent one by its first kindHead lines
// and its last, with more saying how many are left out between them (the
// first and the last runs of a kind are where a fault starts and where it
// stands now); under --verbose every line. Lines of a kind are adjacent.
func firstLastByKind(ls ui.Lister, lines []mm2Line, item func(i int), more func(line string)) {
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j].kind == lines[i].kind {
			j++
		}
		n := j - i
		for k := i; k < j; k++ {
			switch {
			case ls.All || n <= ui.KindWhole || k-i < ui.KindHead || k == j-1:
				item(k)
			case k-i == ui.KindHead:
				more(fmt.Sprintf("… %d more %s (--verbose lists them) …", n-ui.KindHead-1, lines[i].kind))
			}
		}
		i = j
	}
}

// ---- text ----

type mm2TextPrinter struct {
	w  io.Writer
	st *ui.Styles
	ls ui.Lister
}

func (t *mm2TextPrinter) Print(r *mm2.Report) error {
	w := bufio.NewWriter(t.w)
	st, ls := t.st, t.ls
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "  %s %s\n", ui.PadDisplay(st.Paint(st.Title, k), 19), fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(w, "%s %s\n", st.Paint(st.Title, "Source:"), sideText(r.Source))
	fmt.Fprintf(w, "%s %s\n", st.Paint(st.Title, "Target:"), sideText(r.Target))
	kv("isolation level", "%s", isolationText(r))
	kv("mirrored", "%s", mirroredText(r))
	kv("records", "%s", countsText(r))
	if r.OffsetSyncs != nil {
		kv("offset syncs", "%s", syncsText(r))
	}
	if r.Checkpoints != nil {
		kv("checkpoints", "%s", checkpointsText(r))
	}
	lines := mm2Lines(r)
	if len(lines) == 0 {
		kv("findings", "none")
	} else {
		kv("findings", "%d", len(lines))
		firstLastByKind(ls, lines, func(i int) {
			l := lines[i]
			head := st.Severity(l.kind.Severity(), l.kind.Severity().String()) + " " + l.kind.String()
			if l.where != "" {
				head += " " + l.where
			}
			fmt.Fprintf(w, "    %s\n      %s\n", head, l.message)
		}, func(more string) { fmt.Fprintf(w, "    %s\n", more) })
	}
	summary := mm2Summary(r)
	if r.OK() {
		summary = st.Paint(st.OK, summary)
	} else {
		summary = st.Paint(st.Err, summary)
	}
	fmt.Fprintf(w, "\n%s %s\n", st.Paint(st.Title, "Summary:"), summary)
	return w.Flush()
}

// ---- table ----

type mm2TablePrinter struct{ s *ui.Streams }

func (t *mm2TablePrinter) Print(r *mm2.Report) error {
	out := t.s.Out
	rows := [][]string{}
	for _, s := range []struct {
		role string
		side mm2.Side
	}{{"source", r.Source}, {"target", r.Target}} {
		rows = append(rows, []string{s.role, ui.Esc(s.side.Dir), ui.I64(s.side.LogStart), ui.I64(s.side.LogEnd), ui.I64(s.side.Records),
			ui.I64(s.side.ControlRecords), ui.I64(s.side.Aborted), ui.I64(s.side.Holes)})
	}
	if err := ui.RenderTable(out, t.s.Width, []string{"side", "dir", "log start", "log end", "records", "control", "aborted", "holes"}, rows); err != nil {
		return err
	}
	lines := mm2Lines(r)
	if len(lines) > 0 {
		frows := make([][]string, len(lines))
		for i, l := range lines {
			frows[i] = []string{l.kind.Severity().String(), l.kind.String(), l.where, l.message}
		}
		var shown [][]string
		var notes []string
		firstLastByKind(t.s.Lister(), lines, func(i int) { shown = append(shown, frows[i]) }, func(more string) { notes = append(notes, more) })
		if err := ui.RenderTable(out, t.s.Width, []string{"severity", "kind", "where", "message"}, shown); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintln(out, n)
		}
	}
	_, err := fmt.Fprintf(out, "Summary: %s\n", mm2Summary(r))
	return err
}

// ---- json ----

// JSON lines with explicit wire structs (docs/json.md): a "side" line
// for the source and one for the target, a line per run, finding, offset
// sync and checkpoint, then a "summary" line.

type mm2JSONPrinter struct{ w io.Writer }

type mm2RangeJSON struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

func mm2Range(r mm2.Range) *mm2RangeJSON {
	if r.First < 0 {
		return nil
	}
	return &mm2RangeJSON{r.First, r.Last}
}

type mm2SideJSON struct {
	Type              string `json:"type"` // "side"
	Role              string `json:"role"` // "source" | "target"
	Dir               string `json:"dir"`
	Topic             string `json:"topic"`
	Partition         int32  `json:"partition"`
	LogStartOffset    int64  `json:"logStartOffset"`
	LogEndOffset      int64  `json:"logEndOffset"`
	Records           int64  `json:"records"`
	ControlRecords    int64  `json:"controlRecords"`
	AbortedRecords    int64  `json:"abortedRecords"`
	LastStableOffset  int64  `json:"lastStableOffset"`
	UncommittedRecs   int64  `json:"uncommittedRecords"`
	Holes             int64  `json:"holes"`
	CleanerCheckpoint int64  `json:"cleanerCheckpoint"`
	LogAppendTime     int64  `json:"logAppendTimeRecords"`
	NoTimestamp       int64  `json:"noTimestampRecords"`
}

type mm2RunJSON struct {
	Type       string        `json:"type"` // "run"
	Kind       string        `json:"kind"`
	Severity   string        `json:"severity"`
	Count      int64         `json:"count"`
	Source     *mm2RangeJSON `json:"source"`
	Target     *mm2RangeJSON `json:"target"`
	SourceNear int64         `json:"sourceNear"`
	TargetNear int64         `json:"targetNear"`
	Message    string        `json:"message"`
}

type mm2FindingJSON struct {
	Type         string `json:"type"` // "finding"
	Kind         string `json:"kind"`
	Severity     string `json:"severity"`
	Subject      string `json:"subject"`
	PartitionDir string `json:"partitionDir"`
	File         string `json:"file"`
	Position     int64  `json:"position"`
	Offset       int64  `json:"offset"`
	Message      string `json:"message"`
}

type mm2SyncJSON struct {
	Type             string `json:"type"` // "offsetSync"
	UpstreamOffset   int64  `json:"upstreamOffset"`
	DownstreamOffset int64  `json:"downstreamOffset"`
	Verdict          string `json:"verdict"` // "ok" or the finding's kind
	Severity         string `json:"severity"`
	Message          string `json:"message"`
}

type mm2CheckpointJSON struct {
	Type             string `json:"type"` // "checkpoint"
	Group            string `json:"group"`
	UpstreamOffset   int64  `json:"upstreamOffset"`
	DownstreamOffset int64  `json:"downstreamOffset"`
	Exact            int64  `json:"exactOffset"`
	Behind           int64  `json:"recordsBehind"`
	Ahead            int64  `json:"recordsAhead"`
	Verdict          string `json:"verdict"`
	Severity         string `json:"severity"`
	Message          string `json:"message"`
}

type mm2SummaryJSON struct {
	Type           string           `json:"type"` // "summary"
	Consistent     bool             `json:"consistent"`
	Errors         int64            `json:"errors"`
	IsolationLevel string           `json:"isolationLevel"`
	Window         int              `json:"window"`
	Mirrored       *mm2RangeJSON    `json:"mirrored"`
	Matched        int64            `json:"matched"`
	Copies         int64            `json:"copies"`
	Records        map[string]int64 `json:"records"`
	Runs           map[string]int64 `json:"runs"`
	OffsetSyncs    *int             `json:"offsetSyncs"`
	Checkpoints    *int             `json:"checkpoints"`
}

func verdict(k finding.Kind) (string, string) {
	if k == 0 {
		return "ok", ""
	}
	return k.String(), k.Severity().String()
}

func (j *mm2JSONPrinter) Print(r *mm2.Report) error {
	var lines []any
	for _, s := range []struct {
		role string
		side mm2.Side
	}{{"source", r.Source}, {"target", r.Target}} {
		d := s.side
		lines = append(lines, mm2SideJSON{Type: "side", Role: s.role, Dir: d.Dir, Topic: d.Topic, Partition: d.Partition,
			LogStartOffset: d.LogStart, LogEndOffset: d.LogEnd, Records: d.Records, ControlRecords: d.ControlRecords,
			AbortedRecords: d.Aborted, LastStableOffset: d.LastStable, UncommittedRecs: d.Uncommitted, Holes: d.Holes,
			CleanerCheckpoint: d.CleanerCheckpoint, LogAppendTime: d.LogAppendTime, NoTimestamp: d.NoTimestamp})
	}
	for _, run := range r.Runs {
		lines = append(lines, mm2RunJSON{Type: "run", Kind: run.Kind.String(), Severity: run.Kind.Severity().String(), Count: run.Count,
			Source: mm2Range(run.Source), Target: mm2Range(run.Target), SourceNear: run.SourceNear, TargetNear: run.TargetNear, Message: run.Message})
	}
	for _, f := range r.Findings {
		lines = append(lines, mm2FindingJSON{Type: "finding", Kind: f.Kind.String(), Severity: f.Severity().String(), Subject: f.Subject,
			PartitionDir: f.PartitionDir, File: f.File, Position: f.Position, Offset: f.Offset, Message: f.Message})
	}
	for _, s := range r.OffsetSyncs {
		v, sev := verdict(s.Kind)
		lines = append(lines, mm2SyncJSON{Type: "offsetSync", UpstreamOffset: s.UpstreamOffset, DownstreamOffset: s.DownstreamOffset, Verdict: v, Severity: sev, Message: s.Message})
	}
	for _, c := range r.Checkpoints {
		v, sev := verdict(c.Kind)
		lines = append(lines, mm2CheckpointJSON{Type: "checkpoint", Group: c.Group, UpstreamOffset: c.UpstreamOffset, DownstreamOffset: c.DownstreamOffset,
			Exact: c.Exact, Behind: c.Behind, Ahead: c.Ahead, Verdict: v, Severity: sev, Message: c.Message})
	}
	sum := mm2SummaryJSON{Type: "summary", Consistent: r.OK(), Errors: r.Errors(), IsolationLevel: r.Isolation.String(), Window: r.Window,
		Mirrored: mm2Range(r.Mirrored), Matched: r.Matched, Copies: r.Copies, Records: map[string]int64{}, Runs: map[string]int64{}}
	for k, n := range r.Counts {
		sum.Records[k.String()] = n
	}
	for k, n := range r.RunCounts {
		sum.Runs[k.String()] = n
	}
	if r.OffsetSyncs != nil {
		n := len(r.OffsetSyncs)
		sum.OffsetSyncs = &n
	}
	if r.Checkpoints != nil {
		n := len(r.Checkpoints)
		sum.Checkpoints = &n
	}
	for _, l := range append(lines, sum) {
		if err := ui.JSONLine(j.w, l); err != nil {
			return err
		}
	}
	return nil
}
