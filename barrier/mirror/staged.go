package mirror

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// stagedCheck is Verify's work on a mirror into an empty destination,
// done on the staging read-back (edit.StageWatcher) instead of on the
// committed files: the engine reads every copied batch of the staged
// segments back once, after their fsync has begun, compares it with the
// source byte for byte and checks its CRC; here each is also checked
// against the offset and time index the plan stages for its segment
// (segment.IndexCheck, as Verify does) and replayed (producer state from
// the log start, as psm.Rebuild does), so that after the commit only the
// committed files' identity is left to confirm: each must be the inode
// that was staged and verified (a rename moves it whole), with the size
// and modification time it had then.
//
// A destination that already held a log (an incremental mirror, Align),
// or anything that does not add up, leaves the check to Verify.
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
// into an empty destination.
func newStagedCheck(p *Plan) *stagedCheck {
	if p.AppendSegment >= 0 || p.Truncation != nil || p.DstSegments != 0 || p.Resume != nil || p.NothingToDo {
		return nil
	}
	return &stagedCheck{p: p, watched: map[string]bool{}, m: psm.NewManager(psm.DefaultOptions()), first: -1}
}

// WatchStaged gives the engine the batch check of a new segment's .log.
func (j *job) WatchStaged(op *edit.FileOp) func(pos int64, batch []byte) {
	sc := j.staged
	if sc == nil || sc.broken || op.Action != edit.OpCreate || op.KeepPrefix != 0 || len(op.Content) != 0 || sc.watched[op.Name] {
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
	sc.watched[op.Name] = true
	w := &indexWalk{seg: segment.SegmentFiles{BaseOffset: base, Log: filepath.Join(sc.p.Dir, op.Name)}, c: segment.NewIndexCheckOf(idx, tidx)}
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
		if op.Action != edit.OpCreate || op.Staged == nil {
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
	if err != nil || len(pd.Segments) != len(sc.walks) {
		return nil, false
	}
	for i, s := range pd.Segments {
		if s.BaseOffset != sc.walks[i].seg.BaseOffset {
			return nil, false
		}
	}
	if ls := logStartOf(pd); sc.first < 0 || ls > sc.first {
		return nil, false
	}
	v := &Verification{Compared: sc.seen, IndexProblems: []string{}, TxnIndexProblems: []string{}}
	if sc.seen != p.Copied.Batches || sc.first != p.From || sc.next != p.To {
		v.Mismatch = fmt.Sprintf("%d batches found in [%d, %d), %d copied", sc.seen, p.From, p.To, p.Copied.Batches)
	}
	for _, w := range sc.walks {
		v.IndexProblems = append(v.IndexProblems, w.problems()...)
	}
	checkTxnIndexes(p, v, &psm.Result{Aborted: sc.m.Aborted()}, pd.Segments)
	return v, true
}
