// Rollback: an interrupted edit undone from its backup, last operation first,
// after every file has been checked, so that a refusal changes nothing.

package edit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// Rollback undoes the interrupted edit whose journal is in dir: every file
// changed or deleted is copied back from the backup, every file created is
// removed, then the staged files and the journal. A completed edit has no
// journal; restore it from its backup by hand (the manifest says how).
// kinds are the tools whose journals the caller undoes; another tool's
// journal is refused (RefuseOtherTool), so that a rollback never says it
// undid a repair when it undid a mirror.
func Rollback(dir string, o Options, kinds ...*Kind) (*Report, error) {
	dir = RealPath(dir)
	rep := &Report{Dir: dir, RolledBack: true, Resumed: true}
	// The journal is checked before the lock, so that a refusal changes
	// nothing at all (taking the lock may create .lock, and removing it
	// again still touches the log directory); then again under the lock:
	// a journal read without it may be finished by another kseg run
	// meanwhile, and restoring the backup then would undo an edit that
	// completed and verified.
	if _, _, err := readForRollback(dir, o, rep, kinds); err != nil {
		return nil, err
	}
	pre := &applier{dir: dir, logDir: segment.LogDirOf(dir), o: o, rep: rep}
	lk, err := pre.lock()
	if err != nil {
		return rep, err
	}
	defer lk.Close()
	a, j, err := readForRollback(dir, o, rep, kinds)
	if err != nil {
		return nil, err
	}
	rep.Kind, rep.Job, rep.ResumedFrom, rep.BackupDir = a.job.Kind(), a.job, j.State, j.BackupDir
	if err := a.restore(); err != nil {
		return rep, err
	}
	a.removeStaged()
	if err := a.step("journal:remove"); err != nil {
		return rep, err
	}
	_ = os.Remove(j.Path(dir) + segment.TempSuffix)
	if err := os.Remove(j.Path(dir)); err != nil {
		return rep, err
	}
	if err := syncDir(dir); err != nil {
		return rep, err
	}
	a.removeCreatedDir()
	return rep, nil
}

// readForRollback reads dir's journal for a rollback by one of kinds,
// with every check made before anything is touched.
func readForRollback(dir string, o Options, rep *Report, kinds []*Kind) (*applier, *Journal, error) {
	j, err := ReadJournal(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no interrupted operation to roll back (no %s)", dir, JournalName)
		}
		return nil, nil, err
	}
	job, err := decode(j, dir, kinds...)
	if err != nil {
		return nil, nil, err
	}
	a := newApplier(job, o, rep)
	a.j = j
	if err := a.checkBackup(); err != nil {
		return nil, nil, err
	}
	return a, j, nil
}

// restore puts every file of the partition back as it was before the edit,
// last operation first: a changed or deleted file from its backup, a
// created file removed, an append truncated. Every file is checked first
// (classify, and that its backup is there): when one is neither its
// content before the edit nor after it, or its backup is missing, nothing
// is restored and the refusal names every such file, so that a refusal
// changes nothing.
func (a *applier) restore() error {
	states := make([]fileState, len(a.ops))
	var bad []string
	for i := range a.ops {
		op := &a.ops[i]
		st, err := classify(a.dir, op)
		if err != nil {
			return err
		}
		states[i] = st
		if st == stateOther {
			bad = append(bad, op.Name)
			continue
		}
		if st != stateOld && (op.Action == OpReplace || op.Action == OpDelete) {
			if fi, err := os.Lstat(filepath.Join(a.j.BackupDir, op.Name)); err != nil || !fi.Mode().IsRegular() || fi.Size() != op.OldSize {
				return Refuse(RefuseBackupDir, filepath.Join(a.j.BackupDir, op.Name), "the backup of %s is missing or not %d bytes; nothing was restored", op.Name, op.OldSize)
			}
		}
	}
	if len(bad) > 0 {
		return Refuse(RefuseJournalMismatch, a.path(bad[0]), "%s neither the content before the %s nor after it; nothing was restored: put %s back from %s by hand (or as it was after the %s), then roll back again",
			namesAre(bad), a.kind.Noun, pronoun(bad), a.j.BackupDir, a.kind.Noun)
	}
	for i := len(a.ops) - 1; i >= 0; i-- {
		op := &a.ops[i]
		if states[i] == stateOld {
			continue
		}
		if err := a.step("rollback:" + op.Name); err != nil {
			return err
		}
		if err := a.restoreOne(op); err != nil {
			return err
		}
		if err := syncDir(a.dir); err != nil {
			return err
		}
	}
	return nil
}

// restoreOne puts op's file back as it was before the edit.
func (a *applier) restoreOne(op *FileOp) error {
	switch op.Action {
	case OpCreate:
		if err := os.Remove(a.path(op.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case OpAppend:
		// The first OldSize bytes were never written: truncating gives
		// them back (the fingerprint was checked by classify).
		if err := a.truncateBack(op); err != nil {
			return fmt.Errorf("truncating %s back to %d bytes: %w", op.Name, op.OldSize, err)
		}
	default:
		bk := filepath.Join(a.j.BackupDir, op.Name)
		if err := a.stage(op, bk, op.OldSize, nil, nil, op.OldSHA256, "rollback:"+op.Name); err != nil {
			return fmt.Errorf("restoring %s from %s: %w", op.Name, bk, err)
		}
		if err := os.Rename(a.staged(op.Name), a.path(op.Name)); err != nil {
			return err
		}
	}
	return nil
}

// namesAre is "NAME is" or "NAME1, NAME2 are".
func namesAre(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names, ", ") + " are"
}

func pronoun(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}
