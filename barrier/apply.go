package barrier

import "github.com/kseg/kseg/segment/edit"

// The injection meets the edit engine (segment/edit) here: a plan is an
// edit.Job of InjectKind.

// InjectKind is inject-barrier's tool, as recorded in the journal and the
// backup manifest.
var InjectKind = &edit.Kind{Tool: "kseg inject-barrier", Noun: "injection", Decode: edit.DecodeAs(placeInject, newInjectJob)}

// InjectionReport is what ApplyInjection (or RollbackInjection) did.
type InjectionReport = edit.Result[*InjectionPlan, *InjectionVerification]

// injections are injection plans meeting the engine (edit.Planner).
var injections = &edit.Planner[*InjectionPlan, *InjectionVerification]{Kind: InjectKind, Job: newInjectJob}

// ApplyInjection executes a plan from PlanInjection (or finishes the
// interrupted injection a resume plan describes) with the edit engine's
// crash-safe steps (edit.Apply), then reads it back (VerifyInjection).
func ApplyInjection(p *InjectionPlan, o edit.Options) (*InjectionReport, error) {
	return injections.Apply(p, o)
}

// PreflightInjection makes the checks ApplyInjection makes before its first
// change of the backup directory and the free space (edit.Preflight),
// changing nothing: what a dry run refuses, the real run refuses too.
func PreflightInjection(p *InjectionPlan, o edit.Options) error {
	return injections.Preflight(p, o)
}

// RollbackInjection undoes the interrupted injection whose journal is in
// dir (edit.Rollback); another tool's journal is refused
// (edit.RefuseOtherTool).
func RollbackInjection(dir string, o edit.Options) (*InjectionReport, error) {
	return injections.Rollback(dir, o)
}

// injectJob is an injection plan as the engine's job.
type injectJob struct {
	edit.JobParts
	p *InjectionPlan
}

func (j *injectJob) Check() (edit.Verdict, error) { return VerifyInjection(j.p.Dir, j.p.BarrierOffset) }

// newInjectJob is p as a job of kind k (InjectKind).
func newInjectJob(k *edit.Kind, p *InjectionPlan) edit.Job {
	return &injectJob{edit.JobParts{Tool: k, PartitionDir: p.Dir, LogDirectory: p.LogDir, FileOps: p.Ops, Journaled: p,
		Manifest: map[string]any{"mode": p.Mode, "cut": p.Cut, "barrierOffset": p.BarrierOffset}}, p}
}

// placeInject is a journal's plan in the directory the journal was found
// in.
func placeInject(p *InjectionPlan, dir, logDir string) error {
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	return nil
}

// Facts are what an injection plan states alike with every write command's.
func (p *InjectionPlan) Facts() edit.Facts {
	return edit.Facts{Resume: p.Resume, Nothing: p.NothingToDo, Reason: p.Reason, Ops: p.Ops, Warnings: p.Warnings}
}

// Resumed marks p, the plan an interrupted injection's journal recorded,
// with how far it got (edit.StartPlan).
func (p *InjectionPlan) Resumed(r *edit.Interrupted) { p.Resume = r }
