package digest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"
)

// blockReader reads the blocks of a section one after the other from a
// position, each checked against its checksum before a record of it is
// read.
type blockReader struct {
	r     io.ReaderAt
	path  string
	limit int64 // where the blocks end (the trailer's position)
	pos   int64 // file position of the next block
	br    *bufio.Reader
	brPos int64 // file position br reads next

	buf  []byte // the current block's payload
	base int64  // file position of buf[0]
}

func newBlockReader(r io.ReaderAt, path string, pos, limit int64) *blockReader {
	return &blockReader{r: r, path: path, pos: pos, limit: limit, brPos: -1}
}

func (b *blockReader) fail(pos int64, class error, expected, found string) error {
	return &FormatError{Path: b.path, Pos: pos, Expected: expected, Found: found, Err: class}
}

// seek makes the next block the one at pos.
func (b *blockReader) seek(pos int64) {
	b.pos = pos
	b.buf, b.base = b.buf[:0], pos
}

// next reads the next block; io.EOF at the limit.
func (b *blockReader) next() error {
	if b.pos >= b.limit {
		return io.EOF
	}
	if b.br == nil || b.brPos != b.pos {
		b.br = bufio.NewReaderSize(io.NewSectionReader(b.r, b.pos, b.limit-b.pos), 256<<10)
		b.brPos = b.pos
	}
	start := b.pos
	n, err := binary.ReadUvarint(b.br)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return b.fail(start, ErrTruncated, "a block length (uvarint)", "the end of the section")
		}
		return b.fail(start, ErrCorrupt, "a block length (uvarint)", err.Error())
	}
	hdr := int64(uvarintLen(n))
	left := b.limit - start - hdr
	if left < 8 || n > uint64(left-8) {
		return b.fail(start, ErrTruncated, fmt.Sprintf("a block of %d bytes and its 8-byte checksum", n),
			fmt.Sprintf("%d bytes before the section's trailer", max(left, 0)))
	}
	if cap(b.buf) < int(n)+8 {
		b.buf = make([]byte, int(n)+8)
	}
	buf := b.buf[:int(n)+8]
	if _, err := io.ReadFull(b.br, buf); err != nil {
		return b.fail(start+hdr, ErrTruncated, fmt.Sprintf("%d bytes of block", n+8), err.Error())
	}
	payload, sum := buf[:n], binary.BigEndian.Uint64(buf[n:])
	if got := xxh3.Hash(payload); got != sum {
		return b.fail(start, ErrCorrupt, fmt.Sprintf("a block of %d bytes whose xxh3-64 is %016x (stored at byte %d)", n, sum, start+hdr+int64(n)),
			fmt.Sprintf("%016x: the block's bytes are not those written", got))
	}
	b.buf, b.base = payload, start+hdr
	b.pos = start + hdr + int64(n) + 8
	b.brPos = b.pos
	return nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// dec reads the fields of the records of one block, with a sticky error
// that names the absolute byte position and the field expected there.
type dec struct {
	b    []byte
	off  int
	base int64 // file position of b[0]
	path string
	err  error
}

func (d *dec) pos() int64 { return d.base + int64(d.off) }

func (d *dec) more() bool { return d.err == nil && d.off < len(d.b) }

func (d *dec) fail(class error, expected, found string) {
	if d.err == nil {
		d.err = &FormatError{Path: d.path, Pos: d.pos(), Expected: expected, Found: found, Err: class}
	}
}

func (d *dec) u8(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(ErrCorrupt, field+" (1 byte)", "the end of the block")
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *dec) u32(field string) uint32 {
	p := d.fixed(4, field)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint32(p)
}

func (d *dec) fixed(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.fail(ErrCorrupt, fmt.Sprintf("%s (%d bytes)", field, n), fmt.Sprintf("%d bytes left in the block", len(d.b)-d.off))
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *dec) uvarint(field string) uint64 {
	return d.uvarintAs(field, " (uvarint)")
}

// varint is binary.Varint: the zig-zag decoding of a uvarint.
func (d *dec) varint(field string) int64 {
	ux := d.uvarintAs(field, " (varint)")
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// uvarintAs reads a uvarint; kind names the encoding in the error.
func (d *dec) uvarintAs(field, kind string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(ErrCorrupt, field+kind, "bytes that do not end one")
		return 0
	}
	d.off += n
	return v
}

// size reads a uvarint that counts bytes of this block.
func (d *dec) size(field string) int {
	at := d.pos()
	v := d.uvarint(field)
	if d.err == nil && v > uint64(len(d.b)-d.off) {
		d.err = &FormatError{Path: d.path, Pos: at, Expected: fmt.Sprintf("%s of at most the %d bytes left in the block", field, len(d.b)-d.off),
			Found: fmt.Sprint(v), Err: ErrCorrupt}
		return 0
	}
	return int(v)
}

func (d *dec) bytes(field string) []byte { return d.fixed(d.size(field+" length"), field) }

func (d *dec) str(field string) string { return string(d.bytes(field)) }
