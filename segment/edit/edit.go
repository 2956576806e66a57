// Package edit is the crash-safe, journaled edit of one partition
// directory: the engine under every kseg command that writes (inject-barrier,
// mirror, repair).
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier
// → psm → segment/edit → segment → decode. edit sits between the planners
// (package barrier and its rooms) and the files (package segment):
//
//	cmd → barrier, barrier/mirror, barrier/recovery (plans: what changes, and
//	why) → edit (how: lock, backup, staging, journal, commit, rollback) →
//	segment (Kafka's files and their rules)
//
// The engine knows a job only through the Job interface: its kind (the tool,
// recorded in the journal and the backup manifest), its partition directory,
// its file operations, what to journal so that a rerun or a rollback can
// rebuild it, and a read-back check. A fourth write command needs no change
// here. What planners share around their plans (the preflight that refuses
// a partition kseg must not touch, the pending journal, the file
// operations, the report in the planner's own types) is in plan.go.
//
// Every tool journals to one file, JournalName, recording the tool and its
// plan; one an older kseg left (LegacyJournalName, the plan under a
// per-tool key) is still finished and rolled back. A rollback undoes only
// the tools it is asked for: another tool's journal is refused
// (RefuseOtherTool), so it never reports undoing what it did not.
//
// Like Kafka's own LogSegment/LogLoader recovery, the engine's promise is
// about crashes: every Kafka file is at any instant either its old or its new
// content, a rerun finishes an interrupted edit, and a rollback restores the
// bytes from before. A failure that is not a crash (a full disk, an
// immutable file) is undone on the spot, so that nothing is left to finish.
//
// One action is not a whole-file replacement: an append (OpAppend) writes
// after a file's old end in place, as LogSegment.append writes Kafka's
// active segment, never the bytes before it. Its backup is the old size
// and a fingerprint of the bytes before it (the manifest's
// fingerprintBytes; restoring by hand is truncate -s SIZE), and a crash in
// the middle of it leaves a torn tail that only the journal finishes: a
// rerun truncates it and appends again, a rollback truncates it.
package edit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Job is one edit of a partition directory, as a planner made it.
type Job interface {
	// Kind is the tool the job belongs to.
	Kind() *Kind
	// Dir is the partition directory (absolute); LogDir its log directory,
	// whose .lock the engine takes.
	Dir() string
	LogDir() string
	// Ops are the job's file operations in commit order. The engine fills
	// in hashes, mode and owner (sealing), in place.
	Ops() []FileOp
	// CreatesDir: the partition directory does not exist yet; the engine
	// creates it after taking the lock and a rollback removes it.
	CreatesDir() bool
	// Plan is what the journal records of the job (JSON), from which
	// Kind.Decode rebuilds it.
	Plan() any
	// ManifestDetails are tool-specific facts the backup manifest records
	// (nil: none).
	ManifestDetails() any
	// Check reads the applied edit back.
	Check() (Verdict, error)
}

// A StageWatcher is a Job that sees the batches of the new content it
// copies (FileOp.Sources) as the staging read-back checks them: every
// copied byte is read back once there, after its fsync has begun, compared
// with its source and its batch's CRC checked, so a check of those batches
// (a mirror's index checks and producer-state replay) made there needs no
// read of the committed file afterwards. FileOp.Staged then names the
// staged file, for Check to confirm it is the one committed.
type StageWatcher interface {
	// WatchStaged is called before op's staged copy is read back; the
	// function it returns (nil: none) is told each copied batch in order:
	// its position in the staged file and its bytes (valid during the
	// call only), already compared with the source and CRC-checked. It is
	// told nothing more once the read-back fails.
	WatchStaged(op *FileOp) func(pos int64, batch []byte)
}

// Verdict is the result of a Job's read-back check.
type Verdict interface {
	OK() bool
}

// Kind describes a tool: the name the journal and the manifest record, the
// noun messages use, and how to rebuild a job from a journal.
type Kind struct {
	// Tool is the command, as recorded: "kseg inject-barrier".
	Tool string
	// Noun names one edit in messages: "injection", "mirror", "repair".
	Noun string
	// Decode rebuilds a job of kind k (this Kind) from the plan its journal
	// recorded, in the partition directory dir of log directory logDir. The plan is
	// untrusted input (anyone who can write into the partition directory
	// can write it): Decode must refuse what its tool could never have
	// planned. The engine checks the file operations' names and sizes.
	Decode func(k *Kind, plan json.RawMessage, dir, logDir string) (Job, error)
}

// Options control Apply, Resume and Rollback.
type Options struct {
	// BackupDir receives a copy of every file that changes or goes, and a
	// manifest (BackupManifestName). "" creates a new timestamped folder
	// in BackupRoot. It must not be inside the log directory, nor inside
	// any other directory that is or looks like a Kafka log directory or
	// partition: a broker refuses to start when its log directory holds a
	// folder that is not a topic-partition, and another partition would
	// show the backup's segments as its own. Ignored when resuming (the
	// journal names the backup of the interrupted run).
	BackupDir string
	// BackupRoot is where a new backup folder is made when BackupDir is
	// "" (kseg's CLI: $XDG_STATE_HOME/kseg/backups); "" is the working
	// directory.
	BackupRoot string
	// FaultAt, when set, is called before every step with the step's name
	// (see Report.Steps). A non-nil result stops the run right there, as a
	// crash would: nothing is cleaned up, and a rerun must finish or roll
	// back the edit. For tests.
	FaultAt func(step string) error
	// Writer, when set, wraps every writer the engine writes a new file
	// through (backups, the manifest, staged files, the journal); name is
	// the file's path. Tests inject errors such as ENOSPC with it. Unlike
	// FaultAt, an error it makes is an ordinary failure, which the engine
	// undoes.
	Writer func(name string, w io.Writer) io.Writer
	// Now is the clock for the journal and the default backup folder's
	// name; nil means time.Now.
	Now func() time.Time
	// SkipVerify skips the read-back check after the edit.
	SkipVerify bool
	// Progress, when set, is called with the bytes the engine has just
	// copied: into a backup, or into a staged file (kept prefix, new
	// content, copied source ranges), every few MiB of a long copy. A run
	// from the start copies CopyBytes(ops) in all. The caller draws it
	// (the engine never prints); it runs on the applying goroutine.
	Progress func(n int64)
}

// Report is what Apply, Resume or Rollback did.
type Report struct {
	Dir string
	// Kind is the tool of the edit done or undone.
	Kind *Kind
	// Job is the edit (for Resume and Rollback: as its journal recorded it).
	Job Job
	// Resumed is set when an interrupted edit was finished (or, with
	// RolledBack, undone); ResumedFrom is the journal state it was found in.
	Resumed     bool
	ResumedFrom string
	RolledBack  bool
	// Undone is set when a failure after the first change was undone on the
	// spot: the partition is as it was before.
	Undone    bool
	BackupDir string
	// Steps are the steps run, in order (the names FaultAt receives).
	Steps []string
	// Verdict is the read-back check's, nil when skipped.
	Verdict Verdict
	// JournalKept: the read-back check failed, and the journal is kept,
	// so that the edit can still be rolled back.
	JournalKept bool
}

// FaultError is returned when Options.FaultAt stopped the run.
type FaultError struct {
	Step string
	Err  error
}

func (e *FaultError) Error() string { return fmt.Sprintf("stopped at step %s: %v", e.Step, e.Err) }
func (e *FaultError) Unwrap() error { return e.Err }

func isFault(err error) bool {
	var fe *FaultError
	return errors.As(err, &fe)
}

// Reason is why kseg refuses to act: the word of "refused (REASON)" and
// of docs/troubleshooting.md's refusals. The CLI maps every refusal to
// exit status 4.
type Reason string

// Refusal reasons the engine gives. A *RefusalError carries one (planners
// add their own, as Reason constants); nothing has been changed when one
// is returned.
const (
	// RefuseLocked: another process holds an fcntl lock on the log
	// directory's .lock, so a broker is running on it (LogManager locks
	// every log dir with FileChannel.tryLock).
	RefuseLocked Reason = "broker-running"
	// RefuseBackupDir: the backup directory is inside the log directory, or
	// already holds a file the backup would overwrite, or is not the
	// backup a journal's manifest describes.
	RefuseBackupDir Reason = "backup-dir"
	// RefuseJournalMismatch: an interrupted edit's journal does not match
	// the files any more (something else changed them).
	RefuseJournalMismatch Reason = "journal-mismatch"
	// RefuseJournal: a journal that kseg cannot have written (a path
	// outside the partition, a foreign file name, impossible sizes): the
	// journal is untrusted input and nothing it names is touched.
	RefuseJournal Reason = "bad-journal"
	// RefuseOtherTool: the journal is another tool's; that tool's command
	// finishes or rolls it back.
	RefuseOtherTool Reason = "other-tool"
	// RefuseChanged: a file changed between planning and applying.
	RefuseChanged Reason = "changed"
	// RefuseNoSpace: a file system involved has less free space than the
	// backup and the staged files need.
	RefuseNoSpace Reason = "no-space"
	// RefuseNotRegular: a file the edit reads or replaces is not a regular
	// file (a FIFO, socket, device or symbolic link).
	RefuseNotRegular Reason = "not-regular"
	// RefuseTooLarge: the edit's journal would be larger than kseg reads
	// back after a crash.
	RefuseTooLarge Reason = "too-large"
	// RefuseBadBackup: a backup's manifest kseg cannot have written (a
	// file that is not a Kafka file of a partition, impossible sizes): it
	// is untrusted input, and nothing it names is touched.
	RefuseBadBackup Reason = "bad-backup"
)

// ErrRefused is the class of every *RefusalError (errors.Is).
var ErrRefused = errors.New("refused")

// Remedy is what the caller could do differently to get past a refusal,
// in the library's terms; a CLI names its own flag for it. Messages of
// domain packages never name a flag.
type Remedy int

const (
	// RemedyNone: nothing the caller passes changes the answer.
	RemedyNone Remedy = iota
	// RemedyBackupDir: give Options.BackupDir outside the log directory.
	RemedyBackupDir
	// RemedyRollback: roll the interrupted edit back (its tool's Rollback).
	RemedyRollback
	// RemedyTruncateMode: inject in truncate mode (barrier.ModeTruncate).
	RemedyTruncateMode
	// RemedyForce: force it (RestoreOptions.Force).
	RemedyForce
)

// RefusalError is a typed refusal: kseg would not act.
type RefusalError struct {
	Reason Reason // one of the Refuse* constants
	Path   string // the file or directory concerned
	Detail string
	// Remedy is what would get past the refusal (RemedyNone: nothing the
	// caller passes).
	Remedy Remedy
}

func (e *RefusalError) Error() string {
	msg := "refused (" + string(e.Reason) + ")"
	if e.Path != "" {
		msg += ": " + e.Path
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusalError) Is(target error) bool { return target == ErrRefused }

// Refuse makes a *RefusalError.
func Refuse(reason Reason, path, format string, args ...any) *RefusalError {
	return &RefusalError{Reason: reason, Path: path, Detail: fmt.Sprintf(format, args...)}
}
