package schema

import (
	"math"

	"github.com/kseg/kseg/decode"
)

// The typed decoders (typed_gen.go, written by ./gen/typed from the same
// table) read the records kseg groups and kseg txns replay by the million
// straight into Go structs: no *Struct, no value boxed into an interface,
// no field path built or field looked up by name for every record. They
// read what the generic reader reads and check what it checks; a failure,
// or a shape they leave to the generic reader (a tagged struct, a tag
// listed twice), only makes their ok false, and the caller asks
// DecodeInternal, which reads the record again and says what is wrong
// with it. TestTypedDecodersAgree compares the two on every message and
// version, on random and on real records. These are the reader's helpers
// for them.

// bail ends a typed read: the generic reader takes the record.
func (r *reader) bail(why string) { r.fail("", decode.ErrUnsupported, "", "%s", why) }

// typedString is readValue of a string.
func (r *reader) typedString(flexible, nullable bool) string {
	n := r.length(kString, flexible, "")
	switch {
	case r.err != nil:
		return ""
	case n < 0:
		if !nullable {
			r.bail("null string")
		}
		return ""
	case n > 0x7fff || n > r.left():
		r.bail("string length")
		return ""
	}
	return string(r.take(n, ""))
}

// typedBytes is readValue of bytes, aliasing r's buffer.
func (r *reader) typedBytes(flexible, nullable bool) []byte {
	n := r.length(kBytes, flexible, "")
	switch {
	case r.err != nil:
		return nil
	case n < 0:
		if !nullable {
			r.bail("null bytes")
		}
		return nil
	case n > r.left():
		r.bail("bytes length")
		return nil
	}
	return r.take(n, "")
}

// typedArrayLength is readValue's reading and checking of an array's
// length: -1 for null (and after a failure).
func (r *reader) typedArrayLength(flexible, nullable bool, elem kind) int {
	n := r.length(kArray, flexible, "")
	switch {
	case r.err != nil:
		return -1
	case n < 0:
		if !nullable {
			r.bail("null array")
		}
		return -1
	case n > r.left() || n > r.left()/minSize(elem, flexible):
		r.bail("array length")
		return -1
	}
	return n
}

func float64frombits(b uint64) float64 { return math.Float64frombits(b) }
