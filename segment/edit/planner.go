package edit

import "encoding/json"

// Facts are what every write command's plan (inject-barrier, mirror,
// repair, restore) states alike, before any step: the interrupted edit it
// resumes (nil: none; the plan is then the one its journal recorded),
// whether there is anything to do and why not, its file operations in
// commit order and its warnings. The engine acts on them (Planner) and the
// CLI shows them the same way for every command.
type Facts struct {
	Resume   *Interrupted
	Nothing  bool
	Reason   string
	Ops      []FileOp
	Warnings []string
}

// Planned is a write command's plan, which states its Facts.
type Planned interface{ Facts() Facts }

// Planner is a tool's plans (P, read back as V) meeting the engine:
// inject-barrier, mirror and repair each offer an Apply, a Preflight and a
// Rollback that are the same steps but for how a plan becomes a job (Job).
type Planner[P Planned, V Verdict] struct {
	// Kind is the tool, as recorded in the journal and the backup manifest.
	Kind *Kind
	// Job is p as a job of kind k (Kind, or the one Kind.Decode is given).
	Job func(k *Kind, p P) Job
}

// Apply executes p with the engine's crash-safe steps (Execute): nothing
// when it has nothing to do, else Apply, or Resume for a resume plan.
func (t *Planner[P, V]) Apply(p P, o Options) (*Result[P, V], error) {
	f := p.Facts()
	return Execute[P, V](t.Job(t.Kind, p), p, f.Nothing, f.Reason, f.Resume != nil, o)
}

// Preflight makes the checks Apply makes before its first change (the
// backup directory and the free space: Preflight), changing nothing; a
// plan with nothing to do, or a resume, has none to make.
func (t *Planner[P, V]) Preflight(p P, o Options) error {
	if f := p.Facts(); f.Nothing || f.Resume != nil {
		return nil
	}
	return Preflight(t.Job(t.Kind, p), o)
}

// Rollback undoes the interrupted edit of Kind's tool whose journal is in
// dir (RollbackAs: another tool's journal is refused).
func (t *Planner[P, V]) Rollback(dir string, o Options) (*Result[P, V], error) {
	return RollbackAs[P, V](dir, o, t.Kind)
}

// DecodeAs is a Kind's Decode for plans of type P: the plan the journal
// recorded (DecodePlan), placed in the directory the journal was found in
// and no longer a resume (place, which refuses what its tool could never
// have planned), as a job of kind k (job).
func DecodeAs[P any](place func(p *P, dir, logDir string) error, job func(k *Kind, p *P) Job) func(k *Kind, raw json.RawMessage, dir, logDir string) (Job, error) {
	return func(k *Kind, raw json.RawMessage, dir, logDir string) (Job, error) {
		p, err := DecodePlan[P](raw)
		if err != nil {
			return nil, err
		}
		if err := place(p, dir, logDir); err != nil {
			return nil, err
		}
		return job(k, p), nil
	}
}
