package barrier

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kseg/kseg/segment"
)

// ApplyOptions control Apply and Rollback.
type ApplyOptions struct {
	// BackupDir receives a copy of every file that changes or goes, and a
	// manifest (BackupManifestName). "" creates a new timestamped folder
	// in the current working directory. It must not be inside the log
	// directory: a broker refuses to start when its log directory holds a
	// folder that is not a topic-partition. Ignored when resuming (the
	// journal names the backup of the interrupted run).
	BackupDir string
	// FaultAt, when set, is called before every step with the step's name
	// (see Report.Steps). A non-nil result stops Apply right there, as a
	// crash would: nothing is cleaned up, and a rerun must finish or roll
	// back the injection. For tests.
	FaultAt func(step string) error
	// Now is the clock for the journal and the default backup folder's
	// name; nil means time.Now.
	Now func() time.Time
	// SkipVerify skips the read-back verification after the injection.
	SkipVerify bool
}

// BackupManifestName is the manifest written into the backup directory.
const BackupManifestName = "kseg-backup.json"

// FaultError is returned when ApplyOptions.FaultAt stopped the run.
type FaultError struct {
	Step string
	Err  error
}

func (e *FaultError) Error() string { return fmt.Sprintf("stopped at step %s: %v", e.Step, e.Err) }
func (e *FaultError) Unwrap() error { return e.Err }

// Report is what Apply (or Rollback) did.
type Report struct {
	Dir         string `json:"dir"`
	NothingToDo bool   `json:"nothingToDo"`
	Reason      string `json:"reason,omitempty"`
	// Resumed is set when an interrupted injection was finished;
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

// work is what the crash-safe applier executes: the file operations of an
// injection plan or of a mirror plan, in one partition directory.
type work struct {
	dir, logDir string
	// ops is the plan's own slice: sealing fills in the plan's hashes.
	ops  []FileOp
	tool string
	// createDir: the partition directory does not exist yet (a mirror into
	// a new partition); the applier creates it after taking the lock, and
	// a rollback removes it again.
	createDir bool
	inject    *Plan
	mirror    *MirrorPlan
	repair    *RepairPlan
}

// Tools, as recorded in the journal and the backup manifest.
const (
	toolInject = "kseg inject-barrier"
	toolMirror = "kseg mirror"
	toolRepair = "kseg repair"
)

func injectWork(p *Plan) work {
	return work{dir: p.Dir, logDir: p.LogDir, ops: p.Ops, tool: toolInject, inject: p}
}

func mirrorWork(p *MirrorPlan) work {
	return work{dir: p.Dir, logDir: p.LogDir, ops: p.Ops, tool: toolMirror, createDir: p.CreateDir, mirror: p}
}

func repairWork(p *RepairPlan) work {
	return work{dir: p.Dir, logDir: p.LogDir, ops: p.Ops, tool: toolRepair, repair: p}
}

// workOf is the work a journal records, in partition directory dir.
func workOf(j *journal, dir string) work {
	logDir := segment.LogDirOf(dir)
	if j.Mirror != nil {
		j.Mirror.Dir, j.Mirror.LogDir = dir, logDir
		return mirrorWork(j.Mirror)
	}
	if j.Repair != nil {
		j.Repair.Dir, j.Repair.LogDir = dir, logDir
		return repairWork(j.Repair)
	}
	j.Plan.Dir, j.Plan.LogDir = dir, logDir
	return injectWork(j.Plan)
}

type applier struct {
	w   work
	o   ApplyOptions
	rep *Report
	j   *journal
}

func (a *applier) now() time.Time {
	if a.o.Now != nil {
		return a.o.Now()
	}
	return time.Now()
}

// step records a step and gives the fault hook its chance to stop there.
func (a *applier) step(name string) error {
	a.rep.Steps = append(a.rep.Steps, name)
	if a.o.FaultAt != nil {
		if err := a.o.FaultAt(name); err != nil {
			return &FaultError{Step: name, Err: err}
		}
	}
	return nil
}

func isFault(err error) bool {
	var fe *FaultError
	return errors.As(err, &fe)
}

func (a *applier) path(name string) string   { return filepath.Join(a.w.dir, name) }
func (a *applier) staged(name string) string { return filepath.Join(a.w.dir, name+stagedSuffix) }

// lock takes the log directory lock for the duration of the run.
func (a *applier) lock() (io.Closer, error) {
	if err := a.step("lock"); err != nil {
		return nil, err
	}
	path := filepath.Join(a.w.logDir, segment.LockName)
	f, err := takeBrokerLock(path)
	if errors.Is(err, errLockHeld) {
		return nil, refuse(RefuseLocked, path, "another process holds the log directory lock: a broker is running on it; stop it first")
	}
	return f, err
}

// Apply executes a plan from PlanInjection (or finishes the interrupted
// injection a resume plan describes):
//
//  1. take the log directory's lock (as a broker would), so no broker can
//     start meanwhile;
//  2. hash every file the plan changes and check it is as planned;
//  3. write the journal (state prepared) into the partition directory;
//  4. copy every file that changes or goes into the backup directory
//     (O_EXCL, fsynced, verified against the hash) with a manifest;
//  5. write every new file's content to a staged temp file next to it,
//     fsync, verify;
//  6. journal state committing; then rename each staged file over its
//     target or delete the file, fsyncing the directory after each, the
//     journal recording each step;
//  7. remove the journal; verify the result (Verify).
//
// A crash before step 6 leaves every Kafka file as it was; from step 6 on
// every file is either its old or its new content, and a rerun finishes.
func Apply(p *Plan, o ApplyOptions) (*Report, error) {
	rep := &Report{Dir: p.Dir, Plan: p}
	if p.NothingToDo {
		rep.NothingToDo, rep.Reason = true, p.Reason
		return rep, nil
	}
	a := &applier{w: injectWork(p), o: o, rep: rep}
	if err := a.run(p.Resume != nil); err != nil {
		return rep, err
	}
	if !o.SkipVerify {
		v, err := Verify(p.Dir, p.BarrierOffset)
		if err != nil {
			return rep, fmt.Errorf("verifying the injection: %w", err)
		}
		rep.Verification = v
	}
	return rep, nil
}

// run takes the lock and applies the work, or finishes the interrupted
// run its journal records.
func (a *applier) run(resume bool) error {
	lk, err := a.lock()
	if err != nil {
		return err
	}
	defer lk.Close()
	if resume {
		return a.resume()
	}
	return a.fresh()
}

func (a *applier) fresh() error {
	if a.w.createDir {
		if err := a.step("mkdir"); err != nil {
			return err
		}
		if err := os.Mkdir(a.w.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := syncDir(a.w.logDir); err != nil {
			return err
		}
	}
	if err := a.step("seal"); err != nil {
		return err
	}
	if err := a.seal(); err != nil {
		return err
	}
	bd, err := a.backupDir()
	if err != nil {
		return err
	}
	a.rep.BackupDir = bd
	a.j = &journal{Version: journalVersion, Tool: a.w.tool, State: journalPrepared,
		Started: a.now().UTC().Format(time.RFC3339Nano), Dir: a.w.dir, BackupDir: bd, Done: []string{},
		Plan: a.w.inject, Mirror: a.w.mirror, Repair: a.w.repair}
	if err := a.saveJournal("journal:" + journalPrepared); err != nil {
		return err
	}
	return a.fromPrepared()
}

// fromPrepared runs backup, staging, commit and finish.
func (a *applier) fromPrepared() error {
	if err := a.prepare(); err != nil {
		if !isFault(err) {
			// Nothing in the partition changed yet: undo the staging so
			// that a failure (disk full, say) leaves it as it was.
			a.abandon()
		}
		return err
	}
	a.j.State = journalCommitting
	if err := a.saveJournal("journal:" + journalCommitting); err != nil {
		return err
	}
	if err := a.commit(nil); err != nil {
		return err
	}
	return a.finish()
}

// seal hashes every file the plan touches: the old content (which must
// still be what the plan saw) and the new one.
func (a *applier) seal() error {
	for i := range a.w.ops {
		op := &a.w.ops[i]
		path := a.path(op.Name)
		like := path
		if op.Action == OpCreate {
			like = a.w.dir
		}
		fi, err := os.Stat(like)
		if err != nil {
			return err
		}
		op.Perm = uint32(fi.Mode().Perm())
		if op.Action == OpCreate {
			op.Perm = 0o644
		}
		op.UID, op.GID = fileOwner(fi)
		if op.Action == OpCreate {
			if _, err := os.Lstat(path); err == nil {
				return refuse(RefuseChanged, path, "appeared after the plan was made")
			}
			if op.NewSHA256, err = contentHash(op.Content, op.Sources); err != nil {
				return err
			}
			continue
		}
		keep := int64(-1)
		if op.Action == OpReplace && op.KeepPrefix > 0 {
			keep = op.KeepPrefix
		}
		old, derived, size, err := hashFile(path, keep, op.Content, op.Sources)
		if err != nil {
			return err
		}
		if size != op.OldSize {
			return refuse(RefuseChanged, path, "%d bytes, the plan saw %d", size, op.OldSize)
		}
		op.OldSHA256 = old
		switch {
		case op.Action == OpDelete:
		case keep >= 0:
			op.NewSHA256 = derived
		default:
			if op.NewSHA256, err = contentHash(op.Content, op.Sources); err != nil {
				return err
			}
		}
	}
	return nil
}

// backupDir resolves and checks the backup directory.
func (a *applier) backupDir() (string, error) {
	bd := a.o.BackupDir
	if bd == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		stamp := a.now().UTC().Format("20060102T150405.000Z")
		bd = filepath.Join(cwd, fmt.Sprintf("kseg-backup-%s-%s", filepath.Base(a.w.dir), stamp))
		for i := 2; ; i++ {
			if _, err := os.Lstat(bd); errors.Is(err, os.ErrNotExist) {
				break
			}
			bd = filepath.Join(cwd, fmt.Sprintf("kseg-backup-%s-%s-%d", filepath.Base(a.w.dir), stamp, i))
		}
	}
	bd, err := filepath.Abs(bd)
	if err != nil {
		return "", err
	}
	if within(bd, a.w.logDir) {
		return "", refuse(RefuseBackupDir, bd, "inside the log directory %s: a broker refuses to start with a folder there that is not a partition; run from elsewhere or pass --backup-dir", a.w.logDir)
	}
	if st, err := os.Stat(bd); err == nil {
		if !st.IsDir() {
			return "", refuse(RefuseBackupDir, bd, "not a directory")
		}
		for _, name := range append(a.backupNames(), BackupManifestName) {
			if _, err := os.Lstat(filepath.Join(bd, name)); err == nil {
				return "", refuse(RefuseBackupDir, filepath.Join(bd, name), "already exists; a backup is never overwritten")
			}
		}
	}
	return bd, nil
}

// backupNames are the files a backup copies: every file that changes or
// goes.
func (a *applier) backupNames() []string {
	var names []string
	for _, op := range a.w.ops {
		if op.Action != OpCreate {
			names = append(names, op.Name)
		}
	}
	return names
}

// saveJournal writes the journal atomically: temp file, fsync, rename,
// fsync the directory.
func (a *applier) saveJournal(step string) error {
	if err := a.step(step); err != nil {
		return err
	}
	b, err := json.MarshalIndent(a.j, "", "  ")
	if err != nil {
		return err
	}
	return a.writeAtomic(journalPath(a.w.dir), append(b, '\n'), step)
}

// writeAtomic writes data to path through path.tmp. A leftover path.tmp
// is kseg's own (the journal or the manifest), so it is replaced.
func (a *applier) writeAtomic(path string, data []byte, step string) error {
	tmp := path + segment.TempSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := a.step(step + ":tmp"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// prepare makes the backups and stages the new contents. Nothing in the
// partition changes; a file already backed up or staged by an interrupted
// run is verified and reused or redone.
func (a *applier) prepare() error {
	bd := a.j.BackupDir
	if err := a.step("backup-dir"); err != nil {
		return err
	}
	if err := os.MkdirAll(bd, 0o755); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(bd)); err != nil {
		return err
	}
	for i := range a.w.ops {
		op := &a.w.ops[i]
		if op.Action == OpCreate {
			continue
		}
		if err := a.step("backup:" + op.Name); err != nil {
			return err
		}
		if err := a.backup(op); err != nil {
			return err
		}
	}
	if err := a.step("backup-manifest"); err != nil {
		return err
	}
	if err := a.writeManifest(); err != nil {
		return err
	}
	for i := range a.w.ops {
		op := &a.w.ops[i]
		if op.Action == OpDelete {
			continue
		}
		if err := a.step("stage:" + op.Name); err != nil {
			return err
		}
		if err := a.stage(op, a.path(op.Name), op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "stage:"+op.Name); err != nil {
			return err
		}
	}
	return nil
}

// backup copies a file into the backup directory: to name.partial created
// with O_EXCL, fsynced, checked against the sealed hash, then renamed to
// name (never over an existing file). An existing backup of an
// interrupted run is reused only if its hash is right.
func (a *applier) backup(op *FileOp) error {
	bd := a.j.BackupDir
	dst := filepath.Join(bd, op.Name)
	if _, err := os.Lstat(dst); err == nil {
		sum, _, _, err := hashFile(dst, -1, nil, nil)
		if err != nil {
			return err
		}
		if sum != op.OldSHA256 {
			return refuse(RefuseBackupDir, dst, "exists and is not a copy of %s", op.Name)
		}
		return nil
	}
	partial := dst + ".partial"
	if err := os.Remove(partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	src, err := os.Open(a.path(op.Name))
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return err
	}
	if err := a.step("backup:" + op.Name + ":tmp"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	sum, _, _, err := hashFile(partial, -1, nil, nil)
	if err != nil {
		return err
	}
	if sum != op.OldSHA256 {
		return refuse(RefuseChanged, a.path(op.Name), "changed while it was being backed up")
	}
	if err := os.Link(partial, dst); err != nil {
		return err
	}
	if err := os.Remove(partial); err != nil {
		return err
	}
	return syncDir(bd)
}

// manifest is the backup directory's description of itself, enough to
// restore by hand.
type manifest struct {
	Version       int            `json:"version"`
	Tool          string         `json:"tool"`
	Created       string         `json:"created"`
	PartitionDir  string         `json:"partitionDir"`
	Mode          Mode           `json:"mode,omitempty"`
	Cut           *int64         `json:"cut,omitempty"`
	BarrierOffset *int64         `json:"barrierOffset,omitempty"`
	Source        string         `json:"source,omitempty"` // a mirror's source partition
	From          *int64         `json:"from,omitempty"`   // a mirror's copied range [from, to)
	To            *int64         `json:"to,omitempty"`
	Files         []manifestFile `json:"files"`
	Restore       string         `json:"restore"`
}

type manifestFile struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Size   int64  `json:"size"`             // size before (-1: created by the injection)
	SHA256 string `json:"sha256,omitempty"` // content before
}

func (a *applier) writeManifest() error {
	m := manifest{Version: 1, Tool: a.w.tool, Created: a.j.Started, PartitionDir: a.w.dir,
		Restore: "With the broker stopped: copy every file listed with a size back into the partition directory, " +
			"and delete every file listed with size -1 (created by the injection). `kseg inject-barrier --rollback` does this for an interrupted run."}
	if p := a.w.inject; p != nil {
		m.Mode, m.Cut, m.BarrierOffset = p.Mode, &p.Cut, &p.BarrierOffset
	}
	if p := a.w.mirror; p != nil {
		m.Source, m.From, m.To = p.Src, &p.From, &p.To
		m.Restore = "With the broker stopped: copy every file listed with a size back into the partition directory, " +
			"and delete every file listed with size -1 (created by the mirror). `kseg mirror --rollback` does this for an interrupted run."
	}
	if p := a.w.repair; p != nil {
		m.Restore = "With the broker stopped: copy every file listed with a size back into the partition directory, " +
			"and delete every file listed with size -1 (created by the repair). `kseg repair --rollback` does this for an interrupted run."
	}
	for _, op := range a.w.ops {
		m.Files = append(m.Files, manifestFile{Name: op.Name, Action: op.Action, Size: op.OldSize, SHA256: op.OldSHA256})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return a.writeAtomic(filepath.Join(a.j.BackupDir, BackupManifestName), append(b, '\n'), "backup-manifest")
}

// stage writes "keep bytes of src, then content, then the source ranges"
// to name.kseg-new next to the target, with the target's mode and owner,
// fsyncs it and checks its hash.
func (a *applier) stage(op *FileOp, src string, keep int64, content []byte, srcs []SourceRange, want, step string) error {
	staged := a.staged(op.Name)
	if err := os.Remove(staged); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(op.Perm))
	if err != nil {
		return err
	}
	fail := func(err error) error { f.Close(); return err }
	if keep > 0 {
		s, err := os.Open(src)
		if err != nil {
			return fail(err)
		}
		// *os.File.ReadFrom with an io.LimitedReader over a file uses
		// copy_file_range on Linux: the kept prefix is copied in the
		// kernel (and shared, on file systems with reflinks).
		n, err := io.Copy(f, io.LimitReader(s, keep))
		s.Close()
		if err != nil {
			return fail(err)
		}
		if n != keep {
			return fail(fmt.Errorf("%s: %d bytes, need %d", src, n, keep))
		}
	}
	if _, err := f.Write(content); err != nil {
		return fail(err)
	}
	for _, r := range srcs {
		if err := copyRange(f, r); err != nil {
			return fail(err)
		}
	}
	if err := a.step(step + ":tmp"); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Files kseg writes as root must stay writable by the broker's user.
	if err := setOwner(staged, op.UID, op.GID); err != nil {
		return err
	}
	sum, _, _, err := hashFile(staged, -1, nil, nil)
	if err != nil {
		return err
	}
	if sum != want {
		return refuse(RefuseChanged, src, "the staged copy does not have the expected content (did %s change?)", src)
	}
	return syncDir(a.w.dir)
}

// commit renames each staged file over its target, or deletes the file,
// and records each step in the journal. states, for a resumed run, says
// which files an interrupted run already changed (nil: none).
func (a *applier) commit(states map[string]fileState) error {
	for i := range a.w.ops {
		op := &a.w.ops[i]
		if slices.Contains(a.j.Done, op.Name) {
			continue
		}
		st := stateOld
		if states != nil {
			st = states[op.Name]
		}
		switch st {
		case stateOther:
			return refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the injection nor after it")
		case stateOld:
			if err := a.step("commit:" + op.Name); err != nil {
				return err
			}
			if op.Action == OpDelete {
				if err := os.Remove(a.path(op.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			} else if err := os.Rename(a.staged(op.Name), a.path(op.Name)); err != nil {
				return err
			}
			if err := syncDir(a.w.dir); err != nil {
				return err
			}
		}
		a.j.Done = append(a.j.Done, op.Name)
		if err := a.saveJournal("journal:" + op.Name); err != nil {
			return err
		}
	}
	return nil
}

// finish removes the journal: the injection is complete.
func (a *applier) finish() error {
	if err := a.step("journal:remove"); err != nil {
		return err
	}
	if err := os.Remove(journalPath(a.w.dir)); err != nil {
		return err
	}
	return syncDir(a.w.dir)
}

// abandon undoes a prepared (uncommitted) run: staged files and the
// journal go; the backups stay.
func (a *applier) abandon() {
	a.removeStaged()
	_ = os.Remove(journalPath(a.w.dir) + segment.TempSuffix)
	_ = os.Remove(journalPath(a.w.dir))
	_ = syncDir(a.w.dir)
	a.removeCreatedDir()
}

// removeCreatedDir removes the partition directory a mirror created, if
// nothing is left in it.
func (a *applier) removeCreatedDir() {
	if a.w.createDir && os.Remove(a.w.dir) == nil {
		_ = syncDir(a.w.logDir)
	}
}

func (a *applier) removeStaged() {
	for _, op := range a.w.ops {
		_ = os.Remove(a.staged(op.Name))
	}
}

// resume finishes the injection recorded in the journal.
func (a *applier) resume() error {
	j, err := readJournal(a.w.dir)
	if err != nil {
		return err
	}
	a.w = workOf(j, a.w.dir)
	a.j = j
	a.rep.Plan, a.rep.Mirror, a.rep.Repair = j.Plan, j.Mirror, j.Repair
	a.rep.Resumed, a.rep.ResumedFrom, a.rep.BackupDir = true, j.State, j.BackupDir
	if err := a.step("resume:" + j.State); err != nil {
		return err
	}
	_ = os.Remove(journalPath(a.w.dir) + segment.TempSuffix)
	switch j.State {
	case journalPrepared:
		// Nothing was committed: every file must still be as sealed.
		for i := range a.w.ops {
			op := &a.w.ops[i]
			st, err := classify(a.w.dir, op)
			if err != nil {
				return err
			}
			if st != stateOld {
				return refuse(RefuseJournalMismatch, a.path(op.Name), "changed since the interrupted injection was planned; roll it back (--rollback) and plan again")
			}
		}
		return a.fromPrepared()
	default: // journalCommitting
		states := map[string]fileState{}
		for i := range a.w.ops {
			op := &a.w.ops[i]
			st, err := classify(a.w.dir, op)
			if err != nil {
				return err
			}
			states[op.Name] = st
			switch {
			case st == stateOther:
				return refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the injection nor after it")
			case st == stateOld && op.Action != OpDelete:
				if err := a.ensureStaged(op); err != nil {
					return err
				}
			}
		}
		if err := a.commit(states); err != nil {
			return err
		}
		return a.finish()
	}
}

// ensureStaged checks a staged file of a committing run, restaging it from
// the (unchanged) target or the backup if it is missing or wrong.
func (a *applier) ensureStaged(op *FileOp) error {
	if sum, _, _, err := hashFile(a.staged(op.Name), -1, nil, nil); err == nil && sum == op.NewSHA256 {
		return nil
	}
	src := a.path(op.Name)
	if op.Action == OpCreate {
		src = ""
	}
	return a.stage(op, src, op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "restage:"+op.Name)
}

// Rollback undoes the interrupted injection (or mirror, or repair) whose journal is
// in dir:
// every file changed or deleted is copied back from the backup, every file
// created is removed, then the staged files and the journal. A completed
// injection has no journal; restore it from its backup by hand (the
// manifest says how).
func Rollback(dir string, o ApplyOptions) (*Report, error) {
	dir = filepath.Clean(dir)
	j, err := readJournal(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no interrupted operation to roll back (no %s)", dir, JournalName)
		}
		return nil, err
	}
	rep := &Report{Dir: dir, Plan: j.Plan, Mirror: j.Mirror, Repair: j.Repair, RolledBack: true, Resumed: true, ResumedFrom: j.State, BackupDir: j.BackupDir}
	a := &applier{w: workOf(j, dir), o: o, rep: rep, j: j}
	lk, err := a.lock()
	if err != nil {
		return rep, err
	}
	defer lk.Close()
	for i := len(a.w.ops) - 1; i >= 0; i-- {
		op := &a.w.ops[i]
		st, err := classify(dir, op)
		if err != nil {
			return rep, err
		}
		switch {
		case st == stateOld:
			continue
		case st == stateOther:
			return rep, refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the injection nor after it; restore it from %s by hand", j.BackupDir)
		}
		if err := a.step("rollback:" + op.Name); err != nil {
			return rep, err
		}
		if op.Action == OpCreate {
			if err := os.Remove(a.path(op.Name)); err != nil {
				return rep, err
			}
		} else {
			bk := filepath.Join(j.BackupDir, op.Name)
			if err := a.stage(op, bk, op.OldSize, nil, nil, op.OldSHA256, "rollback:"+op.Name); err != nil {
				return rep, fmt.Errorf("restoring %s from %s: %w", op.Name, bk, err)
			}
			if err := os.Rename(a.staged(op.Name), a.path(op.Name)); err != nil {
				return rep, err
			}
		}
		if err := syncDir(dir); err != nil {
			return rep, err
		}
	}
	a.removeStaged()
	if err := a.step("journal:remove"); err != nil {
		return rep, err
	}
	_ = os.Remove(journalPath(dir) + segment.TempSuffix)
	if err := os.Remove(journalPath(dir)); err != nil {
		return rep, err
	}
	if err := syncDir(dir); err != nil {
		return rep, err
	}
	a.removeCreatedDir()
	return rep, nil
}
