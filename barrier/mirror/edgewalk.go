// The walk of one edge U → D: both logs in lockstep, batch for batch,
// through the mirrored region, with the checks every batch of D passes
// (monotonic offsets, a baseOffset changed outside the CRC).

package mirror

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime/debug"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/finding"
)

// batchRef is what the walk keeps of a batch after its cursor moved on.
type batchRef struct {
	base, last int64
	file       string
	pos, size  int64
}

// cursorAt is a cursor at a batch: a logCursor, a chainCursor.
type cursorAt interface {
	Batch() *decode.Batch
	File() string
	Pos() int64
}

func refOf(c cursorAt) batchRef {
	b := c.Batch()
	return batchRef{base: b.BaseOffset, last: b.LastOffset(), file: c.File(), pos: c.Pos(), size: b.Size()}
}

func (r batchRef) next() int64 { return r.last + 1 }

// sameBatch compares two whole batches over everything but
// partitionLeaderEpoch (bytes 12..15 of a v2 batch, outside the CRC): the
// CRC-covered bytes, baseOffset, batchLength and magic. It returns -1 when
// they match, else the index of the first differing byte (the shorter
// length when one is a prefix of the other).
func sameBatch(a, b []byte) int {
	// The common case, equal batches, at memory speed; the byte loop only
	// finds where unequal ones differ.
	if len(a) == len(b) {
		if len(a) > 16 && a[16] >= 2 {
			if bytes.Equal(a[:12], b[:12]) && bytes.Equal(a[16:], b[16:]) {
				return -1
			}
		} else if bytes.Equal(a, b) {
			return -1
		}
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] && !(i >= 12 && i < 16 && len(a) > 16 && a[16] >= 2) {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

// isAbortMarker reports a transaction marker of type ABORT.
func isAbortMarker(b *decode.Batch) bool {
	if !b.IsTransactional() {
		return false
	}
	t, ok := barrier.ControlTypeOf(b)
	return ok && t == decode.ControlAbort
}

// edgeWalk is one VerifyEdge run.
type edgeWalk struct {
	opts    ChainOptions
	rep     *EdgeReport
	un, dn  Node
	u, d    chainCursor
	h       digest.Hash // the hash batches are compared by (a digest's)
	uHas    bool
	dHas    bool
	prev    *batchRef // D's last batch walked (&prevBuf, or nil)
	prevBuf batchRef
	era     int // barriers (mirrored or own) met in D so far
	pidEra  map[int64]int
	reused  map[int64]bool
	// ownFrom is the first offset of D's own data (its STOPPING batches or
	// writes); anomalies from there on are D's, below it U's. -1 while
	// unknown.
	ownFrom int64
	// stopped: a structural finding ended the walk.
	stopped bool
}

// setPrev makes r D's last batch walked (kept in the walk, not
// allocated per batch).
func (w *edgeWalk) setPrev(r batchRef) {
	w.prevBuf = r
	w.prev = &w.prevBuf
}

func (w *edgeWalk) add(f finding.Finding) {
	if f.UpstreamFile == "" {
		f.UpstreamPosition = -1
	}
	w.rep.Findings = append(w.rep.Findings, f)
}

// dFinding is a finding of kind at D's current batch.
func (w *edgeWalk) dFinding(kind finding.Kind, offset int64, format string, args ...any) finding.Finding {
	return finding.Finding{Kind: kind, Offset: offset, ProducerID: -1, File: w.d.File(), Position: w.d.Pos(),
		UpstreamPosition: -1, Message: fmt.Sprintf(format, args...)}
}

// sameButOffset reports two batches equal in every byte but baseOffset
// (and partitionLeaderEpoch, as sameBatch).
func sameButOffset(a, b []byte) bool {
	if len(a) != len(b) || len(a) < decode.HeaderSizeUpToMagic {
		return false
	}
	x := append(append([]byte(nil), b[:8]...), a[8:]...)
	return sameBatch(x, b) < 0
}

// notePID tracks producer ids across barriers for ProducersReused.
func (w *edgeWalk) notePID(b *decode.Batch) {
	if !b.HasProducerID() {
		return
	}
	if e, ok := w.pidEra[b.ProducerID]; ok && e < w.era {
		w.reused[b.ProducerID] = true
	}
	w.pidEra[b.ProducerID] = w.era
}

func (w *edgeWalk) nextD() {
	w.dHas = w.d.Next()
}

// offsetChanged reports (with a finding) D's batch that is U's current
// batch in every byte but its baseOffset: a changed byte in a field the
// CRC does not cover.
func (w *edgeWalk) offsetChanged() bool {
	db, ub := w.d.Batch(), w.u.Batch()
	if db.BaseOffset == ub.BaseOffset || !sameButOffsetV(w.d, w.u, w.h) {
		return false
	}
	i, _ := diffBatches(w.d, w.u, w.h)
	f := w.dFinding(finding.Mismatch, ub.BaseOffset,
		"D's batch is U's batch at offset %d except for its baseOffset, which reads %d (a changed byte outside the CRC); first difference at byte %d of the batch",
		ub.BaseOffset, db.BaseOffset, i)
	f.Position = w.d.Pos() + int64(i)
	f.UpstreamFile, f.UpstreamPosition = w.u.File(), w.u.Pos()+int64(i)
	w.add(f)
	if w.ownFrom < 0 {
		w.ownFrom = ub.BaseOffset
	}
	w.stopped = true
	return true
}

// monotonic checks D's current batch against the one before it; false
// (with a finding) when it starts before the previous one ends.
func (w *edgeWalk) monotonic() bool {
	if w.prev == nil {
		return true
	}
	b := w.d.Batch()
	if b.BaseOffset >= w.prev.next() {
		return true
	}
	if w.ownFrom < 0 {
		w.ownFrom = b.BaseOffset
	}
	if b.BaseOffset <= w.prev.base {
		w.add(w.dFinding(finding.Reordered, b.BaseOffset,
			"D's batch with offsets %d..%d comes after the batch with offsets %d..%d (%s position %d): offsets go backwards",
			b.BaseOffset, b.LastOffset(), w.prev.base, w.prev.last, w.prev.file, w.prev.pos))
	} else {
		w.add(w.dFinding(finding.Overlap, b.BaseOffset,
			"D's batch with offsets %d..%d starts inside the batch before it, offsets %d..%d (%s position %d)",
			b.BaseOffset, b.LastOffset(), w.prev.base, w.prev.last, w.prev.file, w.prev.pos))
	}
	w.stopped = true
	return false
}

// walkMapped runs walk over mapped segments (no copy out of the page
// cache): a segment truncated under the walk faults, which becomes an
// error instead of a crash.
func (w *edgeWalk) walkMapped() (err error) {
	w.u.setMmap(true)
	w.d.setMmap(true)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer changedWhileRead(&err, w.rep.Upstream, w.rep.Downstream)
	return w.walk()
}

// walk compares D with U from the later of their log starts: the
// mirrored region batch for batch, then where and how D leaves it.
func (w *edgeWalk) walk() error {
	rep, u, d := w.rep, w.u, w.d
	start := max(u.Start(), d.Start())
	rep.Mirrored = OffsetRange{Start: start, End: start}
	w.toStart(start)
	w.mirrored()
	if w.prev != nil && w.prev.next() > start {
		rep.Mirrored.End = w.prev.next()
	}
	if err := cmp.Or(u.Err(), d.Err()); err != nil {
		return err
	}
	if !w.stopped {
		w.classify()
	}
	if err := cmp.Or(u.Err(), d.Err()); err != nil {
		return err
	}
	w.damage()
	return nil
}

// toStart moves both cursors to the first batch that ends at or after
// start, reporting what D holds below U's log start (not compared) or a D
// that ends below it (a gap).
func (w *edgeWalk) toStart(start int64) {
	rep, u, d := w.rep, w.u, w.d
	if d.Start() < u.Start() && rep.DownstreamLog.End > d.Start() {
		w.add(finding.Finding{Kind: finding.NotCompared, Offset: d.Start(), ProducerID: -1, Position: -1,
			Message: fmt.Sprintf("D holds offsets from %d but U's log starts at %d (retention or DeleteRecords on U): offsets below %d are not compared",
				d.Start(), u.Start(), u.Start())})
	}
	w.dHas = d.Next()
	for w.dHas && d.Batch().LastOffset() < start {
		w.notePID(d.Batch())
		w.setPrev(refOf(d))
		w.dHas = d.Next()
	}
	w.uHas = u.Next()
	for w.uHas && u.Batch().LastOffset() < start {
		w.uHas = u.Next()
	}
	if !w.dHas && rep.DownstreamLog.End < u.Start() && !w.olderDownstreamDigest(u.Start()) {
		// D ends before U starts: the offsets between are gone from U, and
		// D can never mirror on.
		w.add(finding.Finding{Kind: finding.Gap, Offset: rep.DownstreamLog.End, ProducerID: -1, Position: -1,
			Message: fmt.Sprintf("D ends at %d, below U's log start %d: offsets %d..%d are gone from U, so D cannot mirror on (it must restart at U's log start)",
				rep.DownstreamLog.End, u.Start(), rep.DownstreamLog.End, u.Start()-1)})
	}
}

// mirrored walks the mirrored region, batch for batch, while D's batch is
// U's (partitionLeaderEpoch aside: the first difference in it is one
// finding, counting the others), noting the barriers mirrored from U.
func (w *edgeWalk) mirrored() {
	rep, u, d := w.rep, w.u, w.d
	var firstEpoch *finding.Finding
	for w.dHas {
		if w.uHas && w.offsetChanged() {
			break
		}
		if !w.monotonic() || !w.uHas {
			break
		}
		db, ub := d.Batch(), u.Batch()
		if db.BaseOffset != ub.BaseOffset {
			break
		}
		if i, _ := diffBatches(d, u, w.h); i >= 0 {
			break
		}
		if db.PartitionLeaderEpoch != ub.PartitionLeaderEpoch {
			rep.EpochDifferences++
			if firstEpoch == nil {
				kind := finding.LeaderEpoch
				if w.opts.StrictEpochs {
					kind = finding.LeaderEpochMismatch
				}
				f := w.dFinding(kind, db.BaseOffset, "partitionLeaderEpoch %d in D, %d in U (outside the CRC; the data is the same)",
					db.PartitionLeaderEpoch, ub.PartitionLeaderEpoch)
				f.UpstreamFile, f.UpstreamPosition = u.File(), u.Pos()
				firstEpoch = &f
			}
		}
		if barrier.Is(ub) {
			w.era++
			rep.MirroredBarriers = append(rep.MirroredBarriers, MirroredBarrier{Offset: ub.BaseOffset})
		}
		w.notePID(db)
		rep.BatchesCompared++
		w.setPrev(refOf(d))
		w.dHas = d.Next()
		w.uHas = u.Next()
	}
	if firstEpoch != nil {
		if rep.EpochDifferences > 1 {
			firstEpoch.Message += fmt.Sprintf("; %d mirrored batches differ in partitionLeaderEpoch, this is the first", rep.EpochDifferences)
		}
		w.add(*firstEpoch)
	}
}

// damage reports a damaged tail in either log that the walk reached.
func (w *edgeWalk) damage() {
	if dm := w.d.damage(); dm != nil {
		w.add(finding.Finding{Kind: finding.CorruptLog, Offset: dm.Offset, ProducerID: -1, File: dm.File, Position: dm.Position,
			Message: "D: " + dm.Message + "; nothing after it was compared"})
	}
	if dm := w.u.damage(); dm != nil {
		w.add(finding.Finding{Kind: finding.CorruptLog, Offset: dm.Offset, ProducerID: -1, Position: -1,
			UpstreamFile: dm.File, UpstreamPosition: dm.Position, Message: "U: " + dm.Message + "; nothing after it was compared"})
	}
}

// changedWhileRead, deferred by a read of mapped segments of the
// partitions a and b (with debug.SetPanicOnFault on), turns the memory
// fault of a segment truncated under the read (by a broker) into *err
// instead of a crash; any other panic goes on.
func changedWhileRead(err *error, a, b string) {
	if e := recover(); e != nil {
		if _, ok := e.(interface{ Addr() uintptr }); !ok {
			panic(e)
		}
		*err = fmt.Errorf("%s or %s changed while it was read (truncated by a broker?): %v", a, b, e)
	}
}
