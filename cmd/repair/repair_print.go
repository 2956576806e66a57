package repair

import (
	"fmt"

	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// repairForm is repair's words for the write commands' one renderer
// (writecmd.Printer).
var repairForm = &writecmd.Form[*recovery.Plan, *recovery.Verification]{
	What: "repair",
	Head: func(p *recovery.Plan) (string, string) {
		return "Partition", fmt.Sprintf("%s (topic %s, partition %d)", p.Dir, p.Topic, p.Partition)
	},
	Found:    repairFound,
	Nothing:  "Nothing to repair:",
	Files:    repairFiles,
	PlanJSON: repairPlanWire,
	Undone: func(r *recovery.Report) string {
		return fmt.Sprintf("the interrupted repair of %s is undone (restored from %s)", r.Dir, r.BackupDir)
	},
	Applied: repairApplied,
	Verified: func(*recovery.Verification) string {
		return "a new plan has nothing to do, the indexes verify against the logs, the producer snapshots match the log"
	},
	Failed: func(t *writecmd.Text, v *recovery.Verification) {
		t.Ls.Lines(len(v.Replan), "steps", func(i int) { t.Pf("  still to do: %s\n", v.Replan[i]) }, func(more string) { t.Pf("  %s\n", more) })
		t.Problems(v.IndexProblems, v.SnapshotProblems)
	},
	ResultJSON: repairResultWire,
}

// repairFound is what the plan examined and found: the log end it
// leaves, each segment and each finding (with --output table, as
// tables), and the warnings, which a plan with nothing to repair shows
// too.
func repairFound(t *writecmd.Text, p *recovery.Plan) {
	t.Pf("  examined: %s\n", p.Scope)
	if p.NewLogEndOffset != p.LogEndOffset {
		t.Pf("  log end %s -> %s: %d offsets, %d batches, %d bytes removed\n", t.Off(p.LogEndOffset), t.Off(p.NewLogEndOffset),
			p.Removed.Offsets, p.Removed.Batches, p.Removed.Bytes)
	} else {
		t.Pf("  log end %s\n", t.Off(p.LogEndOffset))
	}
	if t.Tbl != nil {
		repairTables(t, p)
	} else {
		repairSegments(t, p)
		repairFindings(t, p)
	}
	t.Warn(p.Warnings)
}

// repairSegments is each segment examined: valid or where it is cut, and
// what happens to its indexes.
func repairSegments(t *writecmd.Text, p *recovery.Plan) {
	st := t.St
	t.Ls.Lines(len(p.Segments), "segments", func(i int) {
		s := p.Segments[i]
		state := st.Paint(st.OK, "valid")
		if c := s.Cut; c != nil {
			state = st.Paint(st.Err, fmt.Sprintf("cut at position %d (%s, %d bytes)", c.Position, c.Kind, c.Bytes))
		}
		t.Pf("%s %s: %d bytes, %d batches kept, %s\n", t.Title("Segment"), s.Log, s.Size, s.Batches, state)
		for _, f := range []struct {
			name string
			r    recovery.FileRepair
		}{{".index", s.Index}, {".timeindex", s.TimeIndex}, {".txnindex", s.TxnIndex}} {
			if f.r.Action == recovery.FileKeep || f.r.Action == recovery.FileNone {
				continue
			}
			t.Pf("  %s: %s (%s), %s\n", f.name, f.r.Action, f.r.Reason, ui.Plural(f.r.Entries, "entry"))
		}
	}, func(more string) { t.Pf("%s\n", more) })
}

// repairFindings is what the plan found, by kind.
func repairFindings(t *writecmd.Text, p *recovery.Plan) {
	if len(p.Findings) == 0 {
		return
	}
	st := t.St
	t.Pf("%s\n", t.Title("Findings:"))
	t.Ls.ByKind(len(p.Findings), func(i int) string { return p.Findings[i].Kind.String() }, func(i int) {
		f := p.Findings[i]
		where := f.File
		if f.Position >= 0 {
			where = fmt.Sprintf("%s position %d", f.File, f.Position)
		}
		t.Pf("  %s %s %s: %s\n", st.Severity(f.Severity(), f.Severity().Upper()), f.Kind, where, f.Message)
	}, func(more string) { t.Pf("  %s\n", more) })
}

// repairTables is --output table's segments, findings and files.
func repairTables(t *writecmd.Text, p *recovery.Plan) {
	render := func(header []string, rows [][]string, what string) { t.Ls.Table(t.W, t.S.Width, header, rows, what) }
	file := func(r recovery.FileRepair) string {
		if r.Action == recovery.FileNone {
			return ""
		}
		return fmt.Sprintf("%s (%d)", r.Action, r.Entries)
	}
	var rows [][]string
	for _, s := range p.Segments {
		cut := "valid"
		if c := s.Cut; c != nil {
			cut = fmt.Sprintf("%s at %d (%d bytes)", c.Kind, c.Position, c.Bytes)
		}
		rows = append(rows, []string{s.Log, ui.I64(s.Size), ui.I64(s.Batches), ui.I64(s.ValidBytes), cut, file(s.Index), file(s.TimeIndex), file(s.TxnIndex)})
	}
	render([]string{"segment", "size", "batches kept", "valid bytes", "log", "index", "timeindex", "txnindex"}, rows, "segments")
	if len(p.Findings) > 0 {
		rows = nil
		for _, f := range p.Findings {
			pos := ""
			if f.Position >= 0 {
				pos = ui.I64(f.Position)
			}
			rows = append(rows, []string{f.Severity().Upper(), f.Kind.String(), f.File, pos, f.Message})
		}
		shown, notes := t.Ls.KindRows(rows, func(i int) string { return p.Findings[i].Kind.String() })
		ui.RenderTable(t.W, t.S.Width, []string{"severity", "kind", "file", "position", "message"}, shown)
		for _, n := range notes {
			fmt.Fprintln(t.W, n)
		}
	}
	if len(p.Ops) > 0 {
		rows = nil
		for _, op := range p.Ops {
			rows = append(rows, []string{string(op.Action), op.Name, ui.I64(op.OldSize), ui.I64(op.NewSize), op.Why})
		}
		render([]string{"action", "file", "old size", "new size", "why"}, rows, "files")
	}
}

// repairFiles is the plan's files (in text; --output table has shown
// them) with the snapshot it writes, and the dry-run note.
func repairFiles(t *writecmd.Text, p *recovery.Plan, dryRun bool) {
	if t.Tbl == nil {
		t.Pf("%s\n", t.Title("Files:"))
		t.Ls.Lines(len(p.Ops), "files", func(i int) {
			op := p.Ops[i]
			size := ""
			switch op.Action {
			case edit.OpReplace:
				size = fmt.Sprintf(" (%d -> %d bytes)", op.OldSize, op.NewSize)
			case edit.OpCreate:
				size = fmt.Sprintf(" (%d bytes)", op.NewSize)
			case edit.OpDelete:
				size = fmt.Sprintf(" (%d bytes)", op.OldSize)
			}
			t.Pf("  %-7s %s%s: %s\n", op.Action, op.Name, size, op.Why)
		}, func(more string) { t.Pf("  %s\n", more) })
		if p.SnapshotOffset >= 0 {
			t.Pf("  producer snapshot at the new log end: %s (%s)\n", segment.SegmentFileName(p.SnapshotOffset, segment.SnapshotSuffix), ui.Plural(p.Producers, "producer"))
		}
	}
	if dryRun {
		t.Pf("%s nothing was changed; run without --dry-run to apply (the broker must be stopped)\n", t.St.Paint(t.St.Warn, "Dry run:"))
	}
}

// repairApplied is the report's first lines on an applied repair: what
// it changed, and the backup.
func repairApplied(t *writecmd.Text, r *recovery.Report) {
	st := t.St
	n := 0
	if r.Plan != nil {
		n = len(r.Plan.Ops)
	}
	if r.Resumed {
		t.Pf("%s the interrupted repair (journal state %s) is finished: %s\n", st.Paint(st.OK, "Repaired:"), r.ResumedFrom, ui.Plural(n, "file"))
	} else {
		t.Pf("%s %s changed in %s\n", st.Paint(st.OK, "Repaired:"), ui.Plural(n, "file"), ui.Plural(len(r.Steps), "step"))
	}
	if r.BackupDir != "" {
		t.Pf("  backup: %s (restore by hand: see its %s)\n", r.BackupDir, edit.BackupManifestName)
	}
}

// ---- json ----

// JSON lines, explicit wire structs: one "plan" line, then one "result"
// line when something was applied or rolled back.

type repairCutJSON struct {
	Position int64  `json:"position"`
	Kind     string `json:"kind"`
	Bytes    int64  `json:"bytes"`
	Message  string `json:"message"`
}

type repairFileJSON struct {
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Entries int    `json:"entries"`
}

type repairSegmentJSON struct {
	BaseOffset int64          `json:"baseOffset"`
	Log        string         `json:"log"`
	Size       int64          `json:"size"`
	Why        string         `json:"why"`
	ValidBytes int64          `json:"validBytes"`
	Batches    int64          `json:"batches"`
	NextOffset int64          `json:"nextOffset"`
	Cut        *repairCutJSON `json:"cut"`
	Index      repairFileJSON `json:"index"`
	TimeIndex  repairFileJSON `json:"timeIndex"`
	TxnIndex   repairFileJSON `json:"txnIndex"`
}

type repairFindingJSON struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Position *int64 `json:"position"`
	Message  string `json:"message"`
}

type repairPlanJSON struct {
	writecmd.PlanHeadJSON                      // "plan"
	Dir                   string               `json:"dir"`
	Topic                 string               `json:"topic"`
	Partition             int32                `json:"partition"`
	DryRun                bool                 `json:"dryRun"`
	NothingToDo           bool                 `json:"nothingToDo"`
	Reason                string               `json:"reason,omitempty"`
	Damage                bool                 `json:"damage"`
	Resume                *writecmd.ResumeJSON `json:"resume,omitempty"`
	RecoveryPoint         int64                `json:"recoveryPoint"`
	Scope                 string               `json:"scope"`
	FirstExamined         int64                `json:"firstExamined"`
	IndexIntervalBytes    int                  `json:"indexIntervalBytes"`
	LogStartOffset        int64                `json:"logStartOffset"`
	LogEndOffset          int64                `json:"logEndOffset"`
	NewLogEndOffset       int64                `json:"newLogEndOffset"`
	RemovedBatches        int64                `json:"removedBatches"`
	RemovedBytes          int64                `json:"removedBytes"`
	RemovedOffsets        int64                `json:"removedOffsets"`
	Segments              []repairSegmentJSON  `json:"segments"`
	Findings              []repairFindingJSON  `json:"findings"`
	SegmentsDeleted       []int64              `json:"segmentsDeleted"`
	SnapshotsDeleted      []int64              `json:"snapshotsDeleted"`
	SnapshotOffset        int64                `json:"snapshotOffset"`
	Producers             int                  `json:"producers"`
	EpochEntriesRemoved   []writecmd.EpochJSON `json:"epochEntriesRemoved"`
	writecmd.PlanFilesJSON
}

type repairVerifyJSON struct {
	OK               bool     `json:"ok"`
	Replan           []string `json:"replan"`
	IndexProblems    []string `json:"indexProblems"`
	SnapshotProblems []string `json:"snapshotProblems"`
}

type repairResultJSON struct {
	writecmd.ResultJSON
	NewLogEndOffset int64             `json:"newLogEndOffset"`
	Files           int               `json:"files"`
	Steps           int               `json:"steps"`
	Verification    *repairVerifyJSON `json:"verification,omitempty"`
}

func repairFileOf(r recovery.FileRepair) repairFileJSON {
	return repairFileJSON{Action: r.Action, Reason: r.Reason, Entries: r.Entries}
}

// repairPlanWire is a plan's JSON line.
func repairPlanWire(p *recovery.Plan, dryRun bool) any {
	out := repairPlanJSON{PlanHeadJSON: writecmd.PlanHead("plan", p.Resume, p.Dir, p.LogDir, false), Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, Damage: p.Damage, RecoveryPoint: p.RecoveryPoint, Scope: p.Scope,
		FirstExamined: p.FirstExamined, IndexIntervalBytes: p.Options.IndexIntervalBytes, LogStartOffset: p.LogStartOffset,
		LogEndOffset: p.LogEndOffset, NewLogEndOffset: p.NewLogEndOffset, RemovedBatches: p.Removed.Batches,
		RemovedBytes: p.Removed.Bytes, RemovedOffsets: p.Removed.Offsets, Segments: []repairSegmentJSON{},
		Findings: []repairFindingJSON{}, SegmentsDeleted: ui.NonNil(p.SegmentsDeleted), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted),
		SnapshotOffset: p.SnapshotOffset, Producers: p.Producers, Resume: writecmd.ResumeOf(p.Resume),
		EpochEntriesRemoved: writecmd.EpochsOf(p.EpochEntriesRemoved), PlanFilesJSON: writecmd.PlanFilesOf(p)}
	for _, s := range p.Segments {
		sj := repairSegmentJSON{BaseOffset: s.BaseOffset, Log: s.Log, Size: s.Size, Why: s.Why, ValidBytes: s.ValidBytes,
			Batches: s.Batches, NextOffset: s.NextOffset, Index: repairFileOf(s.Index), TimeIndex: repairFileOf(s.TimeIndex),
			TxnIndex: repairFileOf(s.TxnIndex)}
		if c := s.Cut; c != nil {
			sj.Cut = &repairCutJSON{Position: c.Position, Kind: c.Kind.String(), Bytes: c.Bytes, Message: c.Message}
		}
		out.Segments = append(out.Segments, sj)
	}
	for _, f := range p.Findings {
		fj := repairFindingJSON{Kind: f.Kind.String(), Severity: f.Severity().String(), File: f.File, Message: f.Message}
		if f.Position >= 0 {
			pos := f.Position
			fj.Position = &pos
		}
		out.Findings = append(out.Findings, fj)
	}
	return out
}

// repairResultWire is a report's JSON line.
func repairResultWire(r *recovery.Report) any {
	out := repairResultJSON{ResultJSON: writecmd.Result("result", &r.Outcome), Steps: len(r.Steps)}
	if p := r.Plan; p != nil {
		out.NewLogEndOffset, out.Files = p.NewLogEndOffset, len(p.Ops)
	}
	if v := r.Verification; v != nil {
		out.Verification = &repairVerifyJSON{OK: v.OK(), Replan: ui.NonNil(v.Replan), IndexProblems: ui.NonNil(v.IndexProblems),
			SnapshotProblems: ui.NonNil(v.SnapshotProblems)}
	}
	return out
}
