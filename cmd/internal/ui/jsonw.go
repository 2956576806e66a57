package ui

import (
	"encoding/json"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// JSONWriter appends one JSON object to a byte slice without reflection. Dump
// writes millions of record lines; encoding/json's reflection and
// per-value allocations dominated its profile, and the wire format is
// fixed (docs/json.md), so the encoder is written out by hand.
type JSONWriter struct {
	B     []byte
	First bool
}

// JSONLine writes v, a wire struct, as one JSON line (encoding/json: the
// commands whose lines are few; JSONWriter is for the many).
func JSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// LogOffsets writes a partition's log offsets in Kafka's names, as every
// view that shows a log writes them: logStartOffset, logEndOffset,
// highWatermark, lastStableOffset.
func (j *JSONWriter) LogOffsets(logStart, logEnd, highWatermark, lastStable int64) {
	j.Int("logStartOffset", logStart)
	j.Int("logEndOffset", logEnd)
	j.Int("highWatermark", highWatermark)
	j.Int("lastStableOffset", lastStable)
}

func (j *JSONWriter) Begin() { j.B = append(j.B, '{'); j.First = true }

// BeginLine begins a JSON line: an object whose first key, type, says
// what it is (docs/json.md); EndLine ends it.
func (j *JSONWriter) BeginLine(typ string) { j.Begin(); j.Str("type", typ) }

// EndLine ends the object BeginLine began, and its line.
func (j *JSONWriter) EndLine() { j.End(); j.B = append(j.B, '\n') }

// Spill writes what j holds to w once it passes 256 KiB, between lines: a
// printer of a million lines holds a bounded buffer, not its output.
func (j *JSONWriter) Spill(w io.Writer) error {
	if len(j.B) < 256<<10 {
		return nil
	}
	_, err := w.Write(j.B)
	j.B = j.B[:0]
	return err
}
func (j *JSONWriter) End() { j.B = append(j.B, '}'); j.First = false }

func (j *JSONWriter) Key(k string) {
	if !j.First {
		j.B = append(j.B, ',')
	}
	j.First = false
	j.B = append(j.B, '"')
	j.B = append(j.B, k...)
	j.B = append(j.B, '"', ':')
}

func (j *JSONWriter) Str(k, v string) { j.Key(k); j.B = AppendJSONString(j.B, v) }

// strBytes writes v, which holds a string's bytes, as a JSON string.
func (j *JSONWriter) strBytes(k string, v []byte) { j.Key(k); j.B = AppendJSONString(j.B, v) }
func (j *JSONWriter) Int(k string, v int64) {
	j.Key(k)
	j.B = AppendInt(j.B, v)
}

// AppendInt is strconv.AppendInt(b, v, 10) writing the digits in place,
// two at a time: dump formats five numbers per record and a dozen per
// batch (offsets and timestamps of 7 to 13 digits), and strconv formats
// into a buffer of its own and copies.
func AppendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	return AppendUint(b, u)
}

// AppendUint is strconv.AppendUint(b, u, 10), as appendInt.
func AppendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	// Digits from the bit length: ⌊log10(2)·bits⌋ (1233/4096 ≈ log10 2)
	// is the count or one less, which the table of powers settles.
	n := (bits.Len64(u)*1233)>>12 + 1
	if u < pow10[n-1] {
		n--
	}
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	d := b[len(b)-n:]
	i := n
	// Eight digits per 64-bit division, each eight as four independent
	// 32-bit pairs; then pairs for the rest.
	for u >= 1e8 {
		q := u / 1e8
		put8Digits(d[i-8:i], uint32(u-q*1e8))
		i -= 8
		u = q
	}
	v := uint32(u)
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		d[i], d[i+1] = digitPairs[r], digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		d[i-2], d[i-1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		d[i-1] = byte('0' + v)
	}
	return b
}

// put8Digits writes v < 10^8 as exactly eight digits into d.
func put8Digits(d []byte, v uint32) {
	_ = d[7]
	hi, lo := v/10000, v%10000
	a, b2, c, e := hi/100*2, hi%100*2, lo/100*2, lo%100*2
	d[0], d[1] = digitPairs[a], digitPairs[a+1]
	d[2], d[3] = digitPairs[b2], digitPairs[b2+1]
	d[4], d[5] = digitPairs[c], digitPairs[c+1]
	d[6], d[7] = digitPairs[e], digitPairs[e+1]
}

// pow10[i] is 10^i.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" + "60616263646566676869" + "70717273747576777879" +
	"80818283848586878889" + "90919293949596979899"

func (j *JSONWriter) uint(k string, v uint64) {
	j.Key(k)
	j.B = AppendUint(j.B, v)
}
func (j *JSONWriter) Bool(k string, v bool) { j.Key(k); j.B = strconv.AppendBool(j.B, v) }
func (j *JSONWriter) Null(k string)         { j.Key(k); j.B = append(j.B, "null"...) }

// bytes writes standard base64, or null for a nil slice.
func (j *JSONWriter) bytes(k string, v []byte) {
	j.Key(k)
	j.B = AppendBase64OrNull(j.B, v)
}

// AppendBase64OrNull appends v as a JSON string of standard base64, or
// Null for a nil slice.
func AppendBase64OrNull(b, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = AppendBase64(b, v)
	return append(b, '"')
}

// Raw writes an already-encoded JSON value.
func (j *JSONWriter) Raw(k string, v []byte) { j.Key(k); j.B = append(j.B, v...) }

// OptInt writes v, or null when !ok.
func (j *JSONWriter) OptInt(k string, v int64, ok bool) {
	if ok {
		j.Int(k, v)
	} else {
		j.Null(k)
	}
}

const hexDigits = "0123456789abcdef"

// AppendJSONString quotes s per RFC 8259, replacing invalid UTF-8 with
// U+FFFD as encoding/json does. It takes bytes too, so that header keys
// need no conversion (and no allocation).
func AppendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeRune is utf8.DecodeRune for either type.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	if b, ok := any(s).([]byte); ok {
		return utf8.DecodeRune(b)
	}
	return utf8.DecodeRuneInString(string(s))
}

func NonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// Objects writes the array k of objects, one per element of xs, item
// writing the fields of each.
func Objects[T any](j *JSONWriter, k string, xs []T, item func(x *T)) {
	j.Key(k)
	j.B = append(j.B, '[')
	for i := range xs {
		if i > 0 {
			j.B = append(j.B, ',')
		}
		j.Begin()
		item(&xs[i])
		j.End()
	}
	j.B = append(j.B, ']')
	j.First = false
}

// Ints writes the array k of integers.
func Ints[T ~int16 | ~int32 | ~int64 | ~int](j *JSONWriter, k string, xs []T) {
	j.Key(k)
	j.B = append(j.B, '[')
	for i, x := range xs {
		if i > 0 {
			j.B = append(j.B, ',')
		}
		j.B = strconv.AppendInt(j.B, int64(x), 10)
	}
	j.B = append(j.B, ']')
	j.First = false
}
