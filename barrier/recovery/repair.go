package recovery

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/plural"
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
		blocked = edit.CheckWritable(logDir, dir, opts.checkWritable)
		if blocked != nil && !edit.Deferred(blocked) {
			return nil, blocked
		}
		pending, resume, err := edit.Pending(dir, EditKind)
		if err != nil {
			return nil, cmp.Or(blocked, err)
		}
		if pending != nil {
			p := pending.Plan().(*Plan)
			p.Resume = resume
			return p, blocked
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

// readRecoveryPoint is the partition's recovery-point-offset-checkpoint
// entry; -1 when absent (a warning when unreadable): every segment is then
// examined.
func (rp *planner) readRecoveryPoint() int64 {
	rp0, err := segment.CheckpointOffset(rp.pd, segment.RecoveryPointCheckpointName)
	if err != nil {
		rp.warnf("%s unreadable (%v); every segment is examined", filepath.Join(rp.logDir, segment.RecoveryPointCheckpointName), err)
	}
	return rp0
}

// segRepair is the scan of one examined segment.
type segRepair struct {
	files   segment.SegmentFiles
	size    int64
	valid   int64
	batches int64
	next    int64 // after the last kept batch; the base when none
	framed  int64 // offset after the last batch that frames (kept or not)
	cut     *Cut
	removed int64 // framed batches after the cut

	index, timeIndex []byte // rebuilt from the kept batches
	indexEntries     int
	timeEntries      int
	// indexBad / timeBad say why the existing file is not what recovery
	// would keep ("" when it verifies against the kept batches).
	indexBad, timeBad   string
	indexKind, timeKind finding.Kind // the finding's kind (indexFinding)
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
	// Examined segments, last first: .txnindex, .timeindex, .index, then
	// the .log cut.
	for i := len(scans) - 1; i >= 0; i-- {
		sr := scans[i]
		segEnd := p.NewLogEndOffset
		for _, s := range kept {
			if s.BaseOffset > sr.files.BaseOffset {
				segEnd = s.BaseOffset
				break
			}
		}
		if err := rp.planSegment(sr, &p.Segments[i], res, segEnd); err != nil {
			return nil, err
		}
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

// open lists the partition: its segments with a .log, the orphaned index
// files (segments without one), and the log start offset of the log
// directory's checkpoint (-1 when none); it warns about leftovers and a
// clean-shutdown marker.
func (rp *planner) open() (segs, orphans []segment.SegmentFiles, logStart int64, err error) {
	p := rp.p
	pd, err := segment.OpenPartitionDir(rp.dir)
	if err != nil {
		return nil, nil, 0, err
	}
	rp.pd = pd
	journalTemp, err := edit.CheckLeftovers(pd, "kseg run")
	if err != nil {
		return nil, nil, 0, err
	}
	if journalTemp != "" {
		rp.warnf("%s is left from a run interrupted before it changed anything; applying the plan removes it (a dry run leaves it)", journalTemp)
	}
	if _, err := os.Stat(filepath.Join(rp.logDir, segment.CleanShutdownName)); err == nil {
		rp.cleanShutdown = true
		rp.warnf("the log directory holds %s: a broker would take the shutdown as clean and skip recovery; kseg repairs anyway", segment.CleanShutdownName)
	}
	for _, s := range pd.Segments {
		if s.Log == "" {
			orphans = append(orphans, s)
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, nil, 0, edit.Refuse(edit.RefuseNotPartition, rp.dir, "no .log segment")
	}
	logStart, _, err = psm.LogDirCheckpoints(pd)
	if err != nil {
		rp.warnf("log directory checkpoints unreadable (%v); log start taken from the first segment", err)
		logStart = -1
	}
	p.LogStartOffset = max(logStart, segs[0].BaseOffset)
	return segs, orphans, logStart, nil
}

// scope is the index in segs of the first segment recovery examines: the
// one holding the recovery point (LogLoader.recoverLog), or the first
// (Options.All, or no recovery point). It records the scope in the plan.
func (rp *planner) scope(segs []segment.SegmentFiles) int {
	p := rp.p
	p.RecoveryPoint = rp.readRecoveryPoint()
	first := 0
	switch {
	case rp.opts.All:
		p.Scope = "every segment (--all)"
	case p.RecoveryPoint < 0:
		p.Scope = "every segment: no recovery-point-offset-checkpoint entry (a broker recovers them all after an unclean shutdown)"
	default:
		for i, s := range segs {
			if s.BaseOffset <= p.RecoveryPoint {
				first = i
			}
		}
		p.Scope = fmt.Sprintf("segments from %d, the one holding the recovery point %d, to the end", segs[first].BaseOffset, p.RecoveryPoint)
	}
	return first
}

// overlaps finds the segments whose offsets run into the next segment's
// (segment.SegmentOverlaps). Kafka's LogLoader loads them as they are;
// repair cuts each where LogSegment.truncateTo(the next base offset)
// would, keeping the segments after it, whatever the recovery point. It
// refuses when the batch at the cut begins below the next base: those
// offsets exist only in this segment.
func (rp *planner) overlaps() error {
	found, err := segment.SegmentOverlaps(rp.pd)
	if err != nil {
		return err
	}
	for _, o := range found {
		if o.Straddles {
			return edit.Refuse(RefuseOverlapStraddles, o.Log,
				"its offsets run into the next segment %s (offsets %d..%d are in both), and the batch at position %d begins below %d: a cut there would lose the offsets below %d, which only this segment holds. Compare the two segments' batches (kseg dump) and decide by hand",
				filepath.Base(o.NextLog), o.Next, o.NextOffset-1, o.Position, o.Next, o.Next)
		}
		if rp.overlapBefore == nil {
			rp.overlapBefore = map[int64]int64{}
		}
		rp.overlapBefore[o.Segment] = o.Next
	}
	return nil
}

// examine is pass 1: it scans the segments from first on until one is cut
// (cutAt is its index in segs, -1 when none is). Below the recovery point
// only a missing .index or a .txnindex failing its sanity check makes the
// broker recover a segment (LogLoader.loadSegmentFiles).
func (rp *planner) examine(segs []segment.SegmentFiles, first int) (scans []*segRepair, cutAt int, err error) {
	p := rp.p
	cutAt = -1
	for i, s := range segs {
		why := "at or above the recovery point"
		if rp.opts.All {
			why = "--all"
		} else if p.RecoveryPoint < 0 {
			why = "no recovery point"
		}
		before := rp.overlapBefore[s.BaseOffset]
		if i < first {
			why = belowRecoveryPoint(s)
			if before > 0 {
				why = fmt.Sprintf("below the recovery point, but its offsets run into the next segment %d", before)
			}
			if why == "" {
				continue
			}
		}
		sr, err := rp.scan(s, before)
		if err != nil {
			return nil, -1, err
		}
		if p.FirstExamined < 0 {
			p.FirstExamined = s.BaseOffset
		}
		scans = append(scans, sr)
		p.Segments = append(p.Segments, Segment{BaseOffset: s.BaseOffset, Log: filepath.Base(s.Log), Size: sr.size, Why: why,
			ValidBytes: sr.valid, Batches: sr.batches, NextOffset: sr.next, Cut: sr.cut})
		overlap := sr.cut != nil && sr.cut.Kind == finding.SegmentOverlap
		if sr.cut != nil && i >= first && !overlap {
			return scans, i, nil
		}
		if sr.cut != nil && !overlap {
			rp.warnf("segment %d lies below the recovery point and is truncated at position %d; the broker truncates it without deleting the later segments, and so does kseg", s.BaseOffset, sr.cut.Position)
		}
	}
	return scans, cutAt, nil
}

// logEnds works out the log end before and after the repair and what is
// removed, returns the segments after the cut (recovery can no longer
// reach them), refuses a log start above the new end, and reports the
// cuts and the unreachable segments.
func (rp *planner) logEnds(segs []segment.SegmentFiles, scans []*segRepair, cutAt int, logStart int64) ([]segment.SegmentFiles, error) {
	p := rp.p
	last := scans[len(scans)-1]
	p.NewLogEndOffset = last.next
	p.LogEndOffset = last.framed
	var dropped []segment.SegmentFiles
	if cutAt >= 0 {
		dropped = segs[cutAt+1:]
		for _, s := range dropped {
			n, end, size, err := frameSegment(s)
			if err != nil {
				return nil, err
			}
			p.Removed.Batches += n
			p.Removed.Bytes += size
			p.LogEndOffset = max(p.LogEndOffset, end)
			p.SegmentsDeleted = append(p.SegmentsDeleted, s.BaseOffset)
		}
	} else {
		// No in-scope cut: the log end is the last segment's.
		p.NewLogEndOffset = max(p.NewLogEndOffset, segs[len(segs)-1].BaseOffset)
	}
	for _, sr := range scans {
		if sr.cut != nil {
			p.Removed.Batches += sr.removed
			p.Removed.Bytes += sr.size - sr.valid
		}
	}
	p.LogEndOffset = max(p.LogEndOffset, p.NewLogEndOffset)
	p.Removed.Offsets = p.LogEndOffset - p.NewLogEndOffset
	if logStart > p.NewLogEndOffset {
		return nil, edit.Refuse(edit.RefuseBelowLogStart, rp.dir, "the log start offset %d is above the repaired log end %d: a broker would delete every segment at load (deleteSegmentsIfLogStartGreaterThanLogEnd)", logStart, p.NewLogEndOffset)
	}
	for _, sr := range scans {
		if c := sr.cut; c != nil {
			rp.find(c.Kind, sr.files.Log, c.Position, "%s", c.Message)
		}
	}
	for _, s := range dropped {
		rp.find(finding.SegmentUnreachable, s.Log, -1, "%s follows a truncated segment: recovery deletes it (LogLoader.recoverLog)", filepath.Base(s.Log))
	}
	return dropped, nil
}

// orphanOps deletes index files without a .log, as LogLoader does at load
// ("Found an orphaned index file").
func (rp *planner) orphanOps(orphans []segment.SegmentFiles) error {
	for _, s := range orphans {
		for _, path := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
			if path == "" {
				continue
			}
			// error, as in dump: Kafka never leaves an index without its
			// .log under its live name (it renames a segment's files to
			// .deleted before it deletes them), so the segment's data went
			// missing outside the broker.
			rp.find(finding.OrphanIndex, path, -1, "an index file without its .log (segment %d): the segment's data is missing; the broker deletes the index at load", s.BaseOffset)
			if err := rp.ops.Delete(path, "orphaned index file (no .log)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// droppedOps deletes the segments after the one cut (base cutBase),
// highest first.
func (rp *planner) droppedOps(dropped []segment.SegmentFiles, cutBase int64) error {
	slices.SortFunc(dropped, func(a, b segment.SegmentFiles) int { return cmp.Compare(b.BaseOffset, a.BaseOffset) })
	for _, s := range dropped {
		for _, path := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if path != "" {
				if err := rp.ops.Delete(path, fmt.Sprintf("segment %d follows the truncated segment %d", s.BaseOffset, cutBase)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// belowRecoveryPoint says why the broker would recover a segment below
// the recovery point at load (segment.LoadRecoveryReason), "" when it
// would not.
func belowRecoveryPoint(s segment.SegmentFiles) string {
	if why := segment.LoadRecoveryReason(s); why != "" {
		return "below the recovery point, but " + why
	}
	return ""
}

// frameSegment counts the batches of a segment that frame (no CRC check)
// and the offset after the last one.
func frameSegment(s segment.SegmentFiles) (batches, end, size int64, err error) {
	lf, err := segment.OpenLog(s.Log)
	if err != nil {
		return 0, 0, 0, err
	}
	defer lf.Close()
	end = s.BaseOffset
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		batches++
		end = max(end, sc.Batch().NextOffset())
	}
	return batches, end, lf.Size, sc.Err()
}

// scan reads one segment as LogSegment.recover does (segment.Recover),
// rebuilding its indexes and checking the existing ones against the kept
// batches in the same pass.
func (rp *planner) scan(s segment.SegmentFiles, before int64) (*segRepair, error) {
	ib := segment.NewIndexBuilder(s.BaseOffset, rp.opts.IndexIntervalBytes)
	iv, err := segment.NewIndexCheck(s)
	if err != nil {
		return nil, err
	}
	var ierr error
	r, err := segment.Recover(s.Log, s.BaseOffset, segment.RecoverOptions{Progress: rp.opts.Progress, Before: before, OnBatch: func(pos int64, b *decode.Batch) bool {
		iv.Batch(pos, b)
		ierr = ib.Append(b.Size(), b.LastOffset(), b.MaxTimestamp)
		return ierr == nil
	}})
	var oe *segment.OffsetOverflowError
	switch {
	case errors.As(err, &oe):
		return nil, edit.Refuse(RefuseOffsetOverflow, s.Log,
			"the batch at position %d ends at offset %d, which does not fit the segment's base offset %d; the broker splits such a segment (LogSegmentOffsetOverflowException), kseg repair does not: inspect it with kseg dump",
			oe.Position, oe.LastOffset, oe.BaseOffset)
	case err != nil:
		return nil, err
	case ierr != nil:
		return nil, fmt.Errorf("%s: %w", s.Log, ierr)
	}
	sr := &segRepair{files: s, size: r.Size, valid: r.ValidBytes, batches: r.Batches, next: r.NextOffset, framed: r.FramedEnd, removed: r.Lost}
	if c := r.Cut; c != nil {
		sr.cut = &Cut{Position: c.Position, Kind: c.Kind.FindingKind(), Bytes: c.Bytes, Message: c.Message}
	}
	if err := ib.Finish(); err != nil {
		return nil, err
	}
	if sr.index, sr.timeIndex, err = ib.Encode(); err != nil {
		return nil, err
	}
	sr.indexEntries, sr.timeEntries = len(ib.Index()), len(ib.TimeIndex())
	idx, tidx := iv.Verdict(sr.valid, sr.cut != nil)
	sr.indexBad, sr.timeBad = idx.Problem, tidx.Problem
	sr.indexKind = indexFinding(idx, finding.IndexMissing, finding.IndexMismatch, finding.IndexRebuilt)
	sr.timeKind = indexFinding(tidx, finding.TimeIndexMissing, finding.TimeIndexMismatch, finding.TimeIndexRebuilt)
	return sr, nil
}

// indexFinding is the kind of an index file's verdict v (none when it
// verifies): the defect's kind (dump's word for it: mismatch,
// index-length, index-sanity, errors; missing or index-zero-tail,
// warnings), or, when the only problem is entries past the end of a log
// this repair cuts, rebuilt, info.
func indexFinding(v segment.IndexVerdict, missing, mismatch, rebuilt finding.Kind) finding.Kind {
	switch {
	case v.Problem == "":
		return 0
	case v.Past:
		return rebuilt
	}
	switch v.Defect {
	case segment.IndexMissing:
		return missing
	case segment.IndexZeroTail:
		return finding.IndexZeroTail
	case segment.IndexLength:
		return finding.IndexLength
	case segment.IndexSanity:
		return finding.IndexSanity
	}
	return mismatch
}

// replay rebuilds the producer state at the new log end over the log as
// the repair leaves it.
func (rp *planner) replay(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (*psm.Result, error) {
	view, o := rp.replayView(kept, scans, firstExamined, end, logStart)
	// LogLoader.recoverSegment replays each examined segment whole, from
	// its base offset whatever the log start (DeleteRecords moves it
	// inside a segment), and the .txnindex LogSegment.recover writes holds
	// every transaction aborted in it; the state is reloaded from the
	// snapshot each recovered segment leaves. The segment limits end the
	// log where the repair cuts it.
	o.Upto = -1
	o.Recover, o.Unclean, o.RecoveryPoint = true, true, firstExamined
	return psm.Rebuild(&view, o)
}

// replayView is the partition as the repair leaves it, and the options
// that replay it to the new log end.
func (rp *planner) replayView(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (segment.PartitionDir, psm.Options) {
	view := *rp.pd
	view.Segments = nil
	for _, s := range rp.pd.Segments {
		if s.Log == "" || slices.ContainsFunc(kept, func(k segment.SegmentFiles) bool { return k.BaseOffset == s.BaseOffset }) {
			view.Segments = append(view.Segments, s)
		}
	}
	view.Snapshots = nil
	for _, s := range rp.pd.Snapshots {
		if s.Offset <= firstExamined && s.Offset <= end {
			view.Snapshots = append(view.Snapshots, s)
		}
	}
	o := psm.DefaultOptions()
	o.Upto = end
	o.LogStartOffset = logStart
	o.VerifyCRC = false // the scan checked every CRC of the kept batches
	o.SegmentLimits = map[int64]int64{}
	for _, sr := range scans {
		if sr.cut != nil {
			o.SegmentLimits[sr.files.BaseOffset] = sr.valid
		}
	}
	return view, o
}

// planSnapshots deletes the snapshots above the new end and the corrupt
// ones, newest first.
func (rp *planner) planSnapshots() error {
	p := rp.p
	for i := len(rp.pd.Snapshots) - 1; i >= 0; i-- {
		s := rp.pd.Snapshots[i]
		if s.Offset > p.NewLogEndOffset {
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			rp.find(finding.SnapshotAboveLogEnd, s.Path, -1, "%s lies above the new log end %d (truncateAndReload deletes it)", filepath.Base(s.Path), p.NewLogEndOffset)
			if err := rp.ops.Delete(s.Path, fmt.Sprintf("producer snapshot above the new log end %d", p.NewLogEndOffset)); err != nil {
				return err
			}
			continue
		}
		if _, err := segment.ReadProducerSnapshot(s.Path); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				return err
			}
			rp.find(finding.SnapshotCorrupt, s.Path, ce.Pos, "%v; the broker deletes it when it tries to load it", err)
			if s.Offset == p.NewLogEndOffset {
				continue // rewritten at the end
			}
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := rp.ops.Delete(s.Path, "corrupt producer snapshot (loadFromSnapshot deletes it)"); err != nil {
				return err
			}
		}
	}
	slices.Sort(p.SnapshotsDeleted)
	return nil
}

// planSegment decides the files of one examined segment: .txnindex,
// .timeindex, .index, then the .log cut.
func (rp *planner) planSegment(sr *segRepair, ps *Segment, res *psm.Result, segEnd int64) error {
	base := sr.files.BaseOffset
	log := sr.files.Log
	cutWhy := ""
	if sr.cut != nil {
		cutWhy = fmt.Sprintf("the log is cut at position %d", sr.cut.Position)
	}

	// .txnindex: the aborted transactions whose ABORT marker is in the
	// kept part of this segment (LogSegment.updateTxnIndex).
	var want []byte
	n := 0
	for _, a := range res.Aborted {
		if a.LastOffset >= base && a.LastOffset < segEnd {
			want = segment.AppendAbortedTxn(want, segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: a.ProducerID,
				FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, LastStableOffset: a.LastStableOffset})
			n++
		}
	}
	txnName := segment.SegmentFileName(base, segment.TxnIndexSuffix)
	ps.TxnIndex = FileRepair{Action: FileNone, Entries: n}
	switch {
	case sr.files.TxnIndex == "" && n == 0:
	case sr.files.TxnIndex == "":
		ps.TxnIndex.Action, ps.TxnIndex.Reason = FileCreate, fmt.Sprintf("missing, but %d aborted transactions end in the segment", n)
		rp.find(finding.TxnIndexMissing, txnName, -1, "missing; %d aborted transactions end in segment %d", n, base)
	default:
		// A .txnindex larger than its .log allows is not read: it is
		// rebuilt (segment.MaxTxnIndexBytes).
		limit, _ := segment.MaxTxnIndexBytes(sr.files.TxnIndex)
		old, size, err := segment.ReadFileAtMost(sr.files.TxnIndex, max(limit, int64(len(want))))
		if err != nil {
			return err
		}
		if want == nil {
			want = []byte{}
		}
		ps.TxnIndex.Action = FileKeep
		if old == nil || !bytes.Equal(old, want) {
			ps.TxnIndex.Action = FileRebuild
			kind, reason := finding.TxnIndexCorrupt, fmt.Sprintf("%d bytes, more than a broker writes for the segment's .log (at most %d)", size, limit)
			if old != nil {
				kind, reason = txnIndexProblem(old, want, sr.files.TxnIndex, base)
			}
			if cutWhy != "" && txnPrefix(old, want) {
				kind, reason = finding.TxnIndexRebuilt, cutWhy
			}
			ps.TxnIndex.Reason = reason
			rp.find(kind, txnName, -1, "%s; rebuilt from the aborted transactions the producer-state replay completes (%s)", ps.TxnIndex.Reason, plural.N(n, "entry"))
		}
	}
	if ps.TxnIndex.Action == FileCreate || ps.TxnIndex.Action == FileRebuild {
		if want == nil {
			want = []byte{}
		}
		if _, err := rp.ops.Write(txnName, want, "rebuilt: "+ps.TxnIndex.Reason); err != nil {
			return err
		}
	}

	// .timeindex and .index: rebuilt when recovery would not keep them.
	for _, f := range []struct {
		suffix  string
		have    string
		bad     string
		content []byte
		entries int
		out     *FileRepair
		kind    finding.Kind
		rebuilt finding.Kind // the kind of a rebuild the cut alone calls for
	}{
		{segment.TimeIndexSuffix, sr.files.TimeIndex, sr.timeBad, sr.timeIndex, sr.timeEntries, &ps.TimeIndex, sr.timeKind, finding.TimeIndexRebuilt},
		{segment.IndexSuffix, sr.files.Index, sr.indexBad, sr.index, sr.indexEntries, &ps.Index, sr.indexKind, finding.IndexRebuilt},
	} {
		name := segment.SegmentFileName(base, f.suffix)
		*f.out = FileRepair{Action: FileKeep, Entries: f.entries}
		why, kind := f.bad, f.kind
		switch {
		case why == "" && cutWhy != "":
			why, kind = cutWhy, f.rebuilt
		case kind.Severity() == finding.Info && cutWhy != "":
			why = cutWhy + "; " + why
		}
		if why == "" {
			continue
		}
		f.out.Action, f.out.Reason = FileRebuild, why
		if f.have == "" {
			f.out.Action = FileCreate
		}
		changed, err := rp.ops.Write(name, f.content, "rebuilt from the log: "+why)
		if err != nil {
			return err
		}
		if !changed {
			f.out.Action, f.out.Reason = FileKeep, ""
			continue
		}
		rp.find(kind, name, -1, "%s; rebuilt from the kept batches (%s, index.interval.bytes %d)", why, plural.N(f.entries, "entry"), rp.opts.IndexIntervalBytes)
	}

	// The .log: the valid prefix, byte for byte.
	if sr.cut != nil {
		rp.ops.Add(edit.FileOp{Name: filepath.Base(log), Action: edit.OpReplace, OldSize: sr.size, NewSize: sr.valid, KeepPrefix: sr.valid,
			Why: fmt.Sprintf("truncate at position %d (%s): %d bytes cut", sr.cut.Position, sr.cut.Kind, sr.size-sr.valid)})
	}
	return nil
}

// txnIndexProblem describes how an existing .txnindex differs from the
// rebuilt one, with the finding's kind and severity: dump's for what dump
// sees (txnindex-corrupt and index-sanity errors, a txnindex-partial-entry
// warning), txnindex-mismatch (an error) for entries that are not the
// aborted transactions the log completes.
func txnIndexProblem(old, want []byte, path string, base int64) (kind finding.Kind, reason string) {
	x, err := segment.ParseTxnIndex(old, path)
	switch {
	case err != nil:
		return finding.TxnIndexCorrupt, err.Error()
	case segment.SanityCheckTxnIndex(&x, base) != nil:
		return finding.IndexSanity, segment.SanityCheckTxnIndex(&x, base).Error()
	case len(x.Entries)*segment.AbortedTxnSize != len(want):
		return finding.TxnIndexMismatch, fmt.Sprintf("%s, the log has %s ending in the segment", plural.N(len(x.Entries), "entry"), plural.N(len(want)/segment.AbortedTxnSize, "aborted transaction"))
	case !bytes.Equal(old[:len(want)], want):
		return finding.TxnIndexMismatch, "its entries differ from the aborted transactions the log completes"
	}
	return finding.TxnIndexPartialEntry, fmt.Sprintf("%d trailing bytes, a partial entry", x.TrailingBytes)
}

// txnPrefix reports whether want is a prefix of old: only entries past
// the cut go.
func txnPrefix(old, want []byte) bool { return len(want) < len(old) && bytes.HasPrefix(old, want) }

// planEpochs drops the leader-epoch-checkpoint entries at or above the new
// log end (LeaderEpochFileCache.truncateFromEnd at load). An entry that
// starts exactly at the log end of a log the repair does not shorten is
// kept: it is what a leader elected on an idle partition writes
// (LeaderEpochFileCache.assign at the log end offset), the broker's own
// state rather than damage, and the broker re-assigns it after dropping
// it at load anyway.
func (rp *planner) planEpochs() error {
	p := rp.p
	if rp.pd.LeaderEpochCheckpoint == "" {
		return nil
	}
	entries, err := segment.ReadLeaderEpochCheckpoint(rp.pd.LeaderEpochCheckpoint)
	if err != nil {
		if _, ok := decode.AsCorrupt(err); ok {
			rp.warnf("%s does not parse (%v); it is left as it is", segment.LeaderEpochCheckpointName, err)
			return nil
		}
		return err
	}
	var keep []segment.EpochEntry
	// A repair that cuts the log (a torn tail included, which the old log
	// end does not count) leaves the log end where the broker's load
	// truncates the leader epochs: LeaderEpochFileCache.truncateFromEnd
	// drops every entry starting at or above it.
	shortened := p.NewLogEndOffset < p.LogEndOffset || p.Removed.Bytes > 0
	for _, e := range entries {
		if e.StartOffset > p.NewLogEndOffset || (shortened && e.StartOffset == p.NewLogEndOffset) {
			p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, e)
			continue
		}
		keep = append(keep, e)
	}
	if len(p.EpochEntriesRemoved) == 0 {
		return nil
	}
	rp.find(finding.LeaderEpochAboveLogEnd, segment.LeaderEpochCheckpointName, -1,
		"%d leader epoch entries start at or above the new log end %d", len(p.EpochEntriesRemoved), p.NewLogEndOffset)
	_, err = rp.ops.Write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(keep),
		fmt.Sprintf("leader epochs starting at or above the new log end %d dropped", p.NewLogEndOffset))
	return err
}

// brokersOwn reports whether onDisk, the snapshot at the new log end, is
// a state the broker held there though it differs from the rebuilt one:
// psm decides, as replay-psm --check-snapshots does (producers kept below
// a log start moved by DeleteRecords, producers a recovery never
// expired). Such a snapshot is kept.
func (rp *planner) brokersOwn(onDisk []segment.SnapshotEntry) (bool, error) {
	if rp.checkEnd == nil {
		return false, nil
	}
	c, err := rp.checkEnd(onDisk)
	return err == nil && c.Match(), err
}

// planEndSnapshot writes the producer snapshot at the new log end when the
// repair changed the log or the snapshots, or when the one there is not
// the rebuilt state. An equal snapshot (in any entry order) is kept.
func (rp *planner) planEndSnapshot(res *psm.Result) error {
	p := rp.p
	end := p.NewLogEndOffset
	entries := res.SnapshotEntries()
	name := segment.SegmentFileName(end, segment.SnapshotSuffix)
	path := filepath.Join(rp.dir, name)
	onDisk, err := segment.ReadProducerSnapshot(path)
	exists := err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		if _, ok := decode.AsCorrupt(err); !ok {
			return err
		}
		exists = true // corrupt: reported by planSnapshots, replaced here
		onDisk = nil
		err = nil
	}
	changed := rp.changesState()
	switch {
	case exists && onDisk != nil && end <= p.LogStartOffset && !changed:
		// replay-psm's verdict on the same file: the broker deletes it at
		// load (ProducerStateManager.truncateAndReload drops snapshots at
		// or below the log start) and writes its own; nothing to repair.
		rp.find(finding.SnapshotIgnored, path, -1, "%s is at or below the log start offset %d; the broker deletes it at load (truncateAndReload) and writes its own", name, p.LogStartOffset)
		return nil
	case exists && onDisk != nil && len(psm.CompareSnapshot(entries, onDisk)) == 0:
		return nil
	case exists && onDisk != nil:
		if own, err := rp.brokersOwn(onDisk); err != nil || own {
			return err
		}
		d := psm.CompareSnapshot(entries, onDisk)
		rp.find(finding.SnapshotMismatch, path, -1, "%s differs from the producer state rebuilt from the log (%d difference(s); first: %s)", name, len(d), d[0])
	case !exists && !changed:
		a, lost := psm.CleanShutdownLoss(res)
		if !lost || !psm.SkipsRebuild(rp.pd, rp.cleanShutdown) {
			return nil // the broker rebuilds it from the log at load
		}
		// The broker would start with no producer state: the snapshot
		// makes it load the log's instead.
		rp.find(a.Kind, path, -1, "%s", a.Message)
	}
	if end <= p.LogStartOffset {
		// truncateAndReload deletes a snapshot at or below the log start
		// (planStraySnapshots deletes one there): the broker rebuilds
		// from the log start, where the log ends.
		return nil
	}
	p.SnapshotOffset = end
	p.Producers = len(entries)
	why := fmt.Sprintf("producer state at the new log end %d, rebuilt as the broker does (%s)", end, plural.N(len(entries), "producer"))
	_, err = rp.ops.Write(name, segment.EncodeProducerSnapshot(entries), why)
	return err
}

// changesState reports whether the plan so far changes what the producer
// state is rebuilt from (a cut, a deleted segment or snapshot, a
// .txnindex): rebuilt .index/.timeindex files do not, and a repair that
// only creates or rebuilds them leaves the snapshots to the broker.
func (rp *planner) changesState() bool {
	return slices.ContainsFunc(rp.ops.List, func(op edit.FileOp) bool {
		return !strings.HasSuffix(op.Name, segment.IndexSuffix) && !strings.HasSuffix(op.Name, segment.TimeIndexSuffix)
	})
}

// planStraySnapshots deletes, when the repair changes the log or what its
// producer state is rebuilt from (changesState), the producer snapshots a
// broker deletes at its next load of the repaired partition
// (segment.SnapshotsDeletedAtLoad): the stray ones beside the snapshot
// written at the new log end (removeStraySnapshots keeps only the newest),
// and those at or below the log start (truncateAndReload), so that the
// repair leaves the directory as the broker leaves it. kept are the
// segments that remain. A repair with nothing else to do, or that only
// creates or rebuilds indexes, leaves them to the broker (replay-psm notes
// them as snapshot-ignored).
func (rp *planner) planStraySnapshots(kept []segment.SegmentFiles) error {
	p := rp.p
	if !rp.changesState() {
		return nil
	}
	var offsets []int64
	for _, s := range rp.pd.Snapshots {
		if !slices.Contains(p.SnapshotsDeleted, s.Offset) && s.Offset != p.SnapshotOffset {
			offsets = append(offsets, s.Offset)
		}
	}
	if p.SnapshotOffset >= 0 {
		offsets = append(offsets, p.SnapshotOffset)
		slices.Sort(offsets)
	}
	bases := make([]int64, len(kept))
	for i, s := range kept {
		bases[i] = s.BaseOffset
	}
	for _, d := range segment.SnapshotsDeletedAtLoad(offsets, bases, p.LogStartOffset, p.NewLogEndOffset) {
		name := segment.SegmentFileName(d.Offset, segment.SnapshotSuffix)
		rp.find(finding.SnapshotIgnored, filepath.Join(rp.dir, name), -1, "%s %s", name, d.Why)
		p.SnapshotsDeleted = append(p.SnapshotsDeleted, d.Offset)
		if err := rp.ops.Delete(filepath.Join(rp.dir, name), "producer snapshot that "+d.Why); err != nil {
			return err
		}
	}
	slices.Sort(p.SnapshotsDeleted)
	return nil
}

// Verification is the read-back check of a repair.
type Verification struct {
	// Replan lists what a new plan would still do ("" entries: none).
	Replan []string `json:"replan"`
	// IndexProblems are kafka-dump-log --verify-index findings for the
	// examined segments.
	IndexProblems []string `json:"indexProblems"`
	// SnapshotProblems are snapshots from the first examined segment on
	// that do not MATCH the state rebuilt from the log (replay-psm
	// --check-snapshots).
	SnapshotProblems []string `json:"snapshotProblems"`
}

// OK reports a clean verification.
func (v *Verification) OK() bool {
	return len(v.Replan) == 0 && len(v.IndexProblems) == 0 && len(v.SnapshotProblems) == 0
}

// Verify reads a repaired partition back: a new plan must have
// nothing to do, the examined segments' indexes must verify against their
// logs, and every producer snapshot from the first examined segment on
// must match the state rebuilt from the log.
func Verify(p *Plan) (*Verification, error) {
	v := &Verification{Replan: []string{}, IndexProblems: []string{}, SnapshotProblems: []string{}}
	again, err := planRepair(p.Dir, p.Options, true)
	if err != nil {
		return nil, err
	}
	for _, op := range again.Ops {
		v.Replan = append(v.Replan, fmt.Sprintf("%s %s: %s", op.Action, op.Name, op.Why))
	}
	pd, err := segment.OpenPartitionDir(p.Dir)
	if err != nil {
		return nil, err
	}
	for _, s := range pd.Segments {
		if s.Log == "" || !slices.ContainsFunc(p.Segments, func(r Segment) bool { return r.BaseOffset == s.BaseOffset }) {
			continue
		}
		probs, err := segment.VerifySegmentIndexes(s)
		if err != nil {
			return nil, err
		}
		v.IndexProblems = append(v.IndexProblems, probs...)
	}
	o := psm.DefaultOptions()
	o.VerifyCRC = false
	logStart, _, err := psm.LogDirCheckpoints(pd)
	if err == nil {
		o.LogStartOffset = logStart
	}
	checks, _, err := psm.CheckSnapshots(pd, o)
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		if c.Offset < p.FirstExamined || c.Status == psm.CheckSkipped || c.Match() {
			continue
		}
		msg := fmt.Sprintf("%s: %s", filepath.Base(c.Path), c.Status)
		if len(c.Differences) > 0 {
			msg += ": " + c.Differences[0].String()
		} else if c.Reason != "" {
			msg += ": " + c.Reason
		}
		v.SnapshotProblems = append(v.SnapshotProblems, msg)
	}
	return v, nil
}
