package cmd

import (
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// One read of each partition. dump's walk over a .log is the only pass
// kseg check makes over its bytes: checkWalk, the walk's batchObserver,
// hands each batch to the other checks that need it —
//
//   - the segment's .index and .timeindex are verified from it
//     (segment.IndexVerifier: the checks of segment.VerifyIndexes, which
//     dump --verify-index runs in a walk of its own) and the problems
//     stashed for dump to report when it reaches those files;
//   - the batches' headers (and control batches' bytes) are recorded in a
//     psm.Walk, from which the producer-state replay (replay-psm
//     --check-snapshots) reads instead of the files.
//
// Only the scanner's first run is used, up to the first structural
// damage: that is where the broker's recovery, and so the replay, stops
// reading a segment. A segment whose first run ends on damage that dump
// reads past (a corrupt or torn batch) is verified by dump's own walk,
// which resynchronises exactly as segment.VerifyIndexes does. A partition
// with more than checkWalkBudget batches is replayed from its files for
// the segments past the budget: memory stays bounded, and a large
// segment's second pass is a mapped walk over headers only.

// checkWalkBudget is how many batches a partition's walk records.
const checkWalkBudget = 1 << 16

type checkWalk struct {
	st     *dumpState
	walk   *psm.Walk
	budget int

	cur     string // the .log being read
	segment bool   // it is a segment of the partition
	rec     psm.WalkSegment
	dropped bool // its record went over the budget
	ver     *segment.IndexVerifier
	idx     *segment.OffsetIndex
	tidx    *segment.TimeIndex
}

// newCheckWalk observes st's walk into walk (emptied first).
func newCheckWalk(st *dumpState, walk *psm.Walk) *checkWalk {
	walk.Reset()
	return &checkWalk{st: st, walk: walk, budget: checkWalkBudget}
}

// begin starts on .log f: reads the indexes dump will verify later in
// this run, for the verifier.
func (w *checkWalk) begin(f dumpFile) {
	w.cur, w.dropped, w.ver, w.idx, w.tidx = f.path, false, nil, nil, nil
	w.segment = f.info.Kind == segment.KindLog && !f.info.Transient()
	if w.segment {
		w.rec = w.walk.Segment(f.path)
	}
	if !w.segment || !w.st.o.verifyIndex {
		return
	}
	dir := filepath.Dir(f.path)
	if p, ok := w.st.later[filepath.Join(dir, segment.SegmentFileName(f.info.Offset, segment.IndexSuffix))]; ok {
		if idx, err := segment.ReadOffsetIndex(p, f.info.Offset); err == nil {
			w.idx = &idx
		}
	}
	if p, ok := w.st.later[filepath.Join(dir, segment.SegmentFileName(f.info.Offset, segment.TimeIndexSuffix))]; ok {
		if tidx, err := segment.ReadTimeIndex(p, f.info.Offset); err == nil {
			w.tidx = &tidx
		}
	}
	if w.idx != nil || w.tidx != nil {
		w.ver = segment.NewIndexVerifier(w.idx, w.tidx, segment.VerifyOptions{})
	}
}

func (w *checkWalk) batch(f dumpFile, run int, pos int64, b *decode.Batch) {
	if f.path != w.cur {
		w.begin(f)
	}
	if run != 0 || !w.segment {
		return
	}
	if w.ver != nil {
		w.ver.Batch(pos, b)
	}
	switch {
	case w.dropped:
	case w.budget == 0:
		w.dropped = true
		w.walk.Drop(f.path)
	default:
		w.rec.Add(pos, b)
		w.budget--
	}
}

func (w *checkWalk) runEnd(f dumpFile, run int, t segment.Tail) {
	if f.path != w.cur {
		w.begin(f) // a log without a batch
	}
	if run != 0 || !w.segment {
		return
	}
	if !w.dropped {
		w.rec.End(t)
	}
	if w.ver == nil || t.Kind == segment.TailCorrupt || t.Kind == segment.TailTornBatch {
		w.ver = nil
		return
	}
	probs := w.ver.Problems()
	w.ver = nil
	if w.st.verified == nil {
		w.st.verified = map[string]*stashedVerify{}
	}
	if w.idx != nil {
		sv := &stashedVerify{index: true, offsets: w.idx.Entries, length: w.idx.Length, probs: []segment.IndexProblem{}}
		for _, pr := range probs {
			if pr.Path == w.idx.Path {
				sv.probs = append(sv.probs, pr)
			}
		}
		w.st.verified[w.idx.Path] = sv
	}
	if w.tidx != nil {
		sv := &stashedVerify{entries: w.tidx.Entries, length: w.tidx.Length, probs: []segment.IndexProblem{}}
		for _, pr := range probs {
			if pr.Path == w.tidx.Path {
				sv.probs = append(sv.probs, pr)
			}
		}
		w.st.verified[w.tidx.Path] = sv
	}
}
