package psm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kseg/kseg/segment"
)

// brokerStates are the producer states a broker may have written in a
// snapshot at each of a set of offsets. kseg's rebuild (from the log start
// offset, expiring producers as the broker's periodic check does) is one;
// two others are the broker's own too, and a file that matches them is
// healthy:
//
//   - held: the state replayed from the first batch on disk. A running
//     broker applied the batches below a log start offset that
//     DeleteRecords (or retention inside a segment) later moved up, and
//     keeps their producers: ProducerStateManager.onLogStartOffsetIncremented
//     (truncateHead in older releases) drops only unreplicated
//     transactions, never producers. Only a restart forgets them.
//   - unexpired: the state with no producer expired. Log recovery writes
//     its snapshots (LogLoader.recoverSegment, the end of
//     UnifiedLog.rebuildProducerState) right after loadProducersFromRecords,
//     which never runs removeExpiredProducers.
//
// The alternatives are replayed only when a file does not match kseg's
// rebuild, once for every offset.
type brokerStates struct {
	dir     *segment.PartitionDir
	opts    Options // FromSnapshot none
	r       *rebuilder
	rebuilt map[int64]*capture

	altDone          bool
	held, unexpired  map[int64]*capture
	logStartMoved    bool
	logStart, firstB int64
	barriers         []Barrier // met by the replay
}

// newBrokerStates judges against the states r captured in caps (a replay
// from the log start, FromSnapshot none, which met barriers).
func newBrokerStates(dir *segment.PartitionDir, opts Options, r *rebuilder, caps []*capture, barriers []Barrier) *brokerStates {
	bs := &brokerStates{dir: dir, opts: opts, r: r, rebuilt: map[int64]*capture{}, logStart: r.logStart, firstB: r.logStart, barriers: barriers}
	for _, c := range caps {
		bs.rebuilt[c.offset] = c
	}
	if len(r.segs) > 0 {
		bs.firstB = r.segs[0].BaseOffset
	}
	bs.logStartMoved = bs.logStart > bs.firstB
	return bs
}

// brokerStatesAt replays dir from its log start with a capture at each
// offset, and also returns the replay's result (its anomalies are the
// log's, from the log start).
func brokerStatesAt(dir *segment.PartitionDir, opts Options, offsets []int64) (*brokerStates, *Result, error) {
	opts.FromSnapshot = SnapshotNone
	r := newRebuilder(dir, opts)
	r.nested = true
	caps := capturesAt(offsets)
	res, _, err := r.run(caps)
	if err != nil {
		return nil, nil, err
	}
	return newBrokerStates(dir, opts, r, caps, res.Barriers), res, nil
}

func capturesAt(offsets []int64) []*capture {
	caps := make([]*capture, len(offsets))
	for i, o := range offsets {
		caps[i] = &capture{offset: o}
	}
	return caps
}

// alternatives replays the held and unexpired states at every offset.
func (bs *brokerStates) alternatives() error {
	if bs.altDone {
		return nil
	}
	bs.altDone = true
	var offsets []int64
	for o, c := range bs.rebuilt {
		if c.done {
			offsets = append(offsets, o)
		}
	}
	// The replay captures in log order: unsorted (the map's order), a
	// capture after a higher one was never taken, and its snapshot was
	// judged without the alternatives.
	slices.Sort(offsets)
	replay := func(opts Options) (map[int64]*capture, error) {
		r := newRebuilder(bs.dir, opts)
		r.nested = true
		caps := capturesAt(offsets)
		if _, _, err := r.run(caps); err != nil {
			return nil, err
		}
		out := map[int64]*capture{}
		for _, c := range caps {
			if c.done {
				out[c.offset] = c
			}
		}
		return out, nil
	}
	o := bs.opts
	if bs.logStartMoved {
		o.LogStartOffset = -1 // from the first batch on disk
		held, err := replay(o)
		if err != nil {
			return err
		}
		bs.held = held
	}
	// isProducerExpired compares now - lastTimestamp with the expiration:
	// nothing expires against math.MaxInt64.
	o.ProducerIDExpirationMs = math.MaxInt64
	unexpired, err := replay(o)
	if err != nil {
		return err
	}
	bs.unexpired = unexpired
	return nil
}

// snapshotVerdict is the judgement of one snapshot file.
type snapshotVerdict struct {
	// Match: the file is a state the broker held. Reason says which
	// alternative explains it ("" for kseg's rebuild itself).
	Match  bool
	Reason string
	// Rebuilt is kseg's rebuilt state; Differences its differences from
	// the file (nil on a match).
	Rebuilt     []segment.SnapshotEntry
	Differences []Difference
}

// judge compares onDisk with the states at offset, which must have been
// captured (capture.done).
func (bs *brokerStates) judge(offset int64, onDisk []segment.SnapshotEntry) (snapshotVerdict, error) {
	c := bs.rebuilt[offset]
	v := snapshotVerdict{Rebuilt: c.entries}
	d := CompareSnapshot(c.entries, onDisk)
	if len(d) == 0 {
		v.Match = true
		return v, nil
	}
	if err := bs.alternatives(); err != nil {
		return v, err
	}
	var held, unexpired []segment.SnapshotEntry
	if h := bs.held[offset]; h != nil {
		held = h.entries
	}
	if u := bs.unexpired[offset]; u != nil {
		unexpired = u.entries
	}
	gone := int64(-1)
	if !bs.barrierBefore(offset) {
		gone = bs.firstB
	}
	why, ok := explainedByBroker(c.entries, held, unexpired, onDisk, gone)
	if !ok {
		v.Differences = d
		return v, nil
	}
	v.Match = true
	var reasons []string
	if why.held {
		reasons = append(reasons, fmt.Sprintf("producers whose batches lie below the log start offset %d, which the broker keeps when the log start moves (ProducerStateManager.onLogStartOffsetIncremented)", bs.logStart))
	}
	if why.gone {
		reasons = append(reasons, fmt.Sprintf("producers whose batches lie below the first segment on disk (%d; deleted by retention), which the broker keeps as well; kseg cannot check those entries against the log", bs.firstB))
	}
	if why.unexpired {
		reasons = append(reasons, fmt.Sprintf("producers kseg's rebuild expired (producer.id.expiration.ms %d): a snapshot written by log recovery follows loadProducersFromRecords, which never expires producers", bs.opts.ProducerIDExpirationMs))
	}
	v.Reason = "it also holds " + strings.Join(reasons, "; and ")
	return v, nil
}

// barrierBefore reports a barrier on disk below offset (from the replay).
func (bs *brokerStates) barrierBefore(offset int64) bool {
	for _, b := range bs.barriers {
		if b.Offset < offset {
			return true
		}
	}
	return false
}

// explanation says which of the broker's other states explain a file.
type explanation struct{ held, gone, unexpired bool }

// explainedByBroker reports whether onDisk is, producer by producer, a
// state the broker held: it lists every producer of rebuilt, and each of
// its entries equals that producer's entry in rebuilt, in held (the state
// with the producers below the log start) or in unexpired (the state
// without expiry), or — when gone >= 0 — is a producer with no open
// transaction whose last batch lies below gone, the first offset on disk:
// retention deleted its batches, the broker kept it, and nothing on disk
// can say otherwise. A producer listed twice never is (a broker writes its
// HashMap).
func explainedByBroker(rebuilt, held, unexpired, onDisk []segment.SnapshotEntry, gone int64) (explanation, bool) {
	var why explanation
	disk := newPIDIndex(onDisk)
	if disk.duplicates {
		return why, false
	}
	R, H, U := newPIDIndex(rebuilt), newPIDIndex(held), newPIDIndex(unexpired)
	for _, r := range rebuilt {
		if _, ok := disk.find(r.ProducerID); !ok {
			return why, false
		}
	}
	for _, e := range onDisk {
		pid := e.ProducerID
		r, inR := R.find(pid)
		if inR && sameEntry(r, e) {
			continue
		}
		h, inH := H.find(pid)
		if inH && sameEntry(h, e) {
			why.held = true
			continue
		}
		u, inU := U.find(pid)
		if inU && sameEntry(u, e) {
			why.unexpired = true
			continue
		}
		if !inR && !inH && !inU && gone >= 0 && e.LastOffset >= 0 && e.LastOffset < gone && e.CurrentTxnFirstOffset < 0 {
			// Not a producer of the log on disk at all.
			why.gone = true
			continue
		}
		return why, false
	}
	return why, true
}

// pidIndex finds a state's entries by producer id (the last of several,
// as a map filled in order keeps) through a sorted index of 4 bytes an
// entry.
type pidIndex struct {
	es         []segment.SnapshotEntry
	idx        []int32
	duplicates bool
}

func newPIDIndex(es []segment.SnapshotEntry) pidIndex {
	x := pidIndex{es: es, idx: sortedByPID(es)}
	for i := 1; i < len(x.idx); i++ {
		if es[x.idx[i]].ProducerID == es[x.idx[i-1]].ProducerID {
			x.duplicates = true
			break
		}
	}
	return x
}

func (x pidIndex) find(pid int64) (segment.SnapshotEntry, bool) {
	// The first index past pid, then one back: the last of equal ids.
	i, _ := slices.BinarySearchFunc(x.idx, pid+1, func(k int32, p int64) int { return cmp.Compare(x.es[k].ProducerID, p) })
	if pid == math.MaxInt64 {
		i = len(x.idx)
	}
	if i == 0 || x.es[x.idx[i-1]].ProducerID != pid {
		return segment.SnapshotEntry{}, false
	}
	return x.es[x.idx[i-1]], true
}

// sameEntry compares the fields a snapshot stores, as CompareSnapshot does.
func sameEntry(a, b segment.SnapshotEntry) bool {
	return a.ProducerID == b.ProducerID && a.ProducerEpoch == b.ProducerEpoch && a.LastSequence == b.LastSequence &&
		a.LastOffset == b.LastOffset && a.OffsetDelta == b.OffsetDelta && a.Timestamp == b.Timestamp &&
		a.CoordinatorEpoch == b.CoordinatorEpoch && normTxn(a.CurrentTxnFirstOffset) == normTxn(b.CurrentTxnFirstOffset)
}

// CheckSnapshotAt judges one snapshot's entries, as if they were the file
// at offset in dir: against the state rebuilt from the log alone up to
// offset, and, when that differs, against the other states a broker may
// have written there (producers kept below a moved log start, producers a
// recovery never expired), exactly as CheckSnapshots judges each file.
// opts.FromSnapshot is ignored; opts.SegmentLimits applies, so kseg
// repair can judge the snapshot at the end of the log as it will leave it.
// The check's Status is CheckSkipped when offset is at or below the log
// start or above the log end.
func CheckSnapshotAt(dir *segment.PartitionDir, opts Options, offset int64, onDisk []segment.SnapshotEntry) (SnapshotCheck, error) {
	c := SnapshotCheck{Offset: offset, OnDisk: len(onDisk)}
	opts.Upto = offset
	bs, _, err := brokerStatesAt(dir, opts, []int64{offset})
	if err != nil {
		return c, err
	}
	if offset <= bs.logStart {
		c.Status, c.Reason = CheckSkipped, fmt.Sprintf("at or below the log start offset %d (the broker deletes it at load)", bs.logStart)
		return c, nil
	}
	if !bs.rebuilt[offset].done {
		c.Status, c.Reason = CheckSkipped, "above the log end offset (the broker deletes it at load)"
		return c, nil
	}
	v, err := bs.judge(offset, onDisk)
	if err != nil {
		return c, err
	}
	c.applyVerdict(v)
	return c, nil
}

// applyVerdict records v in c.
func (c *SnapshotCheck) applyVerdict(v snapshotVerdict) {
	c.Rebuilt = len(v.Rebuilt)
	c.Differences = v.Differences
	c.Status, c.Reason = CheckMismatch, ""
	if v.Match {
		c.Status, c.Reason = CheckMatch, v.Reason
	}
}
