package schema

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kseg/kseg/decode"
)

// reader is a positioned cursor with a sticky error, in the manner of
// decode's flexReader: the first failure is kept with its byte position
// and the field path, and every later read is a no-op.
type reader struct {
	b    []byte
	p    int
	base int // position of b[0] within the caller's slice (tagged-field buffers)
	err  *decode.CorruptError
}

// fail records the first failure: format is kseg's account, kafka the
// message Kafka's generated reader throws at the same point ("null" for a
// java.nio.BufferUnderflowException, which has none).
func (r *reader) fail(path string, class error, kafka, format string, args ...any) {
	if r.err != nil {
		return
	}
	r.err = &decode.CorruptError{Pos: int64(r.base + r.p), BaseOffset: decode.NoBaseOffset, Field: path,
		Err: &decode.KafkaError{Class: class, Detail: fmt.Sprintf(format, args...), Message: kafka}}
}

// underflow is Kafka's message for a read past the end of a ByteBuffer.
const underflow = "null"

func (r *reader) left() int { return len(r.b) - r.p }

func (r *reader) take(n int, path string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.left() < n {
		r.fail(path, decode.ErrTruncated, underflow, "need %d bytes, %d left", n, r.left())
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

// zeros is what a failed fixed-size read reads: the number 0.
var zeros [8]byte

// fixed returns the next n (at most 8) bytes of a fixed-size number, or n
// zero bytes after a failure, so that the number reads 0.
func (r *reader) fixed(n int, path string) []byte {
	if s := r.take(n, path); s != nil {
		return s
	}
	return zeros[:n]
}

func (r *reader) u8(path string) uint8   { return r.fixed(1, path)[0] }
func (r *reader) u16(path string) uint16 { return binary.BigEndian.Uint16(r.fixed(2, path)) }
func (r *reader) u32(path string) uint32 { return binary.BigEndian.Uint32(r.fixed(4, path)) }
func (r *reader) u64(path string) uint64 { return binary.BigEndian.Uint64(r.fixed(8, path)) }

// uvarint reads an unsigned varint of at most 5 bytes, as
// ByteUtils.readUnsignedVarint (which rejects longer encodings).
func (r *reader) uvarint(path string) uint32 {
	if r.err != nil {
		return 0
	}
	var v uint32
	for i := 0; i < 5; i++ {
		if r.p >= len(r.b) {
			r.fail(path, decode.ErrTruncated, underflow, "unsigned varint runs past the end")
			return 0
		}
		c := r.b[r.p]
		r.p++
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v
		}
	}
	r.fail(path, decode.ErrCorrupt, fmt.Sprintf("Varint is too long, the most significant bit in the 5th byte is set, converted value: %x", v),
		"unsigned varint longer than 5 bytes")
	return 0
}

// length reads a string/bytes/array length: compact (uvarint N+1, 0 =
// null) in flexible versions, else int16 (strings) or int32. It returns -1
// for null.
func (r *reader) length(k kind, flexible bool, path string) int {
	if flexible {
		return int(r.uvarint(path)) - 1
	}
	if k == kString {
		return int(int16(r.u16(path)))
	}
	return int(int32(r.u32(path)))
}

// decodeMessage reads one message at version v; every byte of b must be
// accounted for only if the caller checks r.p afterwards.
func decodeMessage(m *Message, v int16, b []byte) (*Struct, int, *decode.CorruptError) {
	r := &reader{b: b}
	s := r.readStruct(m.Fields, v, m.Flexible.Has(v), "")
	if r.err != nil {
		return nil, r.p, r.err
	}
	return s, r.p, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (r *reader) readStruct(fields []*Field, v int16, flexible bool, path string) *Struct {
	s := &Struct{version: v, schema: fields}
	for _, f := range fields {
		if !f.Versions.Has(v) || f.Tagged.Has(v) {
			continue
		}
		val := r.readValue(f, f.kind, v, flexible, false, join(path, f.JSONName()))
		if r.err != nil {
			return s
		}
		s.Fields = append(s.Fields, FieldValue{Field: f, Value: val})
	}
	if !flexible {
		return s
	}
	n := r.uvarint(join(path, "_tagged"))
	for i := uint32(0); i < n && r.err == nil; i++ {
		tag := r.uvarint(join(path, "_tag"))
		size := r.uvarint(join(path, "_tagSize"))
		start := r.p
		if int(size) > r.left() {
			r.fail(join(path, "_taggedField"), decode.ErrTruncated,
				fmt.Sprintf("Error reading byte array of %d byte(s): only %d byte(s) available", size, r.left()),
				"tagged field %d of %d bytes, %d left", tag, size, r.left())
			return s
		}
		data := r.take(int(size), join(path, "_taggedField"))
		if r.err != nil {
			return s
		}
		// Kafka's generated readers accept tags in any order; its writers
		// emit them ascending, which is the order Encode uses.
		var f *Field
		for _, c := range fields {
			if c.Versions.Has(v) && c.Tagged.Has(v) && c.Tag == int32(tag) {
				f = c
				break
			}
		}
		if f == nil {
			s.Unknown = append(s.Unknown, RawTag{Tag: tag, Data: append([]byte(nil), data...)})
			continue
		}
		sub := &reader{b: data, base: r.base + start}
		fp := join(path, f.JSONName())
		val := sub.readValue(f, f.kind, v, true, true, fp)
		if sub.err == nil && sub.p != len(data) {
			sub.fail(fp, decode.ErrCorrupt, "", "tagged field %d has %d bytes left over", tag, len(data)-sub.p)
		}
		if sub.err != nil {
			r.err = sub.err
			return s
		}
		s.insert(FieldValue{Field: f, Value: val})
	}
	return s
}

// insert places a tagged field at its schema position, so that fields stay
// in the order Kafka's JSON converters print them.
func (s *Struct) insert(fv FieldValue) {
	idx := -1
	for i, f := range s.schema {
		if f == fv.Field {
			idx = i
			break
		}
	}
	at := len(s.Fields)
	for i, cur := range s.Fields {
		for j, f := range s.schema {
			if f == cur.Field && j > idx {
				at = i
				break
			}
		}
		if at != len(s.Fields) {
			break
		}
	}
	s.Fields = append(s.Fields, FieldValue{})
	copy(s.Fields[at+1:], s.Fields[at:])
	s.Fields[at] = fv
}

// minSize is the fewest bytes one element of kind k can take, used to
// bound an array count by the bytes that exist before allocating.
func minSize(k kind, flexible bool) int {
	switch k {
	case kInt16, kUint16:
		return 2
	case kInt32, kUint32:
		return 4
	case kInt64, kFloat64:
		return 8
	case kUUID:
		return 16
	case kString:
		if flexible {
			return 1
		}
		return 2
	case kBytes, kRecords, kArray:
		if flexible {
			return 1
		}
		return 4
	}
	return 1
}

func (r *reader) readValue(f *Field, k kind, v int16, flexible, tagged bool, path string) any {
	nullable := f.Nullable.Has(v)
	switch k {
	case kBool:
		return r.u8(path) != 0
	case kInt8:
		return int8(r.u8(path))
	case kInt16:
		return int16(r.u16(path))
	case kUint16:
		return r.u16(path)
	case kInt32:
		return int32(r.u32(path))
	case kUint32:
		return r.u32(path)
	case kInt64:
		return int64(r.u64(path))
	case kFloat64:
		return math.Float64frombits(r.u64(path))
	case kUUID:
		var u UUID
		copy(u[:], r.take(16, path))
		return u
	case kString, kBytes, kRecords:
		return r.readBytes(f, k, nullable, flexible, path)
	case kStruct:
		if nullable {
			var null bool
			if tagged {
				null = r.uvarint(path) == 0
			} else {
				null = int8(r.u8(path)) < 0
			}
			if null || r.err != nil {
				return nil
			}
		}
		return r.readStruct(f.Fields, v, flexible, path)
	case kArray:
		return r.readArray(f, v, nullable, flexible, path)
	}
	r.fail(path, decode.ErrUnsupported, "", "unknown type %q", f.Type)
	return nil
}

// nullLength reports whether a length read for f is -1 (null), failing as
// the generated readers do when f is not nullable in this version.
func (r *reader) nullLength(f *Field, n int, nullable bool, path string) bool {
	if n >= 0 {
		return false
	}
	if !nullable {
		m := "non-nullable field " + f.JSONName() + " was serialized as null"
		r.fail(path, decode.ErrCorrupt, m, "%s", m)
	}
	return true
}

// readBytes reads a string, bytes or records field: its length (compact
// in flexible versions), then that many bytes, bounded by what is left.
func (r *reader) readBytes(f *Field, k kind, nullable, flexible bool, path string) any {
	n := r.length(k, flexible, path)
	if r.err != nil || r.nullLength(f, n, nullable, path) {
		return nil
	}
	if k == kString && n > 0x7fff {
		m := fmt.Sprintf("string field %s had invalid length %d", f.JSONName(), n)
		r.fail(path, decode.ErrCorrupt, m, "%s", m)
		return nil
	}
	if n > r.left() {
		r.fail(path, decode.ErrTruncated, fmt.Sprintf("Error reading byte array of %d byte(s): only %d byte(s) available", n, r.left()),
			"%s of %d bytes, %d left", f.Type, n, r.left())
		return nil
	}
	b := r.take(n, path)
	if r.err != nil {
		return nil
	}
	if k == kString {
		return string(b)
	}
	return append([]byte{}, b...)
}

// readArray reads an array field: its count, bounded by the bytes left
// before anything is allocated, then its elements.
func (r *reader) readArray(f *Field, v int16, nullable, flexible bool, path string) any {
	n := r.length(kArray, flexible, path)
	if r.err != nil || r.nullLength(f, n, nullable, path) {
		return nil
	}
	// Kafka's generated reader bounds the count by the bytes left; an
	// element takes at least minSize bytes, so kseg bounds it closer
	// (Kafka would then run out of bytes reading the elements).
	if n > r.left() {
		r.fail(path, decode.ErrCorrupt,
			fmt.Sprintf("Tried to allocate a collection of size %d, but there are only %d bytes remaining.", n, r.left()),
			"array of %d elements cannot fit in %d bytes", n, r.left())
		return nil
	}
	if n > r.left()/minSize(f.elem, flexible) {
		r.fail(path, decode.ErrCorrupt, underflow, "array of %d elements cannot fit in %d bytes", n, r.left())
		return nil
	}
	out := make([]any, 0, n)
	// Array elements are never null: Kafka's MessageDataGenerator reads a
	// string or bytes element with nullableVersions Versions.NONE, under
	// the name "<field> element". A zero Versions would be {0, 0}, which
	// holds version 0: a null element of a v0 message would be read.
	el := &Field{Name: f.Name + " element", Type: f.Type[2:], kind: f.elem, Nullable: None}
	for i := 0; i < n && r.err == nil; i++ {
		ep := fmt.Sprintf("%s[%d]", path, i)
		if f.elem == kStruct {
			out = append(out, r.readStruct(f.Fields, v, flexible, ep))
			continue
		}
		out = append(out, r.readValue(el, f.elem, v, flexible, false, ep))
	}
	return out
}
