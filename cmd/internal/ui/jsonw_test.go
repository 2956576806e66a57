package ui

import (
	"math"
	"strconv"
	"testing"
)

// AppendInt replaces strconv.AppendInt on dump's hot path: it must write
// the same digits for every value, at every length and both signs.
func TestAppendIntMatchesStrconv(t *testing.T) {
	values := []int64{0, 1, -1, 9, 10, -10, 99, 100, 101, 999, 1000, 1 << 31, -1 << 31, 1<<32 - 1,
		1700000000000, -1700000000000, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		values = append(values, p-1, p, p+1, -p, -p+1)
	}
	for _, v := range values {
		prefix := []byte(`"k":`)
		got := string(AppendInt(prefix, v))
		want := string(strconv.AppendInt([]byte(`"k":`), v, 10))
		if got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestAppendUintMatchesStrconv(t *testing.T) {
	values := []uint64{0, 9, 10, 99, 100, math.MaxUint32, math.MaxUint32 + 1, 1e19 - 1, 1e19, math.MaxUint64}
	for p := uint64(1); p <= math.MaxUint64/10; p *= 10 {
		values = append(values, p-1, p, p+1, 2*p-1, 2*p)
	}
	for _, v := range values {
		if got, want := string(AppendUint([]byte("x"), v)), string(strconv.AppendUint([]byte("x"), v, 10)); got != want {
			t.Errorf("appendUint(%d) = %q, want %q", v, got, want)
		}
	}
}

// BenchmarkAppendInt formats what a batch line holds: positions, offsets,
// 13-digit timestamps, CRCs, small epochs.
func BenchmarkAppendInt(b *testing.B) {
	values := []int64{268436955, 1144673, 1144673, 1700002382175, 1700002382175, 3511211596, 5007, 1, -1, 12187}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, v := range values {
			buf = AppendInt(buf, v)
		}
	}
}

// TestJSONArrays: Objects and Ints write arrays as members of the object
// being written, the next member after them separated by a comma, and an
// empty array as [].
func TestJSONArrays(t *testing.T) {
	var j JSONWriter
	j.Begin()
	Objects(&j, "a", []int64{0, 1}, func(i *int64) { j.Int("i", *i); j.Str("s", "x") })
	Ints(&j, "n", []int32{1, -2})
	Objects(&j, "e", []int(nil), func(*int) { t.Fatal("an item of an empty array") })
	Ints(&j, "z", []int64(nil))
	j.Bool("last", true)
	j.End()
	if got, want := string(j.B), `{"a":[{"i":0,"s":"x"},{"i":1,"s":"x"}],"n":[1,-2],"e":[],"z":[],"last":true}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
