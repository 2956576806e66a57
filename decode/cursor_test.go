package decode

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// The first failure sticks, with the absolute position of the field that
// failed; later reads return zero and do not move.
func TestCursorStickyPositionedError(t *testing.T) {
	c := NewCursor([]byte{0x00, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01}, 100)
	if v := c.Int16("version"); v != 7 || c.Pos() != 102 {
		t.Fatalf("Int16 = %d at %d", v, c.Pos())
	}
	if v := c.Varint("offsetDelta"); v != 0 {
		t.Fatalf("Varint of an overlong encoding = %d", v)
	}
	if v := c.Int8("next"); v != 0 {
		t.Fatalf("read %d after a failure", v)
	}
	ce, ok := AsCorrupt(c.Err())
	if !ok || ce.Pos != 102 || ce.Field != "offsetDelta" || !errors.Is(ce, ErrCorrupt) || c.Pos() != 102 {
		t.Fatalf("err %v at %d, want offsetDelta at 102", c.Err(), c.Pos())
	}
	c.Fail(0, "other", ErrTruncated, "later")
	if c.Err() != ce {
		t.Fatalf("Fail replaced the first error: %v", c.Err())
	}
}

// Sub keeps absolute positions and confines reads to its bytes.
func TestCursorSub(t *testing.T) {
	c := NewCursor([]byte{1, 2, 3, 4, 5}, 10)
	c.Int8("a")
	s := c.Sub(2, "body")
	if s.Pos() != 11 || s.Len() != 2 || c.Pos() != 13 {
		t.Fatalf("sub at %d (%d bytes), parent at %d", s.Pos(), s.Len(), c.Pos())
	}
	s.Int32("wide")
	ce, ok := AsCorrupt(s.Err())
	if !ok || ce.Pos != 11 || !errors.Is(ce, ErrTruncated) {
		t.Fatalf("reading past a sub-cursor: %v", s.Err())
	}
	if c.Err() != nil || c.Int16("rest") != 0x0405 {
		t.Fatalf("parent disturbed: %v", c.Err())
	}
	bad := c.Sub(1, "more")
	if bad.Err() == nil || c.Err() == nil {
		t.Fatal("Sub past the end did not fail")
	}
}

// FirstRecord reads only the first record, as Kafka's iterator does: a
// recordsCount that overstates what follows does not hide it (Records
// refuses such a batch up front), while a single-record batch with bytes
// after its record is refused with Records' own error.
func TestFirstRecordLikeKafkasIterator(t *testing.T) {
	recs := []RecordSpec{{Timestamp: 5, Key: []byte("k"), Value: []byte("v")}}
	raw, err := AppendBatch(nil, BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	withCount := func(n int32, extra []byte) Batch {
		r := append(append([]byte(nil), raw...), extra...)
		binary.BigEndian.PutUint32(r[recordsCountOffset:], uint32(n))
		binary.BigEndian.PutUint32(r[8:], uint32(len(r)-LogOverhead))
		binary.BigEndian.PutUint32(r[17:], CRC32C(r[21:]))
		b, err := ParseBatch(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var d Decoder
	b := withCount(50, nil)
	if err := d.Records(&b, func(*Record) error { return nil }); err == nil {
		t.Fatal("Records accepted 50 records in one record's bytes")
	}
	r, err := d.FirstRecord(&b)
	if err != nil || string(r.Key) != "k" || string(r.Value) != "v" || r.Offset != 0 || r.Timestamp != 5 {
		t.Fatalf("FirstRecord = %+v, %v", r, err)
	}

	b = withCount(1, []byte{0, 0})
	recErr := d.Records(&b, func(*Record) error { return nil })
	_, err = d.FirstRecord(&b)
	if recErr == nil || err == nil || err.Error() != recErr.Error() {
		t.Fatalf("trailing bytes: FirstRecord %v, Records %v", err, recErr)
	}

	b = withCount(0, nil)
	if r, err := d.FirstRecord(&b); r != nil || err != nil {
		t.Fatalf("empty batch: %+v, %v", r, err)
	}
}

// FuzzFirstRecord: whenever Records decodes a batch, FirstRecord yields its
// first record; when FirstRecord fails on a batch of one record, it fails
// exactly as Records does; its errors obey the CorruptError oracle.
func FuzzFirstRecord(f *testing.F) {
	fuzzBatches(f, func(t *testing.T, _ []byte, b Batch) {
		d := Decoder{MaxDecompressed: recordsCap}
		var first *RecordSpec
		recErr := d.Records(&b, func(r *Record) error {
			if first == nil {
				s := specOf(r)
				first = &s
			}
			return nil
		})
		var fd Decoder
		fd.MaxDecompressed = recordsCap
		r, err := fd.FirstRecord(&b)
		if err != nil {
			checkCorrupt(t, err, len(b.Raw))
		}
		if recErr == nil {
			switch {
			case err != nil:
				t.Fatalf("Records decodes, FirstRecord fails: %v", err)
			case (r == nil) != (first == nil):
				t.Fatalf("FirstRecord %+v, Records' first %+v", r, first)
			case r != nil && !reflect.DeepEqual(specOf(r), *first):
				t.Fatalf("FirstRecord %+v, Records' first %+v", specOf(r), *first)
			}
		}
		if err != nil && b.RecordCount == 1 && (recErr == nil || recErr.Error() != err.Error()) {
			t.Fatalf("one record: FirstRecord %v, Records %v", err, recErr)
		}
	})
}

// Varint and Varlong share one reading of base-128 groups; each keeps
// ByteUtils' bound (5 bytes for readVarint, 10 for readVarlong), its own
// messages, the position of the field's first byte, and does not move on
// a failure.
func TestCursorVarintVarlongBounds(t *testing.T) {
	cont := func(n int, last byte) []byte { return append(bytesOf(0x80, n), last) }
	for _, tc := range []struct {
		name string
		b    []byte
		long bool
		want int64
		msg  string // "" = no failure
	}{
		{"varint -1", binary.AppendVarint(nil, -1), false, -1, ""},
		{"varint max", binary.AppendVarint(nil, 1<<31-1), false, 1<<31 - 1, ""},
		{"varint min", binary.AppendVarint(nil, -1<<31), false, -1 << 31, ""},
		{"varint 5th byte high bits dropped", cont(4, 0x7f), false, 0x78000000, ""},
		{"varint 5 bytes continued", cont(4, 0x80), false, 0, "corrupt: varint is too long, the most significant bit in the 5th byte is set"},
		{"varint cut", cont(2, 0x80)[:3], false, 0, "truncated: varint runs past the end"},
		{"varlong max", binary.AppendVarint(nil, 1<<63-1), true, 1<<63 - 1, ""},
		{"varlong min", binary.AppendVarint(nil, -1<<63), true, -1 << 63, ""},
		{"varlong 6 bytes", binary.AppendVarint(nil, 1<<40), true, 1 << 40, ""},
		{"varlong 10 bytes continued", cont(9, 0x80), true, 0, "corrupt: varlong is too long"},
		{"varlong cut", cont(6, 0x80)[:7], true, 0, "truncated: varlong runs past the end"},
	} {
		c := NewCursor(append([]byte{9}, tc.b...), 50)
		c.Int8("before")
		var got int64
		if tc.long {
			got = c.Varlong("f")
		} else {
			got = int64(c.Varint("f"))
		}
		if got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
		if tc.msg == "" {
			if c.Err() != nil || c.Len() != 0 {
				t.Errorf("%s: %v, %d bytes left", tc.name, c.Err(), c.Len())
			}
			continue
		}
		ce, ok := AsCorrupt(c.Err())
		if !ok || ce.Pos != 51 || ce.Field != "f" || ce.Err.Error() != tc.msg || c.Pos() != 51 {
			t.Errorf("%s: %v (cursor at %d), want %q at 51, not moved", tc.name, c.Err(), c.Pos(), tc.msg)
		}
	}
}

func bytesOf(b byte, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = b
	}
	return s
}
