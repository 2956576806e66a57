package mirror

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/plural"
)

// Verification is the read-back check of a mirror.
type Verification struct {
	// Compared counts the destination's batches in [From, To) compared
	// with the source's, every byte (partitionLeaderEpoch included): in
	// the committed files, or, for a mirror into an empty destination, in
	// the staged files the commit renamed into place (stagedCheck).
	Compared int64
	// Mismatch describes the first difference, "" when none.
	Mismatch string
	// IndexProblems are kafka-dump-log --verify-index findings for the
	// segments the mirror wrote.
	IndexProblems []string
	// TxnIndexProblems: the .txnindex entries of the written segments
	// differ from the aborted transactions a replay computes.
	TxnIndexProblems []string
}

// OK reports a clean verification.
func (v *Verification) OK() bool {
	return v.Mismatch == "" && len(v.IndexProblems) == 0 && len(v.TxnIndexProblems) == 0
}

// Verify reads a mirrored destination back: its batches in
// [p.From, p.To) must be the source's byte for byte, the offset and time
// indexes of every segment holding them must agree with the log, and their
// .txnindex entries must be what a producer-state replay computes.
//
// The destination is read once for the comparison and the indexes: the
// segments the plan wrote have their indexes checked (segment.IndexCheck)
// against the very batches the comparison reads. The replay
// (psm.Rebuild) reads it on a second goroutine meanwhile.
func Verify(p *Plan) (*Verification, error) {
	v := &Verification{IndexProblems: []string{}, TxnIndexProblems: []string{}}
	src, err := openCursor(p.Src)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := openCursor(p.Dir)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	replayed := make(chan replayResult, 1)
	go func() {
		o := psm.DefaultOptions()
		o.FromSnapshot = psm.SnapshotNone
		o.LogStartOffset = logStartOf(dst.pd)
		o.VerifyCRC = false
		o.ReadSegments = true
		r, err := psm.Rebuild(dst.pd, o)
		replayed <- replayResult{r, err}
	}()
	rp := replayResult{err: errNotReplayed}
	defer func() {
		if rp.err == errNotReplayed {
			<-replayed
		}
	}()
	segs, checks, err := compareWritten(p, v, src, dst)
	if err != nil {
		return nil, err
	}
	for _, s := range segs {
		var probs []string
		if w := checks[s.BaseOffset]; w != nil && dst.Damage == nil {
			probs = w.problems()
		} else {
			// A segment the plan did not write, or a damaged log: the
			// full check, which resynchronises past damage.
			if probs, err = verifySegmentIndexes(s); err != nil {
				return nil, err
			}
		}
		v.IndexProblems = append(v.IndexProblems, probs...)
	}
	rp = <-replayed
	if rp.err != nil {
		return nil, fmt.Errorf("replaying %s: %w", p.Dir, rp.err)
	}
	checkTxnIndexes(p, v, rp.r, segs)
	return v, nil
}

// replayResult is what Verify's replay of the destination gives.
type replayResult struct {
	r   *psm.Result
	err error
}

// errNotReplayed marks a replay Verify has not waited for yet.
var errNotReplayed = errors.New("not replayed yet")

// compareWritten walks the destination, comparing its batches in
// [p.From, p.To) with the source's (the first difference is
// v.Mismatch) and feeding every batch of the segments the plan wrote to
// their index checks. It returns the segments holding compared batches
// (and the one Align cut), in order, and the index checks by base offset.
func compareWritten(p *Plan, v *Verification, src, dst *logCursor) ([]segment.SegmentFiles, map[int64]*indexWalk, error) {
	written := map[int64]bool{p.AppendSegment: p.AppendSegment >= 0}
	for _, s := range p.SegmentsCreated {
		written[s] = true
	}
	if tr := p.Truncation; tr != nil {
		written[tr.Segment] = true
	}
	checks := map[int64]*indexWalk{}
	var check *indexWalk
	sHas := src.Next()
	for sHas && src.Batch().LastOffset() < p.From {
		sHas = src.Next()
	}
	touched := map[int64]segment.SegmentFiles{}
	comparing := true
	for dst.Next() {
		b := dst.Batch()
		seg := dst.Segment()
		if check == nil || check.seg.BaseOffset != seg.BaseOffset {
			check = nil
			if written[seg.BaseOffset] && checks[seg.BaseOffset] == nil {
				c, err := segment.NewIndexCheck(seg)
				if err != nil {
					return nil, nil, err
				}
				check = &indexWalk{seg: seg, c: c}
				checks[seg.BaseOffset] = check
			}
		}
		if check != nil {
			check.c.Batch(dst.Pos(), b)
			check.end = dst.Pos() + b.Size()
		}
		if !comparing || b.BaseOffset < p.From {
			continue
		}
		if b.BaseOffset >= p.To {
			comparing = false
			continue
		}
		touched[seg.BaseOffset] = seg
		if !sHas {
			v.Mismatch = fmt.Sprintf("%s position %d: batch at offset %d, beyond the source's end", dst.File(), dst.Pos(), b.BaseOffset)
			comparing = false
			continue
		}
		s := src.Batch()
		if s.BaseOffset != b.BaseOffset || !bytes.Equal(s.Raw, b.Raw) {
			v.Mismatch = fmt.Sprintf("%s position %d: batch at offset %d is not the source's batch at %s position %d",
				dst.File(), dst.Pos(), b.BaseOffset, src.File(), src.Pos())
			comparing = false
			continue
		}
		v.Compared++
		sHas = src.Next()
	}
	if err := dst.Err(); err != nil {
		return nil, nil, err
	}
	if v.Mismatch == "" && p.Copied.Batches != v.Compared {
		v.Mismatch = fmt.Sprintf("%d batches found in [%d, %d), %d copied", v.Compared, p.From, p.To, p.Copied.Batches)
	}
	var segs []segment.SegmentFiles
	for _, s := range touched {
		segs = append(segs, s)
	}
	if tr := p.Truncation; tr != nil {
		if s, ok := dst.pd.Segment(tr.Segment); ok {
			if _, dup := touched[s.BaseOffset]; !dup {
				segs = append(segs, s)
			}
		}
	}
	slices.SortFunc(segs, func(a, b segment.SegmentFiles) int { return cmp.Compare(a.BaseOffset, b.BaseOffset) })
	return segs, checks, nil
}

// checkTxnIndexes compares the .txnindex entries of segs for the copied
// range with the aborted transactions the replay r computes there.
func checkTxnIndexes(p *Plan, v *Verification, r *psm.Result, segs []segment.SegmentFiles) {
	var want, got []segment.AbortedTxn
	for _, t := range r.Aborted {
		if t.LastOffset >= p.From && t.LastOffset < p.To {
			want = append(want, segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: t.ProducerID,
				FirstOffset: t.FirstOffset, LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset})
		}
	}
	for _, s := range segs {
		if s.TxnIndex == "" {
			continue
		}
		x, err := segment.ReadTxnIndex(s.TxnIndex)
		if err != nil {
			v.TxnIndexProblems = append(v.TxnIndexProblems, err.Error())
			continue
		}
		for _, t := range x.Entries {
			if t.LastOffset >= p.From && t.LastOffset < p.To {
				got = append(got, t)
			}
		}
	}
	if !slices.Equal(want, got) {
		v.TxnIndexProblems = append(v.TxnIndexProblems, fmt.Sprintf(".txnindex holds %s for [%d, %d), a replay computes %d", plural.N(len(got), "entry"), p.From, p.To, len(want)))
	}
}

// indexWalk is the index check of one written segment, fed the batches
// Verify's walk reads.
type indexWalk struct {
	seg segment.SegmentFiles
	c   *segment.IndexCheck
	end int64 // the end of the last batch fed
}

// problems are the segment's index problems, each prefixed with the
// segment (as verifySegmentIndexes words them): the first of each file.
func (w *indexWalk) problems() []string {
	idx, tidx := w.c.Verdict(w.end, false)
	var out []string
	name := filepath.Base(w.seg.Log)
	if idx.Problem != "" {
		out = append(out, name+": "+segment.IndexSuffix+": "+idx.Problem)
	}
	if tidx.Problem != "" {
		out = append(out, name+": "+segment.TimeIndexSuffix+": "+tidx.Problem)
	}
	return out
}

// verifySegmentIndexes is segment.VerifySegmentIndexes, each problem
// prefixed with the segment it is about.
func verifySegmentIndexes(s segment.SegmentFiles) ([]string, error) {
	probs, err := segment.VerifySegmentIndexes(s)
	for i, p := range probs {
		probs[i] = filepath.Base(s.Log) + ": " + p
	}
	return probs, err
}
