package decode

import (
	"encoding/binary"
	"unsafe"
)

// Cursor reads Kafka's primitive types from a byte slice, front to back:
// big-endian integers (ByteBuffer.getShort/getInt/getLong), zig-zag
// varints and varlongs (ByteUtils.readVarint/readVarlong), unsigned varints
// (ByteUtils.readUnsignedVarint), and the length-prefixed bytes, compact
// strings, compact arrays and tagged fields built on them. It is the one
// way kseg parses bytes whose layout is not a fixed-size slot, so a varint
// that Kafka rejects is rejected everywhere with the same message.
//
// Every read names its Kafka field. The first failure sticks: later reads
// return zero values and do not move, and Err reports that first failure as
// a *CorruptError whose Pos is absolute (the cursor's base plus the offset
// in the slice), so a caller reads a whole structure and checks once, and
// the position it reports is the failing field's, not the end of the
// structure. (franz-go's kbin.Reader and prometheus' encoding.Decbuf are
// sticky too, but forget where they failed.)
//
// The zero value is an empty cursor at position 0.
type Cursor struct {
	b    []byte
	p    int
	base int64
	err  *CorruptError
}

// NewCursor returns a cursor over b whose first byte is at absolute
// position base (for example RecordBatchOverhead, for a cursor over the
// records section of a batch, so that errors are positions within the
// batch).
func NewCursor(b []byte, base int64) Cursor { return Cursor{b: b, base: base} }

// Pos is the absolute position of the next byte to read.
func (c *Cursor) Pos() int64 { return c.base + int64(c.p) }

// Len is the number of bytes left.
func (c *Cursor) Len() int { return len(c.b) - c.p }

// Err is the first failure, or nil. Its dynamic type is *CorruptError.
func (c *Cursor) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Fail records a failure at the absolute position pos (usually a Pos taken
// before the field was read) unless an earlier one is already recorded.
// Callers use it for checks of meaning (a negative length, a count too
// large for the bytes left) that the primitive reads cannot know.
func (c *Cursor) Fail(pos int64, field string, class error, format string, args ...any) {
	if c.err == nil {
		c.err = corruptf(pos, NoBaseOffset, field, class, format, args...)
	}
}

// need reports whether n more bytes exist, failing at the current position
// when they do not.
func (c *Cursor) need(n int, field string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || c.Len() < n {
		c.Fail(c.Pos(), field, ErrTruncated, "need %d bytes, %d left", n, c.Len())
		return false
	}
	return true
}

// Int8 reads one byte.
func (c *Cursor) Int8(field string) int8 { return int8(c.fixed(1, field)[0]) }

// Int16 reads a big-endian int16.
func (c *Cursor) Int16(field string) int16 { return int16(binary.BigEndian.Uint16(c.fixed(2, field))) }

// Int32 reads a big-endian int32.
func (c *Cursor) Int32(field string) int32 { return int32(binary.BigEndian.Uint32(c.fixed(4, field))) }

// Uint32 reads a big-endian uint32 (a CRC).
func (c *Cursor) Uint32(field string) uint32 { return uint32(c.Int32(field)) }

// Int64 reads a big-endian int64.
func (c *Cursor) Int64(field string) int64 { return int64(binary.BigEndian.Uint64(c.fixed(8, field))) }

// zeros is what a failed fixed-size read reads: the integer 0.
var zeros [8]byte

// fixed returns the next n (at most 8) bytes of a fixed-size integer and
// moves past them, or n zero bytes when they are not there (the failure
// recorded), so that every Int reads 0 after a failure.
func (c *Cursor) fixed(n int, field string) []byte {
	if !c.need(n, field) {
		return zeros[:n]
	}
	v := c.b[c.p : c.p+n]
	c.p += n
	return v
}

// Bytes reads the next n bytes. The result aliases the cursor's slice and
// has no spare capacity, so appending to it cannot overwrite what follows.
func (c *Cursor) Bytes(n int, field string) []byte {
	if !c.need(n, field) {
		return nil
	}
	v := c.b[c.p : c.p+n : c.p+n]
	c.p += n
	return v
}

// Sub returns a cursor over the next n bytes, which keeps their absolute
// positions, and moves c past them: a record body read through Sub cannot
// run into the next record. On failure the sub-cursor is empty and already
// failed, with the same error as c.
func (c *Cursor) Sub(n int, field string) Cursor {
	start := c.Pos()
	if !c.need(n, field) {
		return Cursor{base: start, err: c.err}
	}
	s := Cursor{b: c.b[c.p : c.p+n : c.p+n], base: start}
	c.p += n
	return s
}

// Varint reads a zig-zag varint as ByteUtils.readVarint does: at most five
// bytes, and a fifth byte with the continuation bit set is an error (Go's
// binary.Varint would accept up to ten).
func (c *Cursor) Varint(field string) int32 { return zigzag[int32](c, field) }

// Varlong reads a zig-zag varlong as ByteUtils.readVarlong does: at most
// ten bytes.
func (c *Cursor) Varlong(field string) int64 { return zigzag[int64](c, field) }

// zigzag reads a zig-zag varint (T int32, at most 5 bytes) or varlong (T
// int64, at most 10): ByteUtils.readVarint and readVarlong throw when the
// last byte they allow still has its continuation bit set, and a
// ByteBuffer underflows at the end. On failure the cursor does not move
// and the result is 0. Bits past 32 of a varint's fifth byte are dropped,
// as Java's int shift drops them.
func zigzag[T int32 | int64](c *Cursor, field string) T {
	if c.err != nil {
		return 0
	}
	max := 5 // known when T is: the loop and the shift are compiled for it
	if unsafe.Sizeof(T(0)) == 8 {
		max = 10
	}
	var ux uint64
	for i, p := 0, c.p; i < max; i, p = i+1, p+1 {
		if p >= len(c.b) {
			c.zigzagFail(field, max, ErrTruncated)
			return 0
		}
		b := c.b[p]
		ux |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			c.p = p + 1
			if max == 5 {
				u := uint32(ux)
				return T(int32(u>>1) ^ -int32(u&1))
			}
			return T(int64(ux>>1) ^ -int64(ux&1))
		}
	}
	c.zigzagFail(field, max, ErrCorrupt)
	return 0
}

// zigzagFail fails the varint (max 5 bytes) or varlong (max 10) that
// starts at the cursor: ErrTruncated when its bytes run past the end,
// ErrCorrupt when it is too long. Out of line: zigzag is the record
// decoder's hot path, and this is its cold one.
//
//go:noinline
func (c *Cursor) zigzagFail(field string, max int, class error) {
	name, tooLong := "varint", "varint is too long, the most significant bit in the 5th byte is set"
	if max > 5 {
		name, tooLong = "varlong", "varlong is too long"
	}
	if class == ErrTruncated {
		c.Fail(c.Pos(), field, class, "%s runs past the end", name)
		return
	}
	c.Fail(c.Pos(), field, class, "%s", tooLong)
}

// VarBytes reads a varint length and that many bytes; a negative length
// is null and returns nil (Utils.readBytes after
// DefaultRecord.readFrom's length read).
func (c *Cursor) VarBytes(field string) []byte {
	start := c.Pos()
	n := c.Varint(field)
	if c.err != nil || n < 0 {
		return nil
	}
	if int64(n) > int64(c.Len()) {
		c.Fail(start, field, ErrCorrupt, "length %d exceeds the %d bytes left", n, c.Len())
		return nil
	}
	return c.Bytes(int(n), field)
}

// Uvarint reads an unsigned varint of Kafka's flexible versions
// (ByteUtils.readUnsignedVarint); values above 2^31 cannot be a length
// or a tag and are rejected.
func (c *Cursor) Uvarint(field string) uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.p:])
	if n <= 0 || v > 1<<31 {
		c.Fail(c.Pos(), field, ErrCorrupt, "invalid unsigned varint")
		return 0
	}
	c.p += n
	return v
}

// CompactArrayLen reads a compact array length (N+1; 0 = null, returned as
// 0) and bounds it by the bytes left, given the minimum size of one
// element, before anything is allocated for it.
func (c *Cursor) CompactArrayLen(field string, minElem int) int {
	start := c.Pos()
	n := int(c.Uvarint(field)) - 1
	if c.err != nil || n <= 0 {
		return 0
	}
	if n > c.Len()/minElem {
		c.Fail(start, field, ErrCorrupt, "array of %d elements cannot fit in %d bytes", n, c.Len())
		return 0
	}
	return n
}

// CompactString reads a non-nullable compact string (every string kseg
// decodes is one): a null (length 0) is an error, as the generated
// readers' "non-nullable field … was serialized as null".
func (c *Cursor) CompactString(field string) string {
	start := c.Pos()
	n := int(c.Uvarint(field)) - 1
	if c.err != nil {
		return ""
	}
	if n < 0 {
		c.Fail(start, field, ErrCorrupt, "non-nullable field %s was serialized as null", field)
		return ""
	}
	if n > c.Len() {
		c.Fail(start, field, ErrCorrupt, "string of %d bytes exceeds the %d left", n, c.Len())
		return ""
	}
	return string(c.Bytes(n, field))
}

// TaggedFields skips a flexible version's tagged-field section: a count,
// then (tag, size, bytes) for each.
func (c *Cursor) TaggedFields() {
	n := c.Uvarint("taggedFields")
	for i := uint64(0); i < n && c.err == nil; i++ {
		c.Uvarint("tag")
		size := int(c.Uvarint("tagSize"))
		if c.need(size, "taggedField") {
			c.p += size
		}
	}
}
