package repair

import (
	"fmt"
	"io"

	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// repairPrinter renders repair's plan and report.
type repairPrinter interface {
	Plan(p *recovery.Plan, dryRun bool) error
	Report(r *recovery.Report) error
}

func newRepairPrinter(s *ui.Streams, output string) repairPrinter {
	if output == "json" {
		return &repairJSONPrinter{w: s.Out}
	}
	return &repairTextPrinter{s: s, w: s.Out, st: s.Styles(), ls: s.Lister(), table: output == "table"}
}

// ---- text ----

// repairTextPrinter renders text, or with table the segments, findings
// and files as tables (renderTable).
type repairTextPrinter struct {
	s     *ui.Streams
	w     io.Writer
	st    *ui.Styles
	ls    ui.Lister // how much of each list to show
	table bool
}

func (t *repairTextPrinter) render(header []string, rows [][]string, what string) {
	t.ls.Table(t.w, t.s.Width, header, rows, what)
}

// planTables is Plan's table rendering of segments, findings and files.
func (t *repairTextPrinter) planTables(p *recovery.Plan) {
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
	t.render([]string{"segment", "size", "batches kept", "valid bytes", "log", "index", "timeindex", "txnindex"}, rows, "segments")
	if len(p.Findings) > 0 {
		rows = nil
		for _, f := range p.Findings {
			pos := ""
			if f.Position >= 0 {
				pos = ui.I64(f.Position)
			}
			rows = append(rows, []string{f.Severity().Upper(), f.Kind.String(), f.File, pos, f.Message})
		}
		shown, notes := t.ls.KindRows(rows, func(i int) string { return p.Findings[i].Kind.String() })
		ui.RenderTable(t.w, t.s.Width, []string{"severity", "kind", "file", "position", "message"}, shown)
		for _, n := range notes {
			fmt.Fprintln(t.w, n)
		}
	}
	if len(p.Ops) > 0 {
		rows = nil
		for _, op := range p.Ops {
			rows = append(rows, []string{string(op.Action), op.Name, ui.I64(op.OldSize), ui.I64(op.NewSize), op.Why})
		}
		t.render([]string{"action", "file", "old size", "new size", "why"}, rows, "files")
	}
}

func (t *repairTextPrinter) Plan(p *recovery.Plan, dryRun bool) error {
	w, st, ls := t.w, t.st, t.ls
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	title := func(s string) string { return st.Paint(st.Title, s) }
	off := func(v int64) string { return st.Paint(st.Offset, fmt.Sprint(v)) }

	pf("%s %s (topic %s, partition %d)\n", title("Partition"), p.Dir, p.Topic, p.Partition)
	writecmd.TextResume(pf, st, "repair", p.Resume)
	pf("  examined: %s\n", p.Scope)
	if p.NewLogEndOffset != p.LogEndOffset {
		pf("  log end %s -> %s: %d offsets, %d batches, %d bytes removed\n", off(p.LogEndOffset), off(p.NewLogEndOffset),
			p.Removed.Offsets, p.Removed.Batches, p.Removed.Bytes)
	} else {
		pf("  log end %s\n", off(p.LogEndOffset))
	}
	if t.table {
		t.planTables(p)
		ui.WarnDiagnostics(t.s.Err, p.Warnings)
		switch {
		case p.NothingToDo:
			pf("%s %s\n", st.Paint(st.OK, "Nothing to repair:"), p.Reason)
		case dryRun:
			pf("%s nothing was changed; run without --dry-run to apply (the broker must be stopped)\n", st.Paint(st.Warn, "Dry run:"))
		}
		return nil
	}
	ls.Lines(len(p.Segments), "segments", func(i int) {
		s := p.Segments[i]
		state := st.Paint(st.OK, "valid")
		if c := s.Cut; c != nil {
			state = st.Paint(st.Err, fmt.Sprintf("cut at position %d (%s, %d bytes)", c.Position, c.Kind, c.Bytes))
		}
		pf("%s %s: %d bytes, %d batches kept, %s\n", title("Segment"), s.Log, s.Size, s.Batches, state)
		for _, f := range []struct {
			name string
			r    recovery.FileRepair
		}{{".index", s.Index}, {".timeindex", s.TimeIndex}, {".txnindex", s.TxnIndex}} {
			if f.r.Action == recovery.FileKeep || f.r.Action == recovery.FileNone {
				continue
			}
			pf("  %s: %s (%s), %s\n", f.name, f.r.Action, f.r.Reason, ui.Plural(f.r.Entries, "entry"))
		}
	}, func(more string) { pf("%s\n", more) })
	if len(p.Findings) > 0 {
		pf("%s\n", title("Findings:"))
		ls.ByKind(len(p.Findings), func(i int) string { return p.Findings[i].Kind.String() }, func(i int) {
			f := p.Findings[i]
			where := f.File
			if f.Position >= 0 {
				where = fmt.Sprintf("%s position %d", f.File, f.Position)
			}
			pf("  %s %s %s: %s\n", st.Severity(f.Severity(), f.Severity().Upper()), f.Kind, where, f.Message)
		}, func(more string) { pf("  %s\n", more) })
	}
	ui.WarnDiagnostics(t.s.Err, p.Warnings)
	if p.NothingToDo {
		pf("%s %s\n", st.Paint(st.OK, "Nothing to repair:"), p.Reason)
		return nil
	}
	pf("%s\n", title("Files:"))
	ls.Lines(len(p.Ops), "files", func(i int) {
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
		pf("  %-7s %s%s: %s\n", op.Action, op.Name, size, op.Why)
	}, func(more string) { pf("  %s\n", more) })
	if p.SnapshotOffset >= 0 {
		pf("  producer snapshot at the new log end: %s (%s)\n", segment.SegmentFileName(p.SnapshotOffset, segment.SnapshotSuffix), ui.Plural(p.Producers, "producer"))
	}
	if dryRun {
		pf("%s nothing was changed; run without --dry-run to apply (the broker must be stopped)\n", st.Paint(st.Warn, "Dry run:"))
	}
	return nil
}

func (t *repairTextPrinter) Report(r *recovery.Report) error {
	w, st := t.w, t.st
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if r.NothingToDo {
		return nil
	}
	n := 0
	if r.Plan != nil {
		n = len(r.Plan.Ops)
	}
	switch {
	case r.RolledBack:
		pf("%s the interrupted repair of %s is undone (restored from %s)\n", st.Paint(st.OK, "Rolled back:"), r.Dir, r.BackupDir)
		return nil
	case r.Resumed:
		pf("%s the interrupted repair (journal state %s) is finished: %s\n", st.Paint(st.OK, "Repaired:"), r.ResumedFrom, ui.Plural(n, "file"))
	default:
		pf("%s %s changed in %s\n", st.Paint(st.OK, "Repaired:"), ui.Plural(n, "file"), ui.Plural(len(r.Steps), "step"))
	}
	if r.BackupDir != "" {
		pf("  backup: %s (restore by hand: see its %s)\n", r.BackupDir, edit.BackupManifestName)
	}
	v := r.Verification
	if v == nil {
		return nil
	}
	if v.OK() {
		pf("%s a new plan has nothing to do, the indexes verify against the logs, the producer snapshots match the log\n", st.Paint(st.OK, "Verified:"))
		return nil
	}
	pf("%s\n", st.Paint(st.Err, "Verification failed:"))
	t.ls.Lines(len(v.Replan), "steps", func(i int) { pf("  still to do: %s\n", v.Replan[i]) }, func(more string) { pf("  %s\n", more) })
	writecmd.TextProblems(pf, t.ls, v.IndexProblems, v.SnapshotProblems)
	return nil
}

// ---- json ----

// JSON lines, explicit wire structs: one "plan" line, then one "result"
// line when something was applied or rolled back.

type repairJSONPrinter struct{ w io.Writer }

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
	Type                string               `json:"type"`            // "plan"
	Owner               *writecmd.OwnerJSON  `json:"owner,omitempty"` // what created files get, when kseg changes it (root)
	Dir                 string               `json:"dir"`
	Topic               string               `json:"topic"`
	Partition           int32                `json:"partition"`
	DryRun              bool                 `json:"dryRun"`
	NothingToDo         bool                 `json:"nothingToDo"`
	Reason              string               `json:"reason,omitempty"`
	Damage              bool                 `json:"damage"`
	Resume              *writecmd.ResumeJSON `json:"resume,omitempty"`
	RecoveryPoint       int64                `json:"recoveryPoint"`
	Scope               string               `json:"scope"`
	FirstExamined       int64                `json:"firstExamined"`
	IndexIntervalBytes  int                  `json:"indexIntervalBytes"`
	LogStartOffset      int64                `json:"logStartOffset"`
	LogEndOffset        int64                `json:"logEndOffset"`
	NewLogEndOffset     int64                `json:"newLogEndOffset"`
	RemovedBatches      int64                `json:"removedBatches"`
	RemovedBytes        int64                `json:"removedBytes"`
	RemovedOffsets      int64                `json:"removedOffsets"`
	Segments            []repairSegmentJSON  `json:"segments"`
	Findings            []repairFindingJSON  `json:"findings"`
	SegmentsDeleted     []int64              `json:"segmentsDeleted"`
	SnapshotsDeleted    []int64              `json:"snapshotsDeleted"`
	SnapshotOffset      int64                `json:"snapshotOffset"`
	Producers           int                  `json:"producers"`
	EpochEntriesRemoved []writecmd.EpochJSON `json:"epochEntriesRemoved"`
	Files               []writecmd.FileJSON  `json:"files"`
	Warnings            []string             `json:"warnings"`
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

func (j *repairJSONPrinter) Plan(p *recovery.Plan, dryRun bool) error {
	out := repairPlanJSON{Type: "plan", Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, Damage: p.Damage, RecoveryPoint: p.RecoveryPoint, Scope: p.Scope,
		FirstExamined: p.FirstExamined, IndexIntervalBytes: p.Options.IndexIntervalBytes, LogStartOffset: p.LogStartOffset,
		LogEndOffset: p.LogEndOffset, NewLogEndOffset: p.NewLogEndOffset, RemovedBatches: p.Removed.Batches,
		RemovedBytes: p.Removed.Bytes, RemovedOffsets: p.Removed.Offsets, Segments: []repairSegmentJSON{},
		Findings: []repairFindingJSON{}, SegmentsDeleted: ui.NonNil(p.SegmentsDeleted), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted),
		SnapshotOffset: p.SnapshotOffset, Producers: p.Producers, Resume: writecmd.ResumeOf(p.Resume),
		EpochEntriesRemoved: writecmd.EpochsOf(p.EpochEntriesRemoved), Files: writecmd.FilesOf(p.Ops), Warnings: ui.NonNil(p.Warnings)}
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
	out.Owner = writecmd.OwnerOf(writecmd.PlannedOwnership(p.Resume, p.Dir, p.LogDir, false))
	return writecmd.JSONLine(j.w, out)
}

func (j *repairJSONPrinter) Report(r *recovery.Report) error {
	if r.NothingToDo {
		return nil
	}
	out := repairResultJSON{ResultJSON: writecmd.Result("result", &r.Outcome), Steps: len(r.Steps)}
	if p := r.Plan; p != nil {
		out.NewLogEndOffset, out.Files = p.NewLogEndOffset, len(p.Ops)
	}
	if v := r.Verification; v != nil {
		out.Verification = &repairVerifyJSON{OK: v.OK(), Replan: ui.NonNil(v.Replan), IndexProblems: ui.NonNil(v.IndexProblems),
			SnapshotProblems: ui.NonNil(v.SnapshotProblems)}
	}
	return writecmd.JSONLine(j.w, out)
}
