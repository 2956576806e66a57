package psm

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// rebuilder runs replays over one partition directory.
type rebuilder struct {
	dir      *segment.PartitionDir
	opts     Options
	segs     []segment.SegmentFiles // segments that have a .log, by base offset
	logStart int64
	// nested: a replay run to judge snapshots (brokerStates); it judges
	// none itself.
	nested bool

	// set by scan
	leo       int64 // log end offset reached (valid when the scan ran to the end)
	stopped   bool  // stopped at the end offset
	corrupted map[string]bool

	// A replay through the recovery a loading broker runs (fromRecovery):
	// recovered[i] is set for each segment LogSegment.recover replays
	// whole, afterSegment runs when the scan has passed segment i, and
	// truncatedAt is where recovery cut the log (-1: nowhere).
	recovered    []bool
	afterSegment func(i int)
	truncatedAt  int64

	// Options.Progress: segStart[i] is the byte position of segs[i] in
	// the log (the sizes of the segments before it); counted is what was
	// reported, next where to report again.
	segStart      []int64
	counted, next int64
}

func newRebuilder(dir *segment.PartitionDir, opts Options) *rebuilder {
	r := &rebuilder{dir: dir, opts: opts, corrupted: map[string]bool{}, truncatedAt: -1}
	r.segs = slices.Collect(dir.Logs())
	// LogLoader: newLogStartOffset = max(logStartOffsetCheckpoint, first segment base).
	r.logStart = max(opts.LogStartOffset, 0)
	if len(r.segs) > 0 {
		r.logStart = max(r.logStart, r.segs[0].BaseOffset)
	}
	r.next = math.MaxInt64
	if opts.Progress != nil {
		r.segStart = make([]int64, len(r.segs)+1)
		for i, s := range r.segs {
			var size int64
			if st, err := os.Stat(s.Log); err == nil {
				size = st.Size()
			}
			r.segStart[i+1] = r.segStart[i] + size
		}
		r.next = 0
	}
	return r
}

// progressStep is how far a replay reads between Options.Progress calls.
const progressStep = 1 << 20

// progress reports that the replay has read segs[i] up to byte pos.
func (r *rebuilder) progress(i int, pos int64) {
	p := min(r.segStart[i]+pos, r.segStart[i+1])
	if p > r.counted {
		r.opts.Progress(p - r.counted)
		r.counted = p
	}
	r.next = p + progressStep
}

func (r *rebuilder) partition() string { return filepath.Base(filepath.Clean(r.dir.Path)) }

// Rebuild rebuilds the producer state of a partition directory as a
// loading broker does (UnifiedLog.rebuildProducerState): load a snapshot
// (or none), replay [max(snapshot, logStart), end) one batch at a time
// with LogSegment.recover's per-batch semantics, then compute the LSO.
func Rebuild(dir *segment.PartitionDir, opts Options) (*Result, error) {
	r := newRebuilder(dir, opts)
	res, _, err := r.run(nil)
	return res, err
}

// capture is a request to record the state at an offset during replay.
type capture struct {
	offset  int64
	entries []segment.SnapshotEntry
	done    bool
	// producers is how many entries the state had; vouched says vouch
	// settled it.
	producers int
	vouched   bool
	// vouch, when set, is asked first, with the manager at offset: true
	// when it settles what the state there is needed for by itself
	// (CheckSnapshots: the snapshot file equals it), so that entries are
	// not kept — a million producers' copy per snapshot file.
	vouch func(m *Manager) bool
}

// take records the state of m at c's offset.
func (c *capture) take(m *Manager) {
	c.done, c.producers = true, len(m.producers)
	if c.vouch != nil && c.vouch(m) {
		c.vouched = true
		return
	}
	c.entries = m.Snapshot()
}

func (r *rebuilder) run(captures []*capture) (*Result, *Manager, error) {
	rr := &replayRun{r: r, captures: captures, end: r.opts.Upto}
	m := rr.fresh()
	loaded := int64(-1)
	skipped := false // the broker skips the rebuild (clean shutdown, no snapshot)
	var err error
	switch {
	case r.opts.FromSnapshot == SnapshotNone || len(captures) > 0:
		err = rr.replay(m, r.logStart)
	case r.opts.FromSnapshot == SnapshotLatest:
		if rec := r.recoveredSegments(); rec != nil && rr.end < 0 && !r.nested {
			m, loaded, err = rr.fromRecovery(m, rec)
		} else {
			m, loaded, skipped, err = rr.fromLatest(m)
		}
	default:
		m, loaded, err = rr.fromSnapshot(m)
	}
	if err != nil {
		return nil, nil, err
	}
	res, m, err := rr.finish(m, loaded, skipped)
	if res != nil {
		res.Recovery = rr.recovery
	}
	return res, m, err
}

// replayRun is one run of a rebuilder: where the replay ends, the states
// to capture on the way, and what is carried from one load attempt to
// the next.
type replayRun struct {
	r        *rebuilder
	captures []*capture
	end      int64
	// anomalies are those reported before the final load attempt.
	anomalies   []finding.Finding
	replayStart int64
	// recovery is the recovery fromRecovery modelled.
	recovery *Recovery
}

// fresh is an empty manager at the log start, with the anomalies so far.
func (rr *replayRun) fresh() *Manager {
	nm := NewManager(rr.r.opts)
	nm.SetLogStartOffset(rr.r.logStart)
	nm.SetMapEndOffset(rr.r.logStart)
	nm.anomalies = append(nm.anomalies, rr.anomalies...)
	return nm
}

// replay applies the log from from (the log start at the lowest) to the
// end to m, capturing the states asked for on the way.
func (rr *replayRun) replay(m *Manager, from int64) error {
	return rr.replayFrom(m, max(from, rr.r.logStart))
}

// replayFrom applies the log from start to the end to m.
func (rr *replayRun) replayFrom(m *Manager, start int64) error {
	r := rr.r
	rr.replayStart = start
	if start == r.logStart && m.snapshotLoaded < 0 && r.segmentStart(r.segmentOf(start), start) == start {
		m.historyCut = r.producersBefore(start)
	}
	ci := 0
	return r.scan(m, start, rr.end, false, func(b *decode.Batch, ctl *decode.Control, ts int64) bool {
		for ci < len(rr.captures) && rr.captures[ci].offset <= b.LastOffset() {
			rr.captures[ci].take(m)
			ci++
		}
		if err := m.ApplyWithTimestamp(b, ctl, ts); err != nil {
			// Not reachable: control batches with records always come
			// with their record here.
			m.Report(anomaly(finding.InvalidControl, b.BaseOffset, pidOf(b), err.Error()))
		}
		return true
	})
}

// fromLatest loads the newest usable snapshot, as a restarting broker
// does, and replays from it; from the log start when none is usable.
// skipped: the broker would skip the rebuild (a clean shutdown and no
// snapshot).
func (rr *replayRun) fromLatest(m *Manager) (_ *Manager, loaded int64, skipped bool, _ error) {
	r, opts, end := rr.r, rr.r.opts, rr.end
	loaded = -1
	diskEnd, err := r.logEnd()
	if err != nil {
		return nil, loaded, false, err
	}
	cands, kept := r.snapshotCandidates(end, diskEnd, m.Report)
	// UnifiedLog.rebuildProducerState: no snapshot left after
	// removeStraySnapshots and a clean shutdown: no rebuild at all.
	skipped = opts.CleanShutdown && kept == 0 && end < 0 && !r.nested
	rr.anomalies = m.anomalies
	for _, s := range cands {
		entries, good, err := r.readSnapshot(m, s, true)
		if err != nil {
			return nil, loaded, skipped, err
		}
		rr.anomalies = m.anomalies
		if !good {
			continue
		}
		if m, err = rr.loadSnapshot(entries, s.Offset); err != nil {
			return nil, loaded, skipped, err
		}
		r.restoreTxnStarts(m)
		if err := rr.replay(m, s.Offset); err != nil {
			return nil, loaded, skipped, err
		}
		if !r.stopped && r.leo < s.Offset {
			// truncateAndReload deletes snapshots above the log end.
			rr.anomalies = append(rr.anomalies, anomaly(finding.SnapshotIgnored, s.Offset, -1,
				fmt.Sprintf("%s lies above the log end offset %d; the broker deletes it at load (truncateAndReload)", filepath.Base(s.Path), r.leo)))
			m = rr.fresh()
			continue
		}
		return m, s.Offset, skipped, nil
	}
	m = rr.fresh()
	return m, loaded, skipped, rr.replay(m, r.logStart)
}

// recoveredSegments marks the segments (of r.segs) a loading broker
// recovers before it rebuilds the producer state: after an unclean
// shutdown every segment from the one holding the recovery point on
// (LogLoader.recoverLog: segments.values(recoveryPoint, ∞)), and on any
// start a segment without its .index (LogLoader.loadSegmentFiles:
// sanityCheck's NoSuchFileException). nil when it recovers none.
func (r *rebuilder) recoveredSegments() []bool {
	if !r.opts.Recover || len(r.segs) == 0 {
		return nil
	}
	from := len(r.segs)
	if r.opts.Unclean {
		from = 0
		for i, s := range r.segs {
			if s.BaseOffset <= max(r.opts.RecoveryPoint, 0) {
				from = i
			}
		}
	}
	var rec []bool
	for i, s := range r.segs {
		if i >= from || s.Index == "" {
			if rec == nil {
				rec = make([]bool, len(r.segs))
			}
			rec[i] = true
		}
	}
	return rec
}

// fromRecovery replays the log as a broker loading it recovers it, rec
// marking the segments it recovers (recoveredSegments). LogLoader.recoverSegment
// rebuilds the producer state up to the segment's base in a
// ProducerStateManager of its own — from the newest snapshot file at or
// below that base and above the checkpointed log start
// (truncateAndReload(logStartOffsetCheckpoint, base), which first deletes
// every snapshot file above the base; removeStraySnapshots has not run
// yet) — replays the whole segment batch by batch (LogSegment.recover,
// which writes its .txnindex and cuts an invalid tail), and takes a
// snapshot at its end. The next recovery, and in the end
// rebuildProducerState, load that snapshot: so the state is reloaded
// (Manager.reload) after every recovered segment, and the log after the
// last one is replayed on top of it.
func (rr *replayRun) fromRecovery(m *Manager, rec []bool) (*Manager, int64, error) {
	r := rr.r
	first := slices.Index(rec, true)
	base := r.segs[first].BaseOffset
	checkpointed := max(r.opts.LogStartOffset, 0)
	// The notes on snapshot files the broker deletes at load (strays,
	// those at or below the log start, above the end).
	diskEnd, err := r.logEnd()
	if err != nil {
		return nil, -1, err
	}
	r.snapshotCandidates(-1, diskEnd, m.Report)
	rr.anomalies = m.anomalies
	loaded := int64(-1)
	for i := len(r.dir.Snapshots) - 1; i >= 0 && loaded < 0; i-- {
		s := r.dir.Snapshots[i]
		if s.Offset > base || s.Offset <= checkpointed {
			continue
		}
		entries, good, err := r.readSnapshot(m, s, true)
		if err != nil {
			return nil, -1, err
		}
		rr.anomalies = m.anomalies
		if good {
			if m, err = rr.loadSnapshot(entries, s.Offset); err != nil {
				return nil, -1, err
			}
			r.restoreTxnStarts(m)
			loaded = s.Offset
		}
	}
	if loaded < 0 {
		m = rr.fresh()
	}
	rr.recovery = &Recovery{RecoveryPoint: -1, TruncatedAt: -1}
	if r.opts.Unclean {
		rr.recovery.RecoveryPoint = max(r.opts.RecoveryPoint, 0)
	}
	r.recovered = rec
	r.afterSegment = func(i int) {
		if rec[i] {
			m.reload()
			rr.recovery.Segments = append(rr.recovery.Segments, r.segs[i].BaseOffset)
		}
	}
	defer func() { r.recovered, r.afterSegment = nil, nil }()
	// rebuildProducerState replays from max(segment base, snapshot, log
	// start); the recovered segment itself is replayed whole.
	if err := rr.replayFrom(m, min(max(loaded, r.logStart), base)); err != nil {
		return nil, -1, err
	}
	rr.recovery.TruncatedAt = r.truncatedAt
	return m, loaded, nil
}

// fromSnapshot loads the snapshot Options.FromSnapshot names and replays
// from it; a snapshot the broker would not load is an error.
func (rr *replayRun) fromSnapshot(m *Manager) (*Manager, int64, error) {
	r, opts, end := rr.r, rr.r.opts, rr.end
	i := slices.IndexFunc(r.dir.Snapshots, func(s segment.SnapshotFile) bool { return s.Offset == opts.FromSnapshot })
	if i < 0 {
		return nil, -1, fmt.Errorf("%s: %w: %d", r.dir.Path, ErrSnapshotNotFound, opts.FromSnapshot)
	}
	s := r.dir.Snapshots[i]
	if s.Offset <= r.logStart {
		return nil, -1, fmt.Errorf("%s: %w: it is at or below the log start offset %d (the broker deletes it at load)", s.Path, ErrSnapshotUnusable, r.logStart)
	}
	if end >= 0 && s.Offset > end {
		return nil, -1, fmt.Errorf("%s: %w: it is above the end offset %d", s.Path, ErrSnapshotUnusable, end)
	}
	entries, good, err := r.readSnapshot(m, s, false)
	if err != nil {
		return nil, -1, err
	}
	if !good {
		return nil, -1, fmt.Errorf("%s: %w: corrupt", s.Path, ErrSnapshotUnusable)
	}
	rr.anomalies = m.anomalies
	if m, err = rr.loadSnapshot(entries, s.Offset); err != nil {
		return nil, -1, err
	}
	r.restoreTxnStarts(m)
	if err := rr.replay(m, s.Offset); err != nil {
		return nil, -1, err
	}
	if !r.stopped && r.leo < s.Offset {
		return nil, -1, fmt.Errorf("%s: %w: it lies above the log end offset %d", s.Path, ErrSnapshotUnusable, r.leo)
	}
	return m, s.Offset, nil
}

// finish ends the rebuild as rebuildProducerState does (lastMapOffset at
// the end offset), then reports what the state says: expired producers,
// open transactions, stale snapshots, a log start above the log end.
func (rr *replayRun) finish(m *Manager, loaded int64, skipped bool) (*Result, *Manager, error) {
	r, opts, end := rr.r, rr.r.opts, rr.end
	leo := r.leo
	if r.stopped {
		leo = end
	}
	m.SetMapEndOffset(leo)
	for _, b := range opts.Append {
		var ctl *decode.Control
		ts := b.MaxTimestamp
		if b.IsControl() && b.RecordCount > 0 {
			var ok bool
			if ctl, ts, ok = m.decodeControl(b, "(appended)", -1); !ok {
				m.SetMapEndOffset(b.NextOffset())
				continue
			}
		}
		if err := m.ApplyWithTimestamp(b, ctl, ts); err != nil {
			m.Report(anomaly(finding.InvalidControl, b.BaseOffset, pidOf(b), err.Error()))
		}
	}
	if len(opts.Append) > 0 {
		leo = m.MapEndOffset()
	}
	for _, c := range rr.captures {
		if !c.done && c.offset <= leo {
			c.take(m)
		}
	}
	if opts.Clock.Kind != ClockLogTime {
		// A broker loading the log at `now` removes expired producers at its
		// first periodic check.
		m.RemoveExpiredProducers(m.Now())
	}
	m.ReportHangingTransactions()
	if !opts.IgnoreBarriers && !r.nested && len(rr.captures) == 0 {
		// CheckSnapshots (captures) judges every file itself.
		known := slices.Clone(m.barriers)
		if loaded > r.logStart {
			pre, err := r.prescanBarriers(loaded)
			if err != nil {
				return nil, nil, err
			}
			known = append(pre, known...)
		}
		if err := r.judgeStale(m, known, leo, loaded); err != nil {
			return nil, nil, err
		}
	}
	if skipped {
		m = r.skipRebuild(m, rr.fresh, leo)
		rr.replayStart = leo
	}
	if end < 0 && r.logStart > leo && !r.nested {
		m.Report(logStartAboveEnd(r.logStart, leo))
	}
	// The manager applies nothing more: its final state shares its batch
	// metadata instead of copying it.
	res := m.state(false)
	res.Partition = r.partition()
	res.SnapshotLoaded = loaded
	res.ReplayedFrom = rr.replayStart
	res.RebuildSkipped = skipped
	slices.SortStableFunc(res.Anomalies, func(a, b finding.Finding) int { return cmp.Compare(a.Offset, b.Offset) })
	return res, m, nil
}
