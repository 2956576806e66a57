// A rerun of an interrupted edit (Resume): the journal read back, every file
// classified as its content before the edit or after it, and the edit
// finished from where the journal says it stopped.

package edit

import (
	"os"

	"github.com/kseg/kseg/segment"
)

// resume finishes the injection recorded in the journal.
func (a *applier) resume() error {
	j, err := ReadJournal(a.dir)
	if err != nil {
		return err
	}
	job, err := decode(j, a.dir, a.kind)
	if err != nil {
		return err
	}
	a.job, a.ops, a.j = job, job.Ops(), j
	a.rep.Job = job
	a.rep.Resumed, a.rep.ResumedFrom, a.rep.BackupDir = true, j.State, j.BackupDir
	if err := a.checkBackup(); err != nil {
		return err
	}
	if err := a.step("resume:" + j.State); err != nil {
		return err
	}
	_ = os.Remove(a.journalPath() + segment.TempSuffix)
	switch j.State {
	case JournalPrepared:
		// Nothing was committed: every file must still be as sealed.
		for i := range a.ops {
			op := &a.ops[i]
			st, err := classify(a.dir, op)
			if err != nil {
				return err
			}
			if st != stateOld {
				return Refuse(RefuseJournalMismatch, a.path(op.Name), "changed since the interrupted %s was planned; roll it back and plan again", a.kind.Noun)
			}
		}
		return a.fromPrepared()
	default: // JournalCommitting
		states := map[string]fileState{}
		for i := range a.ops {
			op := &a.ops[i]
			st, err := classify(a.dir, op)
			if err != nil {
				return err
			}
			states[op.Name] = st
			switch {
			case st == stateOther:
				return Refuse(RefuseJournalMismatch, a.path(op.Name), "neither the content before the %s nor after it", a.kind.Noun)
			case st == stateOld && op.stagedBeside():
				if err := a.ensureStaged(op); err != nil {
					return err
				}
			}
		}
		// The header again, with the steps recorded so far: the records
		// this run appends then follow a whole line (a crash may have cut
		// the last one short), in a file that is this journal's alone
		// (never appended to through a second hard link).
		if err := a.saveJournal("journal:" + JournalCommitting); err != nil {
			return err
		}
		return a.commitAndFinish(states)
	}
}

// ensureStaged checks a staged file of a committing run, restaging it from
// the (unchanged) target or the backup if it is missing or wrong.
func (a *applier) ensureStaged(op *FileOp) error {
	if bySources(op) {
		if same, _ := sameAsSources(a.staged(op.Name), op.Sources); same {
			return nil
		}
	} else if sum, _, _, err := hashFile(a.staged(op.Name), -1, nil, nil); err == nil && sum == op.NewSHA256 {
		return nil
	}
	src := a.path(op.Name)
	if op.Action == OpCreate {
		src = ""
	}
	if err := a.stage(op, src, op.KeepPrefix, op.Content, op.Sources, op.NewSHA256, "restage:"+op.Name); err != nil {
		return err
	}
	return syncDir(a.dir)
}
