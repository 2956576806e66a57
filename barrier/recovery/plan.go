package recovery

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// Repair: what a broker's log recovery does to an unclean partition, done
// offline, planned first and applied explicitly through the crash-safe
// machinery inject-barrier uses (lock, sealed hashes, journal, backups,
// staged files, renames; a rerun finishes an interrupted repair, a
// rollback undoes it).
//
// The broker (psm.md §4.3; LogLoader.recoverLog, LogSegment.recover):
//
//   - recovers every segment from the one holding the recovery point
//     (recovery-point-offset-checkpoint in the log directory; every
//     segment without one) to the end, and below it any segment whose
//     offset index is missing or whose transaction index fails its sanity
//     check (LogLoader.loadSegmentFiles);
//   - recovering a segment reads its batches from the start and stops at
//     the first one that does not frame (FileLogInputStream: a size below
//     14, an entry running past the end — a torn write or a zero-filled
//     preallocated tail), fails batch.ensureValid (a v2 batch under 61
//     bytes, a CRC mismatch), or, for a transaction marker, whose control
//     record does not parse (InvalidRecordException: the cut falls after
//     that batch, which validBytes already counts); it truncates the file
//     there and rebuilds .index, .timeindex and .txnindex from the kept
//     batches (index.interval.bytes; the aborted transactions the
//     producer-state replay completes in the segment);
//   - a segment that had to be truncated makes every later segment
//     unreachable: recoverLog deletes them (with their snapshots);
//   - producer snapshots above the new log end are deleted
//     (truncateAndReload), the producer state is rebuilt from the newest
//     snapshot at or below the first recovered segment, and a snapshot is
//     written at the new log end; leader-epoch-checkpoint loses the
//     entries at or above it (LeaderEpochFileCache.truncateFromEnd).
//
// kseg also cuts at a batch whose offsets go backwards (baseOffset is not
// covered by the CRC; the broker's index append would throw
// InvalidOffsetException and recoverLog would then empty the whole
// segment), deletes corrupt producer snapshots (the broker deletes them
// when it tries to load them), and keeps an index that verifies against
// the kept log instead of rewriting it with another index interval. A
// batch whose relative offset overflows the segment
// (LogSegmentOffsetOverflowException: the broker splits the segment) is
// refused.

// Options select what PlanRepair examines. The zero value is the
// CLI's defaults.
type Options struct {
	// All examines every segment, not only those from the recovery point
	// on.
	All bool `json:"all"`
	// IndexIntervalBytes is the topic's index.interval.bytes for rebuilt
	// indexes; 0 means 4096.
	IndexIntervalBytes int `json:"indexIntervalBytes"`
	// Progress, when set, is called with the bytes read as each examined
	// segment is read whole (every MiB or so). Which segments are
	// examined is known only as the plan goes, so there is no total. The
	// caller draws it.
	Progress func(n int64) `json:"-"`

	// checkWritable replaces the read-only probe in tests.
	checkWritable func(dir string) (bool, string, error)
}

// Plan is everything a repair will do, computed without changing a
// byte. Apply executes it; --dry-run prints it.
type Plan struct {
	Dir       string  `json:"dir"`
	LogDir    string  `json:"logDir"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Options   Options `json:"options"`

	// RecoveryPoint is the partition's recovery-point-offset-checkpoint
	// entry, -1 when there is none. Scope says which segments were
	// examined and why.
	RecoveryPoint int64  `json:"recoveryPoint"`
	Scope         string `json:"scope"`
	// FirstExamined is the base offset of the first segment examined.
	FirstExamined  int64 `json:"firstExamined"`
	LogStartOffset int64 `json:"logStartOffset"`

	Segments []Segment `json:"segments"`
	// Findings are what the plan found (and repairs): a cut with dump's
	// kind for the damage (crc-mismatch, torn-tail, corrupt-batch,
	// zero-tail, offset-out-of-order, invalid-marker), the other files'
	// changes with dump's kind for the same defect or repair's own
	// (index-rebuilt, snapshot-above-log-end …). File and Position locate
	// them (Position -1 when not tied to a byte).
	Findings []finding.Finding `json:"findings"`
	// Damage: a finding of severity error (the dry run exits 3).
	Damage bool `json:"damage"`

	LogEndOffset    int64 `json:"logEndOffset"` // before: the end of every batch that frames
	NewLogEndOffset int64 `json:"newLogEndOffset"`
	Removed         struct {
		Batches int64 `json:"batches"` // batches that frame, after the cut
		Bytes   int64 `json:"bytes"`
		Offsets int64 `json:"offsets"`
	} `json:"removed"`
	SegmentsDeleted     []int64              `json:"segmentsDeleted"`
	SnapshotsDeleted    []int64              `json:"snapshotsDeleted"`
	SnapshotOffset      int64                `json:"snapshotOffset"` // the snapshot written, -1 when none
	Producers           int                  `json:"producers"`      // in it
	EpochEntriesRemoved []segment.EpochEntry `json:"epochEntriesRemoved"`

	// NothingToDo: every examined file is what recovery would leave.
	NothingToDo bool              `json:"nothingToDo"`
	Reason      string            `json:"reason,omitempty"`
	Resume      *edit.Interrupted `json:"resume,omitempty"`

	// Ops are the file operations, in the order Apply commits them.
	Ops      []edit.FileOp `json:"ops"`
	Warnings []string      `json:"warnings"`
}

// Segment is one examined segment.
type Segment struct {
	BaseOffset int64  `json:"baseOffset"`
	Log        string `json:"log"`
	Size       int64  `json:"size"`
	// Why the segment was examined: "recovery point", "all", or the
	// index problem that makes a broker recover a segment below it.
	Why        string `json:"why"`
	ValidBytes int64  `json:"validBytes"`
	Batches    int64  `json:"batches"` // kept
	NextOffset int64  `json:"nextOffset"`
	// Cut is nil when every byte is valid.
	Cut       *Cut       `json:"cut,omitempty"`
	Index     FileRepair `json:"index"`
	TimeIndex FileRepair `json:"timeIndex"`
	TxnIndex  FileRepair `json:"txnIndex"`
}

// Cut is where a segment is truncated and why.
type Cut struct {
	Position int64        `json:"position"` // the first invalid byte: the new size
	Kind     finding.Kind `json:"kind"`     // a dump finding kind: crc-mismatch, torn-tail, corrupt-batch …
	Bytes    int64        `json:"bytes"`    // bytes cut
	Message  string       `json:"message"`
}

// FileRepair is what happens to one index file of a segment.
type FileRepair struct {
	// Action: keep (valid as it is), rebuild (replaced by the rebuilt
	// content), create (missing, rebuilt) or none (no file, none needed).
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Entries int    `json:"entries"` // in the file after the repair
}

// Index file actions.
const (
	FileKeep    = "keep"
	FileRebuild = "rebuild"
	FileCreate  = "create"
	FileNone    = "none"
)

// RefuseOffsetOverflow: a batch's offsets do not fit its segment's int32
// relative offsets (LogSegmentOffsetOverflowException); the broker splits
// such a segment, kseg repair does not.
const RefuseOffsetOverflow edit.Reason = "offset-overflow"

// RefuseOverlapStraddles: a segment's offsets run into the next
// segment's, and the batch where they start to overlap begins below the
// next segment's base offset: a cut would lose the offsets below it,
// which only this segment holds.
const RefuseOverlapStraddles edit.Reason = "segment-overlap"

// PlanRepair reads the partition directory dir and plans its repair. It
// changes nothing. Refusals are *edit.RefusalError; anything else is I/O. When
// dir holds the journal of an interrupted repair, the plan is the
// journal's, with Resume set: Apply then finishes it. When a broker holds
// the log directory or it is not writable (edit.Deferred), the plan is
// still made and returned together with that refusal, to be shown
// (--dry-run), never applied.
func PlanRepair(dir string, opts Options) (*Plan, error) {
	return planRepair(dir, opts, false)
}

// planRepair is PlanRepair; verifying, it plans again over the repair
// just committed, as Verify does under the repair's own lock and with its
// journal still there (kept until the read-back passes): neither is then
// looked at.
func planRepair(dir string, opts Options, verifying bool) (*Plan, error) {
	// The real directory, before anything else: the log directory (whose
	// .lock a broker holds) is the real parent, not a symlink's.
	dir = edit.RealPath(dir)
	name, err := edit.CheckPartitionDir(dir, "")
	if err != nil {
		return nil, err
	}
	logDir := segment.LogDirOf(dir)
	var blocked error
	if !verifying {
		var pending *Plan
		pending, blocked, err = edit.StartPlan[*Plan](logDir, dir, dir, EditKind, opts.checkWritable)
		if err != nil {
			return nil, err
		}
		if pending != nil {
			return pending, blocked
		}
	}
	if opts.IndexIntervalBytes == 0 {
		opts.IndexIntervalBytes = segment.DefaultIndexIntervalBytes
	}
	if opts.IndexIntervalBytes < 0 {
		return nil, &edit.OptionError{Option: "index-interval-bytes", Detail: "must not be negative"}
	}
	rp := &planner{dir: dir, logDir: logDir, name: name, opts: opts, ops: edit.OpList{Dir: dir}}
	p, err := rp.plan()
	if err != nil {
		return nil, cmp.Or(blocked, err)
	}
	return p, blocked
}

type planner struct {
	dir, logDir string
	name        segment.PartitionDirName
	opts        Options
	pd          *segment.PartitionDir
	p           *Plan
	ops         edit.OpList
	// checkEnd judges a snapshot at the new log end over the kept log
	// (psm.CheckSnapshotAt).
	checkEnd func(onDisk []segment.SnapshotEntry) (psm.SnapshotCheck, error)
	// cleanShutdown: the log directory holds .kafka_cleanshutdown.
	cleanShutdown bool
	// overlapBefore maps the base offset of a segment whose offsets run
	// into the next segment's to that segment's base (segment.Overlap).
	overlapBefore map[int64]int64
}

func (rp *planner) warnf(format string, args ...any) {
	rp.p.Warnings = append(rp.p.Warnings, fmt.Sprintf(format, args...))
}

func (rp *planner) find(kind finding.Kind, file string, pos int64, format string, args ...any) {
	f := finding.Newf(kind, format, args...)
	f.File, f.Position = filepath.Base(file), pos
	rp.p.Findings = append(rp.p.Findings, f)
	if f.IsError() {
		rp.p.Damage = true
	}
}

func (rp *planner) plan() (*Plan, error) {
	p := &Plan{Dir: rp.dir, LogDir: rp.logDir, Topic: rp.name.Topic, Partition: rp.name.Partition, Options: rp.opts,
		SnapshotOffset: -1, FirstExamined: -1}
	rp.p = p
	segs, orphans, logStart, err := rp.open()
	if err != nil {
		return nil, err
	}
	first := rp.scope(segs)
	if err := rp.overlaps(); err != nil {
		return nil, err
	}
	scans, cutAt, err := rp.examine(segs, first)
	if err != nil {
		return nil, err
	}
	dropped, err := rp.logEnds(segs, scans, cutAt, logStart)
	if err != nil {
		return nil, err
	}

	// Producer state at the new end, as the broker rebuilds it: from the
	// newest snapshot at or below the first examined segment
	// (truncateAndReload deletes those above it before recovery), over the
	// log as it will be.
	kept := segs[:len(segs)-len(dropped)]
	res, err := rp.replay(kept, scans, p.FirstExamined, p.NewLogEndOffset, logStart)
	if err != nil {
		return nil, fmt.Errorf("rebuilding producer state: %w", err)
	}
	rp.checkEnd = func(onDisk []segment.SnapshotEntry) (psm.SnapshotCheck, error) {
		view, o := rp.replayView(kept, scans, p.FirstExamined, p.NewLogEndOffset, logStart)
		return psm.CheckSnapshotAt(&view, o, p.NewLogEndOffset, onDisk)
	}

	// Pass 2: the operations, in commit order. Files that go first:
	// snapshots above the new end, corrupt ones, orphaned indexes,
	// unreachable segments.
	if err := rp.planSnapshots(); err != nil {
		return nil, err
	}
	if err := rp.orphanOps(orphans); err != nil {
		return nil, err
	}
	if len(dropped) > 0 {
		if err := rp.droppedOps(dropped, segs[cutAt].BaseOffset); err != nil {
			return nil, err
		}
	}
	if err := rp.segmentOps(scans, kept, res); err != nil {
		return nil, err
	}
	if err := rp.planEpochs(); err != nil {
		return nil, err
	}
	if err := rp.planEndSnapshot(res); err != nil {
		return nil, err
	}
	if err := rp.planStraySnapshots(kept); err != nil {
		return nil, err
	}
	p.Ops = rp.ops.List
	if len(p.Ops) == 0 {
		p.NothingToDo = true
		p.Reason = fmt.Sprintf("every examined segment (%d from offset %d) is valid and its indexes, transaction index and producer snapshots are what recovery would leave",
			len(p.Segments), p.FirstExamined)
	}
	return p, nil
}
