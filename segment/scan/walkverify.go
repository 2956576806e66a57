package scan

import (
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Verifying a segment's indexes in the walk over its log
// (Options.VerifyIndexesInWalk). With VerifyIndex, a run verifies an
// .index or .timeindex when it reaches the file, in a walk over the
// segment's .log of its own (entries.go). kseg check makes one read of
// each partition: indexWalk verifies both indexes of a segment from the
// batches of the walk that reads its .log (segment.IndexVerifier: the
// checks of segment.VerifyIndexes) and stashes the problems for the run to
// report when it reaches those files.
//
// Only the scanner's first run is used, up to the first structural
// damage. A segment whose first run ends on damage the run reads past (a
// corrupt or torn batch) is verified by a walk of its own, which
// resynchronises exactly as segment.VerifyIndexes does.
type indexWalk struct {
	st *Run

	cur     string // the .log being read
	segment bool   // it is a segment of a partition
	ver     *segment.IndexVerifier
	idx     *segment.OffsetIndex
	tidx    *segment.TimeIndex
}

// begin starts on .log f: reads the indexes the run will verify later in
// this Files call, for the verifier.
func (w *indexWalk) begin(f File) {
	w.cur, w.ver, w.idx, w.tidx = f.Path, nil, nil, nil
	w.segment = f.Info.Kind == segment.KindLog && !f.Info.Transient()
	if !w.segment {
		return
	}
	dir := filepath.Dir(f.Path)
	if p, ok := w.st.later[filepath.Join(dir, segment.SegmentFileName(f.Info.Offset, segment.IndexSuffix))]; ok {
		if idx, err := segment.ReadOffsetIndex(p, f.Info.Offset); err == nil {
			w.idx = &idx
		}
	}
	if p, ok := w.st.later[filepath.Join(dir, segment.SegmentFileName(f.Info.Offset, segment.TimeIndexSuffix))]; ok {
		if tidx, err := segment.ReadTimeIndex(p, f.Info.Offset); err == nil {
			w.tidx = &tidx
		}
	}
	if w.idx != nil || w.tidx != nil {
		w.ver = segment.NewIndexVerifier(w.idx, w.tidx, segment.VerifyOptions{})
	}
}

func (w *indexWalk) batch(f File, run int, pos int64, b *decode.Batch) {
	if f.Path != w.cur {
		w.begin(f)
	}
	if run == 0 && w.ver != nil {
		w.ver.Batch(pos, b)
	}
}

func (w *indexWalk) runEnd(f File, run int, t segment.Tail) {
	if f.Path != w.cur {
		w.begin(f) // a log without a batch
	}
	if run != 0 || !w.segment {
		return
	}
	if w.ver == nil || t.Kind == segment.TailCorrupt || t.Kind == segment.TailTornBatch {
		w.ver = nil
		return
	}
	probs := w.ver.Problems()
	w.ver = nil
	if w.idx != nil {
		w.st.stashVerified(w.idx.Path, stash(true, w.idx.Entries, nil, w.idx.Length, w.idx.Path, probs))
	}
	if w.tidx != nil {
		w.st.stashVerified(w.tidx.Path, stash(false, nil, w.tidx.Entries, w.tidx.Length, w.tidx.Path, probs))
	}
}

// stash keeps the problems of probs about the index at path, as it was
// read (its entries and length).
func stash(index bool, offsets []segment.IndexEntry, entries []segment.TimeIndexEntry, length int64, path string, probs []segment.IndexProblem) *stashedVerify {
	sv := &stashedVerify{index: index, offsets: offsets, entries: entries, length: length, probs: []segment.IndexProblem{}}
	for _, pr := range probs {
		if pr.Path == path {
			sv.probs = append(sv.probs, pr)
		}
	}
	return sv
}

// stashVerified keeps sv for the index at path, to be reported when the
// run reaches it.
func (st *Run) stashVerified(path string, sv *stashedVerify) {
	if st.verified == nil {
		st.verified = map[string]*stashedVerify{}
	}
	st.verified[path] = sv
}
