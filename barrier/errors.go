package barrier

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/decode"
)

// Refusal reasons. A *RefusalError carries one; the CLI maps every refusal
// to exit status 4. Nothing in the partition has been touched when one is
// returned.
const (
	// RefuseLocked: another process holds an fcntl lock on the log
	// directory's .lock, so a broker is running on it (LogManager locks
	// every log dir with FileChannel.tryLock).
	RefuseLocked = "broker-running"
	// RefuseNotPartition: the directory is not a live partition directory.
	RefuseNotPartition = "not-a-partition"
	// RefuseLegacyFormat: the batch before the cut is a v0/v1 message; the
	// barrier is a v2 control batch and the topic is on a pre-0.11 format.
	RefuseLegacyFormat = "legacy-format"
	// RefuseReadOnly: the file system is mounted read-only, or the
	// directory is not writable.
	RefuseReadOnly = "read-only"
	// RefuseOpenTransactions: a transaction would still be open at the
	// barrier (barrier.md §10 pitfall 8).
	RefuseOpenTransactions = "open-transactions"
	// RefuseBelowLogStart: the cut falls below the log start offset; Kafka
	// would delete every segment at load (deleteSegmentsIfLogStartGreaterThanLogEnd).
	RefuseBelowLogStart = "below-log-start"
	// RefuseTransientFiles: .swap files the broker would rename at load, or
	// kseg temp files without a journal.
	RefuseTransientFiles = "transient-files"
	// RefuseBackupDir: the backup directory is inside the log directory, or
	// already holds a file the backup would overwrite.
	RefuseBackupDir = "backup-dir"
	// RefuseJournalMismatch: an interrupted injection's journal does not
	// match the files any more (something else changed them).
	RefuseJournalMismatch = "journal-mismatch"
	// RefuseChanged: a file changed between planning and applying.
	RefuseChanged = "changed"
)

// ErrRefused is the class of every *RefusalError (errors.Is).
var ErrRefused = errors.New("refused")

// RefusalError is a typed refusal: kseg would not act.
type RefusalError struct {
	Reason string // one of the Refuse* constants
	Path   string // the file or directory concerned
	Detail string
}

func (e *RefusalError) Error() string {
	msg := "refused (" + e.Reason + ")"
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

func refuse(reason, path, format string, args ...any) *RefusalError {
	return &RefusalError{Reason: reason, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// CorruptTailError reports a log whose end is not what Kafka would keep: a
// torn or corrupt tail, or a batch that fails its CRC. InjectOptions.RepairTail
// cuts it as LogSegment.recover would; without it nothing is done. The CLI
// maps it to exit status 3 (a finding).
type CorruptTailError struct {
	Segment    int64 // base offset of the segment
	Path       string
	ValidBytes int64 // where recovery would truncate the segment
	Kind       string
	Err        *decode.CorruptError
}

func (e *CorruptTailError) Error() string {
	msg := fmt.Sprintf("%s: %s tail at position %d", e.Path, e.Kind, e.ValidBytes)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + " (rerun with --repair-tail to cut it as broker recovery would)"
}

func (e *CorruptTailError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// OptionError is an option that cannot apply to this partition (a leader
// epoch below the recorded ones, for instance). The CLI maps it to exit
// status 2.
type OptionError struct {
	Option string
	Detail string
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Detail }
