package recovery

import "github.com/kseg/kseg/segment/edit"

// A repair meets the edit engine (segment/edit) here: a plan is an
// edit.Job of EditKind.

// EditKind is kseg repair's tool, as recorded in the journal and the
// backup manifest.
var EditKind = &edit.Kind{Tool: "kseg repair", Noun: "repair", Decode: edit.DecodeAs(place, jobOf)}

// Report is what Apply (or Rollback) did.
type Report = edit.Result[*Plan, *Verification]

// plans are repair plans meeting the engine (edit.Planner).
var plans = &edit.Planner[*Plan, *Verification]{Kind: EditKind, Job: jobOf}

// Apply executes a plan from PlanRepair (or finishes the interrupted
// repair a resume plan describes) with the edit engine's crash-safe steps,
// then reads the result back (Verify).
func Apply(p *Plan, o edit.Options) (*Report, error) {
	return plans.Apply(p, o)
}

// Preflight makes the checks Apply makes before its first change of the
// backup directory and the free space (edit.Preflight), changing nothing.
func Preflight(p *Plan, o edit.Options) error {
	return plans.Preflight(p, o)
}

// Rollback undoes the interrupted repair whose journal is in dir
// (edit.Rollback); another tool's journal is refused
// (edit.RefuseOtherTool), so that a rollback never says it undid a repair
// when it undid an injection.
func Rollback(dir string, o edit.Options) (*Report, error) {
	return plans.Rollback(dir, o)
}

// job is a repair plan as the engine's job.
type job struct {
	edit.JobParts
	p *Plan
}

func (j *job) Check() (edit.Verdict, error) { return Verify(j.p) }

// jobOf is p as a job of kind k (EditKind).
func jobOf(k *edit.Kind, p *Plan) edit.Job {
	return &job{edit.JobParts{Tool: k, PartitionDir: p.Dir, LogDirectory: p.LogDir, FileOps: p.Ops, Journaled: p}, p}
}

// place is a journal's plan in the directory the journal was found in.
func place(p *Plan, dir, logDir string) error {
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	return nil
}

// Facts are what a repair plan states alike with every write command's.
func (p *Plan) Facts() edit.Facts {
	return edit.Facts{Resume: p.Resume, Nothing: p.NothingToDo, Reason: p.Reason, Ops: p.Ops, Warnings: p.Warnings}
}

// Resumed marks p, the plan an interrupted repair's journal recorded,
// with how far it got (edit.StartPlan).
func (p *Plan) Resumed(r *edit.Interrupted) { p.Resume = r }
