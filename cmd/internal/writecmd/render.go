package writecmd

import (
	"fmt"
	"io"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/edit"
)

// Printer is the one renderer of the write commands' plans and reports
// (inject-barrier, mirror, repair, restore): a plan, and the edit engine's
// result of applying or rolling it back (edit.Result), in text, table or
// JSON lines. What is the same for every command — the plan's head line,
// the interrupted edit it resumes, "Nothing to do", the files and the
// dry-run note, the report's rollback, backup and verification verdict,
// the JSON lines — is written here once; a command gives its own words as
// a Form.
type Printer[P edit.Planned, V interface {
	comparable
	edit.Verdict
}] struct {
	form *Form[P, V]
	json bool
	t    *Text
}

// Form is a write command's words for the Printer: the facts of its plan,
// the lines that describe it, and its report's sentences.
type Form[P edit.Planned, V interface {
	comparable
	edit.Verdict
}] struct {
	// What names one edit in messages: "injection", "mirror", "repair".
	What string
	// Writes is the directory the plan writes and whether the plan
	// creates it, for a plan that says (nil: the directory the command
	// was given, which exists).
	Writes func(P) (dir string, createsDir bool)
	// Head is the plan's first line: a title ("Partition", "Mirror") and
	// what follows it.
	Head func(P) (title, rest string)
	// Found writes what the plan found, before whether there is anything
	// to do; Changes, what the plan changes (nil: nothing more), before
	// its files.
	Found   func(*Text, P)
	Changes func(*Text, P)
	// Nothing labels a plan with nothing to do ("" : "Nothing to do:").
	Nothing string
	// Files writes the plan's files and the dry-run note (nil:
	// Text.FilesSection, with the warnings).
	Files func(t *Text, p P, dryRun bool)
	// PlanJSON is the plan's JSON line.
	PlanJSON func(p P, dryRun bool) any

	// Undone is the sentence after "Rolled back:" (nil: the interrupted
	// edit is undone, "the partition is as it was before it").
	Undone func(*edit.Result[P, V]) string
	// Applied writes the report's first lines on an applied edit (nil:
	// the resumed edit and backup); Done, the line after them.
	Applied func(*Text, *edit.Result[P, V])
	Done    func(*Text, *edit.Result[P, V])
	// Verified is the sentence after "Verified:"; Failed writes what a
	// failed verification found.
	Verified func(V) string
	Failed   func(*Text, V)
	// ResultJSON is the report's JSON line.
	ResultJSON func(*edit.Result[P, V]) any
}

// NewPrinter is form's printer for --output output.
func NewPrinter[P edit.Planned, V interface {
	comparable
	edit.Verdict
}](s *ui.Streams, output string, form *Form[P, V]) *Printer[P, V] {
	return &Printer[P, V]{form: form, json: output == "json", t: NewText(s, output)}
}

// parts are p's facts (edit.Facts) and the directory it writes.
func (f *Form[P, V]) parts(p P) PlanParts {
	parts := PlanParts{Facts: p.Facts()}
	if f.Writes != nil {
		parts.Dir, parts.CreatesDir = f.Writes(p)
	}
	return parts
}

// Plan renders the plan p.
func (r *Printer[P, V]) Plan(p P, dryRun bool) error {
	f, t := r.form, r.t
	if r.json {
		return ui.JSONLine(t.W, f.PlanJSON(p, dryRun))
	}
	parts := f.parts(p)
	title, rest := f.Head(p)
	t.Pf("%s %s\n", t.Title(title), rest)
	t.resume(f.What, parts.Resume)
	f.Found(t, p)
	if parts.Nothing {
		label := f.Nothing
		if label == "" {
			label = "Nothing to do:"
		}
		t.Pf("%s %s\n", t.St.Paint(t.St.OK, label), parts.Reason)
		return nil
	}
	if f.Changes != nil {
		f.Changes(t, p)
	}
	if f.Files != nil {
		f.Files(t, p, dryRun)
		return nil
	}
	t.FilesSection(parts.Warnings, parts.Ops, dryRun)
	return nil
}

// Report renders what applying (or rolling back) the plan did.
func (r *Printer[P, V]) Report(res *edit.Result[P, V]) error {
	f, t := r.form, r.t
	if res.NothingToDo {
		return nil
	}
	if r.json {
		return ui.JSONLine(t.W, f.ResultJSON(res))
	}
	st := t.St
	if res.RolledBack {
		undone := fmt.Sprintf("the interrupted %s in %s is undone (journal state was %s); the partition is as it was before it", f.What, res.Dir, res.ResumedFrom)
		if f.Undone != nil {
			undone = f.Undone(res)
		}
		t.Pf("%s %s\n", st.Paint(st.OK, "Rolled back:"), undone)
		return nil
	}
	if f.Applied != nil {
		f.Applied(t, res)
	} else {
		t.reportHead(f.What, &res.Outcome)
	}
	if f.Done != nil {
		f.Done(t, res)
	}
	var none V
	v := res.Verification
	switch {
	case v == none:
	case v.OK():
		t.Pf("%s %s\n", st.Paint(st.OK, "Verified:"), f.Verified(v))
	default:
		t.Pf("%s\n", st.Paint(st.Err, "Verification failed:"))
		f.Failed(t, v)
	}
	return nil
}

// Text is what a write command's text and table rendering writes with:
// the output, its styles and list summariser, and stderr for the
// warnings (diagnostics).
type Text struct {
	S   *ui.Streams
	W   io.Writer
	Err io.Writer
	St  *ui.Styles
	Ls  ui.Lister
	// Tbl is set for --output table: file operations as a table.
	Tbl *ui.TableOut
}

// NewText is the text rendering of s for --output output.
func NewText(s *ui.Streams, output string) *Text {
	t := &Text{S: s, W: s.Out, Err: s.Err, St: s.Styles(), Ls: s.Lister()}
	if output == "table" {
		t.Tbl = &ui.TableOut{W: s.Out, Width: s.Width}
	}
	return t
}

// Pf is fmt.Fprintf to the output.
func (t *Text) Pf(format string, args ...any) { fmt.Fprintf(t.W, format, args...) }

// Title, Off and Pid paint a title, an offset and a producer id.
func (t *Text) Title(s string) string { return t.St.Paint(t.St.Title, s) }
func (t *Text) Off(v int64) string    { return t.St.Paint(t.St.Offset, fmt.Sprint(v)) }
func (t *Text) Pid(v int64) string    { return t.St.Paint(t.St.Pid, fmt.Sprint(v)) }

// Warn writes warnings to stderr, kept under -q.
func (t *Text) Warn(warnings []string) { ui.WarnDiagnostics(t.Err, warnings) }

// FilesSection is a plan's end: the "Files:" title, the warnings, the file
// operations and the dry-run note .
func (t *Text) FilesSection(warnings []string, ops []edit.FileOp, dryRun bool) {
	t.Pf("%s\n", t.Title("Files:"))
	t.Warn(warnings)
	t.filesTail(ops, dryRun)
}
