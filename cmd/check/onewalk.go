package check

import (
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/scan"
)

// One read of each partition. The engine's walk over a .log is the only
// pass kseg check makes over its bytes: the segment's .index and
// .timeindex are verified from it (scan.Options.VerifyIndexesInWalk), and
// checkWalk, the walk's scan.Observer, records the batches' headers (and
// control batches' bytes) in a psm.Walk, from which the producer-state
// replay (replay-psm --check-snapshots) reads instead of the files.
//
// Only the scanner's first run is used, up to the first structural
// damage: that is where the broker's recovery, and so the replay, stops
// reading a segment. A partition with more than checkWalkBudget batches
// is replayed from its files for the segments past the budget: memory
// stays bounded, and a large segment's second pass is a mapped walk over
// headers only.

// checkWalkBudget is how many batches a partition's walk records.
const checkWalkBudget = 1 << 16

type checkWalk struct {
	walk   *psm.Walk
	budget int

	cur     string // the .log being read
	segment bool   // it is a segment of the partition
	rec     psm.WalkSegment
	dropped bool // its record went over the budget
}

// newCheckWalk observes a run's walk into walk (emptied first).
func newCheckWalk(walk *psm.Walk) *checkWalk {
	walk.Reset()
	return &checkWalk{walk: walk, budget: checkWalkBudget}
}

// begin starts on .log f.
func (w *checkWalk) begin(f scan.File) {
	w.cur, w.dropped = f.Path, false
	w.segment = f.Info.Kind == segment.KindLog && !f.Info.Transient()
	if w.segment {
		w.rec = w.walk.Segment(f.Path)
	}
}

func (w *checkWalk) Batch(f scan.File, run int, pos int64, b *decode.Batch) {
	if f.Path != w.cur {
		w.begin(f)
	}
	if run != 0 || !w.segment {
		return
	}
	switch {
	case w.dropped:
	case w.budget == 0:
		w.dropped = true
		w.walk.Drop(f.Path)
	default:
		w.rec.Add(pos, b)
		w.budget--
	}
}

func (w *checkWalk) RunEnd(f scan.File, run int, t segment.Tail) {
	if f.Path != w.cur {
		w.begin(f) // a log without a batch
	}
	if run != 0 || !w.segment {
		return
	}
	if !w.dropped {
		w.rec.End(t)
	}
}
