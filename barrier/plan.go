package barrier

import (
	"cmp"
	"fmt"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
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
	pending, blocked, err := edit.StartPlan[*InjectionPlan](logDir, dir, dir, InjectKind, opts.checkWritable)
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return pending, blocked
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

	appendBytes, err := pl.appended(r0, cs)
	if err != nil {
		return nil, err
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
