package psm

import (
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Walk is the batches of a partition's segments as another pass over the
// log framed them: a replay given one (Options.Walk) takes a segment's
// batches from it instead of reading the segment again. kseg check
// records the walk its dump makes, so that every check reads each log
// once. Only what a replay uses is kept: each batch's header and
// position, the bytes of control batches (their record is decoded), and
// where the segment's scan stopped — the first structural damage, where
// the broker's recovery stops too (LogSegment.recover). A segment the
// Walk does not hold is read from its file.
//
// Segments are recorded one after the other into one array, which Reset
// keeps for the next partition: a worker checking thousands of
// partitions allocates it once.
type Walk struct {
	segs     map[string]*walkSegment
	batches  []walkBatch
	controls map[int][]byte // the bytes of the control batches, by index in batches
}

type walkSegment struct {
	w        *Walk
	from, to int // batches[from:to]
	tail     segment.Tail
	ended    bool
}

// walkBatch is a batch's position and header, without pointers: the
// collector does not scan the array.
type walkBatch struct {
	pos                  int64
	baseOffset           int64
	baseTimestamp        int64
	maxTimestamp         int64
	producerID           int64
	crc                  uint32
	batchLength          int32
	partitionLeaderEpoch int32
	lastOffsetDelta      int32
	baseSequence         int32
	recordCount          int32
	attributes           int16
	producerEpoch        int16
	magic                int8
}

// NewWalk is an empty walk.
func NewWalk() *Walk { return &Walk{segs: map[string]*walkSegment{}, controls: map[int][]byte{}} }

// Reset empties the walk, keeping its memory.
func (w *Walk) Reset() {
	clear(w.segs)
	clear(w.controls)
	w.batches = w.batches[:0]
}

// Len is how many batches the walk holds.
func (w *Walk) Len() int { return len(w.batches) }

// WalkSegment records one segment's batches.
type WalkSegment struct{ s *walkSegment }

// Segment starts the record of the segment log (its path), replacing any
// earlier one. The segment before it must be complete: a walk records
// one segment at a time.
func (w *Walk) Segment(log string) WalkSegment {
	s := &walkSegment{w: w, from: len(w.batches), to: len(w.batches)}
	w.segs[filepath.Clean(log)] = s
	return WalkSegment{s}
}

// Add records batch b at pos, in log order.
func (ws WalkSegment) Add(pos int64, b *decode.Batch) {
	w := ws.s.w
	if b.IsControl() {
		w.controls[len(w.batches)] = append([]byte(nil), b.Raw...)
	}
	w.batches = append(w.batches, walkBatch{pos: pos, baseOffset: b.BaseOffset, baseTimestamp: b.BaseTimestamp,
		maxTimestamp: b.MaxTimestamp, producerID: b.ProducerID, crc: b.CRC, batchLength: b.BatchLength,
		partitionLeaderEpoch: b.PartitionLeaderEpoch, lastOffsetDelta: b.LastOffsetDelta, baseSequence: b.BaseSequence,
		recordCount: b.RecordCount, attributes: b.Attributes, producerEpoch: b.ProducerEpoch, magic: b.Magic})
	ws.s.to = len(w.batches)
}

// End records where the scan stopped (segment.Scanner.Tail): the segment
// is complete in the walk from then on.
func (ws WalkSegment) End(t segment.Tail) { ws.s.tail, ws.s.ended = t, true }

// Drop forgets log: the replay reads it from its file.
func (w *Walk) Drop(log string) { delete(w.segs, filepath.Clean(log)) }

// segment is the complete record of log, or nil.
func (w *Walk) segment(log string) *walkSegment {
	if w == nil {
		return nil
	}
	if s := w.segs[filepath.Clean(log)]; s != nil && s.ended {
		return s
	}
	return nil
}

// batch sets b to the segment's i-th batch as the scanner gave it (Raw
// only for a control batch).
func (s *walkSegment) batch(i int, b *decode.Batch) {
	w := &s.w.batches[s.from+i]
	*b = decode.Batch{BaseOffset: w.baseOffset, BatchLength: w.batchLength, PartitionLeaderEpoch: w.partitionLeaderEpoch,
		Magic: w.magic, CRC: w.crc, Attributes: w.attributes, LastOffsetDelta: w.lastOffsetDelta, BaseTimestamp: w.baseTimestamp,
		MaxTimestamp: w.maxTimestamp, ProducerID: w.producerID, ProducerEpoch: w.producerEpoch, BaseSequence: w.baseSequence,
		RecordCount: w.recordCount, Raw: s.w.controls[s.from+i]}
}

func (s *walkSegment) len() int { return s.to - s.from }

// readsFrom reports whether a read of the segment from offset start gives the
// recorded batches. A read from the segment's base does: it starts at
// position 0, as the walk did. A read from inside it starts at an index
// entry's position (startPosition, as LogSegment.translateOffset), which
// may lie past damage where the walk stopped: then only a segment the
// walk read to its end (a clean or zero-filled tail) gives the same
// batches.
func (s *walkSegment) readsFrom(start, base int64) bool {
	return start <= base || s.tail.Kind == segment.TailClean || s.tail.Kind == segment.TailZeroFilled
}

// end is the offset after the last batch, at least base: the segment's
// next offset (LogSegment.readNextOffset).
func (s *walkSegment) end(base int64) int64 {
	var b decode.Batch
	for i := range s.len() {
		s.batch(i, &b)
		base = max(base, b.NextOffset())
	}
	return base
}

// walkSource replays a recorded segment as the scanner read it.
type walkSource struct {
	s *walkSegment
	i int
	b decode.Batch
}

func (ws *walkSource) Next() bool {
	if ws.i >= ws.s.len() {
		return false
	}
	ws.s.batch(ws.i, &ws.b)
	ws.i++
	return true
}

func (ws *walkSource) Batch() *decode.Batch { return &ws.b }
func (ws *walkSource) Pos() int64           { return ws.s.w.batches[ws.s.from+ws.i-1].pos }
func (ws *walkSource) CRCValid() bool       { return true } // not checked: see rebuilder.openSegment
func (ws *walkSource) Err() error           { return nil }
func (ws *walkSource) Tail() segment.Tail   { return ws.s.tail }
func (ws *walkSource) Close()               {}

var _ SegmentScanner = (*walkSource)(nil)
