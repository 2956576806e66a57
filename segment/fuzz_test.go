package segment

// Fuzz targets for every file parser in this package, with oracles beyond
// "no panic" (STYLE.md patterns 8 and 12):
//
//   - FuzzScanner: batches are contiguous and alias exactly the bytes they
//     came from; the tail classification agrees with the bytes after
//     validBytes; re-scanning the valid prefix gives the same batches and a
//     clean tail; Limit and Start behave as scanning a cut copy; a failing
//     reader yields a prefix of the batches and an I/O error, never damage.
//   - FuzzOffsetIndex, FuzzTimeIndex, FuzzTxnIndex: entries decode from,
//     and re-encode to, the slots they came from; the sanity checks fail
//     exactly when Kafka's do.
//   - FuzzSnapshot: Encode(Parse(x)) == x for a snapshot without trailing
//     bytes; Parse(Encode(e)) == e.
//   - FuzzCheckpoint: Parse(Encode(Parse(x))) == Parse(x) for the offset
//     and leader-epoch checkpoints and partition.metadata.
//
// Every error is a *decode.CorruptError inside the input with exactly one
// class sentinel, and parsing n bytes allocates O(n) (O(n + buffer) for the
// scanner). Seeds: the spec's vectors, files built here, and real files
// under ../testdata and ../../shared/fixtures/real when present.
// testdata/bench/fuzz.sh runs every target; docs/fuzzing.md explains the workflow.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

var classes = []error{decode.ErrCorrupt, decode.ErrCRCMismatch, decode.ErrTruncated, decode.ErrTooLarge, decode.ErrUnsupported}

// checkCorrupt is the oracle for every parser error: a *decode.CorruptError
// inside the n input bytes, naming a field, wrapping exactly one class.
func checkCorrupt(t *testing.T, err error, n int64) *decode.CorruptError {
	t.Helper()
	ce, ok := decode.AsCorrupt(err)
	if !ok {
		t.Fatalf("error is a %T, not a *decode.CorruptError: %v", err, err)
	}
	if ce.Pos < 0 || ce.Pos > n {
		t.Fatalf("error position %d outside the %d input bytes: %v", ce.Pos, n, err)
	}
	if ce.Field == "" {
		t.Fatalf("error names no field: %v", err)
	}
	k := 0
	for _, c := range classes {
		if errors.Is(err, c) {
			k++
		}
	}
	if k != 1 {
		t.Fatalf("error wraps %d class sentinels, want exactly one: %v", k, err)
	}
	return ce
}

// classOf is the one class sentinel err wraps, or nil.
func classOf(err error) error {
	for _, c := range classes {
		if errors.Is(err, c) {
			return c
		}
	}
	return nil
}

// heapAllocated is the process's cumulative heap allocation (see the decode
// package's fuzz tests: runtime/metrics, not the stop-the-world MemStats).
func heapAllocated() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// checkAllocs fails when fn allocated more than perByte*n + extra + 1 MiB;
// the MiB absorbs the counter's per-span granularity.
func checkAllocs(t *testing.T, what string, n, perByte, extra int, fn func()) {
	t.Helper()
	before := heapAllocated()
	fn()
	got := heapAllocated() - before
	if bound := uint64(perByte*n + extra + 1<<20); got > bound {
		t.Fatalf("%s of %d bytes allocated %d bytes, bound %d", what, n, got, bound)
	}
}

// fixtureFiles returns the contents (at most limit bytes each) of the files
// whose names end in one of suffixes under the repository's testdata/ and
// the shared real fixtures; roots that do not exist are skipped silently.
func fixtureFiles(limit int, suffixes ...string) [][]byte {
	var out [][]byte
	for _, root := range []string{filepath.Join("..", "testdata"), testkit.RealRoot()} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			for _, s := range suffixes {
				if strings.HasSuffix(p, s) {
					if b, err := testkit.ReadHead(p, limit); err == nil {
						out = append(out, b)
					}
					break
				}
			}
			return nil
		})
	}
	return out
}

func mustHexF(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// ---------------------------------------------------------------- FuzzScanner

const scanPath = "00000000000000000000.log"

// builtLog is a small healthy segment: v2 batches of every codec, a
// transaction with its COMMIT marker, a barrier and a legacy message.
func builtLog(tb testing.TB) []byte {
	tb.Helper()
	var c decode.Codecs
	var log []byte
	ts := int64(1700000000000)
	off := int64(0)
	for codec := decode.CompressionNone; codec <= decode.CompressionZstd; codec++ {
		recs := []decode.RecordSpec{{Timestamp: ts, Key: []byte("k"), Value: []byte("v")}, {OffsetDelta: 1, Timestamp: ts + 1, Value: []byte("w")}}
		var err error
		log, err = c.AppendBatch(log, decode.BatchSpec{BaseOffset: off, Compression: codec, ProducerID: 7, ProducerEpoch: 0, BaseSequence: int32(off)}, recs)
		if err != nil {
			tb.Fatal(err)
		}
		off += 2
	}
	marker := []decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, decode.ControlCommit), Value: decode.AppendEndTxnMarkerValue(nil, 0)}}
	log, _ = c.AppendBatch(log, decode.BatchSpec{BaseOffset: off, Control: true, Transactional: true, ProducerID: 7, BaseSequence: -1}, marker)
	off++
	barrier := []decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)}}
	log, _ = c.AppendBatch(log, decode.BatchSpec{BaseOffset: off, Control: true, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, barrier)
	off++
	log, _ = c.AppendLegacy(log, decode.LegacySpec{Offset: off, Magic: 1, Timestamp: ts, Key: []byte("k"), Value: []byte("legacy")})
	return log
}

// scanned is one batch of a scan, with Raw copied out of the window.
type scanned struct {
	pos int64
	b   decode.Batch
}

type scanResult struct {
	batches []scanned
	tail    Tail
	err     error
}

// scan runs a Scanner to its end. A scan cannot yield more batches than
// 26-byte entries fit in the input; more means it is not advancing.
func scan(t *testing.T, r io.ReaderAt, size int64, opts ScanOptions) scanResult {
	t.Helper()
	sc := NewScanner(r, size, opts)
	var res scanResult
	for sc.Next() {
		b := *sc.Batch()
		b.Raw = bytes.Clone(b.Raw)
		res.batches = append(res.batches, scanned{sc.Pos(), b})
		if int64(len(res.batches)) > size/(decode.LogOverhead+decode.MinLegacyRecordSize)+1 {
			t.Fatalf("scanner yields more batches than fit in %d bytes", size)
		}
	}
	res.tail, res.err = sc.Tail(), sc.Err()
	return res
}

func sameBatches(a, b []scanned) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].pos != b[i].pos || !reflect.DeepEqual(a[i].b, b[i].b) {
			return false
		}
	}
	return true
}

func sameTail(a, b Tail) bool {
	if a.Kind != b.Kind || a.ValidBytes != b.ValidBytes || a.End != b.End || (a.Err == nil) != (b.Err == nil) {
		return false
	}
	return a.Err == nil || a.Err.Error() == b.Err.Error()
}

// errFault is the error of faultyReader.
var errFault = errors.New("injected read fault")

// faultyReader fails every read that reaches failAt, returning the bytes
// before it, as a disk with a bad sector would.
type faultyReader struct {
	r      io.ReaderAt
	failAt int64
}

func (f faultyReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= f.failAt {
		return f.r.ReadAt(p, off)
	}
	n := 0
	if off < f.failAt {
		n, _ = f.r.ReadAt(p[:f.failAt-off], off)
	}
	return n, errFault
}

// FuzzScanner scans the fuzz bytes as a .log. See the file comment for the
// oracles.
func FuzzScanner(f *testing.F) {
	log := builtLog(f)
	f.Add(log, uint16(0), uint32(0), uint32(0))
	f.Add(log, uint16(100), uint32(len(log)/2), uint32(len(log)-3))
	f.Add(append(bytes.Clone(log), make([]byte, 300)...), uint16(64), uint32(0), uint32(0)) // zero-filled tail
	f.Add(log[:len(log)-5], uint16(17), uint32(0), uint32(0))                               // torn batch
	f.Add(append(bytes.Clone(log), 1, 2, 3), uint16(0), uint32(0), uint32(0))               // torn header
	bad := bytes.Clone(log)
	bad[len(bad)-30] ^= 0xff // damage inside the last (legacy) message
	f.Add(bad, uint16(0), uint32(0), uint32(0))
	neg := append(bytes.Clone(log), mustHexF("0000000000000009ffffffff0000000002")...) // negative batchLength
	f.Add(append(neg, make([]byte, 20)...), uint16(0), uint32(0), uint32(0))
	for _, v := range []string{
		"00000000000000000000003a0000000002e99b8dd80000000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff0000000110000000026b027600",
		"00000000000000000000001839268c3301000000018bcfe56800000000016b0000000176",
		"00000000000000000000000fd20cbff50000ffffffff0000000176",
	} {
		f.Add(mustHexF(v), uint16(0), uint32(0), uint32(0))
	}
	for _, b := range fixtureFiles(16<<10, ".log", ".checkpoint") {
		f.Add(b, uint16(4096), uint32(0), uint32(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, bufSize uint16, limit, failAt uint32) {
		n := int64(len(data))
		r := bytes.NewReader(data)
		bs := int(bufSize) + 1
		var full scanResult
		checkAllocs(t, "scanning", len(data), 16, bs, func() {
			full = scan(t, r, n, ScanOptions{Path: scanPath, BufferSize: bs})
		})
		if full.err != nil {
			t.Fatalf("scanning memory: %v", full.err)
		}

		// Batches are contiguous from 0, inside the input, and are exactly
		// what ParseBatch reads at their position.
		end := int64(0)
		for i, s := range full.batches {
			size := s.b.Size()
			if s.pos != end || size < decode.LogOverhead+decode.MinLegacyRecordSize || s.pos+size > n {
				t.Fatalf("batch %d at %d, size %d: previous ended at %d, input %d bytes", i, s.pos, size, end, n)
			}
			if !bytes.Equal(s.b.Raw, data[s.pos:s.pos+size]) {
				t.Fatalf("batch %d: Raw is not the input's bytes at %d", i, s.pos)
			}
			want, err := decode.ParseBatch(data[s.pos:])
			want.Raw = bytes.Clone(want.Raw)
			if err != nil || !reflect.DeepEqual(want, s.b) {
				t.Fatalf("batch %d differs from ParseBatch at %d (%v)", i, s.pos, err)
			}
			end = s.pos + size
		}

		// The tail agrees with the bytes after validBytes.
		tl := full.tail
		if tl.ValidBytes != end || tl.End != n {
			t.Fatalf("tail validBytes %d end %d; batches end at %d, input %d bytes", tl.ValidBytes, tl.End, end, n)
		}
		checkTail(t, tl, data)

		// Re-scanning the valid prefix yields the same batches, cleanly.
		prefix := data[:tl.ValidBytes]
		again := scan(t, bytes.NewReader(prefix), int64(len(prefix)), ScanOptions{Path: scanPath, BufferSize: bs})
		if again.err != nil || !sameBatches(again.batches, full.batches) || again.tail.Kind != TailClean || again.tail.ValidBytes != tl.ValidBytes || again.tail.Err != nil {
			t.Fatalf("re-scanning the %d valid bytes: %d batches (want %d), tail %v %v", len(prefix), len(again.batches), len(full.batches), again.tail.Kind, again.err)
		}

		// A Limit is the same as scanning a copy cut there.
		if l := int64(limit) % (n + 1); l > 0 {
			lim := scan(t, r, n, ScanOptions{Path: scanPath, BufferSize: bs, Limit: l})
			cut := scan(t, bytes.NewReader(data[:l]), l, ScanOptions{Path: scanPath, BufferSize: bs})
			if lim.err != nil || !sameBatches(lim.batches, cut.batches) || !sameTail(lim.tail, cut.tail) {
				t.Fatalf("Limit %d differs from scanning the first %d bytes", l, l)
			}
		}

		// Starting at a batch boundary yields the rest of the batches.
		if len(full.batches) >= 2 {
			st := scan(t, r, n, ScanOptions{Path: scanPath, BufferSize: bs, Start: full.batches[1].pos})
			if st.err != nil || !sameBatches(st.batches, full.batches[1:]) || !sameTail(st.tail, full.tail) {
				t.Fatalf("Start %d: %d batches (want %d), tail %v (want %v)", full.batches[1].pos, len(st.batches), len(full.batches)-1, st.tail.Kind, full.tail.Kind)
			}
		}

		// A read fault is an I/O error, never damage, and loses no batch
		// before it.
		fr := faultyReader{r, int64(failAt) % (n + 1)}
		faulty := scan(t, fr, n, ScanOptions{Path: scanPath, BufferSize: bs})
		switch {
		case faulty.err == nil:
			if !sameBatches(faulty.batches, full.batches) || !sameTail(faulty.tail, full.tail) {
				t.Fatalf("read fault at %d: no error, but a different scan", fr.failAt)
			}
		case !errors.Is(faulty.err, errFault) || !strings.Contains(faulty.err.Error(), scanPath):
			t.Fatalf("read fault at %d: error %v", fr.failAt, faulty.err)
		case len(faulty.batches) > len(full.batches) || !sameBatches(faulty.batches, full.batches[:len(faulty.batches)]):
			t.Fatalf("read fault at %d: batches are not a prefix of the healthy scan", fr.failAt)
		}
	})
}

// checkTail checks a tail's kind and error against the bytes after
// validBytes.
func checkTail(t *testing.T, tl Tail, data []byte) {
	t.Helper()
	rest := data[tl.ValidBytes:]
	zero := len(rest) > 0 && allZero(rest)
	if (tl.Kind == TailClean) != (len(rest) == 0) || (tl.Kind == TailZeroFilled) != zero {
		t.Fatalf("tail %v with %d bytes after validBytes (all zero: %v)", tl.Kind, len(rest), zero)
	}
	if tl.Kind == TailClean || tl.Kind == TailZeroFilled {
		if tl.Err != nil {
			t.Fatalf("%v tail with an error: %v", tl.Kind, tl.Err)
		}
		return
	}
	if tl.Err == nil {
		t.Fatalf("%v tail without an error", tl.Kind)
	}
	ce := checkCorrupt(t, tl.Err, int64(len(data)))
	if ce.Path != scanPath || ce.Pos < tl.ValidBytes {
		t.Fatalf("tail error path %q position %d, validBytes %d", ce.Path, ce.Pos, tl.ValidBytes)
	}
	if len(rest) <= decode.HeaderSizeUpToMagic {
		// FileLogInputStream stops without reading a header this short.
		if tl.Kind != TailTornHeader || ce.Pos != tl.ValidBytes || !errors.Is(ce, decode.ErrTruncated) {
			t.Fatalf("%d non-zero bytes left: %v tail, %v", len(rest), tl.Kind, ce)
		}
		return
	}
	// Longer rests: the scanner stopped exactly where and why ParseBatch
	// refuses the bytes.
	_, err := decode.ParseBatch(rest)
	if err == nil {
		t.Fatalf("%v tail at %d, but a batch parses there", tl.Kind, tl.ValidBytes)
	}
	pe, _ := decode.AsCorrupt(err)
	if pe.Pos+tl.ValidBytes != ce.Pos || classOf(pe) != classOf(ce) {
		t.Fatalf("tail error %v; ParseBatch says %v at %d", ce, pe, pe.Pos+tl.ValidBytes)
	}
	// Torn means the batch runs past the end of the file; a whole batch
	// whose fields do not fit in it (even when that error is ErrTruncated,
	// as for a legacy valueLength past the end of its message) is corrupt.
	wantKind := TailCorrupt
	if errors.Is(pe, decode.ErrTruncated) && pe.Field == "batchLength" {
		wantKind = TailTornBatch
	}
	if tl.Kind != wantKind {
		t.Fatalf("tail kind %v, want %v for %v", tl.Kind, wantKind, pe)
	}
}

// ---------------------------------------------------------------- indexes

// FuzzOffsetIndex parses the fuzz bytes as a .index. Oracles: one slot per
// whole 8 bytes; entries are the slots up to the first later slot at the
// base offset, each decoding from and re-encoding to its bytes; LastSlot and
// TailZero as the bytes say; the sanity check fails exactly when Kafka's
// conditions hold, with the error oracle.
func FuzzOffsetIndex(f *testing.F) {
	addIndexSeeds(f, IndexSuffix,
		indexSeed{mustHexF("0000000000000000000000050000100000000009000020000000000000000000"), 0},
		indexSeed{mustHexF("00000000000000000000000500001000ffffffff00002000"), 100},
		indexSeed{make([]byte, 8*6+3), 42})
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		var x OffsetIndex
		checkAllocs(t, "parsing an offset index", len(data), 16, 0, func() { x = ParseOffsetIndex(data, base) })
		n := len(data)
		if x.Slots != n/OffsetIndexEntrySize || x.Length != int64(n) || len(x.Entries) > x.Slots || x.BaseOffset != base {
			t.Fatalf("%d bytes: %d slots, %d entries, length %d", n, x.Slots, len(x.Entries), x.Length)
		}
		checkSlots(t, data, OffsetIndexEntrySize, base, func(b []byte) IndexEntry {
			return IndexEntry{Offset: base + int64(int32(binary.BigEndian.Uint32(b))), Position: int32(binary.BigEndian.Uint32(b[4:]))}
		}, func(e IndexEntry) int64 { return e.Offset }, x.Entries, x.Slots, x.LastSlot, IndexEntry{Offset: base}, x.TailZero)
		for i, e := range x.Entries {
			if enc, err := AppendOffsetIndexEntry(nil, base, e); err == nil && !bytes.Equal(enc, data[i*8:i*8+8]) {
				t.Fatalf("entry %d re-encodes to %x, stored %x", i, enc, data[i*8:i*8+8])
			} else if err != nil && int32(binary.BigEndian.Uint32(data[i*8:])) >= 0 && base+int64(int32(binary.BigEndian.Uint32(data[i*8:]))) >= base {
				t.Fatalf("entry %d does not re-encode: %v", i, err)
			}
		}
		checkSanity(t, SanityCheckOffsetIndex(&x), (x.Slots != 0 && x.LastSlot.Offset < base) || n%OffsetIndexEntrySize != 0, n)
		if increasing(x.Entries, func(e IndexEntry) int64 { return e.Offset }) {
			for _, e := range x.Entries {
				if got := x.Lookup(e.Offset); got != e {
					t.Fatalf("Lookup(%d) = %+v, want %+v", e.Offset, got, e)
				}
			}
		}
	})
}

// indexSeed is a seed of an index fuzz target: the file's bytes and its
// base offset.
type indexSeed struct {
	b    []byte
	base int64
}

// addIndexSeeds seeds an index fuzz target: no bytes, then seeds, then
// the fixtures' files of suffix (at base offset 0).
func addIndexSeeds(f *testing.F, suffix string, seeds ...indexSeed) {
	f.Add([]byte{}, int64(0))
	for _, s := range seeds {
		f.Add(s.b, s.base)
	}
	for _, b := range fixtureFiles(8<<10, suffix) {
		f.Add(b, int64(0))
	}
}

// checkSlots holds a parsed index (entries, slots, lastSlot, tailZero) to
// its bytes, data, in slots of size bytes that read decodes: the entries
// are the slots up to the first later one at the base offset (offset
// gives an entry's), LastSlot is the last slot (empty when there is none)
// and TailZero says whether every byte after the entries is zero.
func checkSlots[E comparable](t *testing.T, data []byte, size int, base int64, read func([]byte) E, offset func(E) int64,
	entries []E, slots int, lastSlot, empty E, tailZero bool) {
	t.Helper()
	slot := func(i int) E { return read(data[i*size:]) }
	for i, e := range entries {
		if e != slot(i) || (i > 0 && offset(e) == base) {
			t.Fatalf("entry %d = %+v, slot holds %+v", i, e, slot(i))
		}
	}
	if e := len(entries); e < slots && (e == 0 || offset(slot(e)) != base) {
		t.Fatalf("entries stop at slot %d, which is not at the base offset", e)
	}
	wantLast := empty
	if slots > 0 {
		wantLast = slot(slots - 1)
	}
	if lastSlot != wantLast || tailZero != allZero(data[len(entries)*size:]) {
		t.Fatalf("last slot %+v (want %+v), tail zero %v", lastSlot, wantLast, tailZero)
	}
}

// checkSanity holds an index sanity check's verdict to Kafka's conditions
// (want: they hold) and its failure to the error oracle, with Kafka's
// message, for n bytes of input.
func checkSanity(t *testing.T, err error, want bool, n int) {
	t.Helper()
	if want != (err != nil) {
		t.Fatalf("sanity check: %v, want failure %v", err, want)
	}
	if err != nil {
		checkKafkaCorrupt(t, err, n, "sanity failure")
	}
}

// checkKafkaCorrupt is checkCorrupt for an error that must carry Kafka's
// message (what names it in the failure).
func checkKafkaCorrupt(t *testing.T, err error, n int, what string) {
	t.Helper()
	checkCorrupt(t, err, int64(n))
	if _, ok := decode.KafkaMessage(err); !ok {
		t.Fatalf("%s without Kafka's message: %v", what, err)
	}
}

func increasing[E any](es []E, key func(E) int64) bool {
	for i := 1; i < len(es); i++ {
		if key(es[i]) <= key(es[i-1]) {
			return false
		}
	}
	return true
}

// FuzzTimeIndex is FuzzOffsetIndex for .timeindex files.
func FuzzTimeIndex(f *testing.F) {
	addIndexSeeds(f, TimeIndexSuffix,
		indexSeed{mustHexF("0000018bcfe56800000000000000018bcfe568050000000a"), 0},
		indexSeed{mustHexF("0000018bcfe5680000000005000000000000000000000000"), 7},
		indexSeed{make([]byte, 12*4+5), 0})
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		var x TimeIndex
		checkAllocs(t, "parsing a time index", len(data), 16, 0, func() { x = ParseTimeIndex(data, base) })
		n := len(data)
		if x.Slots != n/TimeIndexEntrySize || x.Length != int64(n) || len(x.Entries) > x.Slots {
			t.Fatalf("%d bytes: %d slots, %d entries", n, x.Slots, len(x.Entries))
		}
		checkSlots(t, data, TimeIndexEntrySize, base, func(b []byte) TimeIndexEntry {
			return TimeIndexEntry{Timestamp: int64(binary.BigEndian.Uint64(b)), Offset: base + int64(int32(binary.BigEndian.Uint32(b[8:])))}
		}, func(e TimeIndexEntry) int64 { return e.Offset }, x.Entries, x.Slots, x.LastSlot, TimeIndexEntry{Timestamp: -1, Offset: base}, x.TailZero)
		for i, e := range x.Entries {
			if enc, err := AppendTimeIndexEntry(nil, base, e); err == nil && !bytes.Equal(enc, data[i*12:i*12+12]) {
				t.Fatalf("entry %d re-encodes to %x, stored %x", i, enc, data[i*12:i*12+12])
			}
		}
		checkSanity(t, SanityCheckTimeIndex(&x), (x.Slots != 0 && len(x.Entries) > 0 && x.LastSlot.Timestamp < x.Entries[0].Timestamp) ||
			(x.Slots != 0 && x.LastSlot.Offset < base) || n%TimeIndexEntrySize != 0, n)
	})
}

// FuzzTxnIndex parses the fuzz bytes as a .txnindex. Oracles: entries are
// the whole 34-byte slots before the first with a version above 0, each
// re-encoding to its bytes; the failure (if any) is at that slot; trailing
// bytes are counted; the sanity check fails exactly at the first entry
// below the base offset.
func FuzzTxnIndex(f *testing.F) {
	vec := mustHexF("000000000000000003e8000000000000006400000000000000960000000000000078")
	bad := bytes.Clone(vec)
	bad[0] = 1 // version 1 (Kafka reads the high byte)
	addIndexSeeds(f, TxnIndexSuffix, indexSeed{vec, 100}, indexSeed{append(bytes.Clone(vec), vec[:20]...), 151},
		indexSeed{append(bytes.Clone(vec), bad...), 0})
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		var x TxnIndex
		var err error
		checkAllocs(t, "parsing a txnindex", len(data), 16, 0, func() { x, err = ParseTxnIndex(data, "t.txnindex") })
		n := len(data)
		if x.Length != int64(n) || x.TrailingBytes != n%AbortedTxnSize || len(x.Entries) > n/AbortedTxnSize {
			t.Fatalf("%d bytes: %d entries, %d trailing", n, len(x.Entries), x.TrailingBytes)
		}
		for i, e := range x.Entries {
			if enc := AppendAbortedTxn(nil, e); !bytes.Equal(enc, data[i*AbortedTxnSize:(i+1)*AbortedTxnSize]) {
				t.Fatalf("entry %d re-encodes differently", i)
			}
			if e.KafkaVersion() > AbortedTxnCurrentVersion {
				t.Fatalf("entry %d has version %d", i, e.KafkaVersion())
			}
		}
		if err != nil {
			ce := checkCorrupt(t, err, int64(n))
			if i := len(x.Entries); ce.Pos != int64(i*AbortedTxnSize) || int8(data[i*AbortedTxnSize]) <= AbortedTxnCurrentVersion {
				t.Fatalf("failure at %d after %d entries: %v", ce.Pos, i, err)
			}
			return
		}
		if len(x.Entries) != n/AbortedTxnSize {
			t.Fatalf("%d entries from %d whole slots without an error", len(x.Entries), n/AbortedTxnSize)
		}
		err = SanityCheckTxnIndex(&x, base)
		first := -1
		for i, e := range x.Entries {
			if e.LastOffset < base {
				first = i
				break
			}
		}
		if (first >= 0) != (err != nil) {
			t.Fatalf("sanity check %v, first entry below base: %d", err, first)
		}
		if err != nil {
			if ce := checkCorrupt(t, err, int64(n)); ce.Pos != int64(first*AbortedTxnSize+18) {
				t.Fatalf("sanity failure at %d, want entry %d's lastOffset", ce.Pos, first)
			}
		}
	})
}

// ---------------------------------------------------------------- snapshots

// FuzzSnapshot parses the fuzz bytes as a producer snapshot. Oracles: the
// error oracle with Kafka's CorruptSnapshotException text; on success
// Encode(Parse(x)) == x when x has no bytes after the entries (and equals
// x's entries otherwise), and Parse(Encode(e)) == e.
func FuzzSnapshot(f *testing.F) {
	f.Add(mustHexF(snapshotVector))
	f.Add(EncodeProducerSnapshot(nil))
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add(withCRC(append(mustHexF(snapshotVector), 0xde, 0xad)))
	for _, b := range fixtureFiles(64<<10, SnapshotSuffix) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var es []SnapshotEntry
		var err error
		checkAllocs(t, "parsing a snapshot", len(b), 16, 0, func() { es, err = ParseProducerSnapshot(b) })
		if err != nil {
			checkKafkaCorrupt(t, err, len(b), "snapshot error")
			return
		}
		enc := EncodeProducerSnapshot(es)
		switch {
		case len(enc) > len(b):
			t.Fatalf("re-encoding longer than the input")
		case len(enc) == len(b) && !bytes.Equal(enc, b):
			t.Fatalf("re-encoding differs from the input:\n got %x\nwant %x", enc, b)
		case !bytes.Equal(enc[6:], b[6:len(enc)]):
			t.Fatalf("re-encoded entries differ from the input")
		}
		again, err := ParseProducerSnapshot(enc)
		if err != nil || len(again) != len(es) || (len(es) > 0 && !reflect.DeepEqual(again, es)) {
			t.Fatalf("Parse(Encode(entries)) = %d entries, %v", len(again), err)
		}
	})
}

// ---------------------------------------------------------------- checkpoints

// checkpointRoundTrip parses b as a checkpoint (what), within the
// allocation bound; a failure goes to checkErr (with Kafka's message), and
// what parses re-encodes to bytes that parse to the same entries.
func checkpointRoundTrip[E any](t *testing.T, what string, b []byte, parse func([]byte) ([]E, error), encode func([]E) []byte, checkErr func(error, bool)) {
	t.Helper()
	var es []E
	var err error
	checkAllocs(t, "parsing "+what, len(b), 64, 0, func() { es, err = parse(b) })
	if err != nil {
		checkErr(err, true)
		return
	}
	again, err := parse(encode(es))
	if err != nil || !reflect.DeepEqual(again, es) {
		t.Fatalf("re-encoded %s parses to %v (%v), want %v", what, again, err, es)
	}
}

// FuzzCheckpoint parses the fuzz bytes as the checkpoint chosen by kind
// (offset checkpoint, leader-epoch-checkpoint, partition.metadata), and
// always as meta.properties and .kafka_cleanshutdown. Oracles: the error
// oracle with Kafka's message where Kafka has one; encoding what parsed
// gives a file that parses to the same value.
func FuzzCheckpoint(f *testing.F) {
	for kind := uint8(0); kind < 3; kind++ {
		f.Add(kind, []byte(""))
	}
	f.Add(uint8(0), []byte("0\n2\nfoo 0 5\nbar 1 7\n"))
	f.Add(uint8(0), []byte("0\n2147483647\n"))
	f.Add(uint8(0), []byte("0\r\n1\r\n  x\t-1\f9223372036854775807"))
	f.Add(uint8(1), []byte("0\n3\n0 0\n1 15\n4 2000\n"))
	f.Add(uint8(1), []byte("1\n0\n"))
	f.Add(uint8(2), []byte("version: 0\ntopic_id: Zm9vYmFyYmF6cXV4MTIzNA"))
	f.Add(uint8(2), []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"))
	f.Add(uint8(3), []byte("node.id=1\nversion=1\\\n  continued\n#c\ncluster.id:\\u0041b"))
	f.Add(uint8(3), []byte(`{"version":0,"brokerEpoch":199070}`))
	for _, b := range fixtureFiles(8<<10, "-checkpoint") {
		f.Add(uint8(0), b)
		f.Add(uint8(1), b)
	}
	for _, b := range fixtureFiles(8<<10, PartitionMetadataName) {
		f.Add(uint8(2), b)
	}
	for _, b := range fixtureFiles(8<<10, MetaPropertiesName, CleanShutdownName) {
		f.Add(uint8(3), b)
	}
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		n := int64(len(b))
		checkErr := func(err error, kafka bool) {
			t.Helper()
			checkCorrupt(t, err, n)
			if _, ok := decode.KafkaMessage(err); kafka && !ok {
				t.Fatalf("error without Kafka's message: %v", err)
			}
		}
		switch kind % 4 {
		case 0:
			checkpointRoundTrip(t, "an offset checkpoint", b, ParseOffsetCheckpoint, EncodeOffsetCheckpoint, checkErr)
		case 1:
			checkpointRoundTrip(t, "a leader-epoch checkpoint", b, ParseLeaderEpochCheckpoint, EncodeLeaderEpochCheckpoint, checkErr)
		case 2:
			pm, err := ParsePartitionMetadata(b)
			if err != nil {
				// Truncation (a missing line) has no Kafka message.
				checkErr(err, !errors.Is(err, decode.ErrTruncated))
				return
			}
			if pm.TopicIDString != TopicIDString(pm.TopicID) || pm.TopicID == ([16]byte{}) {
				t.Fatalf("topic id %q / %x", pm.TopicIDString, pm.TopicID)
			}
			enc := EncodePartitionMetadata(pm)
			again, err := ParsePartitionMetadata(enc)
			if err != nil || again != pm {
				t.Fatalf("re-encoded partition.metadata %q parses to %+v (%v), want %+v", enc, again, err, pm)
			}
		}
		var props map[string]string
		var err error
		checkAllocs(t, "parsing properties", len(b), 64, 0, func() { props, err = ParseProperties(b) })
		if err != nil {
			checkErr(err, false)
		} else if len(props) > len(b) {
			t.Fatalf("%d properties from %d bytes", len(props), len(b))
		}
		if _, err := parseCleanShutdown(b, ""); err != nil {
			checkErr(err, false)
		}
	})
}
