package mirror

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// The relation VerifyEdge checks, for one mirror edge U → D (both partition
// directories of the same topic partition; barrier.md §9):
//
//	D = U[start, X)                   the mirrored region, byte for byte
//	    + ABORT markers (design 2)    D's STOPPING step, only if it failed over
//	    + MIRROR_PID_RESET at B       D's own barrier, only if it failed over
//	    + D's own writes from B+1     only after its barrier
//
// A D still mirroring has no barrier of its own and is a prefix of U.
// Barriers U holds are in U[start, X) and are mirrored like any batch.
// Failback is the same relation with the roles swapped, after the old
// source aligned its log by truncation.

// ChainOptions tune VerifyEdge and VerifyChain.
type ChainOptions struct {
	// StrictEpochs makes a partitionLeaderEpoch difference between a
	// mirrored batch and its upstream original an error. It is info by
	// default: partitionLeaderEpoch lies outside the CRC, and a mirror
	// that rewrites it still holds the same data.
	StrictEpochs bool
	// Progress, when set, is called with the bytes read as each edge's
	// walk reads both logs and as the downstream log is replayed (every
	// MiB or so): an edge reads its upstream's .log segments once and its
	// downstream's twice at most. The caller draws it.
	Progress func(n int64)
}

// Edge statuses.
const (
	// EdgeInSync: D holds exactly U's batches, to U's end.
	EdgeInSync = "in-sync"
	// EdgeLagging: D is a proper prefix of U, a mirror still catching up.
	EdgeLagging = "lagging"
	// EdgeFailedOver: D holds a prefix of U, then its own barrier (after
	// ABORT markers, in design 2), then only its own writes.
	EdgeFailedOver = "failed-over"
	// EdgeDiverged: none of the above; the findings say where and how.
	EdgeDiverged = "diverged"
)

// OffsetRange is [Start, End); empty when Start >= End.
type OffsetRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Len is the number of offsets in the range.
func (r OffsetRange) Len() int64 { return max(0, r.End-r.Start) }

func (r OffsetRange) String() string { return fmt.Sprintf("[%d, %d)", r.Start, r.End) }

// EdgeBarrier is D's own barrier.
type EdgeBarrier struct {
	Offset   int64  `json:"offset"`
	File     string `json:"file"`
	Position int64  `json:"position"`
	// Aborts are the offsets of the ABORT markers D wrote just before it
	// (design 2), empty in design 1.
	Aborts []int64 `json:"aborts"`
	// PartitionLeaderEpoch is the barrier's.
	PartitionLeaderEpoch int32 `json:"partitionLeaderEpoch"`
	// ProducersCleared is how many producers a replay of D drops at it.
	ProducersCleared int `json:"producersCleared"`
}

// MirroredBarrier is a barrier of U found (byte for byte) in D's mirrored
// region, with what it clears in a replay of D.
type MirroredBarrier struct {
	Offset           int64 `json:"offset"`
	ProducersCleared int   `json:"producersCleared"`
	Applied          bool  `json:"applied"`
}

// AvertedAnomaly is a producer-state anomaly that a replay of D shows
// only when its barriers are ignored: what the barriers prevented.
type AvertedAnomaly struct {
	Kind       finding.Kind `json:"kind"`
	Offset     int64        `json:"offset"`
	ProducerID int64        `json:"producerId"`
}

// EdgeReport is VerifyEdge's account of one edge.
type EdgeReport struct {
	Upstream   string `json:"upstream"`
	Downstream string `json:"downstream"`
	// UpstreamLog and DownstreamLog are each log's [log start, log end).
	UpstreamLog   OffsetRange `json:"upstreamLog"`
	DownstreamLog OffsetRange `json:"downstreamLog"`
	Status        string      `json:"status"`
	// Mirrored is the region where D's batches are U's, byte for byte.
	Mirrored        OffsetRange `json:"mirrored"`
	BatchesCompared int64       `json:"batchesCompared"`
	// Barrier is D's own barrier; nil when D has none (still mirroring, or
	// diverged without one).
	Barrier *EdgeBarrier `json:"barrier,omitempty"`
	// Local is D's own writes after its barrier (empty without one).
	Local OffsetRange `json:"local"`
	// Lag is U's end minus D's end for a mirror still catching up.
	Lag int64 `json:"lag"`
	// MirroredBarriers are U's barriers in the mirrored region.
	MirroredBarriers []MirroredBarrier `json:"mirroredBarriers"`
	// ProducersReused are producer ids D holds on both sides of a barrier
	// (its own or a mirrored one): ids two clusters handed out
	// independently.
	ProducersReused []int64 `json:"producersReused"`
	// CollisionsAverted counts the pid-collision anomalies a replay of D
	// reports only with its barriers ignored; Averted lists every anomaly
	// of that replay that the barriers prevent.
	CollisionsAverted int              `json:"collisionsAverted"`
	Averted           []AvertedAnomaly `json:"averted"`
	// InheritedAnomalies counts producer-state errors inside the mirrored
	// region: they are U's, copied as they are.
	InheritedAnomalies int `json:"inheritedAnomalies"`
	// EpochDifferences counts mirrored batches whose partitionLeaderEpoch
	// differs from U's.
	EpochDifferences int64 `json:"epochDifferences"`
	// Findings are the edge's (mismatch, missing-barrier, gap …; the
	// verify-chain rows of docs/troubleshooting.md) and the anomalies of
	// D's producer-state replay under their own kinds (pid-collision,
	// stale-snapshot …). File and Position locate the batch in D
	// (Position -1 when unknown, and for snapshot findings File is the
	// snapshot); UpstreamFile and UpstreamPosition locate U's batch at the
	// same offset when there is one.
	Findings []finding.Finding `json:"findings"`
}

// OK reports an edge without error findings.
func (r *EdgeReport) OK() bool { return !finding.HasErrors(r.Findings) }

// Errors counts the error findings.
func (r *EdgeReport) Errors() int { return finding.Errors(r.Findings) }

// ChainReport is VerifyChain's account of a topology.
type ChainReport struct {
	Dirs  []string      `json:"dirs"`
	Edges []*EdgeReport `json:"edges"`
}

// OK reports a topology whose every edge is OK.
func (r *ChainReport) OK() bool {
	for _, e := range r.Edges {
		if !e.OK() {
			return false
		}
	}
	return true
}

// VerifyChain checks each edge {u, d} (indexes into dirs) with VerifyEdge.
// Without edges it checks each consecutive pair: dirs[0]→dirs[1],
// dirs[1]→dirs[2], … (a chain). A dir may be a digest file (OpenNode).
func VerifyChain(dirs []string, edges [][2]int, opts ChainOptions) (*ChainReport, error) {
	nodes := make([]Node, len(dirs))
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.Close()
			}
		}
	}()
	for i, d := range dirs {
		n, err := OpenNode(d)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
	}
	return VerifyChainNodes(nodes, edges, opts)
}

// VerifyChainNodes is VerifyChain over open nodes.
func VerifyChainNodes(nodes []Node, edges [][2]int, opts ChainOptions) (*ChainReport, error) {
	dirs := make([]string, len(nodes))
	for i, n := range nodes {
		dirs[i] = n.Name()
	}
	if len(dirs) < 2 {
		return nil, &edit.OptionError{Option: "edge", Detail: "a topology needs at least two partition directories"}
	}
	if len(edges) == 0 {
		for i := 0; i+1 < len(dirs); i++ {
			edges = append(edges, [2]int{i, i + 1})
		}
	}
	rep := &ChainReport{Dirs: dirs}
	for _, e := range edges {
		for _, i := range e {
			if i < 0 || i >= len(dirs) {
				return nil, &edit.OptionError{Option: "edge", Detail: fmt.Sprintf("directory %d is not among the %d given", i+1, len(dirs))}
			}
		}
		if e[0] == e[1] {
			return nil, &edit.OptionError{Option: "edge", Detail: fmt.Sprintf("%s mirrors itself", dirs[e[0]])}
		}
		r, err := VerifyEdgeNodes(nodes[e[0]], nodes[e[1]], opts)
		if err != nil {
			return nil, err
		}
		rep.Edges = append(rep.Edges, r)
	}
	return rep, nil
}

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

// VerifyEdge checks that downstream is a mirror of upstream (see the
// relation above): it streams both logs batch by batch in lockstep,
// classifies where and how D stops being U, checks D's own barrier, and
// replays D's producer state with and without its barriers. Either may be
// a digest file instead of a partition directory (OpenNode). Findings are
// in the report; the error is a *edit.RefusalError for a directory that is not
// a partition, a *digest.FormatError for a digest that cannot be read,
// else I/O.
func VerifyEdge(upstream, downstream string, opts ChainOptions) (*EdgeReport, error) {
	un, err := OpenNode(upstream)
	if err != nil {
		return nil, err
	}
	defer un.Close()
	dn, err := OpenNode(downstream)
	if err != nil {
		return nil, err
	}
	defer dn.Close()
	return VerifyEdgeNodes(un, dn, opts)
}

// VerifyEdgeNodes is VerifyEdge over open nodes: the same checks whether
// each is a partition directory or a digest of one.
func VerifyEdgeNodes(un, dn Node, opts ChainOptions) (*EdgeReport, error) {
	h := un.hashKind()
	if k := dn.hashKind(); h == 0 {
		h = k
	} else if k != 0 && k != h {
		return nil, fmt.Errorf("%s (%s) and %s (%s): %w", un.Name(), h, dn.Name(), k, ErrHashMismatch)
	}
	u, err := un.open()
	if err != nil {
		return nil, err
	}
	defer u.Close()
	d, err := dn.open()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	u.setProgress(opts.Progress)
	d.setProgress(opts.Progress)
	rep := &EdgeReport{Upstream: un.Name(), Downstream: dn.Name(), MirroredBarriers: []MirroredBarrier{}, ProducersReused: []int64{},
		Averted: []AvertedAnomaly{}, Findings: []finding.Finding{}}
	uEnd, err := un.logEnd()
	if err != nil {
		return nil, err
	}
	dEnd, err := dn.logEnd()
	if err != nil {
		return nil, err
	}
	rep.UpstreamLog = OffsetRange{Start: max(u.Start(), 0), End: max(uEnd, 0)}
	rep.DownstreamLog = OffsetRange{Start: max(d.Start(), 0), End: max(dEnd, 0)}
	w := &edgeWalk{opts: opts, rep: rep, un: un, dn: dn, u: u, d: d, h: h, pidEra: map[int64]int{}, reused: map[int64]bool{}, ownFrom: -1}
	rp := w.startReplays()
	if err := w.walkMapped(); err != nil {
		if rp != nil {
			rp.wg.Wait()
		}
		return nil, err
	}
	if err := w.producerState(rp); err != nil {
		return nil, err
	}
	for pid := range w.reused {
		rep.ProducersReused = append(rep.ProducersReused, pid)
	}
	slices.Sort(rep.ProducersReused)
	// D's segments whose offsets run into the next segment's: the walk
	// meets the next segment's batches as going backwards (reordered),
	// which says where, not why. (A digest holds no segment files.)
	if dn.Digest() == nil {
		overlaps, err := segment.SegmentOverlaps(dn.replayDir())
		if err != nil {
			return nil, err
		}
		for _, o := range overlaps {
			f := o.Finding()
			f.File = filepath.Base(o.Log)
			rep.Findings = append(rep.Findings, f)
		}
	}
	slices.SortStableFunc(rep.Findings, func(a, b finding.Finding) int { return cmp.Compare(a.Offset, b.Offset) })
	if rep.Status == EdgeDiverged || !rep.OK() {
		rep.Status = EdgeDiverged
	}
	return rep, nil
}

// walkMapped runs walk over mapped segments (no copy out of the page
// cache): a segment truncated under the walk faults, which becomes an
// error instead of a crash.
func (w *edgeWalk) walkMapped() (err error) {
	w.u.setMmap(true)
	w.d.setMmap(true)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			err = fmt.Errorf("%s or %s changed while it was read (truncated by a broker?): %v", w.rep.Upstream, w.rep.Downstream, e)
		}
	}()
	return w.walk()
}

func (w *edgeWalk) walk() error {
	rep, u, d := w.rep, w.u, w.d
	start := max(u.Start(), d.Start())
	rep.Mirrored = OffsetRange{Start: start, End: start}
	if d.Start() < u.Start() && rep.DownstreamLog.End > d.Start() {
		w.add(finding.Finding{Kind: finding.NotCompared, Offset: d.Start(), ProducerID: -1, Position: -1,
			Message: fmt.Sprintf("D holds offsets from %d but U's log starts at %d (retention or DeleteRecords on U): offsets below %d are not compared",
				d.Start(), u.Start(), u.Start())})
	}
	// Both cursors to the first batch that ends at or after start.
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

	// Phase 1: the mirrored region, batch for batch.
	var firstEpoch *finding.Finding
	for w.dHas {
		if w.uHas && w.offsetChanged() {
			break
		}
		if !w.monotonic() {
			break
		}
		if !w.uHas {
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
	if w.prev != nil && w.prev.next() > start {
		rep.Mirrored.End = w.prev.next()
	}
	if firstEpoch != nil {
		if rep.EpochDifferences > 1 {
			firstEpoch.Message += fmt.Sprintf("; %d mirrored batches differ in partitionLeaderEpoch, this is the first", rep.EpochDifferences)
		}
		w.add(*firstEpoch)
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
	x := rep.Mirrored.End
	first := d.Batch()
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
	var aborts []int64
	for w.dHas && isAbortMarker(d.Batch()) {
		if !w.monotonic() {
			rep.Status = EdgeDiverged
			return
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

	// D's own writes.
	rep.Local = OffsetRange{Start: r.base + 1, End: max(rep.DownstreamLog.End, r.base+1)}
	firstLocal := true
	for w.dHas {
		if !w.monotonic() {
			rep.Status = EdgeDiverged
			return
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
}

// anomalyKey identifies an anomaly across two replays.
type anomalyKey struct {
	kind   finding.Kind
	offset int64
	pid    int64
}

// replays are D's producer-state replays: the one honouring its
// barriers starts before the walk (it reads D on its own and needs nothing
// from it) and runs beside it.
type replays struct {
	wg      sync.WaitGroup
	opts    psm.Options
	with    *psm.Result
	errWith error
}

// startReplays starts the replay of D honouring its barriers (nil: D has
// no segment).
func (w *edgeWalk) startReplays() *replays {
	pd := w.dn.replayDir()
	if !slices.ContainsFunc(pd.Segments, func(s segment.SegmentFiles) bool { return s.Log != "" }) {
		return nil
	}
	o := psm.DefaultOptions()
	o.FromSnapshot = psm.SnapshotNone
	o.LogStartOffset = w.dn.logStartCheckpoint()
	o.Source = w.dn.source()
	rp := &replays{opts: o}
	rp.wg.Add(1)
	go func() {
		defer rp.wg.Done()
		honoured := o // the replay that counts towards the progress line
		honoured.Progress = w.opts.Progress
		rp.with, rp.errWith = psm.Rebuild(pd, honoured)
	}()
	return rp
}

// without replays D as if it held no barrier, for the anomalies its
// barriers avert. Only sequence and epoch anomalies are taken from it, so
// it skips the CRC checks (a mismatch is reported, never acted on, by a
// replay). A replay that met no barrier is its own replay without
// barriers (Manager.applyBarrier is the only step IgnoreBarriers changes),
// so none is made then.
func (rp *replays) without(pd *segment.PartitionDir) (*psm.Result, error) {
	if len(rp.with.Barriers) == 0 {
		return rp.with, nil
	}
	o := rp.opts
	o.IgnoreBarriers, o.VerifyCRC = true, false
	return psm.Rebuild(pd, o)
}

// producerState replays D with its barriers honoured and ignored (item 4
// of the relation), reports what the honoured replay finds in D's own
// region, what the barriers avert, stale snapshots, and whether every
// mirrored barrier clears D's state.
func (w *edgeWalk) producerState(rp *replays) error {
	rep, pd := w.rep, w.dn.replayDir()
	if rp == nil {
		return nil
	}
	rp.wg.Wait()
	with := rp.with
	if err := rp.errWith; err != nil {
		return fmt.Errorf("replaying %s: %w", w.dn.Name(), err)
	}
	without, err := rp.without(pd)
	if err != nil {
		return fmt.Errorf("replaying %s without barriers: %w", w.dn.Name(), err)
	}
	cleared := map[int64]int{}
	for _, b := range with.Barriers {
		cleared[b.Offset] = b.ProducersCleared
	}
	for i := range rep.MirroredBarriers {
		mb := &rep.MirroredBarriers[i]
		n, ok := cleared[mb.Offset]
		mb.ProducersCleared, mb.Applied = n, ok
		if !ok {
			w.add(finding.Finding{Kind: finding.BarrierNotApplied, Offset: mb.Offset, ProducerID: -1, Position: -1,
				Message: fmt.Sprintf("the barrier at %d, mirrored from U, does not clear D's producer state in a replay of D", mb.Offset)})
		}
	}
	if rep.Barrier != nil {
		rep.Barrier.ProducersCleared = cleared[rep.Barrier.Offset]
	}
	own := w.ownFrom
	if own < 0 {
		own = rep.Mirrored.End
		if rep.Status == EdgeInSync || rep.Status == EdgeLagging {
			own = max(rep.DownstreamLog.End, own) // D has nothing of its own
		}
	}
	seen := map[anomalyKey]bool{}
	var located int
	for _, a := range with.Anomalies {
		seen[anomalyKey{a.Kind, a.Offset, a.ProducerID}] = true
		switch a.Kind {
		case finding.StaleSnapshot, finding.SnapshotCorrupt:
			w.add(finding.Finding{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID,
				File: segment.SegmentFileName(a.Offset, segment.SnapshotSuffix), Position: -1, UpstreamPosition: -1, Message: a.Message})
			continue
		case finding.HangingTransaction, finding.OpenTransaction, finding.ZeroTail, finding.BarrierIgnored, finding.MarkerWithoutTxn, finding.ExpiredOnLoad,
			finding.SnapshotIgnored, finding.CorruptLog:
			// Not about the mirror relation (an open transaction at the end
			// of a mirror is normal; damage is reported by the walk).
			continue
		}
		if a.Severity() == finding.Info {
			continue
		}
		if a.Offset < own {
			if a.Kind == finding.OpenTxnAtBarrier {
				w.add(finding.Finding{Kind: finding.MirroredOpenTxnAtBarrier, Offset: a.Offset, ProducerID: a.ProducerID, Position: -1, UpstreamPosition: -1,
					Message: "mirrored from U: " + a.Message})
			} else if a.Severity() == finding.Error {
				rep.InheritedAnomalies++
			}
			continue
		}
		f := finding.Finding{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID, Position: -1, UpstreamPosition: -1, Message: a.Message}
		if located < 64 {
			if file, pos, ok := w.dn.locate(a.Offset); ok {
				f.File, f.Position = file, pos
			}
			located++
		}
		w.add(f)
	}
	for _, a := range without.Anomalies {
		switch a.Kind {
		case finding.PIDCollision, finding.EpochRegression, finding.SequenceGap, finding.DuplicateSequence,
			finding.NonTxnInOpenTxn, finding.UnknownTxnCompletion:
		default:
			continue
		}
		if seen[anomalyKey{a.Kind, a.Offset, a.ProducerID}] {
			continue
		}
		rep.Averted = append(rep.Averted, AvertedAnomaly{Kind: a.Kind, Offset: a.Offset, ProducerID: a.ProducerID})
		if a.Kind == finding.PIDCollision {
			rep.CollisionsAverted++
		}
	}
	return nil
}
