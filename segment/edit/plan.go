package edit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// What every write command's planner shares before and around its own
// plan: the preflight that refuses a partition kseg must not touch, the
// interrupted edit a journal records, the file operations, and the report
// of a run in the planner's own types. A planner (package barrier and its
// rooms) calls these; none of them is a Kafka file rule (those are in
// segment).

// Refusal reasons planners share (see the engine's own above).
const (
	// RefuseNotPartition: the directory is not a live partition directory.
	RefuseNotPartition Reason = "not-a-partition"
	// RefuseReadOnly: the file system is mounted read-only, or the
	// directory is not writable.
	RefuseReadOnly Reason = "read-only"
	// RefuseTransientFiles: .swap files the broker would rename at load, or
	// kseg staged files without a journal.
	RefuseTransientFiles Reason = "transient-files"
	// RefusePending: the directory holds the journal of another tool's
	// interrupted edit (a mirror, when injecting; an injection, when
	// mirroring).
	RefusePending Reason = "operation-pending"
	// RefuseBelowLogStart: the new log end falls below the log start
	// offset; Kafka would delete every segment at load
	// (deleteSegmentsIfLogStartGreaterThanLogEnd).
	RefuseBelowLogStart Reason = "below-log-start"
)

// OptionError is an option that cannot apply to this partition (a leader
// epoch below the recorded ones, a segment size smaller than a batch). The
// CLI maps it to exit status 2.
type OptionError struct {
	Option string
	Detail string
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Detail }

// CheckPartitionDir refuses, in this order, what is not a live partition
// directory: not a directory, a name that is not <topic>-<partition>, a
// deleted or future directory, the KRaft metadata log (when metadataWhy
// says why), a directory with nothing of a partition in it (and no
// journal: a directory a mirror is creating holds only its journal). It
// returns the parsed name.
func CheckPartitionDir(dir string, metadataWhy string) (segment.PartitionDirName, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return segment.PartitionDirName{}, err
	}
	name, ok := segment.ParsePartitionDir(filepath.Base(dir))
	switch {
	case !st.IsDir():
		return name, Refuse(RefuseNotPartition, dir, "not a directory")
	case !ok:
		return name, Refuse(RefuseNotPartition, dir, "the name is not <topic>-<partition>")
	case name.State != segment.DirLive:
		return name, Refuse(RefuseNotPartition, dir, "a %s directory, not a live partition", name.State)
	case metadataWhy != "" && name.Topic == "__cluster_metadata":
		return name, Refuse(RefuseNotPartition, dir, "%s", metadataWhy)
	case !segment.IsPartitionDir(dir) && !HasJournal(dir):
		return name, Refuse(RefuseNotPartition, dir, "no .log, partition.metadata or leader-epoch-checkpoint in it")
	}
	return name, nil
}

// CheckNoBroker refuses when another process holds the log directory's
// .lock: a running broker (LogManager locks every log dir with
// FileChannel.tryLock), another kseg run, or a process holding an flock(2)
// lock on it; and a .lock that is a symbolic link or not a regular file.
func CheckNoBroker(logDir string) error {
	lockPath := filepath.Join(logDir, segment.LockName)
	h, held, err := BrokerLock(lockPath)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return err
		}
		return fmt.Errorf("checking %s: %w", lockPath, err)
	}
	if held {
		return refuseHeld(lockPath, h)
	}
	return nil
}

// CheckWritable refuses when a broker holds logDir (CheckNoBroker), or
// the log directory of another path the partition directory probe is
// mounted at (a bind mount, dirAliases), or when probe (the partition directory, or the log directory it is to be
// created in) is not writable. check replaces the read-only probe
// (Writable) in tests; nil uses it.
func CheckWritable(logDir, probe string, check func(dir string) (bool, string, error)) error {
	if err := CheckNoBroker(logDir); err != nil {
		return err
	}
	if probe != logDir {
		if err := checkAliases(probe); err != nil {
			return err
		}
	}
	if check == nil {
		check = Writable
	}
	if ok, why, err := check(probe); err != nil {
		return err
	} else if !ok {
		return Refuse(RefuseReadOnly, probe, "%s", why)
	}
	return nil
}

// checkAliases refuses when a broker holds the log directory of another
// path at which the partition directory dir is mounted.
func checkAliases(dir string) error {
	for _, alias := range dirAliases(dir) {
		if err := CheckNoBroker(filepath.Dir(alias)); err != nil {
			var re *RefusalError
			if errors.As(err, &re) && re.Reason == RefuseLocked {
				return Refuse(RefuseLocked, re.Path, "%s is also mounted at %s (a bind mount), whose log directory's lock is held: %s", dir, alias, re.Detail)
			}
			return err
		}
	}
	return nil
}

// Deferred reports whether err is a refusal that forbids applying a plan
// but not making it: a broker holds the log directory (RefuseLocked), or
// the directory is not writable (RefuseReadOnly). Nothing about the
// partition is unreadable then, so a planner still makes its plan and
// returns it together with the refusal: --dry-run shows the operator what
// would be done, then why it will not be done now.
func Deferred(err error) bool {
	var re *RefusalError
	return errors.As(err, &re) && (re.Reason == RefuseLocked || re.Reason == RefuseReadOnly)
}

// Preflight makes, changing nothing, the checks Apply makes before its
// first change that do not need the lock: the backup directory (never
// inside the log directory, never a file overwritten) and the free space
// on the backup's and the partition's file systems. A dry run calls it so
// that it refuses exactly what the real run would.
func Preflight(job Job, o Options) error {
	a := newApplier(job, o, &Report{})
	bd, err := a.backupDir()
	if err != nil {
		return err
	}
	return a.checkSpace(bd)
}

// CheckLeftovers refuses a partition directory holding a .swap file (the
// broker would swap it in at its next load) or one of kseg's staged files
// without a journal (left by an interrupted what, "kseg injection" or
// "kseg run", whose journal is gone). journalTemp names the temporary file
// of a journal a run was writing when it stopped ("" when none): it had
// changed nothing, and the next run removes it.
func CheckLeftovers(pd *segment.PartitionDir, what string) (journalTemp string, err error) {
	for _, t := range pd.Transient {
		if fi, _ := segment.ParseFileName(filepath.Base(t)); fi.Suffix == segment.SwapSuffix {
			return "", Refuse(RefuseTransientFiles, t, "a .swap file: the broker would swap it in at the next load; let it finish first")
		}
	}
	for _, f := range append(append([]string(nil), pd.Other...), pd.Transient...) {
		switch base := filepath.Base(f); {
		case strings.HasSuffix(base, StagedSuffix):
			return "", Refuse(RefuseTransientFiles, f, "left by an interrupted %s whose journal is gone; inspect it and remove it", what)
		case IsJournal(base) && strings.HasSuffix(base, segment.TempSuffix):
			journalTemp = base
		}
	}
	return journalTemp, nil
}

// Interrupted describes an interrupted edit found through its journal: a
// plan carries it (as its Resume) when it is that edit's, to be finished.
type Interrupted struct {
	State     string   `json:"state"` // JournalPrepared or JournalCommitting
	Started   string   `json:"started"`
	BackupDir string   `json:"backupDir"`
	Done      []string `json:"done"` // commit steps recorded as done
}

// Pending reads dir's journal for a planner of kind's tool: nothing (nil)
// when there is none; a refusal when it is another tool's; else the job it
// records (Validate) and how it was interrupted, for the planner to return
// as its plan.
func Pending(dir string, kind *Kind) (Job, *Interrupted, error) {
	j, err := ReadJournal(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case j.Tool != kind.Tool:
		re := Refuse(RefusePending, dir, "an interrupted %s is pending here (journal %s): rerun it to finish it, or roll it back", j.Tool, filepath.Base(j.Path(dir)))
		re.Remedy = RemedyRollback
		return nil, nil, re
	}
	job, err := Validate(j, dir, kind)
	if err != nil {
		return nil, nil, err
	}
	return job, &Interrupted{State: j.State, Started: j.Started, BackupDir: j.BackupDir, Done: j.Done}, nil
}

// Resumable is a plan a rerun of its interrupted edit resumes: told how
// far the run got, it reports it and goes on from there.
type Resumable interface{ Resumed(*Interrupted) }

// PendingPlan is Pending for a planner of kind, whose plans are P: the
// plan of the interrupted run in dir, as its journal holds it, told how
// far the run got; the zero P (nil) when none is pending.
func PendingPlan[P Resumable](dir string, kind *Kind) (P, error) {
	var none P
	job, resume, err := Pending(dir, kind)
	if err != nil || job == nil {
		return none, err
	}
	p := job.Plan().(P)
	p.Resumed(resume)
	return p, nil
}

// StartPlan is a planner's first look at the partition directory dir of
// log directory logDir, before it reads a segment; every write command's
// planner (inject-barrier, mirror, repair, restore) takes it. A broker
// holding logDir (LogManager's .lock), or a probe directory (dir, or the
// log directory dir is to be created in) that is not writable, refuses the
// apply, not the plan (Deferred): blocked is then returned for the planner
// to hand back with its plan, for a dry run to show; any other refusal is
// err. An interrupted edit of kind whose journal is in dir is finished
// before anything else is planned: its journal's plan is returned as
// pending, told how far it got (PendingPlan); dir "" (a directory still to
// be created) holds no journal. check replaces the read-only probe in
// tests (CheckWritable).
func StartPlan[P Resumable](logDir, probe, dir string, kind *Kind, check func(dir string) (bool, string, error)) (pending P, blocked, err error) {
	var none P
	blocked = CheckWritable(logDir, probe, check)
	if blocked != nil && !Deferred(blocked) {
		return none, nil, blocked
	}
	if dir == "" {
		return none, blocked, nil
	}
	pending, err = PendingPlan[P](dir, kind)
	if err != nil {
		return none, nil, cmp.Or(blocked, err)
	}
	return pending, blocked, nil
}

// IndexChange counts entries of one index kind across the files an edit
// touches.
type IndexChange struct {
	Kept    int `json:"kept"`
	Removed int `json:"removed"`
	Added   int `json:"added"`
}

// Removed counts what a cut takes out of a log.
type Removed struct {
	Batches   int64   `json:"batches"`
	Records   int64   `json:"records"` // v2 recordsCount; a legacy entry counts 1
	Bytes     int64   `json:"bytes"`   // .log bytes, torn and zero tails included
	Offsets   int64   `json:"offsets"` // old log end - cut
	Producers []int64 `json:"producers"`
}

// DeleteOp is the FileOp that deletes path.
func DeleteOp(path, why string) (FileOp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FileOp{}, err
	}
	return FileOp{Name: filepath.Base(path), Action: OpDelete, Why: why, OldSize: st.Size(), NewSize: -1}, nil
}

// WriteOp is the FileOp that gives dir/name content: a replacement, a
// creation, or none (nil) when the file already holds exactly that.
func WriteOp(dir, name string, content []byte, why string) (*FileOp, error) {
	// A file of another size differs: it is not read.
	old, oldSize, err := segment.ReadFileAtMost(filepath.Join(dir, name), int64(len(content)))
	switch {
	case err == nil:
		if old != nil && bytes.Equal(old, content) {
			return nil, nil
		}
		return &FileOp{Name: name, Action: OpReplace, Why: why, OldSize: oldSize, NewSize: int64(len(content)), Content: content}, nil
	case errors.Is(err, os.ErrNotExist):
		return &FileOp{Name: name, Action: OpCreate, Why: why, OldSize: -1, NewSize: int64(len(content)), Content: content}, nil
	default:
		return nil, err
	}
}

// OpList collects a plan's file operations in commit order: every write
// planner (injection, mirror, repair) builds its plan's Ops with one.
type OpList struct {
	// Dir is the partition directory the operations are in.
	Dir string
	// Create: Dir is new (a mirror's), so every write creates, without
	// reading what is not there.
	Create bool
	List   []FileOp
}

// Add appends op as it is.
func (l *OpList) Add(op FileOp) { l.List = append(l.List, op) }

// Delete adds the deletion of path (DeleteOp).
func (l *OpList) Delete(path, why string) error {
	op, err := DeleteOp(path, why)
	if err == nil {
		l.Add(op)
	}
	return err
}

// Write gives the file name content (WriteOp: created, or replaced when
// it exists and differs); changed is false when the file already holds
// exactly that.
func (l *OpList) Write(name string, content []byte, why string) (changed bool, err error) {
	if l.Create {
		l.Add(FileOp{Name: name, Action: OpCreate, Why: why, OldSize: -1, NewSize: int64(len(content)), Content: content})
		return true, nil
	}
	if l.Dir == "" {
		// WriteOp would read name in the working directory and plan a
		// creation where a replacement is due.
		return false, fmt.Errorf("planning %s: an OpList without its partition directory", name)
	}
	op, err := WriteOp(l.Dir, name, content, why)
	if err != nil || op == nil {
		return false, err
	}
	l.Add(*op)
	return true, nil
}

// WriteAppending is Write for a file Kafka only ever appends to while
// its segment is active (OffsetIndex.append, TimeIndex.maybeAppend,
// TransactionIndex.append): when the file's bytes are a prefix of content,
// the rest is appended in place (OpAppend) instead of the file being
// backed up and replaced.
func (l *OpList) WriteAppending(name string, content []byte, why string) (changed bool, err error) {
	if !l.Create && l.Dir != "" {
		old, _, err := segment.ReadFileAtMost(filepath.Join(l.Dir, name), int64(len(content))-1)
		if err == nil && old != nil && len(old) < len(content) && bytes.HasPrefix(content, old) {
			l.Add(FileOp{Name: name, Action: OpAppend, Why: why, OldSize: int64(len(old)), NewSize: int64(len(content)), Content: content[len(old):]})
			return true, nil
		}
	}
	return l.Write(name, content, why)
}

// DeleteSegment plans the deletion of a segment wholly above a cut
// (LocalLog.truncateTo deletes it, LogLoader.recoverLog deletes the
// segments after a truncated one): its index entries count as removed,
// and del deletes its .log and each index it has.
func DeleteSegment(f segment.SegmentFiles, why string, index, timeIndex, txnIndex *IndexChange, del func(path, why string) error) error {
	if f.Index != "" {
		if x, err := segment.ReadOffsetIndex(f.Index, f.BaseOffset); err == nil {
			index.Removed += len(x.Entries)
		}
	}
	if f.TimeIndex != "" {
		if x, err := segment.ReadTimeIndex(f.TimeIndex, f.BaseOffset); err == nil {
			timeIndex.Removed += len(x.Entries)
		}
	}
	if f.TxnIndex != "" {
		if x, err := segment.ReadTxnIndex(f.TxnIndex); err == nil {
			txnIndex.Removed += len(x.Entries)
		}
	}
	for _, path := range []string{f.Log, f.Index, f.TimeIndex, f.TxnIndex} {
		if path != "" {
			if err := del(path, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// Outcome is what a write command's Apply (or Rollback) did, in the terms
// every command reports.
type Outcome struct {
	Dir string
	// NothingToDo: the plan had nothing to do and nothing ran; Reason
	// says why.
	NothingToDo bool
	Reason      string
	// Resumed is set when an interrupted edit was finished (or, with
	// RolledBack, undone); ResumedFrom is the journal state it was found
	// in.
	Resumed     bool
	ResumedFrom string
	RolledBack  bool
	BackupDir   string
	// Steps are the steps run, in order (the names Options.FaultAt
	// receives).
	Steps []string
}

// Result is an Outcome with the job's plan and its read-back verdict in
// the planner's own types: what a write command's Apply returns.
type Result[P any, V Verdict] struct {
	Outcome
	Plan         P
	Verification V // the zero value when the check was skipped or failed
}

// Summary is r's Outcome, nil for a nil r.
func (r *Result[P, V]) Summary() *Outcome {
	if r == nil {
		return nil
	}
	return &r.Outcome
}

// ResultOf is the engine's report r in the planner's types; plan stands
// in when r has no job (the run stopped before it could read one).
func ResultOf[P any, V Verdict](r *Report, plan P) *Result[P, V] {
	if r == nil {
		return nil
	}
	res := &Result[P, V]{Outcome: Outcome{Dir: r.Dir, Resumed: r.Resumed, ResumedFrom: r.ResumedFrom, RolledBack: r.RolledBack,
		BackupDir: r.BackupDir, Steps: r.Steps}, Plan: plan}
	if r.Job != nil {
		if p, ok := r.Job.Plan().(P); ok {
			res.Plan = p
		}
	}
	if v, ok := r.Verdict.(V); ok {
		res.Verification = v
	}
	return res
}

// Execute runs a planner's job: nothing when the plan has nothing to do
// (nothing, with reason); else Apply, or with resume Resume (the plan is
// then the one the journal of job's kind in job.Dir() records).
func Execute[P any, V Verdict](job Job, plan P, nothing bool, reason string, resume bool, o Options) (*Result[P, V], error) {
	if nothing {
		return &Result[P, V]{Outcome: Outcome{Dir: job.Dir(), NothingToDo: true, Reason: reason}, Plan: plan}, nil
	}
	var r *Report
	var err error
	if resume {
		r, err = Resume(job.Dir(), job.Kind(), o)
	} else {
		r, err = Apply(job, o)
	}
	return ResultOf[P, V](r, plan), err
}

// RollbackAs is Rollback of an interrupted edit of kind's tool in dir (any
// other tool's journal is refused), in the planner's types.
func RollbackAs[P any, V Verdict](dir string, o Options, kind *Kind) (*Result[P, V], error) {
	var zero P
	r, err := Rollback(dir, o, kind)
	return ResultOf[P, V](r, zero), err
}

// JobParts are the parts of a Job every planner's job has alike: a
// planner's job embeds them and adds its read-back Check (a method, so
// that a Kind's Decode, which builds jobs, never refers back to the
// planner it belongs to).
type JobParts struct {
	Tool         *Kind
	PartitionDir string
	LogDirectory string
	// FileOps is the plan's own slice: sealing fills in its hashes.
	FileOps []FileOp
	// NewDir: the partition directory is created (Job.CreatesDir).
	NewDir bool
	// Journaled is the plan, as the journal records it (Job.Plan).
	Journaled any
	// Manifest is what the backup manifest records of the tool (nil:
	// nothing).
	Manifest any
}

func (j *JobParts) Kind() *Kind          { return j.Tool }
func (j *JobParts) Dir() string          { return j.PartitionDir }
func (j *JobParts) LogDir() string       { return j.LogDirectory }
func (j *JobParts) Ops() []FileOp        { return j.FileOps }
func (j *JobParts) CreatesDir() bool     { return j.NewDir }
func (j *JobParts) Plan() any            { return j.Journaled }
func (j *JobParts) ManifestDetails() any { return j.Manifest }

// DecodePlan reads the plan a journal recorded (Kind.Decode's first step).
func DecodePlan[P any](raw json.RawMessage) (*P, error) {
	p := new(P)
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	return p, nil
}
