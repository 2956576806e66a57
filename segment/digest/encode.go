package digest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

var be = binary.BigEndian

// slot is a producer in the table: the producerEpoch and the next
// baseSequence its next data batch is expected to carry.
type slot struct {
	pid   int64
	epoch int16
	next  int32
	used  bool
}

// deltas is the state batch records are encoded against, the same in the
// encoder and the decoder; a segment record resets it.
type deltas struct {
	next   int64 // the offset after the previous batch
	maxTs  int64 // the previous batch's maxTimestamp
	attrs  uint16
	ple    int32
	slots  [producerSlots]slot
	fifo   int // the slot a new producer takes
	hasPID map[int64]int
}

func (d *deltas) reset(base int64) {
	d.next, d.maxTs, d.attrs, d.ple, d.fifo = base, 0, 0, 0, 0
	d.slots = [producerSlots]slot{}
	if d.hasPID == nil {
		d.hasPID = make(map[int64]int, producerSlots)
	}
	clear(d.hasPID)
}

// expected is the baseSequence a batch of the producer in s is expected
// to carry: -1 for a control batch (markers and barriers carry none),
// else the one after the producer's last sequence.
func expected(s *slot, control bool) int32 {
	if control {
		return decode.NoSequence
	}
	return s.next
}

// nextSequence is the baseSequence after a batch of baseSequence seq and
// lastOffsetDelta lod, wrapping as DefaultRecordBatch.incrementSequence
// does.
func nextSequence(seq, lod int32) int32 {
	return decode.IncrementSequence(decode.IncrementSequence(seq, lod), 1)
}

// take records a batch of producer pid in slot i (a new producer takes
// the oldest slot).
func (d *deltas) take(i int, isNew bool, pid int64, epoch int16, seq, lod int32, control bool) {
	s := &d.slots[i]
	if isNew {
		if s.used && d.hasPID != nil {
			delete(d.hasPID, s.pid)
		}
		*s = slot{pid: pid, used: true, next: 0}
		if d.hasPID != nil {
			d.hasPID[pid] = i
		}
		d.fifo = (d.fifo + 1) % producerSlots
	}
	s.epoch = epoch
	if !control && seq >= 0 {
		s.next = nextSequence(seq, lod)
	}
}

// encoder writes one section.
type encoder struct {
	h       Hash
	w       *bufio.Writer
	written int64  // bytes of the section written so far
	blk     []byte // the open block's payload
	d       deltas
	err     error
	// header61, when set, is the hash of the batch batch() is given the
	// header of (Builder.Header).
	header61 []byte
}

func newEncoder(w io.Writer, h Hash) *encoder {
	return &encoder{h: h, w: bufio.NewWriterSize(w, 256<<10), blk: make([]byte, 0, blockTarget+4096)}
}

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.written += int64(n)
	e.err = err
}

// header writes the section's first line.
func (e *encoder) header(version string) {
	if version == "" {
		version = "unknown"
	}
	line := fmt.Sprintf("%s%d %s kseg %s\n", headerPrefix, FormatVersion, e.h, version)
	if len(line) > maxHeaderLine {
		line = fmt.Sprintf("%s%d %s kseg %s\n", headerPrefix, FormatVersion, e.h, version[:maxHeaderLine-64])
	}
	e.write([]byte(line))
}

// flush closes the open block: its length, its records, their xxh3-64.
func (e *encoder) flush() {
	if len(e.blk) == 0 {
		return
	}
	var hdr [binary.MaxVarintLen64]byte
	e.write(hdr[:binary.PutUvarint(hdr[:], uint64(len(e.blk)))])
	e.write(e.blk)
	var sum [8]byte
	be.PutUint64(sum[:], xxh3.Hash(e.blk))
	e.write(sum[:])
	e.blk = e.blk[:0]
}

// maybeFlush closes the block once it holds blockTarget bytes.
func (e *encoder) maybeFlush() {
	if len(e.blk) >= blockTarget {
		e.flush()
	}
}

// trailer ends the section.
func (e *encoder) trailer(factsPos int64) {
	e.flush()
	var t [trailerSize]byte
	be.PutUint64(t[0:], uint64(factsPos))
	be.PutUint64(t[8:], uint64(e.written+trailerSize))
	be.PutUint64(t[16:], xxh3.Hash(t[:16]))
	copy(t[24:], trailerMagic)
	e.write(t[:])
	if e.err == nil {
		e.err = e.w.Flush()
	}
}

func appendString(b []byte, s string) []byte {
	if len(s) > maxString {
		s = s[:maxString]
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// segmentStart starts a block with the segment record and resets the
// deltas; it returns the block's position in the section.
func (e *encoder) segmentStart(s SegmentInfo, start int64) int64 {
	e.flush()
	pos := e.written
	b := append(e.blk, tagSegment)
	b = binary.AppendVarint(b, s.Base)
	b = binary.AppendUvarint(b, uint64(start))
	b = binary.AppendUvarint(b, uint64(s.Size))
	b = binary.AppendVarint(b, s.Modified)
	e.blk = b
	e.d.reset(s.Base)
	return pos
}

// producerMode is how a batch's producer fields are written: none (no
// producer), its slot when it continues that producer's epoch and
// sequence, its slot with them spelled out, or a new producer (taking the
// next slot, si).
func (d *deltas) producerMode(pid int64, epoch int16, seq int32, control bool) (mode, si int) {
	if pid == decode.NoProducerID && epoch == decode.NoProducerEpoch && seq == decode.NoSequence {
		return producerNone, 0
	}
	if i, ok := d.hasPID[pid]; ok {
		s := &d.slots[i]
		if s.epoch == epoch && seq == expected(s, control) {
			return producerSlot, i
		}
		return producerSlotExplicit, i
	}
	return producerNew, d.fifo
}

// v2Flags are a batch record's flags and extension byte: which fields
// differ from what the deltas predict and are written, whether the body
// is kept whole and the computed CRC written.
func (d *deltas) v2Flags(mode int, attrs uint16, body, crcValid bool, base int64, ple, count, lod int32) (flags, ext byte) {
	flags = byte(mode)
	if attrs != d.attrs {
		flags |= fAttributes
	}
	if body {
		flags |= fBody
	}
	if !crcValid {
		flags |= fComputedCRC
	}
	if base != d.next {
		flags |= fBaseOffset
	}
	if ple != d.ple {
		ext |= xEpoch
	}
	if int64(count) != int64(lod)+1 {
		ext |= xRecords
	}
	if ext != 0 {
		flags |= fExt
	}
	return flags, ext
}

// appendProducer appends a batch's producer fields as mode writes them.
func appendProducer(b []byte, mode, si int, pid int64, epoch int16, seq int32) []byte {
	switch mode {
	case producerSlot:
		b = binary.AppendUvarint(b, uint64(si))
	case producerSlotExplicit:
		b = binary.AppendUvarint(b, uint64(si))
		b = binary.AppendVarint(b, int64(epoch))
		b = binary.AppendVarint(b, int64(seq))
	case producerNew:
		b = binary.AppendUvarint(b, uint64(pid))
		b = binary.AppendVarint(b, int64(epoch))
		b = binary.AppendVarint(b, int64(seq))
	}
	return b
}

// batch appends the record of one framed entry: raw is its whole bytes,
// crcValid the scanner's verdict.
func (e *encoder) batch(raw []byte, crcValid bool) {
	if raw[16] < 2 {
		e.legacy(raw, crcValid)
		return
	}
	base := int64(be.Uint64(raw[0:]))
	blen := be.Uint32(raw[8:])
	ple := int32(be.Uint32(raw[12:]))
	crc := be.Uint32(raw[17:])
	attrs := be.Uint16(raw[21:])
	lod := int32(be.Uint32(raw[23:]))
	baseTs := int64(be.Uint64(raw[27:]))
	maxTs := int64(be.Uint64(raw[35:]))
	pid := int64(be.Uint64(raw[43:]))
	epoch := int16(be.Uint16(raw[51:]))
	seq := int32(be.Uint32(raw[53:]))
	count := int32(be.Uint32(raw[57:]))
	control := attrs&decode.AttrControl != 0
	d := &e.d

	mode, si := d.producerMode(pid, epoch, seq, control)
	body := control || !crcValid
	flags, ext := d.v2Flags(mode, attrs, body, crcValid, base, ple, count, lod)
	b := append(e.blk, tagBatch|flags)
	if ext != 0 {
		b = append(b, ext)
	}
	b = appendProducer(b, mode, si, pid, epoch, seq)
	if flags&fAttributes != 0 {
		b = binary.AppendUvarint(b, uint64(attrs))
	}
	if flags&fBaseOffset != 0 {
		b = binary.AppendVarint(b, base-d.next)
	}
	if ext&xEpoch != 0 {
		b = binary.AppendVarint(b, int64(ple)-int64(d.ple))
	}
	if ext&xRecords != 0 {
		b = binary.AppendVarint(b, int64(count))
	}
	b = binary.AppendUvarint(b, uint64(blen))
	b = binary.AppendVarint(b, int64(lod))
	b = be.AppendUint32(b, crc)
	b = binary.AppendVarint(b, int64(uint64(baseTs)-uint64(d.maxTs)))
	b = binary.AppendVarint(b, int64(uint64(maxTs)-uint64(baseTs)))
	if !crcValid {
		b = be.AppendUint32(b, decode.CRC32C(raw[21:]))
	}
	switch {
	case body:
		b = append(b, raw[decode.RecordBatchOverhead:]...)
	case e.header61 != nil:
		b = append(b, e.header61...)
	default:
		b = e.h.Sum(b, raw[21:])
	}
	e.blk = b
	if mode != producerNone {
		d.take(si, mode == producerNew, pid, epoch, seq, lod, control)
	}
	d.next = base + int64(lod) + 1
	d.maxTs, d.attrs, d.ple = maxTs, attrs, ple
	e.maybeFlush()
}

// legacyHeader is the size of a v0 or v1 message's fixed fields, log
// overhead included: offset, size, crc, magic, attributes (and timestamp).
func legacyHeader(magic byte) int {
	if magic == 1 {
		return 26
	}
	return 18
}

// legacy appends the record of a v0/v1 message (its offset is its last
// offset; the CRC-32 covers [16, end)).
func (e *encoder) legacy(raw []byte, crcValid bool) {
	off := int64(be.Uint64(raw[0:]))
	size := be.Uint32(raw[8:])
	crc := be.Uint32(raw[12:])
	magic := raw[16]
	attrs := raw[17]
	d := &e.d
	var flags byte
	if !crcValid {
		flags |= lBody | lComputedCRC
	}
	if off != d.next {
		flags |= lOffset
	}
	b := append(e.blk, tagLegacy, flags)
	if flags&lOffset != 0 {
		b = binary.AppendVarint(b, off-d.next)
	}
	b = binary.AppendUvarint(b, uint64(size))
	b = be.AppendUint32(b, crc)
	b = append(b, magic, attrs)
	if magic == 1 {
		ts := int64(be.Uint64(raw[18:]))
		b = binary.AppendVarint(b, int64(uint64(ts)-uint64(d.maxTs)))
		d.maxTs = ts
	}
	if !crcValid {
		b = be.AppendUint32(b, crc32IEEE(raw[16:]))
	}
	if flags&lBody != 0 {
		b = append(b, raw[legacyHeader(magic):]...)
	} else {
		b = e.h.Sum(b, raw[16:])
	}
	e.blk = b
	d.next = off + 1
	e.maybeFlush()
}

// facts appends the facts record: the log end offset, the batches, and
// the segment table (blockPos: each segment's first block's position in
// the section + 1, 0 for a segment not in it).
func (e *encoder) facts(end, batches int64, infos []SegmentInfo, blockPos []int64) {
	r := append(e.blk, tagFacts)
	r = binary.AppendVarint(r, end)
	r = binary.AppendUvarint(r, uint64(batches))
	r = binary.AppendUvarint(r, uint64(len(infos)))
	prev := int64(0)
	for i, s := range infos {
		r = binary.AppendVarint(r, s.Base-prev)
		prev = s.Base
		r = binary.AppendUvarint(r, uint64(s.Size))
		r = binary.AppendVarint(r, s.Modified)
		r = binary.AppendUvarint(r, uint64(blockPos[i]))
	}
	e.blk = r
}

// tail appends how the scan of a segment ended.
func (e *encoder) tail(t segment.Tail) {
	b := append(e.blk, tagTail, byte(t.Kind))
	b = binary.AppendUvarint(b, uint64(t.ValidBytes))
	b = binary.AppendUvarint(b, uint64(t.End))
	if t.Err == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendString(b, t.Err.Path)
		b = binary.AppendVarint(b, t.Err.Pos)
		b = binary.AppendVarint(b, t.Err.BaseOffset)
		b = appendString(b, t.Err.Field)
		b = append(b, classIndex(t.Err.Err))
		msg := ""
		if t.Err.Err != nil {
			msg = t.Err.Err.Error()
		}
		b = appendString(b, msg)
	}
	e.blk = b
}

// The classes of decode.CorruptError, by index in a tail record.
var classes = []error{nil, decode.ErrCorrupt, decode.ErrCRCMismatch, decode.ErrTruncated, decode.ErrTooLarge, decode.ErrUnsupported}

func classIndex(err error) byte {
	for i, c := range classes[1:] {
		if errors.Is(err, c) {
			return byte(i + 1)
		}
	}
	return 0
}
