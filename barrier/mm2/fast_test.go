package mm2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// TestSlotSize: the window's memory is what --window's help says.
func TestSlotSize(t *testing.T) {
	if n := unsafe.Sizeof(slot{}); n != 72 {
		t.Errorf("a slot is %d bytes; --window's help and docs/mm2.md say 72", n)
	}
}

// TestFastPathAgreesWithDecoder: wherever parseFast reads a batch, it
// gives every record the offset, timestamp and content hash the general
// decoder does (contentHash re-encodes the decoded fields): over every
// .log of kseg's fixtures and, when present, the real broker fixtures.
func TestFastPathAgreesWithDecoder(t *testing.T) {
	roots := []string{filepath.Join("..", "..", "testdata"), testkit.RealRoot()}
	fast, batches := 0, 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".log") || strings.Contains(p, "broken") {
				return nil
			}
			n, b := checkFastPath(t, p)
			fast, batches = fast+n, batches+b
			return nil
		})
	}
	if fast < 100 {
		t.Fatalf("the fast path read %d of %d batches", fast, batches)
	}
	t.Logf("the fast path read %d of %d batches", fast, batches)
}

func checkFastPath(t *testing.T, path string) (fast, batches int) {
	t.Helper()
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Path: path})
	defer sc.Close()
	var dec decode.Decoder
	var recs []fastRecord
	var buf []byte
	for sc.Next() {
		b := sc.Batch()
		batches++
		var ok bool
		if recs, ok = parseFast(b, recs); !ok {
			continue
		}
		fast++
		i := 0
		err := dec.Records(b, func(r *decode.Record) error {
			if i >= len(recs) {
				t.Fatalf("%s: batch %d: the fast path read fewer records", path, b.BaseOffset)
			}
			f := recs[i]
			if f.off != r.Offset || f.ts != r.Timestamp || hashContent(f.content) != contentHash(r, &buf) {
				t.Fatalf("%s: record %d: fast %d %d, decoder %d %d (or their contents differ)", path, r.Offset, f.off, f.ts, r.Offset, r.Timestamp)
			}
			i++
			return nil
		})
		if err != nil || i != len(recs) {
			t.Fatalf("%s: batch %d: the decoder read %d records (%v), the fast path %d", path, b.BaseOffset, i, err, len(recs))
		}
	}
	return fast, batches
}

// TestFastPathRefuses: what is not a canonical uncompressed v2 data batch
// goes to the decoder: a compressed batch, a control batch, and a record
// whose key length is written in two bytes where one does.
func TestFastPathRefuses(t *testing.T) {
	rec := []decode.RecordSpec{{Timestamp: 1, Key: []byte("k"), Value: []byte("v")}}
	gz, _ := decode.AppendBatch(nil, decode.BatchSpec{Compression: decode.CompressionGzip, ProducerID: -1, BaseSequence: -1}, rec)
	ctl, _ := decode.AppendBatch(nil, decode.BatchSpec{Control: true, Transactional: true, ProducerID: 1, BaseSequence: -1},
		[]decode.RecordSpec{{Key: decode.AppendControlKey(nil, decode.ControlCommit), Value: decode.AppendEndTxnMarkerValue(nil, 0)}})
	plain, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: -1, BaseSequence: -1}, rec)
	for name, raw := range map[string][]byte{"gzip": gz, "control": ctl} {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseFast(&b, nil); ok {
			t.Errorf("%s: read by the fast path", name)
		}
	}
	b, _ := decode.ParseBatch(plain)
	got, ok := parseFast(&b, nil)
	if !ok || len(got) != 1 || string(got[0].content) != "\x02k\x02v\x00" {
		t.Fatalf("plain batch: %v %v", ok, got)
	}
	// keyLength 1 (zig-zag 2) as 0x82 0x00: valid for Kafka's reader, not
	// what a client writes.
	if canonicalContent([]byte("\x82\x00k\x02v\x00")) {
		t.Error("a two-byte keyLength of 1 passed as canonical")
	}
	if !canonicalContent([]byte("\x01\x01\x02\x02h\x01")) { // null key, null value, header "h" with a null value
		t.Error("null key, null value and a header with a null value refused")
	}
}

func hashContent(c []byte) uint64 { return mapHash(c) }

// TestCanonicalContentShortcut: canonicalContent's inline reading of the
// usual record (one-byte key and value lengths, no headers) answers as
// the full reading (canonicalContentLong) on every content of up to two
// bytes, the first 2^17 of three and four bytes, and on records with short and long lengths, null and empty keys
// and values, headers, and their truncations and extensions.
func TestCanonicalContentShortcut(t *testing.T) {
	var inputs [][]byte
	for n := 0; n <= 4; n++ {
		for v := 0; v < 1<<(8*n) && v < 1<<17; v++ {
			c := make([]byte, n)
			for i := range c {
				c[i] = byte(v >> (8 * i))
			}
			inputs = append(inputs, c)
		}
	}
	long := strings.Repeat("x", 100) // a two-byte length (zig-zag 200)
	for _, c := range []string{"\x02k\x02v\x00", "\x01\x01\x00", "\x00\x00\x00", "\x01\x02v\x00", "\x02k\x01\x00",
		"\x90\x01" + long + "\x02v\x00", "\x02k\x90\x01" + long + "\x00", "\x02k\x02v\x02\x02h\x02w", "\x02k\x02v\x02\x02h\x01"} {
		for i := 0; i <= len(c); i++ {
			inputs = append(inputs, []byte(c[:i]), []byte(c[:i]+"\x00"))
		}
	}
	for _, c := range inputs {
		if got, want := canonicalContent(c), canonicalContentLong(c); got != want {
			t.Fatalf("%x: canonicalContent %v, the full reading %v", c, got, want)
		}
	}
}
