package barrier

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// Refusal reasons. A *RefusalError carries one; the CLI maps every refusal
// to exit status 4. Nothing in the partition has been touched when one is
// returned.
const (
	// RefuseLocked: another process holds an fcntl lock on the log
	// directory's .lock, so a broker is running on it (LogManager locks
	// every log dir with FileChannel.tryLock).
	RefuseLocked = edit.RefuseLocked
	// RefuseNotPartition: the directory is not a live partition directory.
	RefuseNotPartition = edit.RefuseNotPartition
	// RefuseLegacyFormat: the batch before the cut is a v0/v1 message; the
	// barrier is a v2 control batch and the topic is on a pre-0.11 format.
	RefuseLegacyFormat = "legacy-format"
	// RefuseReadOnly: the file system is mounted read-only, or the
	// directory is not writable.
	RefuseReadOnly = edit.RefuseReadOnly
	// RefuseOpenTransactions: a transaction would still be open at the
	// barrier (barrier.md §10 pitfall 8).
	RefuseOpenTransactions = "open-transactions"
	// RefuseBelowLogStart: the cut falls below the log start offset; Kafka
	// would delete every segment at load (deleteSegmentsIfLogStartGreaterThanLogEnd).
	RefuseBelowLogStart = edit.RefuseBelowLogStart
	// RefuseTransientFiles: .swap files the broker would rename at load, or
	// kseg temp files without a journal.
	RefuseTransientFiles = edit.RefuseTransientFiles
	// RefuseBackupDir: the backup directory is inside the log directory, or
	// already holds a file the backup would overwrite.
	RefuseBackupDir = edit.RefuseBackupDir
	// RefuseJournalMismatch: an interrupted injection's journal does not
	// match the files any more (something else changed them).
	RefuseJournalMismatch = edit.RefuseJournalMismatch
	// RefuseChanged: a file changed between planning and applying.
	RefuseChanged = edit.RefuseChanged
	// RefusePending: the directory holds the journal of another interrupted
	// operation (a mirror, when injecting; an injection, when mirroring).
	RefusePending = edit.RefusePending
	// RefuseTopicID: a mirror's source and destination have different
	// topic ids in partition.metadata (a mirror keeps its source's).
	RefuseTopicID = "topic-id"
	// RefuseSameDir: a mirror's source and destination are the same
	// directory.
	RefuseSameDir = "same-directory"
)

// ErrRefused is the class of every *RefusalError (errors.Is).
var ErrRefused = edit.ErrRefused

// RefusalError is a typed refusal: kseg would not act. The edit engine's
// and the planners' are one type.
type RefusalError = edit.RefusalError

func refuse(reason, path, format string, args ...any) *RefusalError {
	return edit.Refuse(reason, path, format, args...)
}

// CorruptTailError reports a log whose end is not what Kafka would keep:
// broker recovery would cut it (segment.Recover) at ValidBytes, for Kind:
// a torn or corrupt tail, a batch that fails its CRC, offsets that go
// backwards, a transaction marker that does not parse.
// InjectOptions.RepairTail makes that cut; without it nothing is done.
// The CLI maps it to exit status 3 (a finding).
type CorruptTailError struct {
	Segment    int64 // base offset of the segment
	Path       string
	ValidBytes int64 // where recovery would truncate the segment
	Kind       segment.CutKind
	Err        *decode.CorruptError
	Message    string // the cut, in an operator's words
}

func (e *CorruptTailError) Error() string {
	return fmt.Sprintf("%s: %s at position %d: %s (rerun with --repair-tail to cut it as broker recovery would)", e.Path, e.Kind, e.ValidBytes, e.Message)
}

func (e *CorruptTailError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// OptionError is an option that cannot apply to this partition (see
// edit.OptionError).
type OptionError = edit.OptionError

// DivergedError is a mirror destination whose log is not a prefix of its
// source's: at Offset, DST holds a batch that SRC does not (or SRC has
// none). MirrorOptions.Align truncates DST there first; without it nothing
// is done. The CLI maps it to exit status 3 (a finding).
type DivergedError struct {
	Src, Dst string
	Divergence
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("%s has diverged from %s at offset %d: %s (rerun with --align to truncate it there first, as failback does)",
		e.Dst, e.Src, e.Offset, e.Reason)
}

// GapError is a mirror destination whose log ends before its source's log
// start: the offsets in between are gone from the source (retention), so
// appending would leave a hole. The CLI maps it to exit status 3.
type GapError struct {
	Src, Dst         string
	DstEnd, SrcStart int64
}

func (e *GapError) Error() string {
	return fmt.Sprintf("%s ends at offset %d but %s starts at %d: the offsets between are gone from the source (a broker would truncate the destination fully and restart it at the source's log start; kseg does not)",
		e.Dst, e.DstEnd, e.Src, e.SrcStart)
}
