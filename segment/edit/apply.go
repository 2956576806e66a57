package edit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kseg/kseg/segment"
)

type applier struct {
	job         Job
	kind        *Kind
	dir, logDir string
	// ops is the job's own slice: sealing fills in the job's hashes.
	ops []FileOp
	o   Options
	rep *Report
	j   *Journal
	// jf is the journal opened for appending records, pending the records
	// not yet appended (npending of them); see flushRecords.
	jf       *os.File
	pending  []byte
	npending int
}

func newApplier(job Job, o Options, rep *Report) *applier {
	return &applier{job: job, kind: job.Kind(), dir: job.Dir(), logDir: job.LogDir(), ops: job.Ops(), o: o, rep: rep}
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

func (a *applier) path(name string) string { return filepath.Join(a.dir, name) }

// journalPath is the edit's journal: where an interrupted edit's was found
// (an older kseg's name included), else JournalName.
func (a *applier) journalPath() string       { return a.j.Path(a.dir) }
func (a *applier) staged(name string) string { return filepath.Join(a.dir, name+StagedSuffix) }

// lock takes the log directory lock for the duration of the run (see
// takeBrokerLock): a .lock kseg has to create is the log directory's
// owner's, and removed again when the lock is closed.
func (a *applier) lock() (io.Closer, error) {
	if err := a.step("lock"); err != nil {
		return nil, err
	}
	locks := multiCloser{}
	// The log directory's, then that of every other path the partition
	// directory is mounted at (dirAliases): a broker running there must
	// not start while kseg writes either.
	dirs := []string{a.logDir}
	for _, alias := range dirAliases(a.dir) {
		dirs = append(dirs, filepath.Dir(alias))
	}
	for _, ld := range dirs {
		path := filepath.Join(ld, segment.LockName)
		uid, gid := -1, -1
		if fi, err := os.Stat(ld); err == nil {
			uid, gid = fileOwner(fi)
		}
		f, err := takeBrokerLock(path, uid, gid)
		switch {
		case errors.Is(err, errLockHeld):
			err = Refuse(RefuseLocked, path, "another process holds the log directory lock: a broker is running on it; stop it first")
		case errors.Is(err, errFlockHeld):
			err = refuseHeld(path, LockHolder{Kind: LockFlock})
		}
		if err != nil {
			locks.Close()
			return nil, err
		}
		locks = append(locks, f)
	}
	return locks, nil
}

// multiCloser closes each of its closers, last first.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var first error
	for i := len(m) - 1; i >= 0; i-- {
		if err := m[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Apply executes a job:
//
//  1. take the log directory's lock (as a broker would), so no broker can
//     start meanwhile;
//  2. hash every file the job changes and check it is as planned;
//  3. write the journal (state prepared) into the partition directory;
//  4. back up every file that changes or goes into the backup directory
//     with a manifest: a copy (O_EXCL, fsynced, verified against the
//     hash). Never a hard link: a broker started after a rollback writes
//     its active segment and indexes in place, and would change a backup
//     that shared their inode;
//  5. write every new file's content to a staged temp file next to it,
//     fsync it while reading it back (checkStaged);
//  6. journal state committing; then rename each staged file over its
//     target or delete the file, fsyncing the directory after each, the
//     journal recording each step;
//  7. remove the journal; read the result back (Job.Check).
//
// A crash before step 6 leaves every Kafka file as it was; from step 6 on
// every file is either its old or its new content, and a rerun (Resume)
// finishes.
func Apply(job Job, o Options) (*Report, error) {
	rep := &Report{Dir: job.Dir(), Kind: job.Kind(), Job: job}
	a := newApplier(job, o, rep)
	return rep, a.run(false)
}

// Resume finishes the interrupted edit whose journal is in dir, an edit of
// kind's tool.
func Resume(dir string, kind *Kind, o Options) (*Report, error) {
	dir = filepath.Clean(dir)
	rep := &Report{Dir: dir, Kind: kind}
	a := &applier{kind: kind, dir: dir, logDir: segment.LogDirOf(dir), o: o, rep: rep}
	return rep, a.run(true)
}

// decode rebuilds the job a journal records, refusing another tool's.
func decode(j *Journal, dir string, kinds ...*Kind) (Job, error) {
	for _, k := range kinds {
		if k.Tool == j.Tool {
			job, err := k.Decode(k, j.Plan, dir, segment.LogDirOf(dir))
			if err != nil {
				return nil, err
			}
			ops := job.Ops()
			if err := checkOps(j.Path(dir), ops); err != nil {
				return nil, err
			}
			// The appended bytes' hashes the journal's records give.
			for i := range ops {
				if h := j.appended[ops[i].Name]; h != "" && ops[i].Action == OpAppend {
					ops[i].NewSHA256 = h
				}
			}
			return job, nil
		}
	}
	return nil, Refuse(RefuseOtherTool, j.Path(dir), "the journal of an interrupted %s: finish it or roll it back with %s", j.Tool, j.Tool)
}

// run takes the lock and applies the work, or finishes the interrupted
// run its journal records.
func (a *applier) run(resume bool) error {
	lk, err := a.lock()
	if err != nil {
		return err
	}
	defer lk.Close()
	defer a.closeJournal()
	if resume {
		return a.resume()
	}
	return a.fresh()
}

func (a *applier) fresh() error {
	// Under the lock, before anything: a journal that appeared since the
	// plan (another kseg run that stopped mid-edit) is that run's, to be
	// finished or rolled back; sealing against it would refuse, and the
	// clean-up of a refusal would then remove the other run's journal and
	// staged files, leaving its half-applied partition with no way out.
	if HasJournal(a.dir) {
		re := Refuse(RefusePending, a.dir, "an interrupted kseg edit left its journal here since this one was planned: finish it or roll it back first")
		re.Remedy = RemedyRollback
		return re
	}
	if a.job.CreatesDir() {
		if err := a.step("mkdir"); err != nil {
			return err
		}
		if err := a.makeDir(); err != nil {
			return err
		}
	}
	if err := a.step("seal"); err != nil {
		return err
	}
	if err := a.start(); err != nil {
		if !isFault(err) {
			// Nothing changed yet: leave no journal, and no partition
			// directory a mirror was about to fill.
			a.abandon()
		}
		return err
	}
	return a.fromPrepared()
}

// start seals the files, checks the backup directory and the free space,
// and writes the journal.
func (a *applier) start() error {
	if err := a.seal(); err != nil {
		return err
	}
	bd, err := a.backupDir()
	if err != nil {
		return err
	}
	_, err = os.Lstat(bd)
	created := errors.Is(err, os.ErrNotExist)
	if err := a.checkSpace(bd); err != nil {
		return err
	}
	if err := a.checkJournalSize(); err != nil {
		return err
	}
	// The temporary file an older kseg's journal was being written
	// through when it stopped: nothing changed then (see CheckLeftovers).
	_ = os.Remove(filepath.Join(a.dir, LegacyJournalName+segment.TempSuffix))
	a.j = &Journal{Version: journalVersion, Tool: a.kind.Tool, State: JournalPrepared,
		Started: a.now().UTC().Format(time.RFC3339Nano), Dir: a.dir, BackupDir: bd, BackupDirCreated: created, Done: []string{}}
	if err := a.saveJournal("journal:" + JournalPrepared); err != nil {
		return err
	}
	// Only now is the backup directory this run's to report (and, on a
	// failure, to clean up).
	a.rep.BackupDir = bd
	return nil
}

// fromPrepared runs backup, staging, commit and finish.
func (a *applier) fromPrepared() error {
	if err := a.prepare(); err != nil {
		if !isFault(err) {
			// Nothing in the partition changed yet: undo the staging and
			// the backup so that a failure (disk full, say) leaves it as it
			// was, with nothing to finish and nothing in the way of a
			// rerun.
			a.cleanup()
		}
		return err
	}
	a.j.State = JournalCommitting
	// Staging filled in the hashes of new contents with source ranges:
	// the committing journal records them, for a rerun to tell old from
	// new.
	if err := a.saveJournal("journal:" + JournalCommitting); err != nil {
		if !isFault(err) {
			a.cleanup()
		}
		return err
	}
	return a.commitAndFinish(nil)
}

// commitAndFinish commits the staged files (states: what a rerun found
// each file to be, nil on a first run) and finishes; a commit that fails
// other than by an injected fault is undone.
func (a *applier) commitAndFinish(states map[string]fileState) error {
	if err := a.commit(states); err != nil {
		if !isFault(err) {
			return a.undo(err)
		}
		return err
	}
	return a.finish()
}

// commit renames each staged file over its target, or deletes the file,
// or appends to it, and records each step in the journal (in batches:
// flushRecords says why that is safe). states, for a resumed run, says
// what each file is now (nil: every file is as before): a step the journal
// records as done is skipped only when its file is its new content, so
// that a file put back by hand since is changed again, not trusted to the
// journal.
func (a *applier) commit(states map[string]fileState) error {
	done := make(map[string]bool, len(a.j.Done))
	for _, name := range a.j.Done {
		done[name] = true
	}
	for i := range a.ops {
		op := &a.ops[i]
		st := stateOld
		if states != nil {
			st = states[op.Name]
		}
		if done[op.Name] && st == stateNew {
			continue
		}
		switch {
		case st == stateOther:
			return Refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the %s nor after it", a.kind.Noun)
		case op.Action == OpAppend && (st == stateOld || st == stateTorn):
			if err := a.step("commit:" + op.Name); err != nil {
				return err
			}
			if err := a.appendTo(op); err != nil {
				return err
			}
		case st == stateOld:
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
		}
		if !done[op.Name] {
			done[op.Name] = true
			a.j.Done = append(a.j.Done, op.Name)
		}
		if err := a.step("journal:" + op.Name); err != nil {
			return err
		}
		if err := a.recordDone(op); err != nil {
			return err
		}
	}
	return a.flushRecords()
}

// finish reads the edit back (Job.Check, unless Options.SkipVerify),
// records the result in the backup's manifest and removes the journal:
// the edit is complete. A read-back that fails (or cannot be made) keeps
// the journal, so that the edit can still be rolled back; the run
// returns the verdict (or the error).
func (a *applier) finish() error {
	a.closeJournal()
	if !a.o.SkipVerify {
		v, err := a.job.Check()
		if err != nil {
			return fmt.Errorf("verifying the %s (its journal %s is kept: roll it back, or rerun it once the cause is removed): %w", a.kind.Noun, a.journalPath(), err)
		}
		a.rep.Verdict = v
		if !v.OK() {
			a.rep.JournalKept = true
			return nil
		}
	}
	if err := a.recordResult(); err != nil {
		if !isFault(err) {
			// A failure, not a crash (a full disk): the edit is undone
			// like one in the commit, rather than left complete with a
			// backup that cannot say what it left.
			return a.undo(err)
		}
		return err
	}
	if err := a.step("journal:remove"); err != nil {
		return err
	}
	if err := os.Remove(a.journalPath()); err != nil {
		return err
	}
	return syncDir(a.dir)
}

// abandon undoes a prepared (uncommitted) run: staged files and the
// journal go; the backups stay.
func (a *applier) abandon() {
	a.removeStaged()
	_ = os.Remove(a.journalPath() + segment.TempSuffix)
	_ = os.Remove(a.journalPath())
	_ = syncDir(a.dir)
	a.removeCreatedDir()
}

// removeCreatedDir removes the partition directory a mirror created, if
// nothing is left in it.
func (a *applier) removeCreatedDir() {
	if a.job.CreatesDir() && os.Remove(a.dir) == nil {
		_ = syncDir(a.logDir)
	}
}

func (a *applier) removeStaged() {
	for _, op := range a.ops {
		_ = os.Remove(a.staged(op.Name))
	}
}
