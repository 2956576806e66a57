package segment

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

func buildOffsetIndex(t *testing.T, base int64, es ...IndexEntry) []byte {
	t.Helper()
	return buildIndex(t, base, AppendOffsetIndexEntry, es)
}

func buildTimeIndex(t *testing.T, base int64, es ...TimeIndexEntry) []byte {
	t.Helper()
	return buildIndex(t, base, AppendTimeIndexEntry, es)
}

// buildIndex encodes the entries of an index with base offset base.
func buildIndex[E any](t *testing.T, base int64, appendEntry func([]byte, int64, E) ([]byte, error), es []E) []byte {
	t.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = appendEntry(b, base, e); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// encodesAs fails t unless b is the bytes the hex h spells (spaces aside).
func encodesAs(t *testing.T, b []byte, h string) {
	t.Helper()
	if want := testkit.MustHex(t, h); string(b) != string(want) {
		t.Fatalf("encoded %x, want %x", b, want)
	}
}

func TestOffsetIndexEncoding(t *testing.T) {
	b := buildOffsetIndex(t, 1000, IndexEntry{1005, 4096}, IndexEntry{1010, 8192})
	encodesAs(t, b, "00000005 00001000 0000000a 00002000")
	x := ParseOffsetIndex(b, 1000)
	if x.Slots != 2 || x.Length != 16 || !reflect.DeepEqual(x.Entries, []IndexEntry{{1005, 4096}, {1010, 8192}}) ||
		x.LastSlot != (IndexEntry{1010, 8192}) || !x.TailZero || x.TrailingBytes() != 0 || x.TailSlots() != 0 {
		t.Errorf("parsed %+v", x)
	}
	if err := SanityCheckOffsetIndex(&x); err != nil {
		t.Errorf("sanity: %v", err)
	}
	// Out-of-range offsets are refused, as AbstractIndex.toRelative does.
	for _, off := range []int64{999, 1000 + 1<<31} {
		if _, err := AppendOffsetIndexEntry(nil, 1000, IndexEntry{Offset: off}); !errors.Is(err, ErrOffsetOverflow) {
			t.Errorf("offset %d: err = %v", off, err)
		}
		if _, err := AppendTimeIndexEntry(nil, 1000, TimeIndexEntry{Offset: off}); !errors.Is(err, ErrOffsetOverflow) {
			t.Errorf("time offset %d: err = %v", off, err)
		}
	}
	if r, err := RelativeOffset(1000, 1000+1<<31-1); err != nil || r != 1<<31-1 {
		t.Errorf("RelativeOffset max = %d, %v", r, err)
	}
}

func TestOffsetIndexZeroTail(t *testing.T) {
	// A preallocated active index after an unclean shutdown: two entries,
	// then zeros, then a partial slot.
	b := buildOffsetIndex(t, 500, IndexEntry{510, 100}, IndexEntry{520, 200})
	b = append(b, make([]byte, 8*5+3)...)
	x := ParseOffsetIndex(b, 500)
	if x.Slots != 7 || len(x.Entries) != 2 || x.TailSlots() != 5 || x.TrailingBytes() != 3 || !x.TailZero {
		t.Fatalf("parsed %+v", x)
	}
	if x.LastSlot != (IndexEntry{500, 0}) {
		t.Errorf("LastSlot = %+v", x.LastSlot)
	}
	// The zero tail passes the offset check but not the length check.
	err := SanityCheckOffsetIndex(&x)
	wantCorrupt(t, err, "length", 56, decode.ErrTruncated)
	msg, ok := decode.KafkaMessage(err)
	if !ok || !strings.HasPrefix(msg, "Index file ") || !strings.HasSuffix(msg, " is corrupt, found 59 bytes which is neither positive nor a multiple of 8") {
		t.Errorf("Kafka message = %q", msg)
	}
	// Garbage after the first base-offset slot: the tail is not clean.
	b[len(b)-1] = 1
	if x := ParseOffsetIndex(b, 500); x.TailZero || len(x.Entries) != 2 {
		t.Errorf("dirty tail parsed %+v", x)
	}
	// Slot 0 at the base offset is a real entry.
	x = ParseOffsetIndex(make([]byte, 16), 7)
	if x.Slots != 2 || !reflect.DeepEqual(x.Entries, []IndexEntry{{7, 0}}) || !x.TailZero {
		t.Errorf("all-zero parsed %+v", x)
	}
	// Non-zero position but relative offset 0 at i > 0 also ends the
	// listing, exactly as DumpLogSegments' test does.
	b = buildOffsetIndex(t, 0, IndexEntry{3, 10}, IndexEntry{0, 99}, IndexEntry{9, 20})
	x = ParseOffsetIndex(b, 0)
	if len(x.Entries) != 1 || x.TailZero || x.LastSlot != (IndexEntry{9, 20}) {
		t.Errorf("parsed %+v", x)
	}
}

func TestOffsetIndexSanityLastOffset(t *testing.T) {
	// Relative offset -1 (0xffffffff): last offset below the base offset.
	b := append(buildOffsetIndex(t, 100, IndexEntry{105, 1}), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2)
	x := ParseOffsetIndex(b, 100)
	x.Path = "00000000000000000100.index"
	err := SanityCheckOffsetIndex(&x)
	ce := wantCorrupt(t, err, "relativeOffset", 8, decode.ErrCorrupt)
	if ce.Path != "00000000000000000100.index" {
		t.Errorf("Path = %q", ce.Path)
	}
	msg, _ := decode.KafkaMessage(err)
	abs, _ := filepath.Abs(x.Path)
	want := "Corrupt index found, index file " + abs + " has non-zero size but the last offset is 99 which is less than the base offset 100"
	if msg != want {
		t.Errorf("Kafka message\n got %q\nwant %q", msg, want)
	}
	if !strings.Contains(err.Error(), "00000000000000000100.index: position 8: relativeOffset: corrupt: last offset 99") {
		t.Errorf("Error() = %q", err.Error())
	}
	// Empty index passes.
	x = ParseOffsetIndex(nil, 100)
	if x.Slots != 0 || len(x.Entries) != 0 || x.LastSlot != (IndexEntry{100, 0}) || SanityCheckOffsetIndex(&x) != nil {
		t.Errorf("empty: %+v", x)
	}
}

func TestOffsetIndexLookup(t *testing.T) {
	x := ParseOffsetIndex(buildOffsetIndex(t, 100, IndexEntry{110, 1000}, IndexEntry{120, 2000}, IndexEntry{130, 3000}), 100)
	for target, want := range map[int64]IndexEntry{
		50: {100, 0}, 100: {100, 0}, 109: {100, 0}, 110: {110, 1000}, 125: {120, 2000}, 130: {130, 3000}, 1 << 40: {130, 3000},
	} {
		if got := x.Lookup(target); got != want {
			t.Errorf("Lookup(%d) = %+v, want %+v", target, got, want)
		}
	}
}

func TestTimeIndex(t *testing.T) {
	b := buildTimeIndex(t, 1000, TimeIndexEntry{1700000000000, 1004}, TimeIndexEntry{1700000000500, 1010})
	encodesAs(t, b, "0000018bcfe56800 00000004 0000018bcfe569f4 0000000a")
	x := ParseTimeIndex(b, 1000)
	if x.Slots != 2 || len(x.Entries) != 2 || x.LastSlot != (TimeIndexEntry{1700000000500, 1010}) || !x.TailZero {
		t.Fatalf("parsed %+v", x)
	}
	if err := SanityCheckTimeIndex(&x); err != nil {
		t.Errorf("sanity: %v", err)
	}

	// Preallocated tail: listing stops, but Kafka's sanity check sees the
	// zero last slot and fails on the timestamp.
	z := ParseTimeIndex(append(append([]byte(nil), b...), make([]byte, 36)...), 1000)
	if z.Slots != 5 || len(z.Entries) != 2 || z.TailSlots() != 3 || !z.TailZero {
		t.Fatalf("zero tail parsed %+v", z)
	}
	z.Path = "x.timeindex"
	err := SanityCheckTimeIndex(&z)
	wantCorrupt(t, err, "timestamp", 48, decode.ErrCorrupt)
	msg, _ := decode.KafkaMessage(err)
	abs, _ := filepath.Abs("x.timeindex")
	if msg != "Corrupt time index found, time index file ("+abs+") has non-zero size but the last timestamp is 0 which is less than the first timestamp 1700000000000" {
		t.Errorf("Kafka message = %q", msg)
	}

	// A time-index slot whose offset is the base offset ends the listing
	// whatever its timestamp.
	c := ParseTimeIndex(buildTimeIndex(t, 0, TimeIndexEntry{5, 0}, TimeIndexEntry{6, 0}, TimeIndexEntry{7, 3}), 0)
	if len(c.Entries) != 1 || c.Slots != 3 || c.TailZero {
		t.Errorf("parsed %+v", c)
	}

	// Last offset below base.
	o := ParseTimeIndex(append(buildTimeIndex(t, 10, TimeIndexEntry{5, 11}), 0, 0, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xfe), 10)
	err = SanityCheckTimeIndex(&o)
	wantCorrupt(t, err, "relativeOffset", 20, decode.ErrCorrupt)
	if msg, _ := decode.KafkaMessage(err); !strings.HasSuffix(msg, "has non-zero size but the last offset is 8 which is less than the first offset 10") {
		t.Errorf("Kafka message = %q", msg)
	}

	// Length not a multiple of 12.
	l := ParseTimeIndex(append(append([]byte(nil), b...), 0, 0, 0, 0, 0), 1000)
	if l.TrailingBytes() != 5 || l.Slots != 2 {
		t.Fatalf("parsed %+v", l)
	}
	err = SanityCheckTimeIndex(&l)
	wantCorrupt(t, err, "length", 24, decode.ErrTruncated)
	if msg, _ := decode.KafkaMessage(err); !strings.HasSuffix(msg, " is corrupt, found 29 bytes which is neither positive nor a multiple of 12") || !strings.HasPrefix(msg, "Time index file ") {
		t.Errorf("Kafka message = %q", msg)
	}

	// Empty: lastEntry is (-1, base), and the checks pass.
	e := ParseTimeIndex(nil, 10)
	if e.LastSlot != (TimeIndexEntry{-1, 10}) || SanityCheckTimeIndex(&e) != nil {
		t.Errorf("empty: %+v", e)
	}
}

// writePreallocated writes entries at the start of a zero-filled file of
// size bytes, as a broker preallocates an active index.
func writePreallocated(t *testing.T, path string, size int, entries []byte) {
	t.Helper()
	full := make([]byte, size)
	copy(full, entries)
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadIndexFiles(t *testing.T) {
	dir := t.TempDir()
	// A 10 MiB preallocated active index with 3 real entries.
	p := filepath.Join(dir, "00000000000000000000.index")
	writePreallocated(t, p, DefaultMaxIndexSize, buildOffsetIndex(t, 0, IndexEntry{10, 4100}, IndexEntry{20, 8300}, IndexEntry{30, 12500}))
	x, err := ReadOffsetIndex(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if x.Path != p || x.Slots != DefaultMaxIndexSize/8 || len(x.Entries) != 3 || !x.TailZero || x.Length != DefaultMaxIndexSize {
		t.Errorf("parsed Slots=%d Entries=%d TailZero=%v", x.Slots, len(x.Entries), x.TailZero)
	}
	if cap(x.Entries) > 1024 {
		t.Errorf("entries capacity %d: memory not bounded by the valid entries", cap(x.Entries))
	}
	tp := filepath.Join(dir, "00000000000000000000.timeindex")
	writePreallocated(t, tp, DefaultMaxIndexSize/12*12, buildTimeIndex(t, 0, TimeIndexEntry{100, 10}, TimeIndexEntry{200, 30}))
	tx, err := ReadTimeIndex(tp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Slots != 873813 || len(tx.Entries) != 2 || tx.Length != 10485756 {
		t.Errorf("time parsed Slots=%d Entries=%d Length=%d", tx.Slots, len(tx.Entries), tx.Length)
	}
	if _, err := ReadOffsetIndex(filepath.Join(dir, "missing.index"), 0); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
	if _, err := ReadTimeIndex(dir, 0); err == nil {
		t.Error("ReadTimeIndex(dir) succeeded")
	}
}

// TestIndexRealFixtures checks every broker-written .index/.timeindex
// against the entry counts in the fixtures README (= size / entry size),
// and that each passes Kafka's sanity check. They are all trimmed, so the
// valid entries are all the slots.
func TestIndexRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	want := map[string]int{
		"macsakini__KafkaCluster/kafka/data/quickstart-events-0/00000000000000000000.index":                                                                  0,
		"macsakini__KafkaCluster/kafka/data/quickstart-events-0/00000000000000000000.timeindex":                                                              1,
		"macsakini__KafkaCluster/kafka/data/tenitems-0/00000000000000000000.index":                                                                           0,
		"macsakini__KafkaCluster/kafka/data/tenitems-0/00000000000000000000.timeindex":                                                                       1,
		"macsakini__KafkaCluster/kafka/data/test-0/00000000000000000000.index":                                                                               45,
		"macsakini__KafkaCluster/kafka/data/test-0/00000000000000000000.timeindex":                                                                           46,
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000000.index":     1,
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000000.timeindex": 1,
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000000000.index":                                                              327,
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000000000.timeindex":                                                          331,
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000003586.index":                                                              122,
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000003586.timeindex":                                                          123,
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000000000.index":                                                                   789,
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000000000.timeindex":                                                               796,
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011630.index":                                                                   0,
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011630.timeindex":                                                               1,
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17/00000000000000000000.index":                                                                   0,
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17/00000000000000000000.timeindex":                                                               1,
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000000.index":                                                                   0,
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000000.timeindex":                                                               1,
	}
	seen := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, ok := ParseFileName(d.Name())
		if !ok || (fi.Kind != KindIndex && fi.Kind != KindTimeIndex) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		n, known := want[filepath.ToSlash(rel)]
		if !known {
			// The second set's README gives no per-file counts; its
			// indexes are trimmed too (the preallocated ones were not
			// retrievable), so every slot of the file is an entry.
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(OffsetIndexEntrySize)
			if filepath.Ext(p) == ".timeindex" {
				size = TimeIndexEntrySize
			}
			if fi.Size()%size != 0 {
				t.Errorf("%s: %d bytes is not a whole number of entries", rel, fi.Size())
			}
			n = int(fi.Size() / size)
		}
		seen++
		var slots, entries int
		var tailZero bool
		var sanity error
		var lastOff int64
		if fi.Kind == KindIndex {
			x, err := ReadOffsetIndex(p, fi.Offset)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			slots, entries, tailZero, sanity = x.Slots, len(x.Entries), x.TailZero, SanityCheckOffsetIndex(&x)
			for i, e := range x.Entries {
				if e.Offset <= lastOff && i > 0 || e.Position < 0 {
					t.Errorf("%s: entry %d %+v not increasing", rel, i, e)
				}
				lastOff = e.Offset
			}
		} else {
			x, err := ReadTimeIndex(p, fi.Offset)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			slots, entries, tailZero, sanity = x.Slots, len(x.Entries), x.TailZero, SanityCheckTimeIndex(&x)
			for i := 1; i < len(x.Entries); i++ {
				if x.Entries[i].Timestamp <= x.Entries[i-1].Timestamp || x.Entries[i].Offset < x.Entries[i-1].Offset {
					t.Errorf("%s: entry %d %+v out of order", rel, i, x.Entries[i])
				}
			}
		}
		if slots != n || entries != n || !tailZero || sanity != nil {
			t.Errorf("%s: slots %d entries %d tailZero %v sanity %v; want %d entries", rel, slots, entries, tailZero, sanity, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	manifest := realManifest(t, root)
	if n := countManifest(manifest, func(n string) bool {
		return strings.HasSuffix(n, IndexSuffix) || strings.HasSuffix(n, TimeIndexSuffix)
	}); seen != n || n < len(want) {
		t.Errorf("saw %d index files, the README lists %d", seen, n)
	}
}
