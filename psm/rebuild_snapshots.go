// The producer snapshots replay starts from: which ones a broker would load
// (ProducerStateManager.removeStraySnapshots, loadFromSnapshot), how they
// are read, and whether one after a barrier is stale (it holds producers
// the barrier cleared).

package psm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
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

func (h heldSnapshot) Close() error { return nil }

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
