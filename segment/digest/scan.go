package digest

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Entry is one batch as a digest holds it.
type Entry struct {
	// Batch has every header field. Its Raw is the whole batch when the
	// digest holds its bytes (control batches, batches that fail their
	// CRC), nil otherwise; it is valid until the next call to Next.
	Batch decode.Batch
	// Pos is the batch's byte position in its .log.
	Pos int64
	// CRCValid is the CRC check's verdict when the digest was taken;
	// ComputedCRC the CRC of the bytes (Batch.CRC when they match).
	CRCValid    bool
	ComputedCRC uint32
	// Attributes16 is the v2 attributes field as stored (Batch.Attributes
	// holds the low byte Kafka reads).
	Attributes16 uint16
}

// Scanner reads the batches of one segment of a digest, in the order a
// segment.CRCScanner frames them, and ends with the segment's Tail. Its
// methods are those psm and verify-chain use of a CRCScanner.
type Scanner struct {
	d      *Digest
	view   []segView
	seg    int
	pieces []piece
	pi     int
	in     bool // inside pieces[pi]
	br     *blockReader
	c      dec
	dl     deltas
	h      Hash

	pos  int64 // position of the next batch
	cur  Entry
	hash []byte // the current batch's hash (nil: compute it from Raw)
	hbuf []byte
	raw  []byte
	tail segment.Tail
	err  error
	done bool
}

// Segments is the number of segments of the digest.
func (d *Digest) Segments() int { return len(d.view) }

// Scan reads segment i (an index into Info().Segments).
func (d *Digest) Scan(i int) *Scanner { return d.scanView(d.view, i) }

func (d *Digest) scanView(view []segView, i int) *Scanner {
	s := &Scanner{d: d, view: view, seg: i, pieces: view[i].pieces, h: d.sections[len(d.sections)-1].hash}
	s.tail = segment.Tail{Kind: segment.TailClean}
	return s
}

// Next moves to the next batch; false at the segment's end (Tail) or on
// an error (Err).
func (s *Scanner) Next() bool {
	for !s.done {
		if !s.in {
			if s.pi >= len(s.pieces) {
				s.done = true
				return false
			}
			if !s.openPiece() {
				return false
			}
		}
		if !s.c.more() {
			if err := s.br.next(); err != nil {
				if errors.Is(err, io.EOF) {
					err = &FormatError{Path: s.d.path, Pos: s.br.pos, Expected: fmt.Sprintf("the tail record ('T') of segment %s", s.view[s.seg].Name()),
						Found: "the end of the section's records", Err: ErrCorrupt}
				}
				return s.fail(err)
			}
			s.c = dec{b: s.br.buf, base: s.br.base, path: s.d.path}
		}
		tag := s.c.u8("a record tag")
		switch {
		case tag >= tagBatch:
			s.batch(tag)
		case tag == tagLegacy:
			s.legacy()
		case tag == tagTail:
			t := s.readTail()
			if s.c.err != nil {
				return s.fail(s.c.err)
			}
			if s.pi == len(s.pieces)-1 {
				s.tail = t
			}
			s.in = false
			s.pi++
			continue
		default:
			s.c.off--
			s.c.fail(ErrCorrupt, fmt.Sprintf("a batch, legacy or tail record of segment %s", s.view[s.seg].Name()), fmt.Sprintf("a record tagged 0x%02x", tag))
		}
		if s.c.err != nil {
			return s.fail(s.c.err)
		}
		if s.cur.Batch.BaseOffset >= s.pieces[s.pi].upto {
			// Superseded by the next section: it continues from there.
			if s.pi == len(s.pieces)-1 {
				s.tail = segment.Tail{Kind: segment.TailClean, ValidBytes: s.cur.Pos, End: s.cur.Pos}
			}
			s.in = false
			s.pi++
			continue
		}
		s.pos += s.cur.Batch.Size()
		return true
	}
	return false
}

func (s *Scanner) fail(err error) bool {
	s.err, s.done = err, true
	return false
}

// openPiece positions the scanner at the segment record of the current
// piece.
func (s *Scanner) openPiece() bool {
	p := s.pieces[s.pi]
	sec := s.d.sections[p.sec]
	if s.br == nil {
		s.br = newBlockReader(s.d.r, s.d.path, p.block, sec.facts)
	} else {
		s.br.limit = sec.facts
		s.br.seek(p.block)
	}
	if err := s.br.next(); err != nil {
		if errors.Is(err, io.EOF) {
			err = &FormatError{Path: s.d.path, Pos: p.block, Expected: "a segment's first block", Found: "the section's facts", Err: ErrCorrupt}
		}
		return s.fail(err)
	}
	s.c = dec{b: s.br.buf, base: s.br.base, path: s.d.path}
	want := s.view[s.seg].Base
	if tag := s.c.u8("a segment record"); tag != tagSegment && s.c.err == nil {
		s.c.off--
		s.c.fail(ErrCorrupt, fmt.Sprintf("the segment record ('S') of segment %d", want), fmt.Sprintf("a record tagged 0x%02x", tag))
	}
	at := s.c.pos()
	base := s.c.varint("segment base offset")
	start := s.c.uvarint("segment start position")
	s.c.uvarint("segment size")
	s.c.varint("segment modification time")
	if s.c.err == nil && base != want {
		s.c.err = &FormatError{Path: s.d.path, Pos: at, Expected: fmt.Sprintf("segment %d, as the facts record says", want), Found: fmt.Sprintf("segment %d", base), Err: ErrCorrupt}
	}
	if s.c.err != nil {
		return s.fail(s.c.err)
	}
	s.pos = int64(start)
	s.dl.reset(base)
	s.in = true
	return true
}

// slotAt reads a producer slot index.
func (s *Scanner) slotAt() (int, *slot) {
	at := s.c.pos()
	i := s.c.uvarint("producer slot")
	if s.c.err != nil {
		return 0, nil
	}
	if i >= producerSlots || !s.dl.slots[i].used {
		s.c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "the slot of a producer seen before in the segment", Found: fmt.Sprintf("slot %d", i), Err: ErrCorrupt}
		return 0, nil
	}
	return int(i), &s.dl.slots[i]
}

func (s *Scanner) int16At(field string) int16 { return narrowVarint[int16](s, field, " (16 bits)") }

func (s *Scanner) int32At(field string) int32 { return narrowVarint[int32](s, field, " (32 bits)") }

// narrowVarint reads a varint that must fit T (an int16 or int32 field);
// bits names T's width in the error.
func narrowVarint[T int16 | int32](s *Scanner, field, bits string) T {
	at := s.c.pos()
	v := s.c.varint(field)
	if s.c.err == nil && int64(T(v)) != v {
		s.c.err = &FormatError{Path: s.d.path, Pos: at, Expected: field + bits, Found: fmt.Sprint(v), Err: ErrCorrupt}
	}
	return T(v)
}

// producer reads a batch record's producer fields as mode writes them:
// the slot (si; sl nil unless an existing one), and the producer id,
// epoch and sequence given explicitly (the slot's, for a producerSlot
// batch, are filled in by the caller once the attributes are known).
func (s *Scanner) producer(mode int) (si int, sl *slot, pid int64, epoch int16, seq int32) {
	si = s.dl.fifo
	pid, epoch, seq = decode.NoProducerID, decode.NoProducerEpoch, decode.NoSequence
	switch mode {
	case producerSlot:
		si, sl = s.slotAt()
	case producerSlotExplicit:
		si, sl = s.slotAt()
		epoch, seq = s.int16At("producerEpoch"), s.int32At("baseSequence")
	case producerNew:
		pid = int64(s.c.uvarint("producerId"))
		epoch, seq = s.int16At("producerEpoch"), s.int32At("baseSequence")
	}
	return si, sl, pid, epoch, seq
}

// batch decodes a v2 batch record.
func (s *Scanner) batch(tag byte) {
	c, dl := &s.c, &s.dl
	flags := tag &^ tagBatch
	var ext byte
	if flags&fExt != 0 {
		ext = c.u8("extension flags")
	}
	mode := int(flags & fProducerMask)
	si, sl, pid, epoch, seq := s.producer(mode)
	attrs := dl.attrs
	if flags&fAttributes != 0 {
		at := c.pos()
		v := c.uvarint("attributes")
		if c.err == nil && v > math.MaxUint16 {
			c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "attributes (16 bits)", Found: fmt.Sprint(v), Err: ErrCorrupt}
		}
		attrs = uint16(v)
	}
	control := attrs&decode.AttrControl != 0
	if sl != nil {
		pid = sl.pid
		if mode == producerSlot {
			epoch, seq = sl.epoch, expected(sl, control)
		}
	}
	base := dl.next
	if flags&fBaseOffset != 0 {
		base += c.varint("baseOffset delta")
	}
	ple := dl.ple
	if ext&xEpoch != 0 {
		at := c.pos()
		v := int64(dl.ple) + c.varint("partitionLeaderEpoch delta")
		if c.err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
			c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "partitionLeaderEpoch (32 bits)", Found: fmt.Sprint(v), Err: ErrCorrupt}
		}
		ple = int32(v)
	}
	var count int32
	hasCount := ext&xRecords != 0
	if hasCount {
		count = s.int32At("recordsCount")
	}
	at := c.pos()
	blen := c.uvarint("batchLength")
	if c.err == nil && (blen > math.MaxInt32 || blen+decode.LogOverhead < decode.RecordBatchOverhead) {
		c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "a v2 batchLength (49 to 2^31-1)", Found: fmt.Sprint(blen), Err: ErrCorrupt}
	}
	lod := s.int32At("lastOffsetDelta")
	if !hasCount {
		count = lod + 1
	}
	crc := c.u32("crc")
	baseTs := int64(uint64(dl.maxTs) + uint64(c.varint("baseTimestamp delta")))
	maxTs := int64(uint64(baseTs) + uint64(c.varint("maxTimestamp delta")))
	computed, valid := s.computed(crc, flags&fComputedCRC != 0)
	size := int64(blen) + decode.LogOverhead
	body := s.payload(flags&fBody != 0, int(size-decode.RecordBatchOverhead), "records")
	if c.err != nil {
		return
	}
	b := decode.Batch{BaseOffset: base, BatchLength: int32(blen), PartitionLeaderEpoch: ple, Magic: 2, CRC: crc,
		Attributes: int16(attrs) & 0xff, LastOffsetDelta: lod, BaseTimestamp: baseTs, MaxTimestamp: maxTs,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, RecordCount: count}
	if body != nil {
		s.raw = append(b.AppendHeader(s.raw[:0], attrs), body...)
		b.Raw = s.raw
	}
	s.cur = Entry{Batch: b, Pos: s.pos, CRCValid: valid, ComputedCRC: computed, Attributes16: attrs}
	if mode != producerNone {
		dl.take(si, mode == producerNew, pid, epoch, seq, lod, control)
	}
	dl.next = base + int64(lod) + 1
	dl.maxTs, dl.attrs, dl.ple = maxTs, attrs, ple
}

// legacy decodes a v0/v1 message record.
func (s *Scanner) legacy() {
	c, dl := &s.c, &s.dl
	flags := c.u8("legacy flags")
	off := dl.next
	if flags&lOffset != 0 {
		off += c.varint("offset delta")
	}
	at := c.pos()
	size := c.uvarint("message size")
	crc := c.u32("crc")
	magic := c.u8("magic")
	attrs := c.u8("attributes")
	if c.err == nil && magic > 1 {
		c.err = &FormatError{Path: s.d.path, Pos: c.pos() - 2, Expected: "magic 0 or 1 in a legacy record", Found: fmt.Sprint(magic), Err: ErrCorrupt}
	}
	hdr := legacyHeader(magic)
	if c.err == nil && (size > math.MaxInt32 || int64(size)+decode.LogOverhead < int64(hdr)+8) {
		c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "a legacy message size", Found: fmt.Sprint(size), Err: ErrCorrupt}
	}
	ts := int64(decode.NoTimestamp)
	if magic == 1 {
		ts = int64(uint64(dl.maxTs) + uint64(c.varint("timestamp delta")))
	}
	computed, valid := s.computed(crc, flags&lComputedCRC != 0)
	total := int64(size) + decode.LogOverhead
	body := s.payload(flags&lBody != 0, int(total)-hdr, "message")
	if c.err != nil {
		return
	}
	b := decode.Batch{BaseOffset: off, BatchLength: int32(size), PartitionLeaderEpoch: decode.NoPartitionLeaderEpoch, Magic: int8(magic), CRC: crc,
		Attributes: int16(attrs), BaseTimestamp: ts, MaxTimestamp: ts, ProducerID: decode.NoProducerID, ProducerEpoch: decode.NoProducerEpoch,
		BaseSequence: decode.NoSequence, RecordCount: -1}
	if body != nil {
		r := s.raw[:0]
		r = be.AppendUint64(r, uint64(off))
		r = be.AppendUint32(r, uint32(size))
		r = be.AppendUint32(r, crc)
		r = append(r, magic, attrs)
		if magic == 1 {
			r = be.AppendUint64(r, uint64(ts))
		}
		r = append(r, body...)
		s.raw, b.Raw = r, r
	}
	s.cur = Entry{Batch: b, Pos: s.pos, CRCValid: valid, ComputedCRC: computed}
	dl.next = off + 1
	if magic == 1 {
		dl.maxTs = ts
	}
}

// computed reads the computed CRC of a batch that fails its CRC (has),
// else it is the stored one.
func (s *Scanner) computed(stored uint32, has bool) (uint32, bool) {
	if !has {
		return stored, true
	}
	return s.c.u32("computed crc"), false
}

// payload reads a record's last field: the n bytes of the batch the
// digest holds (body), or else its hash (into s.hash).
func (s *Scanner) payload(body bool, n int, what string) []byte {
	s.hash = nil
	if body {
		return s.c.fixed(n, what+" bytes")
	}
	s.hash = s.c.fixed(s.h.Size(), what+" hash")
	return nil
}

// storedErr is a scanner error as the digest recorded it: its message,
// and its class for errors.Is.
type storedErr struct {
	class error
	msg   string
}

func (e *storedErr) Error() string { return e.msg }
func (e *storedErr) Unwrap() error { return e.class }

func (s *Scanner) readTail() segment.Tail {
	c := &s.c
	at := c.pos()
	k := c.u8("tail kind")
	if c.err == nil && k > byte(segment.TailCorrupt) {
		c.err = &FormatError{Path: s.d.path, Pos: at, Expected: "a tail kind (0-4)", Found: fmt.Sprint(k), Err: ErrCorrupt}
	}
	t := segment.Tail{Kind: segment.TailKind(k), ValidBytes: int64(c.uvarint("validBytes")), End: int64(c.uvarint("end"))}
	if c.u8("tail error flag") == 1 {
		ce := &decode.CorruptError{Path: c.str("error path"), Pos: c.varint("error position"), BaseOffset: c.varint("error baseOffset"), Field: c.str("error field")}
		ci := int(c.u8("error class"))
		msg := c.str("error message")
		var class error
		if ci < len(classes) {
			class = classes[ci]
		}
		if msg != "" || class != nil {
			ce.Err = &storedErr{class: class, msg: msg}
		}
		t.Err = ce
	}
	return t
}

// Batch is the current batch (see Entry.Batch).
func (s *Scanner) Batch() *decode.Batch { return &s.cur.Batch }

// Entry is the current batch with its position and CRC verdict.
func (s *Scanner) Entry() *Entry { return &s.cur }

// Pos is the current batch's position in its .log.
func (s *Scanner) Pos() int64 { return s.cur.Pos }

// CRCValid is the current batch's CRC verdict.
func (s *Scanner) CRCValid() bool { return s.cur.CRCValid }

// Hash is the hash of the current batch's CRC-covered bytes (computed
// from its bytes when the digest holds them).
func (s *Scanner) Hash() []byte {
	if s.hash != nil {
		return s.hash
	}
	s.hbuf = s.h.Sum(s.hbuf[:0], Covered(s.cur.Batch.Raw))
	return s.hbuf
}

// HashKind is the digest's hash.
func (s *Scanner) HashKind() Hash { return s.h }

// Tail is how the segment's scan ended, once Next returned false.
func (s *Scanner) Tail() segment.Tail { return s.tail }

// Err is the error that ended the scan (a *FormatError, or I/O).
func (s *Scanner) Err() error { return s.err }

// Close releases the scanner.
func (s *Scanner) Close() { s.done = true }

// Locate finds the segment and position of the batch holding offset; ok
// is false when no batch holds it.
func (d *Digest) Locate(offset int64) (name string, pos int64, ok bool, err error) {
	si := -1
	for i := range d.view {
		if d.view[i].Base <= offset {
			si = i
		}
	}
	if si < 0 {
		return "", -1, false, nil
	}
	sc := d.Scan(si)
	defer sc.Close()
	for sc.Next() {
		b := sc.Batch()
		if b.BaseOffset <= offset && offset <= b.LastOffset() {
			return d.view[si].Name(), sc.Pos(), true, nil
		}
	}
	return d.view[si].Name(), -1, false, sc.Err()
}
