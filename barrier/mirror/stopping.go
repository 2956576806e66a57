// Where D stops being U, and what it holds from there: the edge's status
// (in sync, lagging, failed over, diverged), D's STOPPING step (ABORT
// markers, then its MIRROR_PID_RESET barrier) and its own writes after it.

package mirror

import (
	"fmt"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// classify looks at D from the end of the mirrored region on.
func (w *edgeWalk) classify() {
	rep, u, d := w.rep, w.u, w.d
	x := rep.Mirrored.End
	if !w.dHas {
		if w.d.damage() != nil {
			rep.Status = EdgeDiverged
			return
		}
		if !w.uHas && u.damage() == nil {
			rep.Status = EdgeInSync
			return
		}
		rep.Status = EdgeLagging
		rep.Lag = max(0, rep.UpstreamLog.End-max(rep.DownstreamLog.End, x))
		return
	}
	db := d.Batch()
	w.ownFrom = db.BaseOffset
	if barrier.Is(db) || isAbortMarker(db) {
		w.stopping()
		return
	}
	rep.Status = EdgeDiverged
	if !w.uHas {
		if w.olderUpstreamDigest(db.BaseOffset) {
			return
		}
		w.add(w.dFinding(finding.BeyondUpstreamEnd, db.BaseOffset,
			"D holds data from offset %d, at or beyond U's end %d, with no MIRROR_PID_RESET barrier before it: D took writes without failing over",
			db.BaseOffset, rep.UpstreamLog.End))
		return
	}
	ub := u.Batch()
	switch {
	case db.BaseOffset == ub.BaseOffset:
		i, located := diffBatches(d, u, w.h)
		// Positions name the first differing byte in each log.
		f := w.dFinding(finding.Mismatch, db.BaseOffset, "")
		f.Position = d.Pos() + int64(i)
		f.UpstreamFile, f.UpstreamPosition = u.File(), u.Pos()+int64(i)
		where := fmt.Sprintf("first difference at byte %d of the batch (%s position %d in D, %s position %d in U)",
			i, d.File(), d.Pos()+int64(i), u.File(), u.Pos()+int64(i))
		if !located {
			where = fmt.Sprintf("first difference at or after byte %d of the batch, in its records (%s position %d in D, %s position %d in U): a digest holds their hash, not their bytes",
				i, d.File(), d.Pos()+int64(i), u.File(), u.Pos()+int64(i))
		}
		dOK, uOK := d.crcValid(), u.crcValid()
		switch {
		case !dOK || !uOK:
			bad := "D's batch fails its CRC"
			if !uOK {
				bad = "U's batch fails its CRC"
				if !dOK {
					bad = "both batches fail their CRC"
				}
			}
			f.Message = fmt.Sprintf("batch at offset %d differs between D and U: %s; %s", db.BaseOffset, bad, where)
		default:
			f.Kind = finding.MissingBarrier
			f.Message = fmt.Sprintf("D's batch at offset %d is not U's (producerId %d in D, %d in U; both pass their CRC) and no MIRROR_PID_RESET barrier precedes it: D took writes without failing over; %s",
				db.BaseOffset, db.ProducerID, ub.ProducerID, where)
		}
		w.add(f)
	case db.BaseOffset > ub.BaseOffset:
		w.skipped(x)
	default:
		f := w.dFinding(finding.Mismatch, db.BaseOffset,
			"D holds offsets %d..%d where U has none (U's next batch starts at %d): D's batch is not U's, and no MIRROR_PID_RESET barrier precedes it",
			db.BaseOffset, db.LastOffset(), ub.BaseOffset)
		f.UpstreamFile, f.UpstreamPosition = u.File(), u.Pos()
		w.add(f)
	}
}

// skipped handles D's batch starting above U's batch at the same point:
// D lacks U's offsets from ub. It tells a reordered pair (the missing
// batch follows in D) from a gap (D continues with U's later batches) and
// from a batch that is not U's at all.
func (w *edgeWalk) skipped(x int64) {
	u, d := w.u, w.d
	ub := u.Batch()
	missing := ub.BaseOffset
	uFile, uPos := u.File(), u.Pos()
	first := refOf(d)
	firstBatch := saveBatch(d, w.h)
	w.dHas = d.Next()
	if w.dHas && d.Batch().BaseOffset < first.base {
		b := d.Batch()
		f := w.dFinding(finding.Reordered, b.BaseOffset,
			"D's batch with offsets %d..%d (%s position %d) comes after the batch with offsets %d..%d (%s position %d); U has them in order",
			b.BaseOffset, b.LastOffset(), d.File(), d.Pos(), first.base, first.last, first.file, first.pos)
		if b.BaseOffset == missing {
			f.UpstreamFile, f.UpstreamPosition = uFile, uPos
		}
		w.add(f)
		return
	}
	// Does D go on with U's later batches? Move U to D's batch.
	for w.uHas && u.Batch().LastOffset() < first.base {
		w.uHas = u.Next()
	}
	if w.uHas && u.Batch().BaseOffset == first.base && sameAs(firstBatch, u, w.h) {
		w.add(finding.Finding{Kind: finding.Gap, Offset: missing, ProducerID: -1, File: first.file, Position: first.pos,
			UpstreamFile: uFile, UpstreamPosition: uPos,
			Message: fmt.Sprintf("D lacks offsets %d..%d that U holds (from %s position %d): D's next batch, at %s position %d, is U's batch at offset %d",
				missing, first.base-1, uFile, uPos, first.file, first.pos, first.base)})
		return
	}
	w.add(finding.Finding{Kind: finding.Mismatch, Offset: missing, ProducerID: -1, File: first.file, Position: first.pos,
		UpstreamFile: uFile, UpstreamPosition: uPos,
		Message: fmt.Sprintf("where U's batch at offset %d is (%s position %d), D has a batch with offsets %d..%d that is not U's (%s position %d)",
			missing, uFile, uPos, first.base, first.last, first.file, first.pos)})
}

// stopping checks D's STOPPING step (ABORT markers, then its barrier) and
// what follows it.
func (w *edgeWalk) stopping() {
	rep, d := w.rep, w.d
	w.stoppingGap(d.Batch())
	aborts, ok := w.abortMarkers()
	if !ok {
		rep.Status = EdgeDiverged
		return
	}
	if !w.dHas || !barrier.Is(d.Batch()) {
		rep.Status = EdgeDiverged
		at, pos, file := int64(-1), int64(-1), ""
		if w.prev != nil {
			at, file, pos = w.prev.next(), w.prev.file, w.prev.pos
		}
		if w.dHas {
			b := d.Batch()
			at, file, pos = b.BaseOffset, d.File(), d.Pos()
		}
		w.add(finding.Finding{Kind: finding.MissingBarrier, Offset: at, ProducerID: -1, File: file, Position: pos, UpstreamPosition: -1,
			Message: fmt.Sprintf("D wrote %d ABORT marker(s) from offset %d (the STOPPING step of design 2) but no MIRROR_PID_RESET barrier follows them", len(aborts), aborts[0])})
		return
	}
	if !w.monotonic() {
		rep.Status = EdgeDiverged
		return
	}
	b := d.Batch()
	if len(aborts) > 0 && b.BaseOffset > w.prev.next() {
		w.add(w.dFinding(finding.Gap, b.BaseOffset, "offsets %d..%d are missing between the last ABORT marker (%d) and the barrier at %d",
			w.prev.next(), b.BaseOffset-1, w.prev.base, b.BaseOffset))
	}
	rep.Status = EdgeFailedOver
	rep.Barrier = &EdgeBarrier{Offset: b.BaseOffset, File: d.File(), Position: d.Pos(), Aborts: aborts, PartitionLeaderEpoch: b.PartitionLeaderEpoch}
	if rep.Barrier.Aborts == nil {
		rep.Barrier.Aborts = []int64{}
	}
	for _, p := range barrier.ValidateBatch(b.Raw) {
		w.add(w.dFinding(finding.MalformedBarrier, b.BaseOffset, "D's barrier is not a well-formed MIRROR_PID_RESET batch: %s", p))
	}
	w.era++
	r := refOf(d)
	w.setPrev(r)
	w.nextD() // b now points at the next batch
	if !w.ownWrites(r) {
		rep.Status = EdgeDiverged
	}
}

// stoppingGap reports offsets missing between the mirrored region and the
// first batch of D's STOPPING step: the step appends at the log end.
func (w *edgeWalk) stoppingGap(first *decode.Batch) {
	x := w.rep.Mirrored.End
	if w.prev != nil && first.BaseOffset > w.prev.next() || w.prev == nil && first.BaseOffset > x {
		from := x
		if w.prev != nil {
			from = w.prev.next()
		}
		what := "the barrier"
		if !barrier.Is(first) {
			what = "the first ABORT marker"
		}
		w.add(w.dFinding(finding.Gap, first.BaseOffset,
			"offsets %d..%d are missing between the mirrored region (which ends at %d) and %s at %d: the STOPPING step appends at the log end",
			from, first.BaseOffset-1, from, what, first.BaseOffset))
	}
}

// abortMarkers walks the ABORT markers of design 2's STOPPING step and
// returns their offsets; false when D goes backwards among them.
func (w *edgeWalk) abortMarkers() ([]int64, bool) {
	d := w.d
	var aborts []int64
	for w.dHas && isAbortMarker(d.Batch()) {
		if !w.monotonic() {
			return aborts, false
		}
		b := d.Batch()
		if len(aborts) > 0 && b.BaseOffset > w.prev.next() {
			w.add(w.dFinding(finding.Gap, b.BaseOffset, "offsets %d..%d are missing between the ABORT markers at %d and %d",
				w.prev.next(), b.BaseOffset-1, w.prev.base, b.BaseOffset))
		}
		aborts = append(aborts, b.BaseOffset)
		w.notePID(b)
		w.setPrev(refOf(d))
		w.nextD()
	}
	return aborts, true
}

// ownWrites walks D's own writes after its barrier r; false when D goes
// backwards among them.
func (w *edgeWalk) ownWrites(r batchRef) bool {
	rep, d := w.rep, w.d
	rep.Local = OffsetRange{Start: r.base + 1, End: max(rep.DownstreamLog.End, r.base+1)}
	firstLocal := true
	for w.dHas {
		if !w.monotonic() {
			return false
		}
		lb := d.Batch()
		if firstLocal && lb.BaseOffset > w.prev.next() {
			w.add(w.dFinding(finding.Gap, lb.BaseOffset, "offsets %d..%d are missing between D's barrier at %d and its first own batch at %d",
				w.prev.next(), lb.BaseOffset-1, w.prev.base, lb.BaseOffset))
		}
		firstLocal = false
		if barrier.Is(lb) {
			w.era++
		}
		w.notePID(lb)
		w.setPrev(refOf(d))
		w.nextD()
	}
	return true
}
