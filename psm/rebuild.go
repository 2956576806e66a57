package psm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// ErrSnapshotNotFound is returned when Options.FromSnapshot names an
// offset with no snapshot file.
var ErrSnapshotNotFound = errors.New("no producer snapshot at that offset")

// ErrSnapshotUnusable is returned when Options.FromSnapshot names a
// snapshot the broker would not load (at or below the log start offset,
// above the end, or corrupt).
var ErrSnapshotUnusable = errors.New("producer snapshot not usable")

// LogDirCheckpoints reads the partition's entries in its log directory's
// log-start-offset-checkpoint and replication-offset-checkpoint (the high
// watermark Partition.createLog restores). Each is -1 when the file or the
// entry is absent; a file that does not parse is an error.
func LogDirCheckpoints(dir *segment.PartitionDir) (logStart, highWatermark int64, err error) {
	if logStart, err = segment.CheckpointOffset(dir, segment.LogStartOffsetCheckpointName); err != nil {
		return -1, -1, err
	}
	if highWatermark, err = segment.CheckpointOffset(dir, segment.ReplicationOffsetCheckpointName); err != nil {
		return logStart, -1, err
	}
	return logStart, highWatermark, nil
}

// LogDirState is what a loading broker reads about one partition in its
// log directory, outside the partition directory.
type LogDirState struct {
	// LogStartOffset and HighWatermark are the partition's entries in
	// log-start-offset-checkpoint and replication-offset-checkpoint, -1
	// when the file or the entry is absent.
	LogStartOffset, HighWatermark int64
	// CleanShutdown: the log directory holds .kafka_cleanshutdown, so the
	// broker takes its last shutdown as clean (LogManager.loadLogs:
	// hadCleanShutdown) and skips recovery.
	CleanShutdown bool
	// RecoveryPoint is the partition's entry in
	// recovery-point-offset-checkpoint, -1 when the file or the entry is
	// absent: after an unclean shutdown LogLoader.recoverLog recovers the
	// segments from the one holding it on.
	RecoveryPoint int64
}

// ReadLogDirState reads the log directory of dir. A checkpoint that does
// not parse is an error; the other fields are still filled.
func ReadLogDirState(dir *segment.PartitionDir) (LogDirState, error) {
	ls, hw, err := LogDirCheckpoints(dir)
	st := LogDirState{LogStartOffset: ls, HighWatermark: hw, RecoveryPoint: -1, CleanShutdown: segment.CleanShutdownPresent(dir)}
	if err == nil {
		st.RecoveryPoint, err = segment.CheckpointOffset(dir, segment.RecoveryPointCheckpointName)
	}
	return st, err
}

// BrokerHighWatermark is the high watermark a broker gives the partition
// when it loads it: the checkpoint entry, else 0
// (Partition.createLog: offsetCheckpoints.fetch(...).getOrElse(0L)), which
// UnifiedLog.updateHighWatermark then raises to the log start offset. A
// leader moves it up as its in-sync replicas catch up (at once when it is
// the only one).
func (s LogDirState) BrokerHighWatermark() int64 {
	if s.HighWatermark < 0 {
		return 0
	}
	return s.HighWatermark
}

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
	for _, s := range dir.Segments {
		if s.Log != "" {
			r.segs = append(r.segs, s)
		}
	}
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

// batchVisitor sees every batch in [start, end) with its decoded control
// record (nil for data and empty control batches). Returning false stops.
type batchVisitor func(b *decode.Batch, ctl *decode.Control, ctlTs int64) bool

// scan walks the batches of [start, end) in log order, as
// rebuildProducerState reads them: from the segment holding start, the
// first batch whose lastOffset >= start (LogSegment.translateOffset), and
// stopping before the first batch whose lastOffset >= end (end < 0: the
// log end). Findings (CRC mismatches, damaged tails, undecodable control
// records) go to m. It sets r.leo and r.stopped.
func (r *rebuilder) scan(m *Manager, start, end int64, barriersOnly bool, visit batchVisitor) error {
	r.leo, r.stopped = r.logStart, false
	if len(r.segs) > 0 {
		r.leo = r.segs[len(r.segs)-1].BaseOffset
	}
	first := 0
	for i := range r.segs {
		if r.segs[i].BaseOffset <= start {
			first = i
		}
	}
	for i := first; i < len(r.segs); i++ {
		seg := r.segs[i]
		if end >= 0 && seg.BaseOffset >= end && i > first {
			r.stopped = true
			return nil
		}
		done, err := r.scanSegment(m, i, seg, r.segmentStart(i, start), end, barriersOnly, visit)
		if err != nil {
			return err
		}
		if done && r.truncatedAt < 0 {
			return nil
		}
		if r.afterSegment != nil {
			r.afterSegment(i)
		}
		if done {
			return nil // recovery cut the log here and deleted the segments after it
		}
	}
	return nil
}

// segmentStart is where the scan of segment i starts: start, except in a
// segment recovery replays, which LogSegment.recover reads from its first
// batch whatever the log start (and whose producer state it keeps).
func (r *rebuilder) segmentStart(i int, start int64) int64 {
	if r.recovered != nil && r.recovered[i] {
		return min(start, r.segs[i].BaseOffset)
	}
	return start
}

// startPosition uses the segment's offset index to skip to the batch
// holding start, as LogSegment.translateOffset does; the entry is used only
// if the batch at its position really ends at the indexed offset.
func startPosition(lf *segment.LogFile, seg segment.SegmentFiles, start, limit int64) int64 {
	if seg.Index == "" || start <= seg.BaseOffset {
		return 0
	}
	size := lf.Size
	if limit > 0 {
		size = min(size, limit)
	}
	idx, err := segment.ReadOffsetIndex(seg.Index, seg.BaseOffset)
	if err != nil || len(idx.Entries) == 0 {
		return 0
	}
	e := idx.Lookup(start)
	if e.Position <= 0 || int64(e.Position) >= size {
		return 0
	}
	sc := lf.Scanner(segment.ScanOptions{Start: int64(e.Position), BufferSize: 64 << 10, Limit: size})
	if !sc.Next() || sc.Batch().LastOffset() != e.Offset {
		return 0
	}
	return int64(e.Position)
}

// scanSegment replays one segment. It reads the way the CRC floor does:
// the segment is mapped (no copy out of the page cache) and framed and
// CRC-checked on a second core (segment.CRCScanner) while the state
// machine runs here, in log order, as LogSegment.recover runs it.
func (r *rebuilder) scanSegment(m *Manager, segIdx int, seg segment.SegmentFiles, start, end int64, barriersOnly bool, visit batchVisitor) (done bool, err error) {
	sc, err := r.openSegment(seg, start, r.opts.VerifyCRC && !barriersOnly)
	if err != nil || sc == nil {
		return false, err
	}
	defer sc.Close()
	// A mapped segment that a broker truncates under the replay faults on
	// access: an error for the segment instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			done, err = false, faultError(seg.Log, e)
		}
	}()
	name := filepath.Base(seg.Log)
	recovered := r.recovered != nil && r.recovered[segIdx] && !barriersOnly
	segEnd := seg.BaseOffset // the segment's next offset so far (LogSegment.readNextOffset)
	for sc.Next() {
		b := sc.Batch()
		if r.segStart != nil && r.segStart[segIdx]+sc.Pos() >= r.next {
			r.progress(segIdx, sc.Pos())
		}
		last := b.LastOffset()
		if last < start {
			r.leo = max(r.leo, b.NextOffset())
			continue
		}
		if end >= 0 && last >= end {
			r.stopped = true
			return true, nil
		}
		if recovered && r.opts.VerifyCRC && !sc.CRCValid() {
			// LogSegment.recover: ensureValid throws, the segment is cut
			// before this batch, and LogLoader.recoverLog deletes the
			// segments after it.
			m.Report(anomaly(finding.CRCMismatch, b.BaseOffset, pidOf(b),
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; the broker's recovery truncates the log here and deletes the segments after it (LogSegment.recover, LogLoader.recoverLog): the state shown is the one after that cut",
					name, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
			r.truncate(segEnd)
			return true, nil
		}
		r.leo = max(r.leo, b.NextOffset())
		segEnd = max(segEnd, b.NextOffset())
		if barriersOnly && (!b.IsControl() || b.HasProducerID()) {
			continue
		}
		if !barriersOnly && r.opts.VerifyCRC && !sc.CRCValid() {
			m.Report(anomaly(finding.CRCMismatch, b.BaseOffset, pidOf(b),
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; applied anyway (the broker's recovery would truncate the log here)",
					name, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
		}
		var ctl *decode.Control
		ts := b.MaxTimestamp
		if b.IsControl() && b.RecordCount > 0 {
			var ok bool
			ctl, ts, ok = m.decodeControl(b, name, sc.Pos())
			if !ok {
				m.SetMapEndOffset(b.NextOffset())
				continue
			}
		} else if barriersOnly {
			continue
		}
		if !visit(b, ctl, ts) {
			r.stopped = true
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if r.segStart != nil {
		r.progress(segIdx, math.MaxInt64-r.segStart[segIdx])
	}
	t := sc.Tail()
	switch t.Kind {
	case segment.TailClean:
		return false, nil
	case segment.TailZeroFilled:
		if !barriersOnly {
			m.Report(anomaly(finding.ZeroTail, r.leo, -1,
				fmt.Sprintf("%s: %d zero bytes after position %d (a preallocated segment; the broker truncates them)", name, t.InvalidBytes(), t.ValidBytes)))
		}
	default:
		msg := fmt.Sprintf("%s: replay stopped at position %d: %d bytes do not frame a batch", name, t.ValidBytes, t.InvalidBytes())
		if t.Err != nil {
			msg = fmt.Sprintf("%s (replay of this segment stopped; %d bytes not read)", t.Err.Error(), t.InvalidBytes())
		}
		if recovered && r.segs[len(r.segs)-1].BaseOffset != seg.BaseOffset {
			msg += "; the broker's recovery truncates the log here and deletes the segments after it (LogLoader.recoverLog): the state shown is the one after that cut"
		}
		m.Report(anomaly(finding.CorruptLog, r.leo, -1, msg))
	}
	if recovered {
		// LogSegment.recover cuts the bytes that do not frame a batch
		// (zeros included) and recoverLog deletes the segments after it.
		r.truncate(segEnd)
		return true, nil
	}
	return false, nil
}

// truncate records that recovery cut the log at end, the next offset of
// the segment it cut: the log end from then on.
func (r *rebuilder) truncate(end int64) {
	r.truncatedAt, r.leo = end, end
}

// openSegment starts the scan of seg for a replay from start: its file,
// mapped, its CRCs checked on a second core, from the batch the offset
// index points to; or the Source's scan. nil: a SegmentLimits cut it to
// nothing.
func (r *rebuilder) openSegment(seg segment.SegmentFiles, start int64, checkCRC bool) (SegmentScanner, error) {
	if r.opts.Source != nil {
		return r.opts.Source.ScanSegment(seg)
	}
	limit, limited := r.opts.SegmentLimits[seg.BaseOffset]
	if limited && limit <= 0 {
		return nil, nil // cut to nothing
	}
	// The Walk's record of the segment, when there is one and no CRC is to
	// be checked (a walk checks none).
	if ws := r.opts.Walk.segment(seg.Log); ws != nil && !limited && !checkCRC && ws.readsFrom(start, seg.BaseOffset) {
		return &walkSource{s: ws}, nil
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return nil, err
	}
	sc := lf.CRCScanner(segment.ScanOptions{Start: startPosition(lf, seg, start, limit), Limit: limit, Mmap: !r.opts.ReadSegments}, checkCRC)
	return &fileScanner{CRCScanner: sc, lf: lf}, nil
}

// fileScanner is a segment's CRCScanner with its file, closed together.
type fileScanner struct {
	*segment.CRCScanner
	lf *segment.LogFile
}

func (f *fileScanner) Close() {
	f.CRCScanner.Close()
	f.lf.Close()
}

// faultError is the error for a memory fault e met reading the mapped
// file path (a broker truncated it under the read); any other panic goes
// on.
func faultError(path string, e any) error {
	if _, ok := e.(interface{ Addr() uintptr }); !ok {
		panic(e)
	}
	return fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", path, e)
}

func pidOf(b *decode.Batch) int64 {
	if b.HasProducerID() {
		return b.ProducerID
	}
	return -1
}

// snapshotCandidates is what a loading broker would consider, newest
// first: ProducerStateManager.removeStraySnapshots keeps snapshots at
// segment base offsets plus the largest other one if it lies above the
// last segment's base; truncateAndReload then drops those at or below the
// log start offset and above the end.
//
// leo is the log end offset: truncateAndReload deletes the snapshots
// above it before it reads any, so even a corrupt one costs nothing (those
// above end, when set, are left out silently). Every snapshot the broker
// deletes is reported through report. The count returned is how many
// survive removeStraySnapshots, whatever their offset: with none, a broker
// after a clean shutdown skips the rebuild (rebuildProducerState tests
// latestSnapshotOffset).
func (r *rebuilder) snapshotCandidates(end, leo int64, report func(finding.Finding)) ([]segment.SnapshotFile, int) {
	offsets := make([]int64, len(r.dir.Snapshots))
	for i, s := range r.dir.Snapshots {
		offsets[i] = s.Offset
	}
	bases := make([]int64, len(r.segs))
	for i, s := range r.segs {
		bases[i] = s.BaseOffset
	}
	// removeStraySnapshots first, whatever the offsets.
	stray := map[int64]bool{}
	for _, d := range segment.SnapshotsDeletedAtLoad(offsets, bases, math.MinInt64, -1) {
		stray[d.Offset] = true
		report(anomaly(finding.SnapshotIgnored, d.Offset, -1, fmt.Sprintf("%s %s", segment.SegmentFileName(d.Offset, segment.SnapshotSuffix), d.Why)))
	}
	var kept []segment.SnapshotFile
	for _, s := range r.dir.Snapshots {
		if !stray[s.Offset] {
			kept = append(kept, s)
		}
	}
	slices.SortFunc(kept, func(a, b segment.SnapshotFile) int { return cmp.Compare(b.Offset, a.Offset) })
	var out []segment.SnapshotFile
	for _, s := range kept {
		switch {
		case s.Offset <= r.logStart:
			report(anomaly(finding.SnapshotIgnored, s.Offset, -1,
				fmt.Sprintf("%s is at or below the log start offset %d; the broker deletes it at load (truncateAndReload)", filepath.Base(s.Path), r.logStart)))
		case end >= 0 && s.Offset > end:
		case s.Offset > leo:
			report(anomaly(finding.SnapshotIgnored, s.Offset, -1,
				fmt.Sprintf("%s lies above the log end offset %d; the broker deletes it at load (truncateAndReload)", filepath.Base(s.Path), leo)))
		default:
			out = append(out, s)
		}
	}
	return out, len(kept)
}

// logEnd is the offset after the last batch of the last segment, or its
// base offset when it holds none: LogSegment.readNextOffset, what
// LogLoader.recoverLog and deleteSegmentsIfLogStartGreaterThanLogEnd take
// as the log end. It reads the last segment's batch headers from its last
// offset-index entry on (the whole segment when it has no index), mapped:
// only the headers are touched, where positional reads copied every byte
// of an index-less 1 GiB segment once more before the replay read it.
func (r *rebuilder) logEnd() (end int64, err error) {
	if len(r.segs) == 0 {
		return r.logStart, nil
	}
	seg := r.segs[len(r.segs)-1]
	if r.opts.Source != nil {
		sc, err := r.opts.Source.ScanSegment(seg)
		if err != nil {
			return 0, err
		}
		defer sc.Close()
		end = seg.BaseOffset
		for sc.Next() {
			end = max(end, sc.Batch().NextOffset())
		}
		return end, sc.Err()
	}
	limit, limited := r.opts.SegmentLimits[seg.BaseOffset]
	if limited && limit <= 0 {
		return seg.BaseOffset, nil
	}
	if ws := r.opts.Walk.segment(seg.Log); ws != nil && !limited && ws.readsFrom(math.MaxInt64, seg.BaseOffset) {
		return ws.end(seg.BaseOffset), nil
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Start: startPosition(lf, seg, math.MaxInt64, limit), Limit: limit, Mmap: !r.opts.ReadSegments})
	defer sc.Close()
	// A mapped segment truncated under the read faults: an error, as in
	// scanSegment.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			end, err = 0, faultError(seg.Log, e)
		}
	}()
	end = seg.BaseOffset
	for sc.Next() {
		end = max(end, sc.Batch().NextOffset())
	}
	return end, sc.Err()
}

// LogEndOffset is the log end offset a loading broker finds in dir (the
// last segment's next offset).
func LogEndOffset(dir *segment.PartitionDir) (int64, error) {
	return newRebuilder(dir, DefaultOptions()).logEnd()
}

// readSnapshot reads a snapshot; corruption is reported once per file and
// returned as ok == false.
// The snapshot is checked and, from a file, left open, read entry by
// entry by whoever loads it (the caller closes it).
func (r *rebuilder) readSnapshot(m *Manager, s segment.SnapshotFile, fallback bool) (snapshotEntries, bool, error) {
	read := func(path string) (snapshotEntries, error) { return segment.OpenProducerSnapshot(path) }
	if r.opts.Source != nil {
		read = func(string) (snapshotEntries, error) {
			es, err := r.opts.Source.ReadSnapshot(s)
			return heldSnapshot(es), err
		}
	}
	entries, err := read(s.Path)
	if err == nil {
		return entries, true, nil
	}
	if _, ok := decode.AsCorrupt(err); !ok {
		return nil, false, err
	}
	if !r.corrupted[s.Path] {
		r.corrupted[s.Path] = true
		what := "the broker deletes it and loads an older snapshot (or replays the log)"
		if !fallback {
			what = "the broker would delete it at load"
		}
		m.Report(anomaly(finding.SnapshotCorrupt, s.Offset, -1, fmt.Sprintf("%v; %s", err, what)))
	}
	return nil, false, nil
}

// snapshotEntries are a checked snapshot's entries: a file read entry by
// entry (segment.SnapshotReader), or entries a Source holds.
type snapshotEntries interface {
	Len() int
	Each(fn func(segment.SnapshotEntry)) error
	Entries() ([]segment.SnapshotEntry, error)
	Close() error
}

// heldSnapshot is a Source's snapshot.
type heldSnapshot []segment.SnapshotEntry

func (h heldSnapshot) Len() int { return len(h) }
func (h heldSnapshot) Each(fn func(segment.SnapshotEntry)) error {
	for _, e := range h {
		fn(e)
	}
	return nil
}
func (h heldSnapshot) Entries() ([]segment.SnapshotEntry, error) { return h, nil }
func (h heldSnapshot) Close() error                              { return nil }

// loadSnapshot loads the checked snapshot sr at offset into a fresh
// manager, and closes it.
func (rr *replayRun) loadSnapshot(sr snapshotEntries, offset int64) (*Manager, error) {
	defer sr.Close()
	m := rr.fresh()
	if err := m.load(sr.Len(), sr.Each, offset, NowFromClock); err != nil {
		return nil, err
	}
	return m, nil
}

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

// skipRebuild turns the state replayed from the log (m) into the one a
// broker starts with when it skips the rebuild after a clean shutdown
// with no producer snapshot (UnifiedLog.rebuildProducerState): no
// producers, no transactions, lastMapOffset at the log end, so the LSO is
// the high watermark. The anomalies of the log stay, except the hanging
// and open transactions the broker no longer knows; what it forgets is one
// clean-shutdown-no-snapshot anomaly. The aborted transactions stay: they
// are the .txnindex files' (the broker does not rewrite those).
func (r *rebuilder) skipRebuild(m *Manager, fresh func() *Manager, leo int64) *Manager {
	log := m.State()
	e := fresh()
	e.anomalies = e.anomalies[:0]
	for _, a := range m.anomalies {
		if a.Kind != finding.HangingTransaction && a.Kind != finding.OpenTransaction {
			e.anomalies = append(e.anomalies, a)
		}
	}
	e.aborted = m.aborted
	e.clock = m.clock
	e.SetMapEndOffset(leo)
	if a, ok := CleanShutdownLoss(log); ok {
		e.Report(a)
	}
	return e
}

// logStartAboveEnd is the log-start-above-log-end finding
// (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd).
func logStartAboveEnd(logStart, leo int64) finding.Finding {
	return anomaly(finding.LogStartAboveLogEnd, logStart, -1,
		fmt.Sprintf("the log start offset %d (log-start-offset-checkpoint) is above the log end offset %d: a broker loading the partition deletes every segment and its producer state (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd) and starts an empty log at %d; segments or the checkpoint were changed outside the broker",
			logStart, leo, logStart))
}

// CheckLogStart is the log-start-above-log-end finding for dir, whose
// log-start-offset-checkpoint entry lies above its log end offset; nil
// when it does not (or there is no entry).
func CheckLogStart(dir *segment.PartitionDir) (*finding.Finding, error) {
	st, err := ReadLogDirState(dir)
	if err != nil || st.LogStartOffset < 0 {
		return nil, err
	}
	leo, err := LogEndOffset(dir)
	if err != nil || st.LogStartOffset <= leo {
		return nil, err
	}
	a := logStartAboveEnd(st.LogStartOffset, leo)
	return &a, nil
}

// SkipsRebuild reports whether a broker loading dir skips the
// producer-state rebuild (UnifiedLog.rebuildProducerState): its last
// shutdown was clean (cleanShutdown, LogDirState.CleanShutdown) and no
// producer snapshot survives removeStraySnapshots. It then starts with no
// producer state; CleanShutdownLoss says what that forgets.
func SkipsRebuild(dir *segment.PartitionDir, cleanShutdown bool) bool {
	if !cleanShutdown {
		return false
	}
	_, kept := newRebuilder(dir, DefaultOptions()).snapshotCandidates(-1, math.MaxInt64, func(finding.Finding) {})
	return kept == 0
}

// CleanShutdownLoss is the clean-shutdown-no-snapshot finding for a
// partition whose log, replayed, gives the state log, when its log
// directory holds .kafka_cleanshutdown and no producer snapshot survives
// removeStraySnapshots: rebuildProducerState then skips the log scan (the
// upgrade short-cut) and takes empty snapshots at the bases of the last
// two segments and at the log end, so the broker forgets every producer
// and open transaction, now and at every later restart. ok is false when
// the log holds none (nothing is lost).
func CleanShutdownLoss(log *Result) (finding.Finding, bool) {
	if len(log.Producers) == 0 && len(log.Ongoing) == 0 {
		return finding.Finding{}, false
	}
	pid := int64(-1)
	if len(log.Producers) > 0 {
		pid = log.Producers[0].ProducerID
	}
	txns := "no open transaction"
	if n := len(log.Ongoing); n > 0 {
		t := log.Ongoing[0]
		pid = t.ProducerID
		txns = fmt.Sprintf("%d open transaction(s) (oldest: producer %d from offset %d), which hold the last stable offset at %d; the broker's last stable offset is its high watermark (%d here), so read_committed consumers read their records as committed, and a later ABORT marker no longer aborts them (no .txnindex entry)",
			n, t.ProducerID, t.FirstOffset, log.LastStableOffset, log.HighWatermark)
	}
	return anomaly(finding.CleanShutdownNoSnapshot, log.LogEndOffset, pid,
		fmt.Sprintf("the log directory holds %s and the partition has no producer snapshot: a broker starting now skips the producer-state rebuild (UnifiedLog.rebuildProducerState, hadCleanShutdown) and writes empty snapshots up to the log end %d, forgetting what the log holds: %d producer(s) and %s. Before starting the broker, write the snapshot (kseg repair, or kseg replay-psm --from-snapshot none --write-snapshot DIR) or remove %s so that the broker rebuilds from the log",
			segment.CleanShutdownName, log.LogEndOffset, len(log.Producers), txns, segment.CleanShutdownName)), true
}

// prescanBarriers finds the barriers in [logStart, upto): when replay
// starts from a snapshot, they tell whether that snapshot is stale.
func (r *rebuilder) prescanBarriers(upto int64) ([]Barrier, error) {
	tmp := NewManager(r.opts)
	var out []Barrier
	err := r.scan(tmp, r.logStart, upto, true, func(b *decode.Batch, ctl *decode.Control, _ int64) bool {
		if ctl != nil && ctl.Type == decode.ControlMirrorPidReset {
			out = append(out, Barrier{Offset: b.BaseOffset, SourceClusterID: ctl.SourceClusterID})
		}
		return true
	})
	return out, err
}

// staleCandidates are the snapshots within the log (above the log start,
// at or below leo) that lie after a barrier, each with the last barrier
// before it: every file --check-snapshots compares, stray ones included.
func (r *rebuilder) staleCandidates(barriers []Barrier, leo int64) ([]segment.SnapshotFile, []Barrier) {
	var files []segment.SnapshotFile
	var bars []Barrier
	if len(barriers) == 0 {
		return nil, nil
	}
	for _, s := range r.dir.Snapshots {
		if s.Offset <= r.logStart || s.Offset > leo {
			continue
		}
		var bar *Barrier
		for i := range barriers {
			if barriers[i].Offset < s.Offset {
				bar = &barriers[i]
			}
		}
		if bar != nil {
			files = append(files, s)
			bars = append(bars, *bar)
		}
	}
	return files, bars
}

// judgeStale reports every snapshot within the log (staleCandidates) that
// lies after a barrier and does not hold exactly the state a replay through that
// barrier gives at its offset (the barrier empties the producer map, so
// that state is the barrier's own replay up to the snapshot), judged as
// --check-snapshots judges files. A recovery path that ignores the
// barrier (barrier.md §8, pitfall 2) writes such a file: it brings back
// producers the barrier cleared, a transaction version 2 producer's entry
// without batch metadata, or a coordinator epoch a reused producer id
// inherited from before the barrier (the prototype's deferred update,
// pitfall 1), which fences the new cluster's transaction markers.
//
// The same replay, from the log start, finds the transactions left open at
// a barrier before the loaded snapshot (loaded), which replay from that
// snapshot cannot see: they are reported too, so that the verdict does
// not depend on where replay starts.
func (r *rebuilder) judgeStale(m *Manager, barriers []Barrier, leo, loaded int64) error {
	files, bars := r.staleCandidates(barriers, leo)
	if len(files) == 0 {
		return nil
	}
	offsets := make([]int64, len(files))
	for i, s := range files {
		offsets[i] = s.Offset
	}
	bs, full, err := brokerStatesAt(r.dir, r.opts, offsets)
	if err != nil {
		return err
	}
	for _, a := range full.Anomalies {
		if a.Kind == finding.OpenTxnAtBarrier && a.Offset < loaded {
			a.Message += fmt.Sprintf(" (the snapshot at %d, loaded here, is such a snapshot: the broker holds no open transaction for them)", loaded)
			m.Report(a)
		}
	}
	for i, s := range files {
		sr, ok, err := r.readSnapshot(m, s, false)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		entries, err := sr.Entries()
		sr.Close()
		if err != nil {
			return err
		}
		if !bs.rebuilt[s.Offset].done {
			continue
		}
		v, err := bs.judge(s.Offset, entries)
		if err != nil {
			return err
		}
		if !v.Match {
			m.Report(staleAnomaly(s, bars[i], v.Differences))
		}
	}
	return nil
}

// staleAnomaly is the stale-snapshot finding for s, which lies after bar
// and differs from the replay through it by d.
func staleAnomaly(s segment.SnapshotFile, bar Barrier, d []Difference) finding.Finding {
	name := filepath.Base(s.Path)
	return anomaly(finding.StaleSnapshot, s.Offset, d[0].ProducerID,
		fmt.Sprintf("%s lies after the MIRROR_PID_RESET barrier at %d but is not the state a replay through that barrier gives (%d difference(s); first: %s); a broker loading it brings back state the barrier cleared. Rewrite it with the broker stopped: kseg replay-psm --from-snapshot none --upto %d --write-snapshot %s --force DIR. Do not just delete it when the log directory holds %s and no other snapshot would remain: the broker then skips the producer-state rebuild and starts with no producer state at all",
			name, bar.Offset, len(d), d[0], s.Offset, name, segment.CleanShutdownName))
}

// restoreTxnStarts gives the transactions a snapshot left open the
// timestamp of their first batch. A snapshot entry holds the producer's
// last timestamp, not when its transaction began (ProducerStateManager's
// snapshot schema has only currentTxnFirstOffset), so after Load a
// transaction looks as young as its latest batch, and the hanging-
// transaction verdict would depend on whether replay started from a
// snapshot. The first batch is still in the log: read its timestamp there,
// as a replay from the log start would have. When it cannot be read (the
// segment is gone or damaged), the snapshot's timestamp stays.
func (r *rebuilder) restoreTxnStarts(m *Manager) {
	for i := range m.ongoing {
		if ts, ok := r.batchTimestampAt(m.ongoing[i].firstOffset); ok {
			m.ongoing[i].startTs = ts
		}
	}
}

// segmentOf is the index in r.segs of the segment holding offset (0 when
// it lies below the first).
func (r *rebuilder) segmentOf(offset int64) int {
	i := 0
	for j := range r.segs {
		if r.segs[j].BaseOffset <= offset {
			i = j
		}
	}
	return i
}

// producersBefore lists the producers with a batch in the segment holding
// start, below start: when the log start lies inside a segment
// (DeleteRecords), a replay from it does not see their history, so what it
// would report from the history alone (a marker with no transaction it saw
// begin, a sequence that goes on from a batch below the log start) is the
// log start's doing, not the log's. Read without reporting anything; nil
// when start is a segment's base.
func (r *rebuilder) producersBefore(start int64) (out map[int64]bool) {
	if len(r.segs) == 0 {
		return nil
	}
	seg := r.segs[r.segmentOf(start)]
	if seg.BaseOffset >= start {
		return nil
	}
	sc, err := r.openSegment(seg, seg.BaseOffset, false)
	if err != nil || sc == nil {
		return nil
	}
	defer sc.Close()
	// A mapped segment truncated under the read faults: the replay that
	// follows reports it; here it only ends the list.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			_ = faultError(seg.Log, e) // panics again on anything but a fault
			out = nil
		}
	}()
	for sc.Next() {
		b := sc.Batch()
		if b.LastOffset() >= start {
			break
		}
		if b.HasProducerID() {
			if out == nil {
				out = map[int64]bool{}
			}
			out[b.ProducerID] = true
		}
	}
	return out
}

// batchTimestampAt is the maxTimestamp of the batch holding offset, read
// without reporting anything.
func (r *rebuilder) batchTimestampAt(offset int64) (int64, bool) {
	seg := -1
	for i := range r.segs {
		if r.segs[i].BaseOffset <= offset {
			seg = i
		}
	}
	if seg < 0 {
		return 0, false
	}
	if r.opts.Source != nil {
		sc, err := r.opts.Source.ScanSegment(r.segs[seg])
		if err != nil {
			return 0, false
		}
		defer sc.Close()
		for sc.Next() {
			if b := sc.Batch(); b.LastOffset() >= offset {
				return b.MaxTimestamp, b.BaseOffset <= offset
			}
		}
		return 0, false
	}
	lf, err := segment.OpenLog(r.segs[seg].Log)
	if err != nil {
		return 0, false
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Start: startPosition(lf, r.segs[seg], offset, -1), BufferSize: 64 << 10})
	for sc.Next() {
		if b := sc.Batch(); b.LastOffset() >= offset {
			return b.MaxTimestamp, b.BaseOffset <= offset
		}
	}
	return 0, false
}
