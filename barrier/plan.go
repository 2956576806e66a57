package barrier

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// Mode selects which KIP-1279 STOPPING design the injection follows
// (barrier.md §3).
type Mode string

const (
	// ModeTruncate is design 1 (msg155150): truncate the log to its last
	// stable offset, iterated to a fixed point (psm.md §7), then append the
	// barrier. Open transactions lose their data.
	ModeTruncate Mode = "truncate"
	// ModeAbort is design 2 (MirrorCoordinator's STOPPING sequence):
	// append an ABORT marker for every open transaction
	// (UnifiedLog.buildEndTransactionRecords), then the barrier. Nothing is
	// truncated.
	ModeAbort Mode = "abort"
)

// InjectOptions select what PlanInjection plans. The zero value is the
// CLI's defaults: truncate mode, timestamp now, the recorded leader epoch.
type InjectOptions struct {
	Mode Mode `json:"mode"`
	// RepairTail cuts a torn or corrupt log tail, or a batch that fails its
	// CRC, where LogSegment.recover would (and drops the segments after it,
	// as LogLoader.recoverLog does) before planning the cut.
	RepairTail bool `json:"repairTail"`
	// Timestamp is the base/max timestamp of the new batches in epoch ms;
	// 0 or less means now. The plan records the resolved value.
	Timestamp int64 `json:"timestamp"`
	// LeaderEpoch is the partitionLeaderEpoch of the new batches; nil uses
	// the highest epoch the partition has recorded (leader-epoch-checkpoint
	// entries, truncated ones included, and kept batches): truncation
	// never lowers the leader's current epoch, so neither may the barrier.
	LeaderEpoch *int32 `json:"leaderEpoch,omitempty"`
	// BumpLeaderEpoch records epoch N starting at the first new batch in
	// leader-epoch-checkpoint and writes the new batches in it (design 2
	// step 3, "bump leader epoch to draw a line"). N must be above every
	// epoch the partition has recorded.
	BumpLeaderEpoch *int32 `json:"bumpLeaderEpoch,omitempty"`
	// SourceClusterID selects the MirrorPidResetRecord variant carrying it.
	SourceClusterID *string `json:"sourceClusterId,omitempty"`
	// CoordinatorEpoch is the coordinatorEpoch of the ABORT markers (abort
	// mode); nil uses each producer's last coordinator epoch (0 if none).
	CoordinatorEpoch *int32 `json:"coordinatorEpoch,omitempty"`
	// NoSnapshot skips the empty producer snapshot at the new log end.
	NoSnapshot bool `json:"noSnapshot"`
	// Force appends a barrier even when the log already ends with one,
	// and writes a Timestamp checkTimestamp would refuse.
	Force bool `json:"force"`
	// IndexIntervalBytes is the topic's index.interval.bytes, used to
	// decide whether the new batches get offset-index entries; 0 means
	// 4096.
	IndexIntervalBytes int `json:"indexIntervalBytes"`
	// Now is the clock for the default timestamp; nil means time.Now.
	Now func() time.Time `json:"-"`
	// Progress, when set, is called with the bytes read as the plan's
	// first pass reads every .log segment whole (every MiB or so): its
	// total is the segments' sizes. The caller draws it.
	Progress func(n int64) `json:"-"`

	// checkWritable replaces the read-only probe in tests.
	checkWritable func(dir string) (bool, string, error)
}

// InjectionPlan is everything an injection will do, computed without
// changing a byte. ApplyInjection executes it; --dry-run prints it.
type InjectionPlan struct {
	Dir       string        `json:"dir"`
	LogDir    string        `json:"logDir"`
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Mode      Mode          `json:"mode"`
	Options   InjectOptions `json:"options"` // resolved (Timestamp set)

	// The partition as found.
	Segments             int      `json:"segments"`
	LogStartOffset       int64    `json:"logStartOffset"`
	LogEndOffset         int64    `json:"logEndOffset"` // after tail repair
	LastStableOffset     int64    `json:"lastStableOffset"`
	FirstUndecidedOffset int64    `json:"firstUndecidedOffset"`
	Producers            int      `json:"producers"` // at the log end
	Ongoing              []TxnRef `json:"ongoing"`
	ReplayAnomalies      int      `json:"replayAnomalies"` // psm anomalies of severity error

	// NothingToDo: the log already ends with a barrier at its LSO and
	// Force is off. Reason says so.
	NothingToDo bool   `json:"nothingToDo"`
	Reason      string `json:"reason,omitempty"`

	// Resume is set when an interrupted injection was found: the plan is
	// the one recorded in its journal, and ApplyInjection finishes it.
	Resume *edit.Interrupted `json:"resume,omitempty"`

	TailRepair *TailRepair `json:"tailRepair,omitempty"`

	// Cut is the offset the new batches start at: the fixed-point LSO in
	// truncate mode, the log end in abort mode. CutIterations are the
	// successive LSO candidates (the last one is Cut).
	Cut           int64   `json:"cut"`
	CutIterations []int64 `json:"cutIterations"`
	CutSegment    int64   `json:"cutSegment"`  // base offset of the segment cut
	CutPosition   int64   `json:"cutPosition"` // byte position of the cut in it

	Removed         edit.Removed     `json:"removed"`
	DroppedTxns     []DroppedTxn     `json:"droppedTxns"`
	SegmentsDeleted []int64          `json:"segmentsDeleted"`
	Index           edit.IndexChange `json:"index"`     // .index entries
	TimeIndex       edit.IndexChange `json:"timeIndex"` // .timeindex entries
	TxnIndex        edit.IndexChange `json:"txnIndex"`  // .txnindex entries
	// AbortedTxns are the .txnindex entries added in abort mode.
	AbortedTxns         []segment.AbortedTxn `json:"abortedTxns"`
	SnapshotsDeleted    []int64              `json:"snapshotsDeleted"`
	EpochEntriesRemoved []segment.EpochEntry `json:"epochEntriesRemoved"`
	EpochEntryAdded     *segment.EpochEntry  `json:"epochEntryAdded,omitempty"`

	Appended        []AppendedBatch `json:"appended"`
	BarrierOffset   int64           `json:"barrierOffset"`
	LeaderEpoch     int32           `json:"leaderEpoch"`
	Timestamp       int64           `json:"timestamp"`
	NewLogEndOffset int64           `json:"newLogEndOffset"`
	// ProducersCleared is how many producers the barrier clears in the
	// read-back replay of the partition the write leaves: what
	// VerifyInjection will report. ProducersAtCut are the producers the
	// state holds at the cut; the ProducersExpired others are gone before
	// the barrier applies, because a replay's log clock reaches the
	// barrier's Timestamp (or its ABORT markers') first and removes every
	// producer without an open transaction whose last batch is
	// producer.id.expiration.ms or more older
	// (ProducerStateManager.removeExpiredProducers). A barrier written
	// today into data years old clears none: they had expired.
	ProducersCleared int `json:"producersCleared"`
	ProducersAtCut   int `json:"producersAtCut"`
	ProducersExpired int `json:"producersExpired"`
	// ExpirationMs is producer.id.expiration.ms as the replay used it.
	ExpirationMs   int64 `json:"expirationMs"`
	SnapshotOffset int64 `json:"snapshotOffset"` // -1 with NoSnapshot

	// Ops are the file operations, in the order ApplyInjection commits them.
	Ops      []edit.FileOp `json:"ops"`
	Warnings []string      `json:"warnings"`
	// IndexDamage is what was wrong with the cut segment's .index and
	// .timeindex before the injection (kafka-dump-log --verify-index's and
	// the broker's sanity checks): the plan rebuilds them, so that the
	// read-back check never reports damage the injection did not cause.
	IndexDamage []string `json:"indexDamage,omitempty"`
}

// TxnRef is a transaction by producer and first offset; LastOffset is -1
// while it is open.
type TxnRef struct {
	ProducerID  int64 `json:"producerId"`
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
}

// TailRepair is the cut a RepairTail makes before anything else.
type TailRepair struct {
	Segment         int64   `json:"segment"`
	Path            string  `json:"path"`
	Position        int64   `json:"position"` // validBytes
	Kind            string  `json:"kind"`
	Bytes           int64   `json:"bytes"` // bytes cut from that segment
	Message         string  `json:"message"`
	SegmentsDropped []int64 `json:"segmentsDropped"` // later segments LogLoader.recoverLog deletes
	// LogEndOffset is the log end before the repair: past the last batch
	// that still frames in the damaged segment or in the segments dropped
	// after it (InjectionPlan.LogEndOffset is the end after it).
	LogEndOffset int64 `json:"logEndOffset"`
}

// DroppedTxn is a transaction whose data the cut removes. State is "open"
// (no marker in the log), or "committed"/"aborted" when its marker lay at
// or beyond the cut: the transaction the cut reopened.
type DroppedTxn struct {
	ProducerID   int64  `json:"producerId"`
	FirstOffset  int64  `json:"firstOffset"`
	MarkerOffset int64  `json:"markerOffset"` // -1 when open
	State        string `json:"state"`
	// Records are the transaction's data records the cut removes.
	Records int64 `json:"records"`
}

// ReopenedCommitted are the committed transactions the cut removes that
// began below the first last stable offset (LastStableOffset): the LSO
// fixed point (psm.md §7) moved the cut below them, so records a
// read_committed consumer may already have read are lost. --mode abort
// keeps them. Records is their data records in all.
func (p *InjectionPlan) ReopenedCommitted() (txns []DroppedTxn, records int64) {
	if p.Mode != ModeTruncate {
		return nil, 0
	}
	for _, d := range p.DroppedTxns {
		if d.State == "committed" && d.FirstOffset < p.LastStableOffset {
			txns = append(txns, d)
			records += d.Records
		}
	}
	return txns, records
}

// AppendedBatch is one batch the injection appends.
type AppendedBatch struct {
	Kind             string `json:"kind"` // "ABORT" or "MIRROR_PID_RESET"
	Offset           int64  `json:"offset"`
	Position         int64  `json:"position"`
	Size             int    `json:"size"`
	ProducerID       int64  `json:"producerId"`
	ProducerEpoch    int16  `json:"producerEpoch"`
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
	TxnFirstOffset   int64  `json:"txnFirstOffset"` // ABORT: the transaction's first offset
}

// batchMeta is what the planner keeps of a batch.
type batchMeta struct {
	Base, Last int64
	Pos, Size  int64
	Magic      int8
	PLE        int32
	MaxTs      int64
	Records    int32
	Control    bool
	Txn        bool
	PID        int64
	Epoch      int16
	Barrier    bool
	MarkerType decode.ControlType // for transaction markers
}

func metaOf(b *decode.Batch, pos int64) batchMeta {
	m := batchMeta{Base: b.BaseOffset, Last: b.LastOffset(), Pos: pos, Size: b.Size(), Magic: b.Magic,
		PLE: b.PartitionLeaderEpoch, MaxTs: b.MaxTimestamp, Records: b.RecordCount, Control: b.IsControl(),
		Txn: b.IsTransactional(), PID: b.ProducerID, Epoch: b.ProducerEpoch, MarkerType: -1}
	if m.Records < 0 {
		m.Records = 1
	}
	if t, ok := ControlTypeOf(b); ok {
		m.MarkerType = t
		m.Barrier = t == decode.ControlMirrorPidReset
	}
	return m
}

// segScan is pass 1's account of one segment.
type segScan struct {
	files   segment.SegmentFiles
	size    int64
	valid   int64 // where recovery would truncate: end of the last good batch
	next    int64 // offset after the last good batch; the base when none
	framed  int64 // offset after the last batch that frames, damaged ones included
	lost    int64 // batches that frame after the cut
	batches int64
	records int64
	last    *batchMeta
	cut     *segment.Cut // where recovery cuts it, nil when nowhere
	bad     *CorruptTailError
}

// scanSegment walks one .log as LogSegment.recover does (segment.Recover:
// every CRC, the offsets' order, the transaction markers), handing each
// batch recovery keeps to fn (nil: none) until fn returns false, and the
// bytes read to progress (nil: none).
func scanSegment(files segment.SegmentFiles, fn func(m *batchMeta) bool, progress func(int64)) (*segScan, error) {
	s := &segScan{files: files}
	r, err := segment.Recover(files.Log, files.BaseOffset, segment.RecoverOptions{Progress: progress, OnBatch: func(pos int64, b *decode.Batch) bool {
		m := metaOf(b, pos)
		s.last = &m
		s.records += int64(m.Records)
		return fn == nil || fn(&m)
	}})
	if err != nil {
		return nil, err
	}
	s.size, s.valid, s.next, s.batches, s.cut = r.Size, r.ValidBytes, r.NextOffset, r.Batches, r.Cut
	s.framed, s.lost = max(r.FramedEnd, r.NextOffset), r.Lost
	if c := r.Cut; c != nil && c.Kind.Damage() {
		s.bad = &CorruptTailError{Segment: files.BaseOffset, Path: files.Log, ValidBytes: c.Position, Kind: c.Kind, Err: c.Err, Message: c.Message}
	}
	return s, nil
}

// PlanInjection reads the partition directory dir and plans the injection
// of a MIRROR_PID_RESET barrier. It changes nothing. Refusals are
// *RefusalError; a damaged tail without RepairTail is *CorruptTailError;
// an option that cannot apply is *edit.OptionError; anything else is I/O.
//
// When dir holds the journal of an interrupted injection, the plan is the
// journal's, with Resume set: ApplyInjection then finishes that injection (the
// options passed here are ignored).
//
// When a broker holds the log directory or it is not writable
// (edit.Deferred), the plan is still made and returned together with that
// refusal, to be shown (--dry-run), never applied.
func PlanInjection(dir string, opts InjectOptions) (*InjectionPlan, error) {
	// The real directory, before anything else: the log directory (whose
	// .lock a broker holds) is the real parent, not a symlink's.
	dir = edit.RealPath(dir)
	name, err := edit.CheckPartitionDir(dir, "the KRaft metadata log is replicated by Raft, not a mirror partition")
	if err != nil {
		return nil, err
	}
	logDir := segment.LogDirOf(dir)
	blocked := edit.CheckWritable(logDir, dir, opts.checkWritable)
	if blocked != nil && !edit.Deferred(blocked) {
		return nil, blocked
	}
	job, resume, err := edit.Pending(dir, InjectKind)
	if err != nil {
		return nil, cmp.Or(blocked, err)
	}
	if job != nil {
		p := job.Plan().(*InjectionPlan)
		p.Resume = resume
		return p, blocked
	}
	pl := &planner{dir: dir, logDir: logDir, name: name, opts: opts}
	p, err := pl.plan()
	if err != nil {
		return nil, cmp.Or(blocked, err)
	}
	return p, blocked
}

type planner struct {
	dir, logDir string
	name        segment.PartitionDirName
	opts        InjectOptions
	pd          *segment.PartitionDir
	p           *InjectionPlan
	logStart    int64 // log-start-offset-checkpoint, -1 when none
	// epochContent is the new leader-epoch-checkpoint, nil when unchanged.
	epochContent []byte
	// ops are the file operations planFiles collects, in commit order.
	ops edit.OpList
}

func (pl *planner) warnf(format string, args ...any) {
	pl.p.Warnings = append(pl.p.Warnings, fmt.Sprintf(format, args...))
}

// rebuild replays producer state up to upto (exclusive; -1 = log end).
func (pl *planner) rebuild(upto int64) (*psm.Result, error) {
	o := psm.DefaultOptions()
	o.Upto = upto
	o.LogStartOffset = pl.logStart
	// Pass 1 checked every CRC already (and a failing batch ends the log
	// the plan works on).
	o.VerifyCRC = false
	return psm.Rebuild(pl.pd, o)
}

func (pl *planner) resolveOptions() error {
	o := &pl.opts
	switch o.Mode {
	case "":
		o.Mode = ModeTruncate
	case ModeTruncate, ModeAbort:
	default:
		return &edit.OptionError{Option: "mode", Detail: fmt.Sprintf("%q is neither truncate nor abort", o.Mode)}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if o.Timestamp <= 0 {
		o.Timestamp = now().UnixMilli()
	} else if err := checkTimestamp(o.Timestamp, now(), o.Force); err != nil {
		return err
	}
	if o.IndexIntervalBytes == 0 {
		o.IndexIntervalBytes = segment.DefaultIndexIntervalBytes
	}
	if o.IndexIntervalBytes < 0 {
		return &edit.OptionError{Option: "index-interval-bytes", Detail: "must not be negative"}
	}
	if o.LeaderEpoch != nil && o.BumpLeaderEpoch != nil {
		return &edit.OptionError{Option: "leader-epoch", Detail: "give either LeaderEpoch or BumpLeaderEpoch, not both"}
	}
	if o.LeaderEpoch != nil && *o.LeaderEpoch < 0 {
		return &edit.OptionError{Option: "leader-epoch", Detail: "must not be negative"}
	}
	if o.BumpLeaderEpoch != nil && *o.BumpLeaderEpoch < 0 {
		return &edit.OptionError{Option: "bump-leader-epoch", Detail: "must not be negative"}
	}
	if o.CoordinatorEpoch != nil && *o.CoordinatorEpoch < 0 {
		return &edit.OptionError{Option: "coordinator-epoch", Detail: "must not be negative"}
	}
	return nil
}

// readLogStart is the partition's log-start-offset-checkpoint entry; -1
// when absent (a warning when unreadable): the log then starts at its
// first segment.
func (pl *planner) readLogStart() int64 {
	ls, err := segment.CheckpointOffset(pl.pd, segment.LogStartOffsetCheckpointName)
	if err != nil {
		pl.warnf("%s unreadable (%v); log start taken from the first segment", filepath.Join(pl.logDir, segment.LogStartOffsetCheckpointName), err)
	}
	return ls
}

func (pl *planner) plan() (*InjectionPlan, error) {
	if err := pl.resolveOptions(); err != nil {
		return nil, err
	}
	o := pl.opts
	p := &InjectionPlan{Dir: pl.dir, LogDir: pl.logDir, Topic: pl.name.Topic, Partition: pl.name.Partition, Mode: o.Mode,
		Options: o, Timestamp: o.Timestamp, SnapshotOffset: -1, FirstUndecidedOffset: -1}
	pl.p = p
	segs, err := pl.open()
	if err != nil {
		return nil, err
	}
	kept, dropped, err := pl.passOne(segs)
	if err != nil {
		return nil, err
	}
	end := p.LogEndOffset
	r0, err := pl.replayEnd(end)
	if err != nil {
		return nil, err
	}
	cut, err := pl.findCut(kept, r0, end)
	if err != nil {
		return nil, err
	}

	// The segment the cut falls in.
	ci := -1
	for i, s := range kept {
		if s.files.BaseOffset <= cut {
			ci = i
		}
	}
	if ci < 0 {
		return nil, edit.Refuse(edit.RefuseBelowLogStart, pl.dir, "the cut %d is below the first segment %d", cut, kept[0].files.BaseOffset)
	}
	cs := kept[ci]
	p.CutSegment = cs.files.BaseOffset
	lastKept, rebuilt, err := pl.passTwo(kept, dropped, ci, end)
	if err != nil {
		return nil, err
	}

	// Legacy data at the cut: the barrier is a v2 control batch.
	if lastKept != nil && lastKept.Magic < 2 {
		return nil, edit.Refuse(RefuseLegacyFormat, cs.files.Log,
			"the batch before the cut (offset %d) is a magic v%d message: the topic is on a pre-0.11 message format and cannot take a v2 control batch",
			lastKept.Base, lastKept.Magic)
	}

	// Idempotence: already barriered at its LSO.
	if lastKept != nil && lastKept.Barrier && cut == end && p.TailRepair == nil && len(r0.Ongoing) == 0 && !o.Force {
		p.NothingToDo = true
		p.Reason = fmt.Sprintf("the log already ends with a MIRROR_PID_RESET barrier at offset %d, at its last stable offset %d (use --force to add another)",
			lastKept.Base, end)
		p.BarrierOffset = lastKept.Base
		p.NewLogEndOffset = end
		return p, nil
	}

	// Leader epoch.
	if err := pl.planEpochs(kept, cut, lastKept); err != nil {
		return nil, err
	}

	// The batches to append: in abort mode the markers, then the barrier.
	var appendBytes []byte
	off, pos := cut, p.CutPosition
	if o.Mode == ModeAbort {
		if appendBytes, off, pos, err = pl.abortMarkers(r0, off, pos); err != nil {
			return nil, err
		}
	}
	bar := Build(Spec{BaseOffset: off, PartitionLeaderEpoch: p.LeaderEpoch, Timestamp: o.Timestamp, SourceClusterID: o.SourceClusterID})
	p.Appended = append(p.Appended, AppendedBatch{Kind: decode.ControlMirrorPidReset.String(), Offset: off, Position: pos, Size: len(bar),
		ProducerID: decode.NoProducerID, ProducerEpoch: decode.NoProducerEpoch, CoordinatorEpoch: -1, TxnFirstOffset: -1})
	appendBytes = append(appendBytes, bar...)
	p.BarrierOffset = off
	p.NewLogEndOffset = off + 1
	if off-cs.files.BaseOffset > 1<<31-1 {
		return nil, fmt.Errorf("offset %d does not fit in segment %d's relative offsets", off, cs.files.BaseOffset)
	}

	if err := pl.predictReadBack(cs, appendBytes); err != nil {
		return nil, err
	}
	return p, pl.planFiles(kept, dropped, ci, appendBytes, rebuilt)
}

// predictReadBack runs, before the write, the replay VerifyInjection will
// run after it, on the log the write leaves: the log up to the cut, the
// batches appended, and the snapshots at or below the cut (the others are
// deleted). What it says of the barrier is what the plan says: the
// producers it clears, and how many of those at the cut expired first.
func (pl *planner) predictReadBack(cs *segScan, appendBytes []byte) error {
	p := pl.p
	var batches []*decode.Batch
	for rest := appendBytes; len(rest) > 0; {
		b, err := decode.ParseBatch(rest)
		if err != nil {
			return fmt.Errorf("a planned batch does not parse: %w", err)
		}
		batches = append(batches, &b)
		rest = rest[b.Size():]
	}
	var snaps []segment.SnapshotFile
	for _, s := range pl.pd.Snapshots {
		if s.Offset <= p.Cut {
			snaps = append(snaps, s)
		}
	}
	r, _, err := readBackReplay(pl.pd, snaps, cs.files.BaseOffset, p.BarrierOffset, p.Cut, batches)
	if err != nil {
		return err
	}
	for _, b := range r.Barriers {
		if b.Offset == p.BarrierOffset {
			p.ProducersCleared = b.ProducersCleared
		}
	}
	p.ProducersExpired = max(0, p.ProducersAtCut-p.ProducersCleared)
	p.ExpirationMs = psm.DefaultOptions().ProducerIDExpirationMs
	return nil
}

// open lists the partition's segments with a .log (warning about
// leftovers and orphaned index files) and reads its log start offset.
func (pl *planner) open() ([]segment.SegmentFiles, error) {
	p := pl.p
	pd, err := segment.OpenPartitionDir(pl.dir)
	if err != nil {
		return nil, err
	}
	pl.pd = pd
	journalTemp, err := edit.CheckLeftovers(pd, "kseg injection")
	if err != nil {
		return nil, err
	}
	if journalTemp != "" {
		// The journal is written before anything else: a crash while
		// writing it left the partition untouched.
		pl.warnf("%s is left from an injection interrupted before it changed anything; applying the plan removes it (a dry run leaves it)", journalTemp)
	}
	var segs []segment.SegmentFiles
	for _, s := range pd.Segments {
		if s.Log == "" {
			pl.warnf("orphaned index files at base offset %d (no .log); the broker deletes them at load", s.BaseOffset)
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, edit.Refuse(edit.RefuseNotPartition, pl.dir, "no .log segment")
	}
	p.Segments = len(segs)
	pl.logStart = pl.readLogStart()
	return segs, nil
}

// passOne reads every segment and checks every CRC (LogSegment.recover's
// checks). A damaged segment is refused (its *CorruptTailError) unless
// RepairTail, which cuts it where recovery would: kept are the segments
// up to it, dropped those after it. It sets the log end.
func (pl *planner) passOne(segs []segment.SegmentFiles) (kept, dropped []*segScan, err error) {
	p, o := pl.p, pl.opts
	scans := make([]*segScan, len(segs))
	for i, s := range segs {
		if scans[i], err = scanSegment(s, nil, o.Progress); err != nil {
			return nil, nil, err
		}
	}
	kept = scans
	for i, s := range scans {
		if s.bad == nil {
			continue
		}
		if !o.RepairTail {
			return nil, nil, s.bad
		}
		// LogLoader.recoverLog: the segment is truncated at validBytes and
		// every later segment deleted.
		kept, dropped = scans[:i+1], scans[i+1:]
		p.TailRepair = &TailRepair{Segment: s.files.BaseOffset, Path: s.files.Log, Position: s.valid, Kind: s.cut.Kind.String(),
			Bytes: s.size - s.valid, Message: s.cut.Message, LogEndOffset: s.framed}
		for _, d := range dropped {
			p.TailRepair.SegmentsDropped = append(p.TailRepair.SegmentsDropped, d.files.BaseOffset)
			p.TailRepair.LogEndOffset = max(p.TailRepair.LogEndOffset, d.framed)
		}
		break
	}
	for _, s := range kept[:len(kept)-1] {
		if s.cut != nil && s.cut.Kind == segment.CutZeroFilled {
			pl.warnf("%s: %d zero bytes after position %d in a segment that is not the last", filepath.Base(s.files.Log), s.size-s.valid, s.valid)
		}
	}
	p.LogEndOffset = kept[len(kept)-1].next
	return kept, dropped, nil
}

// replayEnd is the producer state at the (recovered) log end end, recorded
// in the plan; an error anomaly of the replay is a warning.
func (pl *planner) replayEnd(end int64) (*psm.Result, error) {
	p := pl.p
	upto := int64(-1)
	if p.TailRepair != nil {
		upto = end
	}
	r0, err := pl.rebuild(upto)
	if err != nil {
		return nil, fmt.Errorf("rebuilding producer state: %w", err)
	}
	p.LogStartOffset = r0.LogStartOffset
	p.LastStableOffset = r0.LastStableOffset
	p.FirstUndecidedOffset = r0.FirstUndecidedOffset
	p.Producers = len(r0.Producers)
	for _, t := range r0.Ongoing {
		p.Ongoing = append(p.Ongoing, TxnRef{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset})
	}
	var first *finding.Finding
	for i, a := range r0.Anomalies {
		if a.IsError() {
			p.ReplayAnomalies++
			if first == nil {
				first = &r0.Anomalies[i]
			}
		}
	}
	if first != nil {
		more := ""
		if p.ReplayAnomalies > 1 {
			more = fmt.Sprintf(" and %d more", p.ReplayAnomalies-1)
		}
		pl.warnf("producer-state replay found %s at offset %d%s (see kseg replay-psm)", first.Kind, first.Offset, more)
	}
	return r0, nil
}

// findCut is where the log is cut: its end in abort mode; in truncate
// mode its last stable offset, recomputed until nothing below the cut is
// open (psm.md §7: cutting at L removes every batch with lastOffset >= L,
// which can remove the marker of a transaction that started before L and
// so reopen it). It records the cut and the producers the barrier clears.
func (pl *planner) findCut(kept []*segScan, r0 *psm.Result, end int64) (int64, error) {
	p := pl.p
	cut := end
	state := r0
	p.CutIterations = []int64{}
	if pl.opts.Mode == ModeTruncate {
		for {
			l := state.LastStableOffset
			if l >= cut {
				break
			}
			if l < p.LogStartOffset {
				return 0, edit.Refuse(edit.RefuseBelowLogStart, pl.dir, "the last stable offset %d is below the log start offset %d", l, p.LogStartOffset)
			}
			l, err := pl.alignDown(kept, l)
			if err != nil {
				return 0, err
			}
			p.CutIterations = append(p.CutIterations, l)
			if state, err = pl.rebuild(l); err != nil {
				return 0, fmt.Errorf("rebuilding producer state up to %d: %w", l, err)
			}
			cut = l
		}
		if len(state.Ongoing) > 0 {
			t := state.Ongoing[0]
			return 0, edit.Refuse(RefuseOpenTransactions, pl.dir,
				"producer %d's transaction from offset %d would still be open at the barrier (it starts before the log start offset %d)",
				t.ProducerID, t.FirstOffset, p.LogStartOffset)
		}
	}
	if cut < p.LogStartOffset {
		return 0, edit.Refuse(edit.RefuseBelowLogStart, pl.dir, "the cut %d is below the log start offset %d", cut, p.LogStartOffset)
	}
	p.Cut = cut
	p.ProducersAtCut = len(state.Producers)
	return cut, nil
}

// passTwo reads the cut segment kept[ci] and everything after it: the
// last batch kept (nil when none), the cut segment's kept batches indexed
// from scratch, and what the cut removes (batches, records, producers,
// bytes, transactions), recorded in the plan.
func (pl *planner) passTwo(kept, dropped []*segScan, ci int, end int64) (*batchMeta, *segment.IndexBuilder, error) {
	p, cut, cs := pl.p, pl.p.Cut, kept[ci]
	var lastKept *batchMeta
	for _, s := range kept[:ci] {
		if s.last != nil {
			lastKept = s.last
		}
	}
	p.CutPosition = cs.valid
	rebuilt := segment.NewIndexBuilder(cs.files.BaseOffset, pl.opts.IndexIntervalBytes)
	removedPIDs := map[int64]bool{}
	open := map[int64]*DroppedTxn{}
	removed := func(m *batchMeta) {
		p.Removed.Batches++
		p.Removed.Records += int64(m.Records)
		if m.PID > decode.NoProducerID {
			removedPIDs[m.PID] = true
		}
		switch {
		case m.Txn && !m.Control:
			if open[m.PID] == nil {
				open[m.PID] = &DroppedTxn{ProducerID: m.PID, FirstOffset: m.Base, MarkerOffset: -1, State: "open"}
			}
			open[m.PID].Records += int64(m.Records)
		case m.Txn && m.Control && (m.MarkerType == decode.ControlAbort || m.MarkerType == decode.ControlCommit):
			if t := open[m.PID]; t != nil {
				t.MarkerOffset = m.Base
				t.State = "committed"
				if m.MarkerType == decode.ControlAbort {
					t.State = "aborted"
				}
				p.DroppedTxns = append(p.DroppedTxns, *t)
				delete(open, m.PID)
			}
		}
	}
	cutFound := false
	var indexErr error
	if _, err := scanSegment(cs.files, func(m *batchMeta) bool {
		switch {
		case m.Last < cut:
			lastKept = new(batchMeta)
			*lastKept = *m
			indexErr = rebuilt.Append(m.Size, m.Last, m.MaxTs)
			return indexErr == nil
		case !cutFound:
			p.CutPosition = m.Pos
			cutFound = true
		}
		removed(m)
		return true
	}, nil); err != nil {
		return nil, nil, err
	}
	if indexErr != nil {
		return nil, nil, fmt.Errorf("%s: %w", cs.files.Log, indexErr)
	}
	// The segments after the cut, and those the tail repair drops: what
	// the plan removes is everything the operation removes, the repair's
	// share included (the plan is the truth or it is nothing).
	for _, s := range append(append([]*segScan(nil), kept[ci+1:]...), dropped...) {
		if _, err := scanSegment(s.files, func(m *batchMeta) bool { removed(m); return true }, nil); err != nil {
			return nil, nil, err
		}
	}
	if tr := p.TailRepair; tr != nil {
		// Batches that frame past the damage but fail their checks are
		// lost too; their records cannot be counted.
		p.Removed.Batches += kept[len(kept)-1].lost
	}
	for _, t := range open {
		p.DroppedTxns = append(p.DroppedTxns, *t)
	}
	slices.SortFunc(p.DroppedTxns, func(a, b DroppedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	for pid := range removedPIDs {
		p.Removed.Producers = append(p.Removed.Producers, pid)
	}
	slices.Sort(p.Removed.Producers)
	p.Removed.Offsets = end - cut
	if tr := p.TailRepair; tr != nil {
		p.Removed.Offsets = max(end, tr.LogEndOffset) - cut
	}
	p.Removed.Bytes = cs.size - p.CutPosition
	for _, s := range kept[ci+1:] {
		p.Removed.Bytes += s.size
	}
	for _, s := range dropped {
		p.Removed.Bytes += s.size
	}
	if cs.cut != nil && cs.cut.Kind == segment.CutZeroFilled && p.TailRepair == nil {
		pl.warnf("%s: %d zero bytes of preallocation after position %d are removed", filepath.Base(cs.files.Log), cs.size-cs.valid, cs.valid)
	}
	return lastKept, rebuilt, nil
}

// abortMarkers are abort mode's ABORT markers, one for each transaction
// open at the end (r0), from offset off at position pos on: their bytes,
// and the offset and position after them. They and the transactions they
// abort are recorded in the plan.
func (pl *planner) abortMarkers(r0 *psm.Result, off, pos int64) ([]byte, int64, int64, error) {
	p, o := pl.p, pl.opts
	var out []byte
	for i, t := range r0.Ongoing {
		// r0.Producers is sorted by producer id: no map of a million
		// producers for a few open transactions.
		var e *psm.Entry
		if k, ok := slices.BinarySearchFunc(r0.Producers, t.ProducerID, func(e psm.Entry, pid int64) int { return cmp.Compare(e.ProducerID, pid) }); ok {
			e = &r0.Producers[k]
		}
		if e == nil {
			re := edit.Refuse(RefuseOpenTransactions, pl.dir,
				"producer %d's transaction from offset %d is open but the producer has no state (cleared by an earlier barrier?): an ABORT marker cannot close it",
				t.ProducerID, t.FirstOffset)
			re.Remedy = edit.RemedyTruncateMode
			return nil, 0, 0, re
		}
		ce := e.CoordinatorEpoch
		if ce < 0 {
			ce = 0
		}
		if o.CoordinatorEpoch != nil {
			if *o.CoordinatorEpoch < ce {
				pl.warnf("--coordinator-epoch %d is below producer %d's last coordinator epoch %d; a leader would reject the marker (TransactionCoordinatorFencedException)",
					*o.CoordinatorEpoch, e.ProducerID, ce)
			}
			ce = *o.CoordinatorEpoch
		}
		raw := BuildEndTxnMarker(off, p.LeaderEpoch, o.Timestamp, e.ProducerID, e.ProducerEpoch, ce, false)
		p.Appended = append(p.Appended, AppendedBatch{Kind: decode.ControlAbort.String(), Offset: off, Position: pos, Size: len(raw),
			ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, CoordinatorEpoch: ce, TxnFirstOffset: t.FirstOffset})
		// ProducerStateManager.lastStableOffset(completedTxn): the first
		// offset of the earliest other ongoing transaction, else
		// lastOffset+1. The markers complete the transactions in
		// first-offset order, so the next one is still open.
		lso := off + 1
		if i+1 < len(r0.Ongoing) {
			lso = r0.Ongoing[i+1].FirstOffset
		}
		p.AbortedTxns = append(p.AbortedTxns, segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion,
			ProducerID: e.ProducerID, FirstOffset: t.FirstOffset, LastOffset: off, LastStableOffset: lso})
		out = append(out, raw...)
		off++
		pos += int64(len(raw))
	}
	return out, off, pos, nil
}

// alignDown moves l down to the base of the batch that contains it: a cut
// at l removes every batch whose lastOffset >= l (LocalLog.truncateTo), so
// the log then ends at that batch's base.
func (pl *planner) alignDown(kept []*segScan, l int64) (int64, error) {
	var s *segScan
	for _, k := range kept {
		if k.files.BaseOffset <= l {
			s = k
		}
	}
	if s == nil || l >= s.next {
		return l, nil
	}
	out := l
	_, err := scanSegment(s.files, func(m *batchMeta) bool {
		if m.Last >= l {
			out = min(l, m.Base)
			return false
		}
		return true
	}, nil)
	return out, err
}

// planEpochs resolves the leader epoch of the new batches and the
// leader-epoch-checkpoint change (LeaderEpochFileCache.truncateFromEnd,
// then assign for the first new batch).
func (pl *planner) planEpochs(kept []*segScan, cut int64, lastKept *batchMeta) error {
	p, o := pl.p, pl.opts
	var entries []segment.EpochEntry
	if pl.pd.LeaderEpochCheckpoint != "" {
		var err error
		if entries, err = segment.ReadLeaderEpochCheckpoint(pl.pd.LeaderEpochCheckpoint); err != nil {
			return err
		}
	}
	highest := int32(-1)
	for _, e := range entries {
		highest = max(highest, e.Epoch)
	}
	keptEntries, removed := segment.TruncateLeaderEpochs(entries, cut)
	p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, removed...)
	latest := int32(-1)
	if n := len(keptEntries); n > 0 {
		latest = keptEntries[n-1].Epoch
	}
	for _, s := range kept {
		if s.last != nil && s.last.Magic >= 2 {
			highest = max(highest, s.last.PLE)
		}
	}
	var epoch int32
	switch {
	case o.BumpLeaderEpoch != nil:
		epoch = *o.BumpLeaderEpoch
		if epoch <= highest {
			return &edit.OptionError{Option: "bump-leader-epoch", Detail: fmt.Sprintf("%d is not above the highest leader epoch %d the partition has recorded", epoch, highest)}
		}
	case o.LeaderEpoch != nil:
		epoch = *o.LeaderEpoch
		if epoch < latest {
			return &edit.OptionError{Option: "leader-epoch", Detail: fmt.Sprintf("%d is below the latest leader epoch %d kept in leader-epoch-checkpoint", epoch, latest)}
		}
	case highest >= 0:
		// The leader's epoch survives truncation (UnifiedLog.truncateTo
		// trims the epoch cache, not the current epoch): a cut that removes
		// every entry of epoch 7 still appends in epoch 7.
		epoch = highest
	case lastKept != nil && lastKept.Magic >= 2 && lastKept.PLE >= 0:
		epoch = lastKept.PLE
	}
	p.LeaderEpoch = epoch
	if pl.pd.LeaderEpochCheckpoint == "" {
		if o.BumpLeaderEpoch != nil {
			pl.warnf("no leader-epoch-checkpoint: epoch %d is written in the new batches but not recorded (the broker rebuilds its epoch cache from the log)", epoch)
		}
		return nil
	}
	// LeaderEpochFileCache.assign on append of the first new batch.
	if assigned := segment.AssignLeaderEpoch(keptEntries, epoch, cut); !slices.Equal(assigned, keptEntries) {
		added := assigned[len(assigned)-1]
		p.EpochEntryAdded = &added
		keptEntries = assigned
	}
	if slices.Equal(keptEntries, entries) {
		// Truncation removed an entry that assign puts straight back
		// (the same epoch from the same offset): the file stays as is.
		p.EpochEntriesRemoved, p.EpochEntryAdded = nil, nil
		return nil
	}
	if len(p.EpochEntriesRemoved) > 0 || p.EpochEntryAdded != nil {
		pl.epochContent = segment.EncodeLeaderEpochCheckpoint(keptEntries)
	}
	return nil
}

// Bounds of a timestamp a barrier is written with, unless forced: Kafka's
// timestamps are milliseconds since the epoch, and one in another unit is
// wrong by a factor of a thousand. A timestamp far in the future is the
// worse mistake: time-based retention (UnifiedLog.deleteRetentionMsBreachedSegments)
// deletes a segment only once its largest timestamp is older than
// retention.ms, so the segment holding the barrier, and every one after
// it, would never be deleted again; the time index would point
// offsetsForTimes at it for every later time.
var minTimestamp = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)

const maxTimestampAhead = 24 * time.Hour

// checkTimestamp refuses (an option error) a timestamp before 2010 or more
// than a day ahead of now, naming the unit it was likely given in.
func checkTimestamp(ts int64, now time.Time, force bool) error {
	t := time.UnixMilli(ts).UTC()
	if force || (!t.Before(minTimestamp) && !t.After(now.Add(maxTimestampAhead))) {
		return nil
	}
	when := fmt.Sprintf("%d ms is %s", ts, t.Format(time.RFC3339))
	if t.Year() > 9999 || t.Year() < 0 {
		when = fmt.Sprintf("%d ms is in the year %d", ts, t.Year())
	}
	var guess string
	switch {
	case ts >= 1e17:
		guess = fmt.Sprintf(": in nanoseconds? (%d ns is %s)", ts, time.Unix(0, ts).UTC().Format(time.RFC3339))
	case ts >= 1e14:
		guess = fmt.Sprintf(": in microseconds? (%d µs is %s)", ts, time.UnixMicro(ts).UTC().Format(time.RFC3339))
	case ts < 1e11 && ts >= minTimestamp.Unix():
		guess = fmt.Sprintf(": in seconds? (%d s is %s)", ts, time.Unix(ts, 0).UTC().Format(time.RFC3339))
	}
	where := "more than a day ahead of the clock"
	if t.Before(minTimestamp) {
		where = "before 2010"
	}
	return &edit.OptionError{Option: "timestamp", Detail: fmt.Sprintf("%s, %s%s; Kafka timestamps are milliseconds since the epoch, and a barrier dated in the future would keep time-based retention from deleting its segment and every later one; force to write it anyway",
		when, where, guess)}
}
