package mirror

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/plural"
)

// Options select what PlanMirror plans. Start from
// DefaultOptions: the zero Upto means "copy nothing".
type Options struct {
	// Upto is the exclusive offset the copy stops at (a batch is copied
	// whole or not at all); -1 copies to the source's log end.
	Upto int64 `json:"upto"`
	// SegmentBytes is the destination's segment.bytes: a new segment is
	// rolled when the active one would grow beyond it.
	SegmentBytes int64 `json:"segmentBytes"`
	// IndexIntervalBytes is the destination's index.interval.bytes.
	IndexIntervalBytes int `json:"indexIntervalBytes"`
	// Align first truncates the destination at the first offset where it
	// is not the source (what failback does before mirroring back);
	// without it a diverged destination is refused (*DivergedError).
	Align bool `json:"align"`
	// FullCompare compares every batch of the destination with the
	// source's, and replays its producer state from its first batch,
	// instead of planning from its tail (see fromTail): what verify-chain
	// does too.
	FullCompare bool `json:"fullCompare,omitempty"`
	// Progress, when set, is called as the plan reads the source's and
	// the destination's batches, with the bytes read (every MiB or so);
	// a plan reads each log once, in its .log segments' sizes at most.
	// The caller draws it.
	Progress func(n int64) `json:"-"`

	// checkWritable replaces the read-only probe in tests.
	checkWritable func(dir string) (bool, string, error)
}

// DefaultOptions are the broker's defaults: copy to the source's
// end, 1 GiB segments, an index entry every 4096 bytes.
func DefaultOptions() Options {
	return Options{Upto: -1, SegmentBytes: segment.DefaultSegmentBytes, IndexIntervalBytes: segment.DefaultIndexIntervalBytes}
}

// Divergence is where a mirror destination stops being a prefix of its
// source: at Offset it holds a batch the source does not.
type Divergence struct {
	Offset      int64  `json:"offset"`
	Reason      string `json:"reason"`
	DstFile     string `json:"dstFile"`
	DstPosition int64  `json:"dstPosition"`
	SrcFile     string `json:"srcFile"`     // "" when the source has no batch there
	SrcPosition int64  `json:"srcPosition"` // -1 when the source has no batch there
}

// Truncation is what Align cuts from the destination: LocalLog.truncateTo
// at Offset, which keeps the batches ending below it.
type Truncation struct {
	Offset          int64        `json:"offset"`
	Segment         int64        `json:"segment"`  // base offset of the segment cut
	Position        int64        `json:"position"` // byte position of the cut in it
	Removed         edit.Removed `json:"removed"`
	SegmentsDeleted []int64      `json:"segmentsDeleted"`
}

// Copied counts what the mirror appends.
type Copied struct {
	Batches int64 `json:"batches"`
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
}

// Plan is everything a mirror will do, computed without changing a
// byte. Apply executes it through the same crash-safe machinery as
// an injection (journal, backups, staged files).
type Plan struct {
	Src       string  `json:"src"`
	Dir       string  `json:"dir"` // the destination partition directory
	LogDir    string  `json:"logDir"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Options   Options `json:"options"`
	// CreateDir: the destination does not exist; it is created with the
	// source's partition.metadata (a mirror keeps its source's topic id).
	CreateDir bool   `json:"createDir"`
	TopicID   string `json:"topicId,omitempty"`

	SrcLog OffsetRange `json:"srcLog"`
	// DstLog is the destination's log as found (empty for a new one).
	DstLog      OffsetRange `json:"dstLog"`
	DstSegments int         `json:"dstSegments"`
	// Compared counts the destination's batches found identical to the
	// source's (partitionLeaderEpoch aside; EpochDifferences counts those
	// that differ in it).
	Compared         int64 `json:"compared"`
	EpochDifferences int64 `json:"epochDifferences"`
	// ComparedLastBatch: only the destination's last batch was compared
	// with the source's (Compared is 1), and the batches below it taken
	// as the source's, as a follower trusts its log below the high
	// watermark (fromTail; Options.FullCompare compares them all).
	ComparedLastBatch bool `json:"comparedLastBatch,omitempty"`

	Divergence *Divergence `json:"divergence,omitempty"`
	Truncation *Truncation `json:"truncation,omitempty"`

	// From and To are the copied range [From, To): To is the end of the
	// last batch copied.
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	Copied Copied `json:"copied"`
	// Barriers are the MIRROR_PID_RESET batches among the copied ones:
	// the source's failovers (or its upstream's), mirrored as data.
	Barriers []int64 `json:"barriers"`
	// AppendSegment is the existing segment the copy continues (-1: the
	// copy starts a new segment).
	AppendSegment   int64            `json:"appendSegment"`
	SegmentsCreated []int64          `json:"segmentsCreated"`
	Index           edit.IndexChange `json:"index"`
	TimeIndex       edit.IndexChange `json:"timeIndex"`
	TxnIndex        edit.IndexChange `json:"txnIndex"`
	// AbortedTxns are the .txnindex entries of the copied ABORT markers,
	// computed by a producer-state replay of the destination (Kafka
	// rebuilds the transaction index locally, VK11).
	AbortedTxns         []segment.AbortedTxn `json:"abortedTxns"`
	EpochEntriesRemoved []segment.EpochEntry `json:"epochEntriesRemoved"`
	EpochEntriesAdded   []segment.EpochEntry `json:"epochEntriesAdded"`
	// SnapshotsCreated are the producer snapshots a broker takes when it
	// rolls a segment (UnifiedLog.roll), at each new segment's base.
	SnapshotsCreated []int64 `json:"snapshotsCreated"`
	SnapshotsDeleted []int64 `json:"snapshotsDeleted"`
	// EndSnapshot is the offset of the producer snapshot written at the
	// new log end, as a broker's clean shutdown writes one
	// (UnifiedLog.close → ProducerStateManager.takeSnapshot); -1: none.
	EndSnapshot     int64 `json:"endSnapshot"`
	NewLogEndOffset int64 `json:"newLogEndOffset"`

	NothingToDo bool              `json:"nothingToDo"`
	Reason      string            `json:"reason,omitempty"`
	Resume      *edit.Interrupted `json:"resume,omitempty"`

	Ops      []edit.FileOp `json:"ops"`
	Warnings []string      `json:"warnings"`

	// segStates are the producer states the plan held where the
	// read-back of the batches it copies starts replaying (stagedCheck):
	// at the continued segment's start (the destination's end) and at the
	// first new segment's base. The engine reads the new segments back in
	// log order (staging) but before the batches appended to the
	// continued one (at commit), so each of the two runs needs its own
	// start. nil for a cut or a plan read back from a journal.
	segStates map[int64]*psm.Manager
}

// CorruptSourceError is a batch of the source, inside the range to copy,
// that fails its CRC, or bytes there that do not frame a batch at all (a
// torn or garbage tail, a bad magic byte): a mirror never copies it (a
// follower's append validates every batch), nor stops silently before it
// (the copy would look complete). The CLI maps it to exit status 3.
type CorruptSourceError struct {
	Path     string
	Position int64
	Offset   int64
	// Kind is the damaged tail's kind (segment.TailKind's name); "" for a
	// batch that fails its CRC.
	Kind string
	Err  error
}

func (e *CorruptSourceError) Error() string {
	if e.Kind != "" {
		// Err names the file and the position already.
		return fmt.Sprintf("the source is unreadable from offset %d (a %s tail): %v; the source must be repaired (kseg repair) before it is mirrored",
			e.Offset, e.Kind, e.Err)
	}
	return fmt.Sprintf("%s: batch at position %d (baseOffset %d) fails its CRC: %v; the source must be repaired before it is mirrored",
		e.Path, e.Position, e.Offset, e.Err)
}

func (e *CorruptSourceError) Unwrap() error { return e.Err }

// mirrorPlanner is one PlanMirror run.
type mirrorPlanner struct {
	p        *Plan
	opts     Options
	srcPD    *segment.PartitionDir
	dstPD    *segment.PartitionDir // nil for a new destination
	m        *psm.Manager          // the destination's producer state
	epochs   []segment.EpochEntry  // the destination's leader epoch cache
	epochsOK bool                  // epochs came from leader-epoch-checkpoint
	roll     segment.RollConfig
	// tail is the destination's last segment as planning from the tail
	// found it (nil: the whole destination was compared).
	tail *tailState
	// lazyEnd: the source's log end (p.SrcLog.End) is not known yet. A
	// copy to the source's end walks the whole source anyway, and its
	// cursor knows the end when it gets there (logCursor.End): walking the
	// last segment's headers first (logEnd) would read it twice.
	lazyEnd bool
}

// errEagerEnd asks PlanMirror to plan again with the source's log end
// found before the copy (a copied batch ends beyond it).
var errEagerEnd = errors.New("the source's log end is needed before the copy")

// srcEnd is the source's log end, from the cursor sc when it walked the
// whole log, else from logEnd.
func (mp *mirrorPlanner) srcEnd(sc *logCursor) (int64, error) {
	if !mp.lazyEnd {
		return mp.p.SrcLog.End, nil
	}
	end, ok := sc.End()
	if !ok {
		var err error
		if end, err = logEnd(mp.srcPD); err != nil {
			return 0, err
		}
	}
	mp.p.SrcLog.End, mp.lazyEnd = end, false
	return end, nil
}

func (mp *mirrorPlanner) warnf(format string, args ...any) {
	mp.p.Warnings = append(mp.p.Warnings, fmt.Sprintf(format, args...))
}

// PlanMirror plans copying the source partition directory src into dst
// from dst's log end, as KIP-1279's mirror fetcher does: every batch
// exactly as it is (offsets, producer ids, epochs, CRCs), with dst's own
// segments, indexes, transaction index, leader epochs and producer
// snapshots maintained as a broker appending them would. It changes
// nothing.
//
// dst must be a prefix of src below its end; otherwise PlanMirror returns
// a *DivergedError, unless opts.Align, which plans truncating dst at the
// divergence first. A dst ending below src's log start is a *GapError.
// Refusals (a broker holds dst's log directory, different topic ids, …)
// are *edit.RefusalError. When dst holds the journal of an interrupted mirror,
// the plan is that journal's, with Resume set.
func PlanMirror(src, dst string, opts Options) (*Plan, error) {
	// The real directories, before anything else: the log directory (whose
	// .lock a broker holds) is DST's real parent, not a symlink's.
	src, dst = edit.RealPath(src), edit.RealPath(dst)
	srcName, ok := segment.ParsePartitionDir(filepath.Base(src))
	switch st, err := os.Stat(src); {
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, edit.Refuse(edit.RefuseNotPartition, src, "not a directory")
	case !ok || srcName.State != segment.DirLive:
		return nil, edit.Refuse(edit.RefuseNotPartition, src, "the name is not <topic>-<partition> of a live partition")
	case !segment.IsPartitionDir(src):
		return nil, edit.Refuse(edit.RefuseNotPartition, src, "no .log, partition.metadata or leader-epoch-checkpoint in it")
	}
	name, ok := segment.ParsePartitionDir(filepath.Base(dst))
	switch {
	case !ok:
		return nil, edit.Refuse(edit.RefuseNotPartition, dst, "the name is not <topic>-<partition>")
	case name.State != segment.DirLive:
		return nil, edit.Refuse(edit.RefuseNotPartition, dst, "a %s directory, not a live partition", name.State)
	case name.Topic == "__cluster_metadata":
		return nil, edit.Refuse(edit.RefuseNotPartition, dst, "the KRaft metadata log is replicated by Raft, not mirrored")
	case edit.RealPath(src) == edit.RealPath(dst):
		return nil, edit.Refuse(RefuseSameDir, dst, "the source and the destination are the same directory")
	}
	logDir := segment.LogDirOf(dst)
	p := &Plan{Src: src, Dir: dst, LogDir: logDir, Topic: name.Topic, Partition: name.Partition, Options: opts,
		AppendSegment: -1, EndSnapshot: -1, DstLog: OffsetRange{}, Barriers: []int64{}, SegmentsCreated: []int64{}, AbortedTxns: []segment.AbortedTxn{},
		EpochEntriesAdded: []segment.EpochEntry{}, EpochEntriesRemoved: []segment.EpochEntry{}, SnapshotsCreated: []int64{},
		SnapshotsDeleted: []int64{}, Warnings: []string{}}
	switch st, err := os.Stat(dst); {
	case errors.Is(err, os.ErrNotExist):
		if st, err := os.Stat(logDir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s: the log directory does not exist", logDir)
		}
		p.CreateDir = true
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, edit.Refuse(edit.RefuseNotPartition, dst, "not a directory")
	}
	probe := dst
	if p.CreateDir {
		probe = logDir
	}
	// A broker holding the log directory, or a read-only one, refuses
	// the apply, not the plan (edit.Deferred): the plan is still made and
	// returned with the refusal, for a dry run to show.
	blocked := edit.CheckWritable(logDir, probe, opts.checkWritable)
	if blocked != nil && !edit.Deferred(blocked) {
		return nil, blocked
	}
	if !p.CreateDir {
		pending, resume, err := edit.Pending(dst, EditKind)
		if err != nil {
			return nil, cmp.Or(blocked, err)
		}
		if pending != nil {
			jp := pending.Plan().(*Plan)
			jp.Resume = resume
			return jp, blocked
		}
	}
	if srcName.Topic != name.Topic || srcName.Partition != name.Partition {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the destination %s is not named after the source %s (a KIP-1279 mirror keeps the topic name and partition)",
			filepath.Base(dst), filepath.Base(src)))
	}
	if opts.SegmentBytes <= 0 || opts.SegmentBytes < decode.RecordBatchOverhead {
		return nil, &edit.OptionError{Option: "segment-bytes", Detail: fmt.Sprintf("%d is too small", opts.SegmentBytes)}
	}
	if opts.IndexIntervalBytes < 0 {
		return nil, &edit.OptionError{Option: "index-interval-bytes", Detail: "must not be negative"}
	}
	start := *p
	start.Warnings = slices.Clone(p.Warnings)
	mp := &mirrorPlanner{p: p, opts: opts, lazyEnd: opts.Upto < 0,
		roll: segment.RollConfig{SegmentBytes: opts.SegmentBytes, SegmentMs: segment.DefaultSegmentMs, MaxIndexSize: segment.DefaultMaxIndexSize}}
	planned, err := mp.plan()
	if errors.Is(err, errEagerEnd) {
		// A log whose batches are out of order across segments: plan again
		// with the log end found first, as the copy's bound.
		*p = start
		mp = &mirrorPlanner{p: p, opts: opts, roll: mp.roll}
		planned, err = mp.plan()
	}
	if err != nil {
		return nil, cmp.Or(blocked, err)
	}
	return planned, blocked
}

// dstSeg is a destination segment the plan writes: an existing one the
// copy continues (or Align cuts), or a new one.
type dstSeg struct {
	base     int64
	existing segment.SegmentFiles // empty Log for a new segment
	oldSize  int64                // the existing .log's size
	keep     int64                // bytes of the existing .log kept
	// ib is LogSegment's state of the segment: its size after the copy so
	// far, its indexes, the timestamp its time-based roll counts from.
	ib       *segment.IndexBuilder
	keptIdx  int
	keptTidx int
	txns     []segment.AbortedTxn
	keptTxn  int
	srcs     []edit.SourceRange
	appended int
}

func (s *dstSeg) addSource(path string, pos, n int64) {
	if k := len(s.srcs); k > 0 && s.srcs[k-1].Path == path && s.srcs[k-1].Pos+s.srcs[k-1].Len == pos {
		s.srcs[k-1].Len += n
		return
	}
	s.srcs = append(s.srcs, edit.SourceRange{Path: path, Pos: pos, Len: n})
}

func (mp *mirrorPlanner) plan() (*Plan, error) {
	p := mp.p
	var err error
	if mp.srcPD, err = segment.OpenPartitionDir(p.Src); err != nil {
		return nil, err
	}
	if !p.CreateDir && segment.IsPartitionDir(p.Dir) {
		if mp.dstPD, err = segment.OpenPartitionDir(p.Dir); err != nil {
			return nil, err
		}
		// A journal's temporary file is replaced by the apply without a
		// word, as the journal of a mirror that creates its directory is.
		if _, err := edit.CheckLeftovers(mp.dstPD, "kseg run"); err != nil {
			return nil, err
		}
	} else if !p.CreateDir {
		// An existing directory that holds no partition files: a new log.
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !edit.IsJournal(e.Name()) || !strings.HasSuffix(e.Name(), segment.TempSuffix) {
				return nil, edit.Refuse(edit.RefuseNotPartition, p.Dir, "it holds %s but no partition files", e.Name())
			}
		}
	}
	if err := mp.topicID(); err != nil {
		return nil, err
	}

	// The source's range.
	sc, err := openCursor(p.Src)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	sc.progress = mp.opts.Progress
	if len(sc.segs) == 0 {
		return nil, edit.Refuse(edit.RefuseNotPartition, p.Src, "no .log segment to mirror")
	}
	p.SrcLog = OffsetRange{Start: sc.Start(), End: -1}
	if !mp.lazyEnd {
		if p.SrcLog.End, err = logEnd(mp.srcPD); err != nil {
			return nil, err
		}
	}

	o := psm.DefaultOptions()
	mp.m = psm.NewManager(o)

	// The destination, compared with the source in lockstep.
	var dc *logCursor
	if mp.dstPD != nil {
		if dc, err = openCursor(p.Dir); err != nil {
			return nil, err
		}
		defer dc.Close()
		dc.progress = mp.opts.Progress
		p.DstSegments = len(dc.segs)
	}
	if err := mp.readEpochs(); err != nil {
		return nil, err
	}
	return p, mp.compareAndCopy(sc, dc)
}

// compareAndCopy compares the destination with the source and plans the
// copy, the source's CRCs checked on a second core ahead of the planner
// (the planner needs the batches' bytes only for their CRCs and control
// records; the copy itself is done by the kernel). The segments are read,
// not mapped: every byte is read once, and on a KVM guest the page faults
// of a mapped walk cost 2.5-3× the CPU time of copying the same pages out
// of the page cache (CRCScanner over a 256 MiB segment of mixed batches,
// page-cached: 0.35-0.43 s mapped, 0.12-0.16 s read). A segment truncated
// under the plan is a short read, which becomes an error.
func (mp *mirrorPlanner) compareAndCopy(sc, dc *logCursor) (err error) {
	sc.checkCRC = true
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			err = fmt.Errorf("%s or %s changed while it was read (truncated by a broker?): %v", mp.p.Src, mp.p.Dir, e)
		}
	}()
	cont, err := mp.fromTail(sc, dc)
	if err != nil {
		return err
	}
	if cont == nil {
		if cont, err = mp.compare(sc, dc); err != nil {
			return err
		}
	}
	if mp.p.Truncation == nil {
		mp.p.segStates = map[int64]*psm.Manager{}
		if cont.seg != nil {
			// The producer state at the destination's end, for the
			// read-back of the appended batches to replay them from.
			mp.holdState(cont.seg.BaseOffset)
		}
	}
	return mp.copyAndFiles(sc, cont)
}

// topicID checks and carries over the topic id.
func (mp *mirrorPlanner) topicID() error {
	p := mp.p
	var srcPM, dstPM *segment.PartitionMetadata
	if path := mp.srcPD.PartitionMetadata; path != "" {
		pm, err := segment.ReadPartitionMetadata(path)
		if err != nil {
			return fmt.Errorf("the source's partition.metadata: %w", err)
		}
		srcPM = &pm
		p.TopicID = pm.TopicIDString
	}
	if mp.dstPD != nil && mp.dstPD.PartitionMetadata != "" {
		pm, err := segment.ReadPartitionMetadata(mp.dstPD.PartitionMetadata)
		if err != nil {
			return fmt.Errorf("the destination's partition.metadata: %w", err)
		}
		dstPM = &pm
	}
	if srcPM != nil && dstPM != nil && srcPM.TopicID != dstPM.TopicID {
		return edit.Refuse(RefuseTopicID, p.Dir, "its topic id %s is not the source's %s: it is not a mirror of %s", dstPM.TopicIDString, srcPM.TopicIDString, p.Src)
	}
	if srcPM == nil && p.CreateDir {
		mp.warnf("the source has no partition.metadata: the new partition gets none either (the broker writes one when it loads it)")
	}
	return nil
}

// readEpochs loads the destination's leader epoch cache.
func (mp *mirrorPlanner) readEpochs() error {
	if mp.dstPD == nil || mp.dstPD.LeaderEpochCheckpoint == "" {
		return nil
	}
	e, err := segment.ReadLeaderEpochCheckpoint(mp.dstPD.LeaderEpochCheckpoint)
	if err != nil {
		return err
	}
	mp.epochs, mp.epochsOK = e, true
	return nil
}

// continuation is where the copy resumes in the destination.
type continuation struct {
	end   int64                 // the destination's log end after any truncation
	seg   *segment.SegmentFiles // the segment the copy continues; nil for none
	keep  int64                 // bytes of it kept
	cut   bool                  // Align truncates
	after []segment.SegmentFiles
}

// compare walks the destination against the source. On return the
// source cursor is at the first batch to copy (or exhausted) and the
// producer-state manager holds the destination's state at its (possibly
// truncated) end.
func (mp *mirrorPlanner) compare(sc *logCursor, dc *logCursor) (*continuation, error) {
	p := mp.p
	sHas := sc.Next()
	cont := &continuation{end: -1}
	if dc == nil || len(dc.segs) == 0 {
		// A new log: it starts with the source's first batch.
		p.DstLog = OffsetRange{Start: -1, End: -1}
		return cont, mp.srcErr(sc, sHas)
	}
	dEnd, err := logEnd(mp.dstPD)
	if err != nil {
		return nil, err
	}
	p.DstLog = OffsetRange{Start: dc.Start(), End: dEnd}
	start := max(sc.Start(), dc.Start())
	for sHas && sc.Batch().LastOffset() < start {
		sHas = sc.Next()
	}
	var prev *batchRef
	var div *Divergence
	for dc.Next() {
		b := dc.Batch()
		if b.LastOffset() < start {
			mp.keepBatch(b)
			r := refOf(dc)
			prev = &r
			continue
		}
		d := &Divergence{Offset: b.BaseOffset, DstFile: dc.File(), DstPosition: dc.Pos(), SrcPosition: -1}
		switch {
		case prev != nil && b.BaseOffset < prev.next():
			d.Reason = fmt.Sprintf("the destination's batch at %s position %d (offsets %d..%d) starts before the end of the batch before it", dc.File(), dc.Pos(), b.BaseOffset, b.LastOffset())
		case !sHas:
			end, err := mp.srcEnd(sc)
			if err != nil {
				return nil, err
			}
			d.Reason = fmt.Sprintf("the destination holds offsets from %d, at or beyond the source's end %d", b.BaseOffset, end)
		default:
			s := sc.Batch()
			d.SrcFile, d.SrcPosition = sc.File(), sc.Pos()
			if s.BaseOffset != b.BaseOffset {
				d.Reason = fmt.Sprintf("the destination's batch at %s position %d starts at offset %d, the source's at %s position %d at %d",
					dc.File(), dc.Pos(), b.BaseOffset, sc.File(), sc.Pos(), s.BaseOffset)
			} else if i := sameBatch(b.Raw, s.Raw); i >= 0 {
				why := "its own data (a failover's barrier or writes)"
				if !b.CRCValid() {
					why = "a batch that fails its CRC"
				}
				d.Reason = fmt.Sprintf("the destination holds %s at offset %d: first difference at byte %d (%s position %d; the source's %s position %d)",
					why, b.BaseOffset, i, dc.File(), dc.Pos()+int64(i), sc.File(), sc.Pos()+int64(i))
			} else {
				d = nil
			}
		}
		if d != nil {
			div = d
			break
		}
		if b.PartitionLeaderEpoch != sc.Batch().PartitionLeaderEpoch {
			p.EpochDifferences++
		}
		p.Compared++
		mp.keepBatch(b)
		r := refOf(dc)
		prev = &r
		sHas = sc.Next()
	}
	if err := dc.Err(); err != nil {
		return nil, err
	}
	if div == nil && dc.Damage != nil {
		div = &Divergence{Offset: dc.Damage.Offset, Reason: "the destination's tail is damaged: " + dc.Damage.Message,
			DstFile: dc.Damage.File, DstPosition: dc.Damage.Position, SrcPosition: -1}
		if sHas {
			div.SrcFile, div.SrcPosition = sc.File(), sc.Pos()
		}
	}
	if div == nil {
		cont.end = max(dc.segs[len(dc.segs)-1].BaseOffset, dc.Start())
		if prev != nil {
			cont.end = max(cont.end, prev.next())
		}
		last := dc.segs[len(dc.segs)-1]
		cont.seg = &last
		size, err := fileSize(last.Log)
		if err != nil {
			return nil, err
		}
		cont.keep = 0
		if prev != nil && prev.file == filepath.Base(last.Log) {
			cont.keep = prev.pos + prev.size
		}
		if cont.keep < size {
			mp.warnf("%s: %d zero bytes of preallocation after position %d are removed", filepath.Base(last.Log), size-cont.keep, cont.keep)
		}
		if cont.end < p.SrcLog.Start && !(prev == nil && cont.end <= p.SrcLog.Start) {
			return nil, &GapError{Src: p.Src, Dst: p.Dir, DstEnd: cont.end, SrcStart: p.SrcLog.Start}
		}
		return cont, mp.srcErr(sc, sHas)
	}
	p.Divergence = div
	if !mp.opts.Align {
		return nil, &DivergedError{Src: p.Src, Dst: p.Dir, Divergence: *div}
	}
	return cont, mp.truncate(dc, sc, cont, prev)
}

// srcErr is the source cursor's I/O error, if it stopped on one.
func (mp *mirrorPlanner) srcErr(sc *logCursor, has bool) error {
	if !has {
		return sc.Err()
	}
	return nil
}

// keepBatch accounts for a destination batch that stays: its producer
// state, and its leader epoch when there is no checkpoint file.
func (mp *mirrorPlanner) keepBatch(b *decode.Batch) {
	_ = mp.m.ApplyBatch(b)
	if !mp.epochsOK {
		if b.Magic >= 2 {
			mp.epochs = segment.AssignLeaderEpoch(mp.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
		} else {
			mp.epochs = nil
		}
	}
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// truncate plans Align's cut at the divergence: LocalLog.truncateTo keeps
// the segments whose base is at or below the cut, truncates the one the
// cut falls in, and deletes the later ones.
func (mp *mirrorPlanner) truncate(dc, sc *logCursor, cont *continuation, prev *batchRef) error {
	p := mp.p
	cut := p.Divergence.Offset
	var cs segment.SegmentFiles
	for _, s := range dc.segs {
		if s.BaseOffset <= cut {
			cs = s
		}
	}
	if cs.Log == "" {
		cs = dc.segs[0]
	}
	if sc.Batch() != nil && sc.Batch().BaseOffset < cs.BaseOffset {
		return &DivergedError{Src: p.Src, Dst: p.Dir, Divergence: Divergence{Offset: cut, DstFile: p.Divergence.DstFile, DstPosition: p.Divergence.DstPosition,
			SrcFile: sc.File(), SrcPosition: sc.Pos(),
			Reason: p.Divergence.Reason + "; the source's next batch starts below the destination segment the cut falls in, so it cannot be aligned"}}
	}
	tr := &Truncation{Offset: cut, Segment: cs.BaseOffset, Position: -1, SegmentsDeleted: []int64{}}
	removedPIDs := map[int64]bool{}
	// The rest of the destination: the batch at the divergence and after.
	count := func(b *decode.Batch, file string, pos int64) {
		if tr.Position < 0 && file == filepath.Base(cs.Log) {
			tr.Position = pos
		}
		tr.Removed.Batches++
		n := int64(b.RecordCount)
		if n < 0 {
			n = 1
		}
		tr.Removed.Records += n
		if b.HasProducerID() {
			removedPIDs[b.ProducerID] = true
		}
	}
	if b := dc.Batch(); b != nil {
		// The divergence is at this batch: it goes, and all after it.
		count(b, dc.File(), dc.Pos())
		for dc.Next() {
			count(dc.Batch(), dc.File(), dc.Pos())
		}
		if err := dc.Err(); err != nil {
			return err
		}
	}
	if dm := dc.Damage; dm != nil && tr.Position < 0 && dm.File == filepath.Base(cs.Log) {
		tr.Position = dm.Position
	}
	if tr.Position < 0 {
		// The cut falls at the end of the cut segment's batches.
		tr.Position = 0
		if prev != nil && prev.file == filepath.Base(cs.Log) {
			tr.Position = prev.pos + prev.size
		}
	}
	size, err := fileSize(cs.Log)
	if err != nil {
		return err
	}
	tr.Removed.Bytes = size - tr.Position
	var after []segment.SegmentFiles
	for _, s := range dc.segs {
		if s.BaseOffset > cs.BaseOffset {
			after = append(after, s)
			tr.SegmentsDeleted = append(tr.SegmentsDeleted, s.BaseOffset)
			if n, err := fileSize(s.Log); err == nil {
				tr.Removed.Bytes += n
			}
		}
	}
	tr.Removed.Offsets = max(0, p.DstLog.End-cut)
	for pid := range removedPIDs {
		tr.Removed.Producers = append(tr.Removed.Producers, pid)
	}
	slices.Sort(tr.Removed.Producers)
	p.Truncation = tr
	cont.cut = true
	cont.seg = &cs
	cont.keep = tr.Position
	cont.after = after
	cont.end = cut
	if prev != nil && prev.next() < cut {
		cont.end = prev.next()
	}
	cont.end = max(cont.end, cs.BaseOffset)
	var removed []segment.EpochEntry
	mp.epochs, removed = segment.TruncateLeaderEpochs(mp.epochs, cut)
	p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, removed...)
	return nil
}

// copyAndFiles plans the copy from the source cursor's batch on and turns
// everything into file operations.
func (mp *mirrorPlanner) copyAndFiles(sc *logCursor, cont *continuation) error {
	p, o := mp.p, mp.opts
	to := p.SrcLog.End
	if mp.lazyEnd {
		to = math.MaxInt64
	}
	if o.Upto >= 0 && o.Upto < to {
		to = o.Upto
	}
	var cur *dstSeg
	var segs []*dstSeg // written segments: the continued one first, then the new ones
	if cont.seg != nil {
		s, err := mp.continueSegment(*cont.seg, cont.keep, cont.end)
		if err != nil {
			return err
		}
		cur = s
		segs = append(segs, s)
		p.AppendSegment = s.base
	}
	next := cont.end
	p.From = next
	if cur == nil && sc.Batch() != nil {
		p.From = sc.Batch().BaseOffset
	}
	p.To = p.From
	snapshots := mp.dstSnapshots()
	var snaps []snapshotPlan
	roll := func(newBase int64) error {
		if err := cur.ib.Finish(); err != nil {
			return err
		}
		// A broker's own snapshot at that offset describes the same state;
		// one above Align's cut describes data that is gone.
		if !snapshots[newBase] || (p.Truncation != nil && newBase > p.Truncation.Offset) {
			snaps = append(snaps, snapshotPlan{offset: newBase, entries: mp.m.Snapshot()})
		}
		return nil
	}
	lastMsg := ""
	lazy := mp.lazyEnd
	walk := func() error {
		for b := sc.Batch(); b != nil; {
			if b.LastOffset() >= to {
				if lazy {
					return errEagerEnd
				}
				if b.BaseOffset < to && o.Upto >= 0 {
					lastMsg = fmt.Sprintf("--upto %d falls inside the batch with offsets %d..%d; the copy stops before it", o.Upto, b.BaseOffset, b.LastOffset())
				}
				break
			}
			if err := mp.copyable(sc, next); err != nil {
				return err
			}
			size, last := b.Size(), b.LastOffset()
			switch {
			case cur == nil:
				cur = mp.newSegment(b.BaseOffset)
				segs = append(segs, cur)
			case mp.roll.ShouldRoll(cur.ib, size, last, b.MaxTimestamp):
				if cur.ib.Size() == 0 {
					return fmt.Errorf("offsets %d..%d do not fit in the empty segment %d, which would have to be replaced", b.BaseOffset, last, cur.base)
				}
				newBase := max(b.BaseOffset, next)
				if err := roll(newBase); err != nil {
					return err
				}
				cur = mp.newSegment(newBase)
				segs = append(segs, cur)
				if last-cur.base > math.MaxInt32 {
					return fmt.Errorf("offsets %d..%d do not fit in one segment", b.BaseOffset, last)
				}
			}
			if err := mp.copyBatch(cur, sc); err != nil {
				return err
			}
			next = last + 1
			p.To = next
			if !sc.Next() {
				break
			}
			b = sc.Batch()
		}
		return sc.Err()
	}
	err := walk()
	if lazy && err != errEagerEnd {
		if eerr := mp.checkEnd(sc, err); eerr != nil {
			return eerr
		}
	}
	if err != nil {
		return err
	}
	if dm := sc.Damage; dm != nil && (o.Upto < 0 || dm.Offset < o.Upto) {
		// The damage lies inside the range to copy. Copying up to it
		// would pass off a truncated source as the whole of it.
		return &CorruptSourceError{Path: filepath.Join(p.Src, dm.File), Position: dm.Position, Offset: dm.Offset, Kind: dm.Kind,
			Err: errors.New(dm.Message)}
	}
	if lastMsg != "" {
		mp.warnf("%s", lastMsg)
	}
	p.NewLogEndOffset = max(next, p.To)
	if p.Copied.Batches == 0 && p.Truncation == nil {
		mp.nothingCopied(lastMsg)
		return nil
	}
	if cur != nil {
		if err := cur.ib.Finish(); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		p.SnapshotsCreated = append(p.SnapshotsCreated, s.offset)
	}
	return mp.files(segs, snaps, cont)
}

// dstSnapshots are the offsets of the destination's producer snapshots.
func (mp *mirrorPlanner) dstSnapshots() map[int64]bool {
	snapshots := map[int64]bool{}
	if mp.dstPD != nil {
		for _, s := range mp.dstPD.Snapshots {
			snapshots[s.Offset] = true
		}
	}
	return snapshots
}

// copyable checks the source cursor's current batch can be copied after
// next (the destination's log end so far): above it, its CRC valid
// (CorruptSourceError), no larger than a segment.
func (mp *mirrorPlanner) copyable(sc *logCursor, next int64) error {
	p, b := mp.p, sc.Batch()
	if next >= 0 && b.BaseOffset < next {
		return fmt.Errorf("%s: batch at position %d (offsets %d..%d) is below the destination's log end %d", sc.File(), sc.Pos(), b.BaseOffset, b.LastOffset(), next)
	}
	if !sc.CRCValid() {
		return &CorruptSourceError{Path: filepath.Join(p.Src, sc.File()), Position: sc.Pos(), Offset: b.BaseOffset,
			Err: fmt.Errorf("%w: stored 0x%08x, computed 0x%08x", decode.ErrCRCMismatch, b.CRC, b.ComputeCRC())}
	}
	if size := b.Size(); size > mp.opts.SegmentBytes {
		return &edit.OptionError{Option: "segment-bytes", Detail: fmt.Sprintf("%d is smaller than the batch at offset %d (%d bytes)", mp.opts.SegmentBytes, b.BaseOffset, size)}
	}
	return nil
}

// checkEnd, after a copy walked without knowing the source's log end
// (lazyEnd) and ended with err (nil: at the log's end), finds that end
// and asks for a plan made with it first (errEagerEnd) if that plan would
// have stopped earlier: before a copied batch, or before the batch err is
// about, ending beyond it (a segment's offsets above the next one's).
func (mp *mirrorPlanner) checkEnd(sc *logCursor, err error) error {
	end, eerr := mp.srcEnd(sc)
	if eerr != nil {
		return eerr
	}
	if b := sc.Batch(); (mp.p.Copied.Batches > 0 && mp.p.To > end) || (err != nil && b != nil && b.LastOffset() >= end) {
		return errEagerEnd
	}
	return nil
}

// copyBatch adds the source cursor's current batch to the segment cur as
// a broker's append would (LogSegment.append: max timestamp, then an
// index entry when more than index.interval.bytes went by since the last
// one; LeaderEpochFileCache.assign), and its producer state, aborted
// transactions, barriers and counts to the plan.
func (mp *mirrorPlanner) copyBatch(cur *dstSeg, sc *logCursor) error {
	p, b := mp.p, sc.Batch()
	size, last := b.Size(), b.LastOffset()
	if err := cur.ib.Append(size, last, b.MaxTimestamp); err != nil {
		return fmt.Errorf("%s: %w", segment.SegmentFileName(cur.ib.Base(), segment.LogSuffix), err)
	}
	cur.addSource(filepath.Join(p.Src, sc.File()), sc.Pos(), size)
	cur.appended++
	if b.Magic >= 2 {
		mp.epochs = segment.AssignLeaderEpoch(mp.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
	} else {
		mp.epochs = nil
	}
	nAborted := len(mp.m.Aborted())
	_ = mp.m.ApplyBatch(b)
	for _, t := range mp.m.Aborted()[nAborted:] {
		a := segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: t.ProducerID, FirstOffset: t.FirstOffset,
			LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset}
		cur.txns = append(cur.txns, a)
		p.AbortedTxns = append(p.AbortedTxns, a)
	}
	if barrier.Is(b) {
		p.Barriers = append(p.Barriers, b.BaseOffset)
	}
	p.Copied.Batches++
	if b.RecordCount >= 0 {
		p.Copied.Records += int64(b.RecordCount)
	} else {
		p.Copied.Records++
	}
	p.Copied.Bytes += size
	return nil
}

// nothingCopied marks a plan that copies no batch (and truncates nothing)
// as having nothing to do, saying why; lastMsg is why the copy stopped
// before the batch it could not take whole ("" when none).
func (mp *mirrorPlanner) nothingCopied(lastMsg string) {
	p, o := mp.p, mp.opts
	p.NothingToDo = true
	switch {
	case o.Upto >= 0 && o.Upto <= p.From:
		p.Reason = fmt.Sprintf("the destination already ends at %d, at or beyond --upto %d", p.From, o.Upto)
	case lastMsg != "":
		p.Reason = lastMsg
	default:
		p.Reason = fmt.Sprintf("the destination already holds every batch of the source (its log end is %d)", p.From)
	}
}

type snapshotPlan struct {
	offset  int64
	entries []segment.SnapshotEntry
}

// holdState keeps the producer state as it is now as the start state of
// the segment at base (Plan.segStates).
func (mp *mirrorPlanner) holdState(base int64) {
	if mp.p.segStates != nil {
		mp.p.segStates[base] = mp.m.Clone()
	}
}

// newSegment starts a segment at base.
func (mp *mirrorPlanner) newSegment(base int64) *dstSeg {
	if len(mp.p.SegmentsCreated) == 0 {
		// The later new segments are read back after this one: their
		// replay carries on from its.
		mp.holdState(base)
	}
	mp.p.SegmentsCreated = append(mp.p.SegmentsCreated, base)
	return &dstSeg{base: base, ib: segment.NewIndexBuilder(base, mp.opts.IndexIntervalBytes)}
}

// continueSegment loads the state LogSegment keeps for an existing segment
// the copy appends to: its kept bytes, index entries (those below end),
// max timestamp, the timestamp its time-based roll counts from, and its
// aborted transactions.
func (mp *mirrorPlanner) continueSegment(f segment.SegmentFiles, keep, end int64) (*dstSeg, error) {
	size, err := fileSize(f.Log)
	if err != nil {
		return nil, err
	}
	s := &dstSeg{base: f.BaseOffset, existing: f, oldSize: size, keep: keep,
		ib: segment.NewIndexBuilder(f.BaseOffset, mp.opts.IndexIntervalBytes)}
	// Planning from the tail reopens the segment as LogSegment does, from
	// its size, its first batch and its indexes; otherwise its kept
	// batches are walked.
	reopen := mp.tail != nil && mp.tail.log == f.Log && mp.tail.size == keep && size == keep
	if !reopen {
		lf, err := segment.OpenLog(f.Log)
		if err != nil {
			return nil, err
		}
		sc := lf.Scanner(segment.ScanOptions{})
		for sc.Next() && sc.Pos() < keep {
			b := sc.Batch()
			s.ib.Track(b.Size(), b.LastOffset(), b.MaxTimestamp)
		}
		sc.Close()
		err = cmp.Or(sc.Err(), lf.Close())
		if err != nil {
			return nil, err
		}
		if s.ib.Size() != keep {
			return nil, fmt.Errorf("%s: the batches before position %d end at %d", f.Log, keep, s.ib.Size())
		}
	}
	var idx []segment.IndexEntry
	if f.Index != "" {
		x, err := segment.ReadOffsetIndex(f.Index, f.BaseOffset)
		if err != nil {
			return nil, err
		}
		for _, e := range x.Entries {
			if e.Offset < end && int64(e.Position) < keep {
				idx = append(idx, e)
			}
		}
		mp.p.Index.Removed += len(x.Entries) - len(idx)
	} else if keep > 0 {
		// LogLoader recovers a segment whose index is missing.
		rebuilt, _, err := segment.RebuildIndexes(f.Log, f.BaseOffset, mp.opts.IndexIntervalBytes)
		if err != nil {
			return nil, err
		}
		for _, e := range segment.ParseOffsetIndex(rebuilt, f.BaseOffset).Entries {
			if e.Offset < end && int64(e.Position) < keep {
				idx = append(idx, e)
			}
		}
		mp.warnf("%s has no .index; it is rebuilt", filepath.Base(f.Log))
	}
	var tidx []segment.TimeIndexEntry
	if f.TimeIndex != "" {
		x, err := segment.ReadTimeIndex(f.TimeIndex, f.BaseOffset)
		if err != nil {
			return nil, err
		}
		for _, e := range x.Entries {
			if e.Offset < end {
				tidx = append(tidx, e)
			}
		}
		mp.p.TimeIndex.Removed += len(x.Entries) - len(tidx)
	} else if keep > 0 {
		_, rebuilt, err := segment.RebuildIndexes(f.Log, f.BaseOffset, mp.opts.IndexIntervalBytes)
		if err != nil {
			return nil, err
		}
		for _, e := range segment.ParseTimeIndex(rebuilt, f.BaseOffset).Entries {
			if e.Offset < end {
				tidx = append(tidx, e)
			}
		}
		mp.warnf("%s has no .timeindex; it is rebuilt", filepath.Base(f.Log))
	}
	if reopen {
		if len(tidx) == 0 {
			return nil, fmt.Errorf("%s: no time index entry to reopen it from", f.TimeIndex)
		}
		last := tidx[len(tidx)-1]
		s.ib.Reopen(keep, mp.tail.firstTs, last.Timestamp, last.Offset)
	}
	// The copy's indexes are recovery's, whatever the number of runs that
	// wrote it: the close entry of the last run goes.
	s.ib.KeepRecovered(idx, tidx)
	s.keptIdx, s.keptTidx = len(idx), len(s.ib.TimeIndex())
	mp.p.TimeIndex.Removed += len(tidx) - s.keptTidx
	if f.TxnIndex != "" {
		x, err := segment.ReadTxnIndex(f.TxnIndex)
		if err != nil {
			return nil, err
		}
		for _, t := range x.Entries {
			if t.LastOffset < end {
				s.txns = append(s.txns, t)
			}
		}
		mp.p.TxnIndex.Removed += len(x.Entries) - len(s.txns)
	}
	s.keptTxn = len(s.txns)
	return s, nil
}

// files turns the plan into file operations, in commit order:
// partition.metadata, snapshots above the cut, segments above the cut
// (highest first), the continued segment's .txnindex, .timeindex, .index
// and .log, the new segments (each .log, .index, .timeindex, .txnindex),
// the new snapshots, leader-epoch-checkpoint.
func (mp *mirrorPlanner) files(segs []*dstSeg, snaps []snapshotPlan, cont *continuation) error {
	p := mp.p
	ol := &edit.OpList{Dir: p.Dir, Create: p.CreateDir}
	if p.TopicID != "" && (mp.dstPD == nil || mp.dstPD.PartitionMetadata == "") {
		b, err := segment.ReadFileLimit(mp.srcPD.PartitionMetadata, segment.MaxPartitionMetadataBytes, "partition.metadata")
		if err != nil {
			return err
		}
		if _, err := ol.Write(segment.PartitionMetadataName, b, "the source's topic id "+p.TopicID+" (a mirror keeps it)"); err != nil {
			return err
		}
	}
	rewritten := map[int64]bool{}
	for _, s := range snaps {
		rewritten[s.offset] = true
	}
	if tr := p.Truncation; tr != nil {
		for i := len(mp.dstPD.Snapshots) - 1; i >= 0; i-- {
			s := mp.dstPD.Snapshots[i]
			if s.Offset <= tr.Offset || rewritten[s.Offset] {
				continue
			}
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := ol.Delete(s.Path, "producer snapshot above the cut"); err != nil {
				return err
			}
		}
		slices.Sort(p.SnapshotsDeleted)
		for i := len(cont.after) - 1; i >= 0; i-- {
			f := cont.after[i]
			why := fmt.Sprintf("segment %d lies wholly above the cut", f.BaseOffset)
			if err := edit.DeleteSegment(f, why, &p.Index, &p.TimeIndex, &p.TxnIndex, ol.Delete); err != nil {
				return err
			}
		}
	}
	for _, s := range segs {
		if err := mp.segmentOps(ol, s); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if _, err := ol.Write(segment.SegmentFileName(s.offset, segment.SnapshotSuffix), segment.EncodeProducerSnapshot(s.entries),
			fmt.Sprintf("producer state at the roll to segment %d (%s), as UnifiedLog.roll takes it", s.offset, nProducers(len(s.entries)))); err != nil {
			return err
		}
	}
	if err := mp.endSnapshot(ol, segs, snaps, cont); err != nil {
		return err
	}
	if err := mp.epochOps(ol); err != nil {
		return err
	}
	p.Ops = ol.List
	return nil
}

// endSnapshot plans the producer snapshot at the new log end that a
// broker's clean shutdown writes (UnifiedLog.close →
// ProducerStateManager.takeSnapshot), so that the next mirror, like a
// broker's next load, starts from the state there instead of replaying
// the log; and the deletion of the destination's snapshot at its old end
// when that is not a segment base offset: no longer the latest, it is a
// stray snapshot ProducerStateManager.removeStraySnapshots deletes at the
// next load anyway.
func (mp *mirrorPlanner) endSnapshot(ol *edit.OpList, segs []*dstSeg, snaps []snapshotPlan, cont *continuation) error {
	p := mp.p
	end := p.NewLogEndOffset
	if slices.ContainsFunc(snaps, func(s snapshotPlan) bool { return s.offset == end }) {
		return nil
	}
	entries := mp.m.Snapshot()
	if _, err := ol.Write(segment.SegmentFileName(end, segment.SnapshotSuffix), segment.EncodeProducerSnapshot(entries),
		fmt.Sprintf("producer state at the new log end (%s), as a broker's clean shutdown takes it (UnifiedLog.close)", nProducers(len(entries)))); err != nil {
		return err
	}
	p.EndSnapshot = end
	if mp.dstPD == nil || p.Truncation != nil {
		// Align deletes the snapshots above its cut already.
		return nil
	}
	bases := map[int64]bool{}
	for _, s := range mp.dstPD.Segments {
		bases[s.BaseOffset] = true
	}
	for _, s := range segs {
		bases[s.base] = true
	}
	for _, s := range mp.dstPD.Snapshots {
		if s.Offset == cont.end && s.Offset != end && !bases[s.Offset] {
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := ol.Delete(s.Path, "producer snapshot at the old log end, no longer the latest (ProducerStateManager.removeStraySnapshots deletes it at the next load)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// segmentOps are the file operations of one written segment: a continued
// one's .txnindex, .timeindex, .index and .log, or a new one's .log,
// .index, .timeindex and .txnindex. The index counts go to the plan.
func (mp *mirrorPlanner) segmentOps(ol *edit.OpList, s *dstSeg) error {
	p := mp.p
	idx, tidx, err := s.ib.Encode()
	if err != nil {
		return err
	}
	p.Index.Kept += s.keptIdx
	p.Index.Added += len(s.ib.Index()) - s.keptIdx
	p.TimeIndex.Kept += s.keptTidx
	p.TimeIndex.Added += len(s.ib.TimeIndex()) - s.keptTidx
	p.TxnIndex.Kept += s.keptTxn
	p.TxnIndex.Added += len(s.txns) - s.keptTxn
	var txn []byte
	for _, t := range s.txns {
		txn = segment.AppendAbortedTxn(txn, t)
	}
	name := func(suffix string) string { return segment.SegmentFileName(s.base, suffix) }
	if s.existing.Log == "" {
		lwhy := "new segment: " + nBatches(s.appended) + " copied from the source"
		ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpCreate, Why: lwhy, OldSize: -1, NewSize: s.ib.Size(), Sources: s.srcs})
		ol.Add(edit.FileOp{Name: name(segment.IndexSuffix), Action: edit.OpCreate, Why: "its offset index", OldSize: -1, NewSize: int64(len(idx)), Content: idx})
		ol.Add(edit.FileOp{Name: name(segment.TimeIndexSuffix), Action: edit.OpCreate, Why: "its time index", OldSize: -1, NewSize: int64(len(tidx)), Content: tidx})
		if len(txn) > 0 {
			ol.Add(edit.FileOp{Name: name(segment.TxnIndexSuffix), Action: edit.OpCreate, Why: fmt.Sprintf("the aborted transactions of %d copied ABORT markers", len(s.txns)),
				OldSize: -1, NewSize: int64(len(txn)), Content: txn})
		}
		return nil
	}
	why := "the copied batches indexed"
	// Without a cut the continued segment's indexes only grow, as a
	// broker's do while the segment is active: their new entries are
	// appended in place when the files hold exactly the kept ones.
	write := ol.WriteAppending
	if p.Truncation != nil && p.Truncation.Segment == s.base {
		why = "entries at or above the cut dropped, the copied batches indexed"
		write = ol.Write
	}
	if s.existing.TxnIndex != "" || len(s.txns) > 0 {
		if txn == nil {
			txn = []byte{}
		}
		twhy := fmt.Sprintf("the aborted transactions of %d copied ABORT markers added", len(s.txns)-s.keptTxn)
		if len(s.txns) == s.keptTxn {
			twhy = "aborted transactions ending at or above the cut dropped"
		}
		if _, err := write(name(segment.TxnIndexSuffix), txn, twhy); err != nil {
			return err
		}
	}
	if _, err := write(name(segment.TimeIndexSuffix), tidx, why); err != nil {
		return err
	}
	if _, err := write(name(segment.IndexSuffix), idx, why); err != nil {
		return err
	}
	if s.keep == s.oldSize && len(s.srcs) == 0 {
		return nil
	}
	lwhy := "append " + nBatches(s.appended) + " copied from the source"
	if s.keep < s.oldSize {
		lwhy = fmt.Sprintf("truncate at position %d, then %s", s.keep, lwhy)
		if s.appended == 0 {
			lwhy = fmt.Sprintf("truncate at position %d", s.keep)
		}
	}
	if s.keep == s.oldSize {
		// Every byte of the segment stays: the copy is appended in place,
		// as LogSegment.append writes the active segment (no backup copy,
		// no staged copy of the kept bytes; see edit.OpAppend).
		ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpAppend, Why: lwhy, OldSize: s.oldSize,
			NewSize: s.ib.Size(), Sources: s.srcs})
		return nil
	}
	ol.Add(edit.FileOp{Name: name(segment.LogSuffix), Action: edit.OpReplace, Why: lwhy, OldSize: s.oldSize,
		NewSize: s.ib.Size(), KeepPrefix: s.keep, Sources: s.srcs})
	return nil
}

// epochOps writes leader-epoch-checkpoint: the kept entries, then assign
// for every copied batch (LeaderEpochFileCache.assign).
func (mp *mirrorPlanner) epochOps(ol *edit.OpList) error {
	p := mp.p
	var before []segment.EpochEntry
	if mp.dstPD != nil && mp.dstPD.LeaderEpochCheckpoint != "" {
		var err error
		if before, err = segment.ReadLeaderEpochCheckpoint(mp.dstPD.LeaderEpochCheckpoint); err != nil {
			return err
		}
	}
	for _, e := range mp.epochs {
		if !slices.Contains(before, e) {
			p.EpochEntriesAdded = append(p.EpochEntriesAdded, e)
		}
	}
	if !mp.epochsOK && len(mp.epochs) == 0 {
		return nil
	}
	why := "leader epochs of the copied batches recorded"
	if len(p.EpochEntriesRemoved) > 0 {
		why = "leader epochs starting at or above the cut dropped"
		if len(p.EpochEntriesAdded) > 0 {
			why += ", those of the copied batches recorded"
		}
	}
	_, err := ol.Write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(mp.epochs), why)
	return err
}

func nBatches(n int) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}

func nProducers(n int) string {
	if n == 1 {
		return "1 producer"
	}
	return plural.N(n, "producer")
}
