package mirror

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// stagedCheck is Verify's work on a mirror that only adds to its
// destination (into an empty one, or appending to one it does not cut),
// done on the read-back of what it writes (edit.StageWatcher) instead of
// on the committed files: the engine reads every copied batch back once,
// after its fsync has begun (a new segment's staged file, or the bytes
// appended to the continued segment), compares it with the source byte
// for byte and checks its CRC; here each is also checked against the
// offset and time index the plan writes for its segment
// (segment.IndexCheck, as Verify does; of a continued segment, the entries
// of the appended batches: the ones before are the kept prefix of the
// index the plan wrote) and replayed (producer state from the log start
// for a new log, from the plan's state at the destination's end for an
// append, as psm.Rebuild would reach it), so that after the commit only
// the committed files' identity is left to confirm: each must be the inode
// that was staged (or appended to) and verified, with the size and
// modification time it had then.
//
// A mirror that cuts the destination (Align), a resumed one, or anything
// that does not add up, leaves the check to Verify.
type stagedCheck struct {
	p *Plan
	// broken: a batch did not parse, or a segment's batches were out of
	// order; Verify decides.
	broken  bool
	walks   []*indexWalk
	replays []*segReplay    // the walks' replays, in the same order
	watched map[string]bool // .log ops whose batches were seen
	// ops are the plan's operations by file name (made at the first
	// WatchStaged): each segment's indexes are found at once, not by a
	// walk over every operation (quadratic over 10,000 segments).
	ops map[string]*edit.FileOp
}

// segReplay replays the copied batches of one written segment, as they
// are read back: from the producer state the plan held at its start, or
// carrying on from the replay of the segment read back before it.
type segReplay struct {
	m       *psm.Manager
	aborted []psm.AbortedTxn // those its ABORT markers complete
	first   int64            // base offset of the first batch seen (-1: none)
	next    int64            // offset after the last batch seen
	seen    int64            // batches seen
}

// newStagedCheck is the staged check of p, nil when p is not a mirror
// that only adds to its destination (into an empty one, or appending to
// one it does not cut) with the start state of every segment it writes.
func newStagedCheck(p *Plan) *stagedCheck {
	if p.Truncation != nil || p.Resume != nil || p.NothingToDo || p.segStates == nil {
		return nil
	}
	for _, op := range p.Ops {
		switch {
		case op.Action == edit.OpDelete && !strings.HasSuffix(op.Name, segment.SnapshotSuffix):
			// Only a cut deletes segment files.
			return nil
		case op.Action == edit.OpReplace && strings.HasSuffix(op.Name, segment.LogSuffix):
			return nil
		}
	}
	return &stagedCheck{p: p, watched: map[string]bool{}}
}

// WatchStaged gives the engine the batch check of a new segment's .log.
func (j *job) WatchStaged(op *edit.FileOp) func(pos int64, batch []byte) {
	sc := j.staged
	if sc == nil || sc.broken || (op.Action != edit.OpCreate && op.Action != edit.OpAppend) || op.KeepPrefix != 0 || len(op.Content) != 0 || sc.watched[op.Name] {
		if sc != nil {
			sc.broken = true
		}
		return nil
	}
	fi, ok := segment.ParseFileName(op.Name)
	if !ok || fi.Kind != segment.KindLog {
		sc.broken = true
		return nil
	}
	base := fi.Offset
	r := sc.startReplay(base)
	if r == nil {
		sc.broken = true
		return nil
	}
	idx, tidx, err := sc.indexesOf(op, base)
	if err != nil {
		sc.broken = true
		return nil
	}
	sc.watched[op.Name] = true
	w := &indexWalk{seg: segment.SegmentFiles{BaseOffset: base, Log: filepath.Join(sc.p.Dir, op.Name)}, c: segment.NewIndexCheckOf(idx, tidx)}
	if op.Action == edit.OpAppend {
		// The continued segment's kept entries: the plan keeps them as
		// they were (only the continued segment has any, as nothing is
		// cut).
		w.c.Skip(sc.p.Index.Kept, sc.p.TimeIndex.Kept)
	}
	sc.walks = append(sc.walks, w)
	sc.replays = append(sc.replays, r)
	return func(pos int64, raw []byte) { sc.readBack(r, w, pos, raw) }
}

// startReplay is the replay of the segment at base, from the state the
// plan held at its start or where the segment read back before it ended;
// nil when there is neither.
func (sc *stagedCheck) startReplay(base int64) *segReplay {
	switch start := sc.p.segStates[base]; {
	case start != nil:
		return &segReplay{first: -1, m: start.Clone()}
	case len(sc.replays) > 0 && sc.replays[len(sc.replays)-1].seen > 0:
		// The next new segment: its state is where the one read back
		// before it ended (the verdict checks they adjoin).
		return &segReplay{first: -1, m: sc.replays[len(sc.replays)-1].m}
	}
	return nil
}

// indexesOf are the offset and time index the plan leaves for the
// segment at base, whose .log op writes: the plan's content, or for an
// append, the file as the commit leaves it.
func (sc *stagedCheck) indexesOf(op *edit.FileOp, base int64) (*segment.OffsetIndex, *segment.TimeIndex, error) {
	if sc.ops == nil {
		sc.ops = make(map[string]*edit.FileOp, len(sc.p.Ops))
		for i := range sc.p.Ops {
			sc.ops[sc.p.Ops[i].Name] = &sc.p.Ops[i]
		}
	}
	var idx *segment.OffsetIndex
	var tidx *segment.TimeIndex
	// An appended index's Content is the appended entries alone: the
	// whole index is read from the file, appended to by now (a segment's
	// indexes are committed before its .log).
	if o := sc.ops[segment.SegmentFileName(base, segment.IndexSuffix)]; o != nil && o.Action != edit.OpAppend {
		x := segment.ParseOffsetIndex(o.Content, base)
		idx = &x
	}
	if o := sc.ops[segment.SegmentFileName(base, segment.TimeIndexSuffix)]; o != nil && o.Action != edit.OpAppend {
		x := segment.ParseTimeIndex(o.Content, base)
		tidx = &x
	}
	if op.Action != edit.OpAppend {
		return idx, tidx, nil
	}
	// An index the append leaves as it was (the appended batches added no
	// entry to it) is the file there.
	var err error
	if idx == nil {
		if idx, err = readIndex(sc.p.Dir, base); err != nil {
			return nil, nil, err
		}
	}
	if tidx == nil {
		if tidx, err = readTimeIndex(sc.p.Dir, base); err != nil {
			return nil, nil, err
		}
	}
	return idx, tidx, nil
}

// readBack checks one copied batch as the engine reads it back, at pos
// of its segment: against the segment's indexes (w) and through its
// replay (r).
func (sc *stagedCheck) readBack(r *segReplay, w *indexWalk, pos int64, raw []byte) {
	if sc.broken {
		return
	}
	b, err := decode.ParseBatch(raw)
	if err != nil || (r.first >= 0 && b.BaseOffset < r.next) {
		sc.broken = true
		return
	}
	if r.first < 0 {
		r.first = b.BaseOffset
	}
	r.next = b.NextOffset()
	w.c.Batch(pos, &b)
	w.end = pos + b.Size()
	n := len(r.m.Aborted())
	_ = r.m.ApplyBatch(&b)
	r.aborted = append(r.aborted, r.m.Aborted()[n:]...)
	r.seen++
}

// verdict is the verification from the staged read-back, ok false when
// Verify must read the destination instead: a segment not watched, a file
// that is not the one staged, a segment or log start offset the plan did
// not make.
func (sc *stagedCheck) verdict() (*Verification, bool) {
	if sc == nil || sc.broken {
		return nil, false
	}
	p := sc.p
	for i := range p.Ops {
		op := &p.Ops[i]
		if op.Action == edit.OpDelete {
			// The old end's producer snapshot: it must be gone.
			if _, err := os.Lstat(filepath.Join(p.Dir, op.Name)); !errors.Is(err, os.ErrNotExist) {
				return nil, false
			}
			continue
		}
		if op.Staged == nil {
			return nil, false
		}
		if fi, ok := segment.ParseFileName(op.Name); ok && fi.Kind != segment.KindLog && fi.Kind != segment.KindProducerSnapshot &&
			fi.Kind != segment.KindLeaderEpochCheckpoint && fi.Kind != segment.KindPartitionMetadata && sc.walkOf(fi.Offset) < 0 {
			// An index rewritten for a segment whose batches were not
			// read back (a continued segment the copy rolled away from
			// at once): only Verify checks it against its log.
			return nil, false
		}
		if len(op.Sources) > 0 && !sc.watched[op.Name] {
			return nil, false
		}
		st, err := os.Stat(filepath.Join(p.Dir, op.Name))
		if err != nil || !os.SameFile(st, op.Staged) || st.Size() != op.Staged.Size() || st.Size() != op.NewSize || !st.ModTime().Equal(op.Staged.ModTime()) {
			return nil, false
		}
	}
	pd, err := segment.OpenPartitionDir(p.Dir)
	if err != nil || len(pd.Segments) != p.DstSegments+len(p.SegmentsCreated) || len(pd.Segments) < len(sc.walks) {
		return nil, false
	}
	// The segments written are the last ones: the continued one (if any),
	// then the new ones, each read back whole and in order, one after the
	// other in the log.
	written := pd.Segments[len(pd.Segments)-len(sc.walks):]
	first, next, seen := int64(-1), int64(-1), int64(0)
	var aborted []psm.AbortedTxn
	for _, s := range written {
		w := sc.walkOf(s.BaseOffset)
		if w < 0 {
			return nil, false
		}
		r := sc.replays[w]
		if r.first < 0 || r.first < next {
			return nil, false
		}
		if first < 0 {
			first = r.first
		}
		next, seen = r.next, seen+r.seen
		aborted = append(aborted, r.aborted...)
	}
	if ls := logStartOf(pd); first < 0 || ls > first {
		return nil, false
	}
	v := &Verification{Compared: seen, IndexProblems: []string{}, TxnIndexProblems: []string{}}
	// Into an empty destination the copy starts at the source's first
	// batch; after an existing log, at the first batch at or above its
	// end (the source may have no batch at that very offset).
	firstOK := first == p.From
	if p.DstSegments > 0 {
		firstOK = first >= p.From
	}
	if seen != p.Copied.Batches || !firstOK || next != p.To {
		v.Mismatch = fmt.Sprintf("%d batches found in [%d, %d), %d copied", seen, p.From, p.To, p.Copied.Batches)
	}
	for _, s := range written {
		v.IndexProblems = append(v.IndexProblems, sc.walks[sc.walkOf(s.BaseOffset)].problems()...)
	}
	checkTxnIndexes(p, v, &psm.Result{Aborted: aborted}, written)
	return v, true
}

// readIndex is the offset index of segment base in dir, nil when there
// is none.
func readIndex(dir string, base int64) (*segment.OffsetIndex, error) {
	x, err := segment.ReadOffsetIndex(filepath.Join(dir, segment.SegmentFileName(base, segment.IndexSuffix)), base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return &x, err
}

// readTimeIndex is the time index of segment base in dir, nil when there
// is none.
func readTimeIndex(dir string, base int64) (*segment.TimeIndex, error) {
	x, err := segment.ReadTimeIndex(filepath.Join(dir, segment.SegmentFileName(base, segment.TimeIndexSuffix)), base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return &x, err
}

// walkOf is the index of the walk of the segment at base, -1 for none.
func (sc *stagedCheck) walkOf(base int64) int {
	for i, w := range sc.walks {
		if w.seg.BaseOffset == base {
			return i
		}
	}
	return -1
}
