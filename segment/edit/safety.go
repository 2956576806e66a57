package edit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// What keeps an edit from being tricked: the journal and the backup
// manifest are untrusted input (anyone who can write into a partition
// directory, the broker's own user, can write them, and kseg may run as
// root), a failure that is not a crash is undone on the spot, and a full
// disk is found before the first change.

// writer is what the engine writes a new file through (Options.Writer).
func (a *applier) writer(name string, f *os.File) io.Writer {
	if a.o.Writer != nil {
		return a.o.Writer(name, f)
	}
	return f
}

// cleanup undoes a run that failed before its first change to the
// partition: the staged files, the journal, and the backup (it holds
// nothing the partition does not), so that a rerun starts afresh.
func (a *applier) cleanup() {
	a.abandon()
	if a.j != nil {
		a.removeBackups()
		a.rep.BackupDir = ""
	}
}

// removeBackups removes what this edit wrote into its backup directory,
// and the directory itself when the edit created it and nothing else is in
// it. Only names the edit writes are touched.
func (a *applier) removeBackups() {
	bd := a.j.BackupDir
	for _, op := range a.ops {
		if op.copiedToBackup() {
			_ = os.Remove(filepath.Join(bd, op.Name))
			_ = os.Remove(filepath.Join(bd, op.Name+partialSuffix))
		}
	}
	_ = os.Remove(filepath.Join(bd, BackupManifestName+segment.TempSuffix))
	_ = os.Remove(filepath.Join(bd, BackupManifestName))
	if a.j.BackupDirCreated {
		_ = os.Remove(bd) // fails, as it should, unless empty
	}
	_ = syncDir(filepath.Dir(bd))
}

// partialSuffix names a backup copy still being written.
const partialSuffix = ".partial"

// undo puts the partition back after a failure (not a crash) in the commit
// phase: a rename over an immutable file, a file owned by another user in
// a sticky directory, a full disk while journaling. The files already
// changed are restored from the backup, and the run then cleans up as if
// it had failed before its first change. If the undo fails too, the
// journal stays and the error says how to finish or undo by hand.
func (a *applier) undo(cause error) error {
	if err := a.restore(); err != nil {
		return &HalfAppliedError{Noun: a.kind.Noun, Journal: a.journalPath(), Err: cause, UndoErr: err}
	}
	a.cleanup()
	a.rep.Undone = true
	return &UndoneError{Noun: a.kind.Noun, Err: cause}
}

// UndoneError is a failure after the first change that the engine undid:
// the partition is as it was before, and there is nothing to finish or
// roll back.
type UndoneError struct {
	Noun string
	Err  error
}

func (e *UndoneError) Error() string {
	return fmt.Sprintf("%v; the %s was undone: the partition is as it was before, with nothing to finish or roll back", e.Err, e.Noun)
}

func (e *UndoneError) Unwrap() error { return e.Err }

// HalfAppliedError is a failure after the first change whose undo failed
// too (the file system went read-only, say): the partition is part old,
// part new, and the journal is kept, so that a rerun finishes the edit or
// a rollback undoes it, once the cause is removed.
type HalfAppliedError struct {
	Noun    string
	Journal string
	Err     error // the failure
	UndoErr error // why putting the partition back failed
}

func (e *HalfAppliedError) Error() string {
	return fmt.Sprintf("%v; putting the partition back failed too (%v): the %s is half applied; its journal %s is kept: rerun the command to finish it, or roll it back",
		e.Err, e.UndoErr, e.Noun, e.Journal)
}

func (e *HalfAppliedError) Unwrap() error { return e.Err }

// checkSpace refuses an edit whose backup and staged files do not fit in
// the free space of their file systems (the backup directory's, the
// partition directory's; once when they are one).
func (a *applier) checkSpace(bd string) error {
	var backup, staging int64
	for _, op := range a.ops {
		if op.Action == OpAppend {
			// No backup copy, no staged copy: the appended bytes alone.
			staging += max(0, op.NewSize-op.OldSize)
			continue
		}
		if op.Action != OpCreate {
			backup += op.OldSize
		}
		if op.Action != OpDelete {
			staging += op.NewSize
		}
	}
	// The journal, the manifest and file system overhead: a block per file.
	slack := int64(64<<10) + int64(len(a.ops))*8192
	bfree, bdev, bok := diskFree(existingAncestor(bd))
	sfree, sdev, sok := diskFree(existingAncestor(a.dir))
	if !bok || !sok {
		return nil
	}
	if bdev == sdev {
		if need := backup + staging + slack; uint64(need) > bfree {
			return Refuse(RefuseNoSpace, a.dir, "the backup (%d bytes, in %s) and the staged files (%d bytes) need %d bytes on one file system, %d are free", backup, bd, staging, need, bfree)
		}
		return nil
	}
	if need := backup + slack; uint64(need) > bfree {
		return Refuse(RefuseNoSpace, bd, "the backup needs %d bytes, %d are free on its file system", need, bfree)
	}
	if need := staging + slack; uint64(need) > sfree {
		return Refuse(RefuseNoSpace, a.dir, "the staged files need %d bytes, %d are free on the partition's file system", need, sfree)
	}
	return nil
}

// existingAncestor is path or its nearest existing ancestor.
func existingAncestor(path string) string {
	for {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

// modeName names a file type for messages.
func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// editable are the kinds of file an edit may name: the ones a partition
// directory holds (LogLoader's suffixes, leader-epoch-checkpoint,
// partition.metadata).
var editable = map[segment.FileKind]bool{
	segment.KindLog: true, segment.KindIndex: true, segment.KindTimeIndex: true, segment.KindTxnIndex: true,
	segment.KindProducerSnapshot: true, segment.KindLeaderEpochCheckpoint: true, segment.KindPartitionMetadata: true,
}

// maxJournalFileSize bounds the sizes a journal may claim: Kafka's
// segment.bytes is an int (at most 2 GiB); snapshots and checkpoints are
// smaller still.
const maxJournalFileSize = 1 << 31

// checkOps refuses file operations kseg cannot have planned: anything but
// a plain name of a Kafka file of the partition, an unknown action,
// impossible or inconsistent sizes, a mode beyond rwx, a name twice. jp
// is the journal, for messages.
func checkOps(jp string, ops []FileOp) error {
	seen := map[string]bool{}
	for _, op := range ops {
		bad := func(format string, args ...any) error {
			return Refuse(RefuseJournal, jp, "operation %s %q: %s; nothing was touched", op.Action, op.Name, fmt.Sprintf(format, args...))
		}
		if op.Name == "" || op.Name == "." || op.Name == ".." || strings.ContainsAny(op.Name, `/\`+"\x00") || filepath.Base(op.Name) != op.Name {
			return bad("not a plain file name of the partition directory")
		}
		if fi, ok := segment.ParseFileName(op.Name); !ok || fi.Suffix != "" || !editable[fi.Kind] {
			return bad("not a file Kafka keeps in a partition directory")
		}
		if seen[op.Name] {
			return bad("named twice")
		}
		seen[op.Name] = true
		switch op.Action {
		case OpCreate:
			if op.OldSize != -1 || op.NewSize < 0 {
				return bad("sizes %d -> %d", op.OldSize, op.NewSize)
			}
		case OpDelete:
			if op.OldSize < 0 || op.NewSize != -1 {
				return bad("sizes %d -> %d", op.OldSize, op.NewSize)
			}
		case OpReplace:
			if op.OldSize < 0 || op.NewSize < 0 {
				return bad("sizes %d -> %d", op.OldSize, op.NewSize)
			}
		case OpAppend:
			// An append keeps every old byte: it never shrinks the file,
			// and has no prefix of its own to keep.
			if op.OldSize < 0 || op.NewSize < op.OldSize || op.KeepPrefix != 0 {
				return bad("sizes %d -> %d, keeping %d", op.OldSize, op.NewSize, op.KeepPrefix)
			}
		default:
			return bad("unknown action")
		}
		if op.OldSize > maxJournalFileSize || op.NewSize > maxJournalFileSize {
			return bad("a size beyond %d bytes", int64(maxJournalFileSize))
		}
		if op.KeepPrefix < 0 || op.KeepPrefix > max(op.OldSize, 0) {
			return bad("keeps %d bytes of %d", op.KeepPrefix, op.OldSize)
		}
		if op.Perm&^0o777 != 0 {
			return bad("mode %o", op.Perm)
		}
		if op.Action != OpDelete {
			n := op.KeepPrefix + int64(len(op.Content))
			if op.Action == OpAppend {
				n = op.OldSize + int64(len(op.Content))
			}
			for _, r := range op.Sources {
				if r.Pos < 0 || r.Len < 0 || !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
					return bad("source range %s [%d, +%d)", r.Path, r.Pos, r.Len)
				}
				n += r.Len
			}
			if n != op.NewSize {
				return bad("new content of %d bytes, %d announced", n, op.NewSize)
			}
		}
	}
	return nil
}

// checkBackup makes sure the backup directory a journal names is the
// backup of that journal before anything is read from it, written into it
// or removed from it: not inside the log directory, and holding the
// manifest of this very edit (same tool, same start, same files and
// hashes) — or, for an edit interrupted before it wrote its manifest,
// nothing at all.
func (a *applier) checkBackup() error {
	bd := a.j.BackupDir
	jp := a.journalPath()
	if bd == "" || !filepath.IsAbs(bd) || filepath.Clean(bd) != bd {
		return Refuse(RefuseJournal, jp, "backup directory %q is not a clean absolute path; nothing was touched", bd)
	}
	if err := refuseKafkaDir(bd, a.logDir); err != nil {
		return Refuse(RefuseJournal, jp, "backup directory %s: %s; nothing was touched", bd, err.(*RefusalError).Detail)
	}
	b, err := os.ReadFile(filepath.Join(bd, BackupManifestName))
	switch {
	case err == nil:
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil || !a.matches(&m) {
			return Refuse(RefuseJournal, jp, "%s is not the backup this journal names (its %s describes another edit); nothing was touched", bd, BackupManifestName)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	case a.j.State == JournalCommitting:
		return Refuse(RefuseJournal, jp, "backup directory %s has no %s, yet the journal says the backup is complete; nothing was touched", bd, BackupManifestName)
	}
	entries, err := os.ReadDir(bd)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != BackupManifestName+segment.TempSuffix {
			return Refuse(RefuseJournal, jp, "backup directory %s holds %s but no %s: it is not this edit's backup; nothing was touched", bd, e.Name(), BackupManifestName)
		}
	}
	return nil
}

// matches reports whether a manifest describes this edit.
func (a *applier) matches(m *manifest) bool {
	if m.Tool != a.j.Tool || m.Created != a.j.Started || len(m.Files) != len(a.ops) {
		return false
	}
	for i, op := range a.ops {
		f := m.Files[i]
		if f.Name != op.Name || f.Action != op.Action || f.Size != op.OldSize || f.SHA256 != op.OldSHA256 {
			return false
		}
	}
	return true
}

// Validate rebuilds the job a pending journal records, with the checks
// Resume and Rollback make before touching anything (the operations' names
// and sizes, the backup directory's manifest), so that a planner can show
// an interrupted edit, or refuse a journal kseg cannot have written, before
// any change.
func Validate(j *Journal, dir string, kind *Kind) (Job, error) {
	job, err := decode(j, dir, kind)
	if err != nil {
		return nil, err
	}
	a := newApplier(job, Options{}, &Report{})
	a.j = j
	if err := a.checkBackup(); err != nil {
		return nil, err
	}
	return job, nil
}
