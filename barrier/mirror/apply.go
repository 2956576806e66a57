package mirror

import (
	"path/filepath"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// A mirror meets the edit engine (segment/edit) here: a plan is an
// edit.Job of EditKind.

// EditKind is kseg mirror's tool, as recorded in the journal and the
// backup manifest.
var EditKind = &edit.Kind{Tool: "kseg mirror", Noun: "mirror", Decode: edit.DecodeAs(place, jobOf)}

// Report is what Apply (or Rollback) did.
type Report = edit.Result[*Plan, *Verification]

// plans are mirror plans meeting the engine (edit.Planner).
var plans = &edit.Planner[*Plan, *Verification]{Kind: EditKind, Job: jobOf}

// Apply executes a plan from PlanMirror (or finishes the interrupted
// mirror a resume plan describes) with the edit engine's crash-safe steps.
// A new destination directory is created after the lock is taken and
// removed again by a rollback. The copied bytes are read from the source's
// segments (in the kernel, with copy_file_range) and never held in memory.
// The result is read back with Verify; a mirror into an empty
// destination is verified on the staging read-back instead (stagedCheck),
// the committed files confirmed to be the staged ones.
func Apply(p *Plan, o edit.Options) (*Report, error) {
	return plans.Apply(p, o)
}

// Preflight makes the checks Apply makes before its first change of the
// backup directory and the free space (edit.Preflight), changing nothing.
func Preflight(p *Plan, o edit.Options) error {
	return plans.Preflight(p, o)
}

// Rollback undoes the interrupted mirror whose journal is in dir
// (edit.Rollback), removing a destination directory it created; another
// tool's journal is refused (edit.RefuseOtherTool).
func Rollback(dir string, o edit.Options) (*Report, error) {
	return plans.Rollback(dir, o)
}

// job is a mirror plan as the engine's job.
type job struct {
	edit.JobParts
	p *Plan
	// staged is Verify's work done on the staging read-back (nil: none).
	staged *stagedCheck
}

// Check is the staged check's verdict when it has one, else Verify.
func (j *job) Check() (edit.Verdict, error) {
	if v, ok := j.staged.verdict(); ok {
		return v, nil
	}
	return Verify(j.p)
}

// jobOf is p as a job of kind k (EditKind).
func jobOf(k *edit.Kind, p *Plan) edit.Job {
	return &job{edit.JobParts{Tool: k, PartitionDir: p.Dir, LogDirectory: p.LogDir, FileOps: p.Ops, NewDir: p.CreateDir, Journaled: p,
		Manifest: map[string]any{"source": p.Src, "from": p.From, "to": p.To, "createdDir": p.CreateDir}}, p, newStagedCheck(p)}
}

// appendable reports an append a mirror can have planned: copied batches
// after a .log, entries after an .index, .timeindex or .txnindex.
func appendable(fi segment.FileInfo, ok bool, op edit.FileOp) bool {
	switch {
	case !ok:
		return false
	case fi.Kind == segment.KindLog:
		return len(op.Content) == 0
	case fi.Kind == segment.KindIndex, fi.Kind == segment.KindTimeIndex, fi.Kind == segment.KindTxnIndex:
		return len(op.Sources) == 0
	}
	return false
}

// place is a journal's plan in the directory the journal was found in,
// refused unless a mirror could have planned it.
func place(p *Plan, dir, logDir string) error {
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	// The copied bytes come from the source's segments, which the journal
	// names: only .log files of the source partition directory, never
	// anything inside the destination, may be read into it.
	jp := filepath.Join(dir, edit.JournalName)
	if !filepath.IsAbs(p.Src) || filepath.Clean(p.Src) != p.Src || edit.RealPath(p.Src) == edit.RealPath(dir) {
		return edit.Refuse(edit.RefuseJournal, jp, "mirror source %q is not another partition directory; nothing was touched", p.Src)
	}
	for _, op := range p.Ops {
		if fi, ok := segment.ParseFileName(op.Name); op.Action == edit.OpAppend && !appendable(fi, ok, op) {
			return edit.Refuse(edit.RefuseJournal, jp, "operation %s %q: a mirror appends only copied batches to a .log, and entries to its indexes; nothing was touched", op.Action, op.Name)
		}
		for _, r := range op.Sources {
			fi, ok := segment.ParseFileName(filepath.Base(r.Path))
			if filepath.Dir(r.Path) != p.Src || !ok || fi.Kind != segment.KindLog || fi.Suffix != "" {
				return edit.Refuse(edit.RefuseJournal, jp, "operation %s %q copies from %s, not a segment of the source %s; nothing was touched", op.Action, op.Name, r.Path, p.Src)
			}
		}
	}
	return nil
}

// Facts are what a mirror plan states alike with every write command's.
func (p *Plan) Facts() edit.Facts {
	return edit.Facts{Resume: p.Resume, Nothing: p.NothingToDo, Reason: p.Reason, Ops: p.Ops, Warnings: p.Warnings}
}

// Resumed marks p, the plan an interrupted mirror's journal recorded,
// with how far it got (edit.StartPlan).
func (p *Plan) Resumed(r *edit.Interrupted) { p.Resume = r }
