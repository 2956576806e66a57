package barrier

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// The three write commands meet the edit engine (segment/edit) here: each
// plan is an edit.Job, each tool an edit.Kind.

// ApplyOptions control Apply, ApplyMirror, ApplyRepair and Rollback.
type ApplyOptions = edit.Options

// FaultError is returned when ApplyOptions.FaultAt stopped the run.
type FaultError = edit.FaultError

// BackupManifestName is the manifest written into the backup directory.
const BackupManifestName = edit.BackupManifestName

// Tools, as recorded in the journal and the backup manifest.
var (
	InjectKind = &edit.Kind{Tool: "kseg inject-barrier", Noun: "injection", Decode: decodeInject}
	MirrorKind = &edit.Kind{Tool: "kseg mirror", Noun: "mirror", Decode: decodeMirror}
	RepairKind = &edit.Kind{Tool: "kseg repair", Noun: "repair", Decode: decodeRepair}
)

// Kinds are every tool's kinds.
var Kinds = []*edit.Kind{InjectKind, MirrorKind, RepairKind}

// Report is what Apply, ApplyMirror, ApplyRepair (or Rollback) did.
type Report struct {
	Dir         string `json:"dir"`
	NothingToDo bool   `json:"nothingToDo"`
	Reason      string `json:"reason,omitempty"`
	// Resumed is set when an interrupted operation was finished;
	// ResumedFrom is the journal state it was found in.
	Resumed     bool   `json:"resumed"`
	ResumedFrom string `json:"resumedFrom,omitempty"`
	RolledBack  bool   `json:"rolledBack"`
	BackupDir   string `json:"backupDir,omitempty"`
	// Steps are the steps run, in order (the names FaultAt receives).
	Steps        []string      `json:"steps"`
	Plan         *Plan         `json:"plan"`
	Verification *Verification `json:"verification,omitempty"`
	// Mirror is the plan of a mirror (ApplyMirror, or a Rollback of an
	// interrupted mirror); Plan is nil then.
	Mirror             *MirrorPlan         `json:"mirror,omitempty"`
	MirrorVerification *MirrorVerification `json:"mirrorVerification,omitempty"`
	// Repair is the plan of a repair (ApplyRepair, or a Rollback of an
	// interrupted repair); Plan is nil then.
	Repair             *RepairPlan         `json:"repair,omitempty"`
	RepairVerification *RepairVerification `json:"repairVerification,omitempty"`
}

// reportOf is the engine's report in barrier's terms.
func reportOf(r *edit.Report) *Report {
	if r == nil {
		return nil
	}
	rep := &Report{Dir: r.Dir, Resumed: r.Resumed, ResumedFrom: r.ResumedFrom, RolledBack: r.RolledBack, BackupDir: r.BackupDir, Steps: r.Steps}
	switch j := r.Job.(type) {
	case *injectJob:
		rep.Plan = j.p
	case *mirrorJob:
		rep.Mirror = j.p
	case *repairJob:
		rep.Repair = j.p
	}
	switch v := r.Verdict.(type) {
	case *Verification:
		rep.Verification = v
	case *MirrorVerification:
		rep.MirrorVerification = v
	case *RepairVerification:
		rep.RepairVerification = v
	}
	return rep
}

// apply runs job, or resumes the interrupted operation of kind in dir.
func apply(job edit.Job, kind *edit.Kind, resume bool, o ApplyOptions) (*Report, error) {
	var r *edit.Report
	var err error
	if resume {
		r, err = edit.Resume(job.Dir(), kind, o)
	} else {
		r, err = edit.Apply(job, o)
	}
	return reportOf(r), err
}

// Apply executes a plan from PlanInjection (or finishes the interrupted
// injection a resume plan describes) with the edit engine's crash-safe
// steps (edit.Apply), then reads it back (Verify).
func Apply(p *Plan, o ApplyOptions) (*Report, error) {
	if p.NothingToDo {
		return &Report{Dir: p.Dir, Plan: p, NothingToDo: true, Reason: p.Reason}, nil
	}
	rep, err := apply(&injectJob{p}, InjectKind, p.Resume != nil, o)
	if rep != nil && rep.Plan == nil {
		rep.Plan = p
	}
	return rep, err
}

// ApplyMirror executes a plan from PlanMirror (or finishes the interrupted
// mirror a resume plan describes) with the edit engine's crash-safe steps.
// A new destination directory is created after the lock is taken and
// removed again by a rollback. The copied bytes are read from the source's
// segments (in the kernel, with copy_file_range) and never held in memory.
// The result is read back with VerifyMirror.
func ApplyMirror(p *MirrorPlan, o ApplyOptions) (*Report, error) {
	if p.NothingToDo {
		return &Report{Dir: p.Dir, Mirror: p, NothingToDo: true, Reason: p.Reason}, nil
	}
	rep, err := apply(&mirrorJob{p}, MirrorKind, p.Resume != nil, o)
	if rep != nil && rep.Mirror == nil {
		rep.Mirror = p
	}
	return rep, err
}

// ApplyRepair executes a plan from PlanRepair (or finishes the interrupted
// repair a resume plan describes) with the edit engine's crash-safe steps,
// then reads the result back (VerifyRepair).
func ApplyRepair(p *RepairPlan, o ApplyOptions) (*Report, error) {
	if p.NothingToDo {
		return &Report{Dir: p.Dir, Repair: p, NothingToDo: true, Reason: p.Reason}, nil
	}
	rep, err := apply(&repairJob{p}, RepairKind, p.Resume != nil, o)
	if rep != nil && rep.Repair == nil {
		rep.Repair = p
	}
	return rep, err
}

// Rollback undoes the interrupted injection, mirror or repair whose journal
// is in dir: every file changed or deleted is copied back from the backup,
// every file created is removed, then the staged files and the journal. A
// completed operation has no journal; restore it from its backup by hand
// (the manifest says how). kinds limits the tools whose journal it undoes
// (none: any); another tool's journal is refused.
func Rollback(dir string, o ApplyOptions, kinds ...*edit.Kind) (*Report, error) {
	if len(kinds) == 0 {
		kinds = Kinds
	}
	r, err := edit.Rollback(dir, o, kinds...)
	return reportOf(r), err
}

// HasJournal reports whether dir holds the journal of an interrupted
// injection, mirror or repair.
func HasJournal(dir string) bool { return edit.HasJournal(dir) }

// ---- the jobs ----

type injectJob struct{ p *Plan }

func (j *injectJob) Kind() *edit.Kind   { return InjectKind }
func (j *injectJob) Dir() string        { return j.p.Dir }
func (j *injectJob) LogDir() string     { return j.p.LogDir }
func (j *injectJob) Ops() []edit.FileOp { return j.p.Ops }
func (j *injectJob) CreatesDir() bool   { return false }
func (j *injectJob) Plan() any          { return j.p }
func (j *injectJob) Check() (edit.Verdict, error) {
	return Verify(j.p.Dir, j.p.BarrierOffset)
}
func (j *injectJob) ManifestDetails() any {
	return map[string]any{"mode": j.p.Mode, "cut": j.p.Cut, "barrierOffset": j.p.BarrierOffset}
}

type mirrorJob struct{ p *MirrorPlan }

func (j *mirrorJob) Kind() *edit.Kind   { return MirrorKind }
func (j *mirrorJob) Dir() string        { return j.p.Dir }
func (j *mirrorJob) LogDir() string     { return j.p.LogDir }
func (j *mirrorJob) Ops() []edit.FileOp { return j.p.Ops }
func (j *mirrorJob) CreatesDir() bool   { return j.p.CreateDir }
func (j *mirrorJob) Plan() any          { return j.p }
func (j *mirrorJob) Check() (edit.Verdict, error) {
	return VerifyMirror(j.p)
}
func (j *mirrorJob) ManifestDetails() any {
	return map[string]any{"source": j.p.Src, "from": j.p.From, "to": j.p.To, "createdDir": j.p.CreateDir}
}

type repairJob struct{ p *RepairPlan }

func (j *repairJob) Kind() *edit.Kind   { return RepairKind }
func (j *repairJob) Dir() string        { return j.p.Dir }
func (j *repairJob) LogDir() string     { return j.p.LogDir }
func (j *repairJob) Ops() []edit.FileOp { return j.p.Ops }
func (j *repairJob) CreatesDir() bool   { return false }
func (j *repairJob) Plan() any          { return j.p }
func (j *repairJob) Check() (edit.Verdict, error) {
	return VerifyRepair(j.p)
}
func (j *repairJob) ManifestDetails() any { return nil }

func decodeInject(raw json.RawMessage, dir, logDir string) (edit.Job, error) {
	var p Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	return &injectJob{&p}, nil
}

func decodeMirror(raw json.RawMessage, dir, logDir string) (edit.Job, error) {
	var p MirrorPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	// The copied bytes come from the source's segments, which the journal
	// names: only .log files of the source partition directory, never
	// anything inside the destination, may be read into it.
	jp := filepath.Join(dir, JournalName)
	if !filepath.IsAbs(p.Src) || filepath.Clean(p.Src) != p.Src || edit.RealPath(p.Src) == edit.RealPath(dir) {
		return nil, refuse(edit.RefuseJournal, jp, "mirror source %q is not another partition directory; nothing was touched", p.Src)
	}
	for _, op := range p.Ops {
		for _, r := range op.Sources {
			fi, ok := segment.ParseFileName(filepath.Base(r.Path))
			if filepath.Dir(r.Path) != p.Src || !ok || fi.Kind != segment.KindLog || fi.Suffix != "" {
				return nil, refuse(edit.RefuseJournal, jp, "operation %s %q copies from %s, not a segment of the source %s; nothing was touched", op.Action, op.Name, r.Path, p.Src)
			}
		}
	}
	return &mirrorJob{&p}, nil
}

func decodeRepair(raw json.RawMessage, dir, logDir string) (edit.Job, error) {
	var p RepairPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	return &repairJob{&p}, nil
}
