package barrier

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
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

// RepairOptions select what PlanRepair examines. The zero value is the
// CLI's defaults.
type RepairOptions struct {
	// All examines every segment, not only those from the recovery point
	// on.
	All bool `json:"all"`
	// IndexIntervalBytes is the topic's index.interval.bytes for rebuilt
	// indexes; 0 means 4096.
	IndexIntervalBytes int `json:"indexIntervalBytes"`

	// checkWritable replaces the read-only probe in tests.
	checkWritable func(dir string) (bool, string, error)
}

// RepairPlan is everything a repair will do, computed without changing a
// byte. ApplyRepair executes it; --dry-run prints it.
type RepairPlan struct {
	Dir       string        `json:"dir"`
	LogDir    string        `json:"logDir"`
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Options   RepairOptions `json:"options"`

	// RecoveryPoint is the partition's recovery-point-offset-checkpoint
	// entry, -1 when there is none. Scope says which segments were
	// examined and why.
	RecoveryPoint int64  `json:"recoveryPoint"`
	Scope         string `json:"scope"`
	// FirstExamined is the base offset of the first segment examined.
	FirstExamined  int64 `json:"firstExamined"`
	LogStartOffset int64 `json:"logStartOffset"`

	Segments []RepairSegment `json:"segments"`
	Findings []RepairFinding `json:"findings"`
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
	NothingToDo bool    `json:"nothingToDo"`
	Reason      string  `json:"reason,omitempty"`
	Resume      *Resume `json:"resume,omitempty"`

	// Ops are the file operations, in the order ApplyRepair commits them.
	Ops      []FileOp `json:"ops"`
	Warnings []string `json:"warnings"`
}

// RepairSegment is one examined segment.
type RepairSegment struct {
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
	Cut       *RepairCut `json:"cut,omitempty"`
	Index     FileRepair `json:"index"`
	TimeIndex FileRepair `json:"timeIndex"`
	TxnIndex  FileRepair `json:"txnIndex"`
}

// RepairCut is where a segment is truncated and why.
type RepairCut struct {
	Position int64  `json:"position"` // the first invalid byte: the new size
	Kind     string `json:"kind"`     // a dump finding kind: crc-mismatch, torn-tail, corrupt-batch …
	Bytes    int64  `json:"bytes"`    // bytes cut
	Message  string `json:"message"`
}

// FileRepair is what happens to one index file of a segment.
type FileRepair struct {
	// Action: keep (valid as it is), rebuild (replaced by the rebuilt
	// content), create (missing, rebuilt) or none (no file, none needed).
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Entries int    `json:"entries"` // in the file after the repair
}

// RepairFinding is one problem the plan found (and repairs).
type RepairFinding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"` // error | warning | info
	File     string `json:"file"`
	Position int64  `json:"position"` // -1 when not tied to a byte
	Message  string `json:"message"`
}

// Repair finding kinds. A cut is reported with dump's kind for the damage
// (crc-mismatch, torn-tail, corrupt-batch, zero-tail, offset-out-of-order)
// or RepairKindInvalidMarker; the other files' changes with these.
const (
	RepairKindInvalidMarker      = "invalid-marker"
	RepairKindSegmentUnreachable = "segment-unreachable"
	RepairKindIndexRebuilt       = "index-rebuilt"     // info: rebuilt because the log is cut
	RepairKindTimeIndexRebuilt   = "timeindex-rebuilt" // info: rebuilt because the log is cut
	RepairKindTxnIndexRebuilt    = "txnindex-rebuilt"  // info: only entries past the cut go
	RepairKindTxnIndexMismatch   = "txnindex-mismatch" // error: entries the log does not complete
	RepairKindTxnIndexMissing    = "txnindex-missing"
	RepairKindSnapshotAboveEnd   = "snapshot-above-log-end"
	RepairKindSnapshotCorrupt    = psm.KindSnapshotCorrupt
	RepairKindSnapshotMismatch   = psm.KindSnapshotMismatch
	RepairKindEpochAboveEnd      = "leader-epoch-above-log-end"
	RepairKindOrphanIndex        = "orphan-index"
)

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
const RefuseOffsetOverflow = "offset-overflow"

// PlanRepair reads the partition directory dir and plans its repair. It
// changes nothing. Refusals are *RefusalError; anything else is I/O. When
// dir holds the journal of an interrupted repair, the plan is the
// journal's, with Resume set: ApplyRepair then finishes it.
func PlanRepair(dir string, opts RepairOptions) (*RepairPlan, error) {
	// The real directory, before anything else: the log directory (whose
	// .lock a broker holds) is the real parent, not a symlink's.
	dir = edit.RealPath(dir)
	name, err := checkPartitionDir(dir, "")
	if err != nil {
		return nil, err
	}
	logDir := segment.LogDirOf(dir)
	if err := checkWritableLogDir(logDir, dir, opts.checkWritable); err != nil {
		return nil, err
	}
	j, job, err := pendingJournal(dir, RepairKind)
	if err != nil {
		return nil, err
	}
	if j != nil {
		p := job.(*repairJob).p
		p.Resume = resumeOf(j)
		return p, nil
	}
	if opts.IndexIntervalBytes == 0 {
		opts.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if opts.IndexIntervalBytes < 0 {
		return nil, &OptionError{Option: "index-interval-bytes", Detail: "must not be negative"}
	}
	rp := &repairPlanner{dir: dir, logDir: logDir, name: name, opts: opts}
	return rp.plan()
}

type repairPlanner struct {
	dir, logDir string
	name        segment.PartitionDirName
	opts        RepairOptions
	pd          *segment.PartitionDir
	p           *RepairPlan
	ops         []FileOp
	// checkEnd judges a snapshot at the new log end over the kept log
	// (psm.CheckSnapshotAt).
	checkEnd func(onDisk []segment.SnapshotEntry) (psm.SnapshotCheck, error)
	// cleanShutdown: the log directory holds .kafka_cleanshutdown.
	cleanShutdown bool
}

func (rp *repairPlanner) warnf(format string, args ...any) {
	rp.p.Warnings = append(rp.p.Warnings, fmt.Sprintf(format, args...))
}

func (rp *repairPlanner) find(kind, severity, file string, pos int64, format string, args ...any) {
	rp.p.Findings = append(rp.p.Findings, RepairFinding{Kind: kind, Severity: severity, File: filepath.Base(file), Position: pos,
		Message: fmt.Sprintf(format, args...)})
	if severity == "error" {
		rp.p.Damage = true
	}
}

// readRecoveryPoint finds the partition in the log directory's
// recovery-point-offset-checkpoint; -1 when absent.
func (rp *repairPlanner) readRecoveryPoint() int64 {
	path := filepath.Join(rp.logDir, segment.RecoveryPointCheckpointName)
	entries, err := segment.ReadOffsetCheckpoint(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			rp.warnf("%s unreadable (%v); every segment is examined", path, err)
		}
		return -1
	}
	for _, e := range entries {
		if e.Topic == rp.name.Topic && e.Partition == rp.name.Partition {
			return e.Offset
		}
	}
	return -1
}

// segRepair is the scan of one examined segment.
type segRepair struct {
	files   segment.SegmentFiles
	size    int64
	valid   int64
	batches int64
	next    int64 // after the last kept batch; the base when none
	framed  int64 // offset after the last batch that frames (kept or not)
	cut     *RepairCut
	removed int64 // framed batches after the cut

	index, timeIndex []byte // rebuilt from the kept batches
	indexEntries     int
	timeEntries      int
	// indexBad / timeBad say why the existing file is not what recovery
	// would keep ("" when it verifies against the kept batches).
	indexBad, timeBad   string
	indexSev, timeSev   string
	indexKind, timeKind string // the finding's kind (indexCheck.verdict)
}

func (rp *repairPlanner) plan() (*RepairPlan, error) {
	p := &RepairPlan{Dir: rp.dir, LogDir: rp.logDir, Topic: rp.name.Topic, Partition: rp.name.Partition, Options: rp.opts,
		SnapshotOffset: -1, FirstExamined: -1}
	rp.p = p
	pd, err := segment.OpenPartitionDir(rp.dir)
	if err != nil {
		return nil, err
	}
	rp.pd = pd
	for _, t := range pd.Transient {
		if fi, _ := segment.ParseFileName(filepath.Base(t)); fi.Suffix == segment.SwapSuffix {
			return nil, refuse(RefuseTransientFiles, t, "a .swap file: the broker would swap it in at the next load; let it finish first")
		}
	}
	for _, f := range append(append([]string(nil), pd.Other...), pd.Transient...) {
		switch base := filepath.Base(f); {
		case strings.HasSuffix(base, stagedSuffix):
			return nil, refuse(RefuseTransientFiles, f, "left by an interrupted kseg run whose journal is gone; inspect it and remove it")
		case base == JournalName+segment.TempSuffix:
			rp.warnf("%s is left from a run interrupted before it changed anything; it is removed", base)
		}
	}
	if _, err := os.Stat(filepath.Join(rp.logDir, segment.CleanShutdownName)); err == nil {
		rp.cleanShutdown = true
		rp.warnf("the log directory holds %s: a broker would take the shutdown as clean and skip recovery; kseg repairs anyway", segment.CleanShutdownName)
	}
	var segs, orphans []segment.SegmentFiles
	for _, s := range pd.Segments {
		if s.Log == "" {
			orphans = append(orphans, s)
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, refuse(RefuseNotPartition, rp.dir, "no .log segment")
	}
	logStart, _, err := psm.LogDirCheckpoints(pd)
	if err != nil {
		rp.warnf("log directory checkpoints unreadable (%v); log start taken from the first segment", err)
		logStart = -1
	}
	p.LogStartOffset = max(logStart, segs[0].BaseOffset)

	// Scope: the segment holding the recovery point and every later one
	// (LogLoader.recoverLog), or all of them.
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

	// Pass 1: examine. Below the recovery point only a missing .index or a
	// .txnindex failing its sanity check makes the broker recover a
	// segment (LogLoader.loadSegmentFiles).
	var scans []*segRepair
	cutAt := -1 // index in segs of the in-scope segment cut
	for i, s := range segs {
		why := "at or above the recovery point"
		if rp.opts.All {
			why = "--all"
		} else if p.RecoveryPoint < 0 {
			why = "no recovery point"
		}
		if i < first {
			why = belowRecoveryPoint(s)
			if why == "" {
				continue
			}
		}
		sr, err := rp.scan(s)
		if err != nil {
			return nil, err
		}
		if p.FirstExamined < 0 {
			p.FirstExamined = s.BaseOffset
		}
		scans = append(scans, sr)
		p.Segments = append(p.Segments, RepairSegment{BaseOffset: s.BaseOffset, Log: filepath.Base(s.Log), Size: sr.size, Why: why,
			ValidBytes: sr.valid, Batches: sr.batches, NextOffset: sr.next, Cut: sr.cut})
		if sr.cut != nil && i >= first {
			cutAt = i
			break
		}
		if sr.cut != nil {
			rp.warnf("segment %d lies below the recovery point and is truncated at position %d; the broker truncates it without deleting the later segments, and so does kseg", s.BaseOffset, sr.cut.Position)
		}
	}

	// The log end before and after.
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
		return nil, refuse(RefuseBelowLogStart, rp.dir, "the log start offset %d is above the repaired log end %d: a broker would delete every segment at load (deleteSegmentsIfLogStartGreaterThanLogEnd)", logStart, p.NewLogEndOffset)
	}
	for _, sr := range scans {
		if c := sr.cut; c != nil {
			sev := "error"
			if c.Kind == "zero-tail" {
				sev = "warning"
			}
			rp.find(c.Kind, sev, sr.files.Log, c.Position, "%s", c.Message)
		}
	}
	for _, s := range dropped {
		rp.find(RepairKindSegmentUnreachable, "info", s.Log, -1, "%s follows a truncated segment: recovery deletes it (LogLoader.recoverLog)", filepath.Base(s.Log))
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
	// snapshots above the new end, corrupt ones, unreachable segments.
	if err := rp.planSnapshots(); err != nil {
		return nil, err
	}
	// Index files without a .log: LogLoader deletes them at load ("Found
	// an orphaned index file").
	for _, s := range orphans {
		for _, path := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
			if path == "" {
				continue
			}
			// error, as in dump: Kafka never leaves an index without its
			// .log under its live name (it renames a segment's files to
			// .deleted before it deletes them), so the segment's data went
			// missing outside the broker.
			rp.find(RepairKindOrphanIndex, "error", path, -1, "an index file without its .log (segment %d): the segment's data is missing; the broker deletes the index at load", s.BaseOffset)
			if err := rp.del(path, "orphaned index file (no .log)"); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(dropped, func(a, b segment.SegmentFiles) int { return cmp.Compare(b.BaseOffset, a.BaseOffset) })
	for _, s := range dropped {
		for _, path := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if path != "" {
				if err := rp.del(path, fmt.Sprintf("segment %d follows the truncated segment %d", s.BaseOffset, segs[cutAt].BaseOffset)); err != nil {
					return nil, err
				}
			}
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
	p.Ops = rp.ops
	if len(p.Ops) == 0 {
		p.NothingToDo = true
		p.Reason = fmt.Sprintf("every examined segment (%d from offset %d) is valid and its indexes, transaction index and producer snapshots are what recovery would leave",
			len(p.Segments), p.FirstExamined)
	}
	return p, nil
}

// belowRecoveryPoint says why the broker would recover a segment below
// the recovery point at load, "" when it would not
// (LogSegment.sanityCheck: the offset index must exist, the transaction
// index must pass TransactionIndex.sanityCheck).
func belowRecoveryPoint(s segment.SegmentFiles) string {
	if s.Index == "" {
		return "below the recovery point, but its .index is missing (LogLoader recovers the segment)"
	}
	if s.TxnIndex != "" {
		x, err := segment.ReadTxnIndex(s.TxnIndex)
		if err == nil {
			err = segment.SanityCheckTxnIndex(&x, s.BaseOffset)
		}
		if err != nil {
			return fmt.Sprintf("below the recovery point, but its .txnindex fails the sanity check (%v)", err)
		}
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

// scan reads one segment as LogSegment.recover does, rebuilding its
// indexes and checking the existing ones against the kept batches in the
// same pass.
func (rp *repairPlanner) scan(s segment.SegmentFiles) (*segRepair, error) {
	lf, err := segment.OpenLog(s.Log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	base := s.BaseOffset
	name := filepath.Base(s.Log)
	sr := &segRepair{files: s, size: lf.Size, next: base, framed: base}
	ib := newIndexBuilder(base, rp.opts.IndexIntervalBytes)
	iv, err := newIndexCheck(s)
	if err != nil {
		return nil, err
	}
	cut := func(pos int64, kind, format string, args ...any) {
		sr.cut = &RepairCut{Position: pos, Kind: kind, Bytes: lf.Size - pos, Message: fmt.Sprintf(format, args...)}
	}
	prevLast, hasPrev := int64(0), false
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		b := sc.Batch()
		pos := sc.Pos()
		sr.framed = max(sr.framed, b.NextOffset())
		if sr.cut != nil {
			sr.removed++
			continue
		}
		if !b.CRCValid() {
			// batch.ensureValid → CorruptRecordException.
			cut(pos, "crc-mismatch", "%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x",
				name, pos, b.BaseOffset, b.CRC, b.ComputeCRC())
			sr.removed++
			continue
		}
		last := b.LastOffset()
		if last < base || last-base > math.MaxInt32 {
			return nil, refuse(RefuseOffsetOverflow, s.Log,
				"the batch at position %d ends at offset %d, which does not fit the segment's base offset %d; the broker splits such a segment (LogSegmentOffsetOverflowException), kseg repair does not: inspect it with kseg dump",
				pos, last, base)
		}
		first := b.BaseOffset
		if b.IsLegacy() {
			first = last
		}
		if hasPrev && first <= prevLast {
			cut(pos, "offset-out-of-order", "%s: batch at position %d: baseOffset %d is not above the previous batch's lastOffset %d",
				name, pos, first, prevLast)
			sr.removed++
			continue
		}
		ib.add(pos, last, b.MaxTimestamp)
		iv.batch(pos, b)
		sr.valid = pos + b.Size()
		sr.batches++
		sr.next = last + 1
		prevLast, hasPrev = last, true
		if msg := invalidMarker(b); msg != "" {
			// InvalidRecordException from the marker: caught, the segment
			// is truncated after this batch (validBytes counts it).
			cut(sr.valid, RepairKindInvalidMarker, "%s: transaction marker at position %d (offset %d): %s; recovery truncates after it",
				name, pos, b.BaseOffset, msg)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if sr.cut == nil {
		t := sc.Tail()
		sr.valid = t.ValidBytes
		switch t.Kind {
		case segment.TailClean:
		case segment.TailZeroFilled:
			cut(t.ValidBytes, "zero-tail", "%s: %d zero bytes after position %d (a preallocated segment after an unclean shutdown)", name, t.InvalidBytes(), t.ValidBytes)
		case segment.TailTornHeader:
			cut(t.ValidBytes, "torn-tail", "%s (%d bytes after validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)
		default:
			// A torn batch, or bytes that do not frame: if valid batches
			// follow (dump resynchronises on them), the length or header is
			// corrupt rather than torn by a crash.
			n, err := countFramedAfter(lf, t, sr)
			if err != nil {
				return nil, err
			}
			sr.removed += n
			switch {
			case t.Kind == segment.TailTornBatch && n == 0:
				cut(t.ValidBytes, "torn-tail", "%s (%d bytes after validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)
			case t.Kind == segment.TailTornBatch:
				cut(t.ValidBytes, "corrupt-batch", "%s: batch at position %d (baseOffset %d): batchLength is corrupt: the batch would run past the end of the file, yet %d valid batches follow; they are lost with it",
					name, t.ValidBytes, t.Err.BaseOffset, n)
			default:
				cut(t.ValidBytes, "corrupt-batch", "%s (validBytes %d; %d valid batches follow the damage and are lost with it)", t.Err.Error(), t.ValidBytes, n)
			}
		}
	}
	ib.finish()
	if sr.index, sr.timeIndex, err = ib.encode(); err != nil {
		return nil, err
	}
	sr.indexEntries, sr.timeEntries = len(ib.idx), len(ib.tidx)
	sr.indexBad, sr.indexKind, sr.indexSev, sr.timeBad, sr.timeKind, sr.timeSev = iv.verdict(sr.valid, sr.cut != nil)
	return sr, nil
}

// countFramedAfter counts, for the Removed figures, the batches that frame
// after structural damage: it resynchronises as dump does.
func countFramedAfter(lf *segment.LogFile, t segment.Tail, sr *segRepair) (int64, error) {
	var n int64
	min := sr.next
	for t.Kind == segment.TailCorrupt || t.Kind == segment.TailTornBatch {
		pos, found, err := segment.Resync(lf.ReaderAt(), t.ValidBytes+1, t.End, segment.ResyncOptions{MinBaseOffset: min})
		if errors.Is(err, segment.ErrResyncBudget) {
			return n, nil
		}
		if err != nil || !found {
			return n, err
		}
		sc := lf.Scanner(segment.ScanOptions{Start: pos})
		for sc.Next() {
			n++
			min = sc.Batch().NextOffset()
			sr.framed = max(sr.framed, min)
		}
		if err := sc.Err(); err != nil {
			return n, err
		}
		t = sc.Tail()
	}
	return n, nil
}

// invalidMarker reports why a transaction marker's control record does not
// parse ("" for any other batch, or a valid marker): what
// LogSegment.updateProducerState meets as an InvalidRecordException.
func invalidMarker(b *decode.Batch) string {
	if !b.IsControl() || !b.HasProducerID() || b.RecordCount == 0 {
		return ""
	}
	key, value, ok, err := firstRecord(b)
	if err != nil {
		return err.Error()
	}
	if !ok {
		return ""
	}
	_, typ, err := decode.ParseControlKey(key)
	if err != nil {
		return err.Error()
	}
	if typ != decode.ControlAbort && typ != decode.ControlCommit {
		return ""
	}
	if _, err := decode.ParseControl(key, value); err != nil {
		return err.Error()
	}
	return ""
}

// indexCheck verifies a segment's existing .index and .timeindex against
// its kept batches in the scan's single pass (kafka-dump-log's checks,
// plus order), and notes what else recovery would not leave: a missing
// file, a partial entry, a preallocated zero tail, a failed sanity check.
type indexCheck struct {
	idx  *segment.OffsetIndex
	tidx *segment.TimeIndex
	ip   int
	tp   int
	// first problem found with each, and its finding kind (dump's word
	// for the same defect); *Past: it is only entries past the end of the
	// valid log (a consequence of the cut, not damage)
	idxBad, timeBad   string
	idxKind, timeKind string
	idxPast, timePast bool
	dec               decode.Decoder
}

// Index finding kinds: dump's for the same defect (index-mismatch,
// timeindex-mismatch, index-length, index-sanity), and repair's own for
// what dump does not check. One kind, one severity.
const (
	RepairKindIndexMissing     = "index-missing"     // warning
	RepairKindTimeIndexMissing = "timeindex-missing" // warning
	RepairKindIndexZeroTail    = "index-zero-tail"   // warning: preallocated slots, not trimmed
	kindIndexMismatch          = "index-mismatch"
	kindTimeIndexMismatch      = "timeindex-mismatch"
	kindIndexLength            = "index-length"
	kindIndexSanity            = "index-sanity"
)

func newIndexCheck(s segment.SegmentFiles) (*indexCheck, error) {
	c := &indexCheck{}
	if s.Index == "" {
		c.idxBad, c.idxKind = "missing", RepairKindIndexMissing
	} else {
		x, err := segment.ReadOffsetIndex(s.Index, s.BaseOffset)
		if err != nil {
			return nil, err
		}
		c.idx = &x
		switch {
		case x.TrailingBytes() != 0:
			c.idxBad, c.idxKind = fmt.Sprintf("%d bytes is not a whole number of 8-byte entries", x.Length), kindIndexLength
		case segment.SanityCheckOffsetIndex(&x) != nil:
			c.idxBad, c.idxKind = "fails the broker's sanity check: "+segment.SanityCheckOffsetIndex(&x).Error(), kindIndexSanity
		case x.TailSlots() > 0:
			c.idxBad, c.idxKind = fmt.Sprintf("%d zero-filled slots after its %d entries (preallocated, not trimmed: an unclean shutdown)", x.TailSlots(), len(x.Entries)), RepairKindIndexZeroTail
		}
		for i := 1; c.idxBad == "" && i < len(x.Entries); i++ {
			if e, p := x.Entries[i], x.Entries[i-1]; e.Offset <= p.Offset || e.Position <= p.Position {
				c.idxBad, c.idxKind = fmt.Sprintf("entry %d (offset %d, position %d) does not follow entry %d (offset %d, position %d)", i, e.Offset, e.Position, i-1, p.Offset, p.Position), kindIndexMismatch
			}
		}
	}
	if s.TimeIndex == "" {
		c.timeBad, c.timeKind = "missing", RepairKindTimeIndexMissing
	} else {
		x, err := segment.ReadTimeIndex(s.TimeIndex, s.BaseOffset)
		if err != nil {
			return nil, err
		}
		c.tidx = &x
		switch {
		// The sanity check before the zero tail: a preallocated time index
		// fails it (its last timestamp is 0), as dump --index-sanity-check
		// says.
		case x.TrailingBytes() != 0:
			c.timeBad, c.timeKind = fmt.Sprintf("%d bytes is not a whole number of 12-byte entries", x.Length), kindIndexLength
		case segment.SanityCheckTimeIndex(&x) != nil:
			c.timeBad, c.timeKind = "fails the broker's sanity check: "+segment.SanityCheckTimeIndex(&x).Error(), kindIndexSanity
		case x.TailSlots() > 0:
			c.timeBad, c.timeKind = fmt.Sprintf("%d zero-filled slots after its %d entries (preallocated, not trimmed: an unclean shutdown)", x.TailSlots(), len(x.Entries)), RepairKindIndexZeroTail
		}
		for i := 1; c.timeBad == "" && i < len(x.Entries); i++ {
			if e, p := x.Entries[i], x.Entries[i-1]; e.Offset < p.Offset || e.Timestamp <= p.Timestamp {
				c.timeBad, c.timeKind = fmt.Sprintf("entry %d (timestamp %d, offset %d) does not follow entry %d (timestamp %d, offset %d)", i, e.Timestamp, e.Offset, i-1, p.Timestamp, p.Offset), kindTimeIndexMismatch
			}
		}
	}
	return c, nil
}

// batch checks the entries that point at the kept batch b at pos. Entries
// are in order (or already condemned). A time-index entry may name any
// offset Kafka's writers put there (segment.TimeIndexOffsetOK), not only
// the batch's last offset: such an index verifies and is kept.
func (c *indexCheck) batch(pos int64, b *decode.Batch) {
	last, ts := b.LastOffset(), b.MaxTimestamp
	if c.idx != nil && c.idxBad == "" {
		for c.ip < len(c.idx.Entries) && int64(c.idx.Entries[c.ip].Position) <= pos {
			e := c.idx.Entries[c.ip]
			switch {
			case int64(e.Position) < pos:
				c.idxBad, c.idxKind = fmt.Sprintf("entry %d points at position %d, where no batch starts", c.ip, e.Position), kindIndexMismatch
			case e.Offset != last:
				c.idxBad, c.idxKind = fmt.Sprintf("entry %d gives offset %d for the batch at position %d, which ends at %d", c.ip, e.Offset, pos, last), kindIndexMismatch
			}
			c.ip++
		}
	}
	if c.tidx != nil && c.timeBad == "" {
		for c.tp < len(c.tidx.Entries) && c.tidx.Entries[c.tp].Offset <= last {
			e := c.tidx.Entries[c.tp]
			switch {
			case e.Offset != last && !segment.TimeIndexOffsetOK(&c.dec, b, e.Offset):
				c.timeBad, c.timeKind = fmt.Sprintf("entry %d's offset %d is neither its batch's last offset nor the first offset carrying its max timestamp", c.tp, e.Offset), kindTimeIndexMismatch
			case e.Timestamp != ts:
				c.timeBad, c.timeKind = fmt.Sprintf("entry %d gives timestamp %d for offset %d, whose batch has maxTimestamp %d", c.tp, e.Timestamp, e.Offset, ts), kindTimeIndexMismatch
			}
			c.tp++
		}
	}
}

// verdict returns why each existing file is not what recovery would
// keep, with the finding's kind and severity ("" when it verifies): the
// defect's kind (dump's word for it: index-mismatch, index-length, …, an
// error; index-missing or index-zero-tail, warnings), or, when the only
// problem is entries past the end of a log this repair cuts (they point
// into what the cut removes), index-rebuilt / timeindex-rebuilt, info.
// Past the end of a log nothing cuts those entries are as wrong as any
// other, and dump --verify-index calls them index-mismatch /
// timeindex-mismatch errors: one kind, one severity.
func (c *indexCheck) verdict(valid int64, cut bool) (idxBad, idxKind, idxSev, timeBad, timeKind, timeSev string) {
	if c.idx != nil && c.idxBad == "" && c.ip < len(c.idx.Entries) {
		e := c.idx.Entries[c.ip]
		c.idxBad = fmt.Sprintf("entry %d (offset %d) points at position %d, at or past the end of the valid log (%d)", c.ip, e.Offset, e.Position, valid)
		c.idxKind, c.idxPast = kindIndexMismatch, cut
	}
	if c.tidx != nil && c.timeBad == "" && c.tp < len(c.tidx.Entries) {
		e := c.tidx.Entries[c.tp]
		c.timeBad = fmt.Sprintf("entry %d's offset %d lies past the last valid batch", c.tp, e.Offset)
		c.timeKind, c.timePast = kindTimeIndexMismatch, cut
	}
	class := func(why, kind string, past bool, rebuilt string) (string, string) {
		switch {
		case why == "":
			return "", ""
		case past:
			return rebuilt, "info"
		case kind == RepairKindIndexMissing || kind == RepairKindTimeIndexMissing || kind == RepairKindIndexZeroTail:
			return kind, "warning"
		}
		return kind, "error"
	}
	idxKind, idxSev = class(c.idxBad, c.idxKind, c.idxPast, RepairKindIndexRebuilt)
	timeKind, timeSev = class(c.timeBad, c.timeKind, c.timePast, RepairKindTimeIndexRebuilt)
	return c.idxBad, idxKind, idxSev, c.timeBad, timeKind, timeSev
}

// replay rebuilds the producer state at the new log end over the log as
// the repair leaves it.
func (rp *repairPlanner) replay(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (*psm.Result, error) {
	view, o := rp.replayView(kept, scans, firstExamined, end, logStart)
	return psm.Rebuild(&view, o)
}

// replayView is the partition as the repair leaves it, and the options
// that replay it to the new log end.
func (rp *repairPlanner) replayView(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (segment.PartitionDir, psm.Options) {
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

// del plans the deletion of a file.
func (rp *repairPlanner) del(path, why string) error {
	op, err := deleteOp(path, why)
	if err == nil {
		rp.ops = append(rp.ops, op)
	}
	return err
}

// write plans new content for a file: replaced, created, or nothing when
// it already holds exactly that.
func (rp *repairPlanner) write(name string, content []byte, why string) (bool, error) {
	op, err := writeOp(rp.dir, name, content, why)
	if err != nil || op == nil {
		return false, err
	}
	rp.ops = append(rp.ops, *op)
	return true, nil
}

// planSnapshots deletes the snapshots above the new end and the corrupt
// ones, newest first.
func (rp *repairPlanner) planSnapshots() error {
	p := rp.p
	for i := len(rp.pd.Snapshots) - 1; i >= 0; i-- {
		s := rp.pd.Snapshots[i]
		if s.Offset > p.NewLogEndOffset {
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			rp.find(RepairKindSnapshotAboveEnd, "info", s.Path, -1, "%s lies above the new log end %d (truncateAndReload deletes it)", filepath.Base(s.Path), p.NewLogEndOffset)
			if err := rp.del(s.Path, fmt.Sprintf("producer snapshot above the new log end %d", p.NewLogEndOffset)); err != nil {
				return err
			}
			continue
		}
		if _, err := segment.ReadProducerSnapshot(s.Path); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				return err
			}
			rp.find(RepairKindSnapshotCorrupt, "error", s.Path, ce.Pos, "%v; the broker deletes it when it tries to load it", err)
			if s.Offset == p.NewLogEndOffset {
				continue // rewritten at the end
			}
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := rp.del(s.Path, "corrupt producer snapshot (loadFromSnapshot deletes it)"); err != nil {
				return err
			}
		}
	}
	slices.Sort(p.SnapshotsDeleted)
	return nil
}

// planSegment decides the files of one examined segment: .txnindex,
// .timeindex, .index, then the .log cut.
func (rp *repairPlanner) planSegment(sr *segRepair, ps *RepairSegment, res *psm.Result, segEnd int64) error {
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
		rp.find(RepairKindTxnIndexMissing, "error", txnName, -1, "missing; %d aborted transactions end in segment %d", n, base)
	default:
		old, err := segment.ReadFile(sr.files.TxnIndex)
		if err != nil {
			return err
		}
		if want == nil {
			want = []byte{}
		}
		ps.TxnIndex.Action = FileKeep
		if !bytes.Equal(old, want) {
			ps.TxnIndex.Action = FileRebuild
			kind, sev, reason := txnIndexProblem(old, want, sr.files.TxnIndex, base)
			if cutWhy != "" && txnPrefix(old, want) {
				kind, sev, reason = RepairKindTxnIndexRebuilt, "info", cutWhy
			}
			ps.TxnIndex.Reason = reason
			rp.find(kind, sev, txnName, -1, "%s; rebuilt from the aborted transactions the producer-state replay completes (%d entries)", ps.TxnIndex.Reason, n)
		}
	}
	if ps.TxnIndex.Action == FileCreate || ps.TxnIndex.Action == FileRebuild {
		if want == nil {
			want = []byte{}
		}
		if _, err := rp.write(txnName, want, "rebuilt: "+ps.TxnIndex.Reason); err != nil {
			return err
		}
	}

	// .timeindex and .index: rebuilt when recovery would not keep them.
	for _, f := range []struct {
		suffix  string
		have    string
		bad     string
		sev     string
		content []byte
		entries int
		out     *FileRepair
		kind    string
		rebuilt string // the kind of a rebuild the cut alone calls for
	}{
		{segment.TimeIndexSuffix, sr.files.TimeIndex, sr.timeBad, sr.timeSev, sr.timeIndex, sr.timeEntries, &ps.TimeIndex, sr.timeKind, RepairKindTimeIndexRebuilt},
		{segment.IndexSuffix, sr.files.Index, sr.indexBad, sr.indexSev, sr.index, sr.indexEntries, &ps.Index, sr.indexKind, RepairKindIndexRebuilt},
	} {
		name := segment.SegmentFileName(base, f.suffix)
		*f.out = FileRepair{Action: FileKeep, Entries: f.entries}
		why, sev, kind := f.bad, f.sev, f.kind
		switch {
		case why == "" && cutWhy != "":
			why, sev, kind = cutWhy, "info", f.rebuilt
		case sev == "info" && cutWhy != "":
			why = cutWhy + "; " + why
		}
		if why == "" {
			continue
		}
		f.out.Action, f.out.Reason = FileRebuild, why
		if f.have == "" {
			f.out.Action = FileCreate
		}
		changed, err := rp.write(name, f.content, "rebuilt from the log: "+why)
		if err != nil {
			return err
		}
		if !changed {
			f.out.Action, f.out.Reason = FileKeep, ""
			continue
		}
		rp.find(kind, sev, name, -1, "%s; rebuilt from the kept batches (%d entries, index.interval.bytes %d)", why, f.entries, rp.opts.IndexIntervalBytes)
	}

	// The .log: the valid prefix, byte for byte.
	if sr.cut != nil {
		rp.ops = append(rp.ops, FileOp{Name: filepath.Base(log), Action: OpReplace, OldSize: sr.size, NewSize: sr.valid, KeepPrefix: sr.valid,
			Why: fmt.Sprintf("truncate at position %d (%s): %d bytes cut", sr.cut.Position, sr.cut.Kind, sr.size-sr.valid)})
	}
	return nil
}

// txnIndexProblem describes how an existing .txnindex differs from the
// rebuilt one, with the finding's kind and severity: dump's for what dump
// sees (txnindex-corrupt and index-sanity errors, a txnindex-partial-entry
// warning), txnindex-mismatch (an error) for entries that are not the
// aborted transactions the log completes.
func txnIndexProblem(old, want []byte, path string, base int64) (kind, sev, reason string) {
	x, err := segment.ParseTxnIndex(old, path)
	switch {
	case err != nil:
		return "txnindex-corrupt", "error", err.Error()
	case segment.SanityCheckTxnIndex(&x, base) != nil:
		return kindIndexSanity, "error", segment.SanityCheckTxnIndex(&x, base).Error()
	case len(x.Entries)*segment.AbortedTxnSize != len(want):
		return RepairKindTxnIndexMismatch, "error", fmt.Sprintf("%d entries, the log has %d aborted transactions ending in the segment", len(x.Entries), len(want)/segment.AbortedTxnSize)
	case !bytes.Equal(old[:len(want)], want):
		return RepairKindTxnIndexMismatch, "error", "its entries differ from the aborted transactions the log completes"
	}
	return "txnindex-partial-entry", "warning", fmt.Sprintf("%d trailing bytes, a partial entry", x.TrailingBytes)
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
func (rp *repairPlanner) planEpochs() error {
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
	shortened := p.NewLogEndOffset < p.LogEndOffset
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
	rp.find(RepairKindEpochAboveEnd, "info", segment.LeaderEpochCheckpointName, -1,
		"%d leader epoch entries start at or above the new log end %d", len(p.EpochEntriesRemoved), p.NewLogEndOffset)
	_, err = rp.write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(keep),
		fmt.Sprintf("leader epochs starting at or above the new log end %d dropped", p.NewLogEndOffset))
	return err
}

// brokersOwn reports whether onDisk, the snapshot at the new log end, is
// a state the broker held there though it differs from the rebuilt one:
// psm decides, as replay-psm --check-snapshots does (producers kept below
// a log start moved by DeleteRecords, producers a recovery never
// expired). Such a snapshot is kept.
func (rp *repairPlanner) brokersOwn(onDisk []segment.SnapshotEntry) (bool, error) {
	if rp.checkEnd == nil {
		return false, nil
	}
	c, err := rp.checkEnd(onDisk)
	return err == nil && c.Match(), err
}

// planEndSnapshot writes the producer snapshot at the new log end when the
// repair changed the log or the snapshots, or when the one there is not
// the rebuilt state. An equal snapshot (in any entry order) is kept.
func (rp *repairPlanner) planEndSnapshot(res *psm.Result) error {
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
	// Only a change to what the producer state is rebuilt from (a cut, a
	// deleted segment or snapshot) calls for a new snapshot at the end:
	// rebuilt .index/.timeindex files do not change producer state, and
	// without a change the broker writes the end snapshot itself at load.
	changed := slices.ContainsFunc(rp.ops, func(op FileOp) bool {
		return !strings.HasSuffix(op.Name, segment.IndexSuffix) && !strings.HasSuffix(op.Name, segment.TimeIndexSuffix)
	})
	switch {
	case exists && onDisk != nil && end <= p.LogStartOffset && !changed:
		// replay-psm's verdict on the same file: the broker deletes it at
		// load (ProducerStateManager.truncateAndReload drops snapshots at
		// or below the log start) and writes its own; nothing to repair.
		rp.find(psm.KindSnapshotIgnored, "info", path, -1, "%s is at or below the log start offset %d; the broker deletes it at load (truncateAndReload) and writes its own", name, p.LogStartOffset)
		return nil
	case exists && onDisk != nil && len(psm.CompareSnapshot(entries, onDisk)) == 0:
		return nil
	case exists && onDisk != nil:
		if own, err := rp.brokersOwn(onDisk); err != nil || own {
			return err
		}
		d := psm.CompareSnapshot(entries, onDisk)
		rp.find(RepairKindSnapshotMismatch, "error", path, -1, "%s differs from the producer state rebuilt from the log (%d difference(s); first: %s)", name, len(d), d[0])
	case !exists && !changed:
		a, lost := psm.CleanShutdownLoss(res)
		if !lost || !psm.SkipsRebuild(rp.pd, rp.cleanShutdown) {
			return nil // the broker rebuilds it from the log at load
		}
		// The broker would start with no producer state: the snapshot
		// makes it load the log's instead.
		rp.find(a.Kind, a.Severity, path, -1, "%s", a.Message)
	}
	p.SnapshotOffset = end
	p.Producers = len(entries)
	why := fmt.Sprintf("producer state at the new log end %d, rebuilt as the broker does (%d producers)", end, len(entries))
	_, err = rp.write(name, segment.EncodeProducerSnapshot(entries), why)
	return err
}

// RepairVerification is the read-back check of a repair.
type RepairVerification struct {
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
func (v *RepairVerification) OK() bool {
	return len(v.Replan) == 0 && len(v.IndexProblems) == 0 && len(v.SnapshotProblems) == 0
}

// VerifyRepair reads a repaired partition back: a new plan must have
// nothing to do, the examined segments' indexes must verify against their
// logs, and every producer snapshot from the first examined segment on
// must match the state rebuilt from the log.
func VerifyRepair(p *RepairPlan) (*RepairVerification, error) {
	v := &RepairVerification{Replan: []string{}, IndexProblems: []string{}, SnapshotProblems: []string{}}
	again, err := PlanRepair(p.Dir, p.Options)
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
		if s.Log == "" || !slices.ContainsFunc(p.Segments, func(r RepairSegment) bool { return r.BaseOffset == s.BaseOffset }) {
			continue
		}
		probs, err := repairedIndexProblems(s)
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

// repairedIndexProblems runs kafka-dump-log's index checks (dump
// --verify-index) and the broker's sanity checks on one segment.
func repairedIndexProblems(s segment.SegmentFiles) ([]string, error) {
	lf, err := segment.OpenLog(s.Log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	var out []string
	var idx *segment.OffsetIndex
	var tidx *segment.TimeIndex
	if s.Index != "" {
		x, err := segment.ReadOffsetIndex(s.Index, s.BaseOffset)
		if err != nil {
			return nil, err
		}
		if err := segment.SanityCheckOffsetIndex(&x); err != nil {
			out = append(out, err.Error())
		}
		idx = &x
	}
	if s.TimeIndex != "" {
		x, err := segment.ReadTimeIndex(s.TimeIndex, s.BaseOffset)
		if err != nil {
			return nil, err
		}
		if err := segment.SanityCheckTimeIndex(&x); err != nil {
			out = append(out, err.Error())
		}
		tidx = &x
	}
	probs, err := segment.VerifyIndexes(lf, idx, tidx)
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		out = append(out, p.String())
	}
	return out, nil
}
