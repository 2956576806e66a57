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
	// broken: a batch did not parse, or the logs were staged out of
	// order; Verify decides.
	broken  bool
	walks   []*indexWalk
	watched map[string]bool // .log ops whose batches were seen
	m       *psm.Manager
	first   int64 // base offset of the first batch seen (-1: none)
	next    int64 // offset after the last batch seen
	seen    int64 // batches seen
}

// newStagedCheck is the staged check of p, nil when p is not a mirror
// into an empty destination nor one that appends without cutting.
func newStagedCheck(p *Plan) *stagedCheck {
	if p.Truncation != nil || p.Resume != nil || p.NothingToDo {
		return nil
	}
	var m *psm.Manager
	switch {
	case p.AppendSegment < 0 && p.DstSegments == 0:
		m = psm.NewManager(psm.DefaultOptions())
	case p.dstEndState != nil:
		m = p.dstEndState.Clone()
	default:
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
	return &stagedCheck{p: p, watched: map[string]bool{}, m: m, first: -1}
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
	var idx *segment.OffsetIndex
	var tidx *segment.TimeIndex
	for i := range sc.p.Ops {
		o := &sc.p.Ops[i]
		switch o.Name {
		case segment.SegmentFileName(base, segment.IndexSuffix):
			x := segment.ParseOffsetIndex(o.Content, base)
			idx = &x
		case segment.SegmentFileName(base, segment.TimeIndexSuffix):
			x := segment.ParseTimeIndex(o.Content, base)
			tidx = &x
		}
	}
	if op.Action == edit.OpAppend {
		// An index the append leaves as it was (the appended batches
		// added no entry to it) is the file there.
		var err error
		if idx == nil {
			if idx, err = readIndex(sc.p.Dir, base); err != nil {
				sc.broken = true
				return nil
			}
		}
		if tidx == nil {
			if tidx, err = readTimeIndex(sc.p.Dir, base); err != nil {
				sc.broken = true
				return nil
			}
		}
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
	return func(pos int64, raw []byte) {
		if sc.broken {
			return
		}
		b, err := decode.ParseBatch(raw)
		if err != nil || (sc.first >= 0 && b.BaseOffset < sc.next) {
			sc.broken = true
			return
		}
		if sc.first < 0 {
			sc.first = b.BaseOffset
		}
		sc.next = b.NextOffset()
		w.c.Batch(pos, &b)
		w.end = pos + b.Size()
		_ = sc.m.ApplyBatch(&b)
		sc.seen++
	}
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
	// then the new ones.
	written := pd.Segments[len(pd.Segments)-len(sc.walks):]
	for i, s := range written {
		if s.BaseOffset != sc.walks[i].seg.BaseOffset {
			return nil, false
		}
	}
	if ls := logStartOf(pd); sc.first < 0 || ls > sc.first {
		return nil, false
	}
	v := &Verification{Compared: sc.seen, IndexProblems: []string{}, TxnIndexProblems: []string{}}
	// Into an empty destination the copy starts at the source's first
	// batch; after an existing log, at the first batch at or above its
	// end (the source may have no batch at that very offset).
	firstOK := sc.first == p.From
	if p.DstSegments > 0 {
		firstOK = sc.first >= p.From
	}
	if sc.seen != p.Copied.Batches || !firstOK || sc.next != p.To {
		v.Mismatch = fmt.Sprintf("%d batches found in [%d, %d), %d copied", sc.seen, p.From, p.To, p.Copied.Batches)
	}
	for _, w := range sc.walks {
		v.IndexProblems = append(v.IndexProblems, w.problems()...)
	}
	checkTxnIndexes(p, v, &psm.Result{Aborted: sc.m.Aborted()}, written)
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
