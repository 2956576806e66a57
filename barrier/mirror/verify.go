package mirror

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// Verification is the read-back check of a mirror.
type Verification struct {
	// Compared counts the destination's batches in [From, To) compared
	// with the source's, every byte (partitionLeaderEpoch included).
	Compared int64 `json:"compared"`
	// Mismatch describes the first difference, "" when none.
	Mismatch string `json:"mismatch,omitempty"`
	// IndexProblems are kafka-dump-log --verify-index findings for the
	// segments the mirror wrote.
	IndexProblems []string `json:"indexProblems"`
	// TxnIndexProblems: the .txnindex entries of the written segments
	// differ from the aborted transactions a replay computes.
	TxnIndexProblems []string `json:"txnIndexProblems"`
}

// OK reports a clean verification.
func (v *Verification) OK() bool {
	return v.Mismatch == "" && len(v.IndexProblems) == 0 && len(v.TxnIndexProblems) == 0
}

// Verify reads a mirrored destination back: its batches in
// [p.From, p.To) must be the source's byte for byte, the offset and time
// indexes of every segment holding them must agree with the log, and their
// .txnindex entries must be what a producer-state replay computes.
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
	sHas := src.Next()
	for sHas && src.Batch().LastOffset() < p.From {
		sHas = src.Next()
	}
	touched := map[int64]segment.SegmentFiles{}
	for dst.Next() {
		b := dst.Batch()
		if b.BaseOffset < p.From {
			continue
		}
		if b.BaseOffset >= p.To {
			break
		}
		touched[dst.Segment().BaseOffset] = dst.Segment()
		if !sHas {
			v.Mismatch = fmt.Sprintf("%s position %d: batch at offset %d, beyond the source's end", dst.File(), dst.Pos(), b.BaseOffset)
			break
		}
		s := src.Batch()
		if s.BaseOffset != b.BaseOffset || !bytes.Equal(s.Raw, b.Raw) {
			v.Mismatch = fmt.Sprintf("%s position %d: batch at offset %d is not the source's batch at %s position %d",
				dst.File(), dst.Pos(), b.BaseOffset, src.File(), src.Pos())
			break
		}
		v.Compared++
		sHas = src.Next()
	}
	if err := dst.Err(); err != nil {
		return nil, err
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
	slices.SortFunc(segs, func(a, b segment.SegmentFiles) int { return int(a.BaseOffset - b.BaseOffset) })
	for _, s := range segs {
		probs, err := verifySegmentIndexes(s)
		if err != nil {
			return nil, err
		}
		v.IndexProblems = append(v.IndexProblems, probs...)
	}
	// The .txnindex entries of the copied range against a replay.
	o := psm.DefaultOptions()
	o.FromSnapshot = psm.SnapshotNone
	o.LogStartOffset = logStartOf(dst.pd)
	o.VerifyCRC = false
	r, err := psm.Rebuild(dst.pd, o)
	if err != nil {
		return nil, fmt.Errorf("replaying %s: %w", p.Dir, err)
	}
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
		v.TxnIndexProblems = append(v.TxnIndexProblems, fmt.Sprintf(".txnindex holds %d entries for [%d, %d), a replay computes %d", len(got), p.From, p.To, len(want)))
	}
	return v, nil
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
