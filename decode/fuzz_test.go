package decode

// Fuzz targets for every decoder in this package, with oracles beyond "no
// panic" (STYLE.md pattern 12):
//
//   - every error is one *CorruptError, 0 <= Pos <= len(input), wrapping
//     exactly one class sentinel (checkCorrupt);
//   - what decodes re-encodes bit-exactly (batch headers, canonical v2
//     records, legacy inner messages, control values, codecs);
//   - decompression never yields more than its cap, and says ErrTooLarge
//     exactly when the payload really is larger;
//   - decoding n bytes allocates O(n + cap) (allocBound).
//
// Seeds are the spec's test vectors (formats.md §12, barrier.md §4.4),
// batches built with AppendBatch/AppendLegacy for every codec, and, when
// present, the first batches of real segments under ../testdata and
// ../../shared/fixtures/real. Crashers found by `go test -fuzz` live in
// testdata/fuzz/<Target>/ and run with every `go test`. testdata/bench/fuzz.sh runs
// every target for a chosen time; docs/fuzzing.md explains the workflow.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"

	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// classes are the sentinels every corruption wraps exactly one of.
var classes = []error{ErrCorrupt, ErrCRCMismatch, ErrTruncated, ErrTooLarge, ErrUnsupported}

// classOf returns the one class err wraps; it fails the test when err wraps
// none or more than one.
func classOf(t *testing.T, err error) error {
	t.Helper()
	var found []error
	for _, c := range classes {
		if errors.Is(err, c) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("error wraps %d class sentinels %v, want exactly one: %v", len(found), found, err)
	}
	return found[0]
}

// checkCorrupt is the oracle for every decoder error: a *CorruptError
// positioned inside the n input bytes, with exactly one class.
func checkCorrupt(t *testing.T, err error, n int) *CorruptError {
	t.Helper()
	ce, ok := AsCorrupt(err)
	if !ok {
		t.Fatalf("error is a %T, not a *CorruptError: %v", err, err)
	}
	if ce.Pos < 0 || ce.Pos > int64(n) {
		t.Fatalf("error position %d outside the %d input bytes: %v", ce.Pos, n, err)
	}
	if ce.Field == "" {
		t.Fatalf("error names no field: %v", err)
	}
	classOf(t, err)
	return ce
}

// heapAllocated is the process's cumulative heap allocation in bytes. It
// reads runtime/metrics rather than runtime.ReadMemStats, which stops the
// world and would slow fuzzing tenfold. The counter advances per span, so
// it can run ahead of the real figure by a few spans; allocBound's slack
// absorbs that.
func heapAllocated() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// allocBound is what decoding n input bytes under a decompression cap of
// maxSize may allocate (pattern 7): linear in the input, plus the output
// buffer (which at most doubles past the cap for zstd, whose decoder checks
// the cap per 128 KiB block), plus a constant for decoder state. zstd's
// streaming fallback (Codecs.Decompress) also holds a window of up to
// zstdStreamWindow whatever the cap.
func allocBound(n, maxSize int, codec Compression) uint64 {
	b := uint64(16*n + 2*maxSize + 1<<20)
	if codec == CompressionZstd {
		b += zstdStreamWindow + 1<<20
	}
	return b
}

// ---------------------------------------------------------------- seeds

// Spec test vectors (formats.md §12, barrier.md §4.4).
const (
	vecV2Batch     = "00000000000000000000003a0000000002e99b8dd80000000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff0000000110000000026b027600"
	vecCommit      = "0000000000000005000000420000000002dbc180da0030000000000000018bcfe568000000018bcfe5680000000000000003e80000ffffffff000000012000000008000000010c00000000000700"
	vecEmptyBatch  = "000000000000000a0000003100000000028f47fd78000000000004ffffffffffffffff0000018bcfe5680000000000000003e800000000000300000000"
	vecLegacyV1    = "00000000000000000000001839268c3301000000018bcfe56800000000016b0000000176"
	vecLegacyV0    = "00000000000000000000000fd20cbff50000ffffffff0000000176"
	vecBarrier     = "00000000000000000000003f0000000002bbdac33c0020000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff000000011a00000008000000070600000000"
	vecGzipABC     = "1f8b08000000000000ff4b4c4a0600c241243503000000"
	vecXerialHdr   = "82534e41505059000000000100000001"
	vecLZ4HdrV1    = "04224d18604082"
	vecLZ4HdrV0    = "04224d1860401a"
	seedFileLimit  = 256 << 10 // bytes read from each fixture log
	seedBatchLimit = 64 << 10  // larger batches make poor fuzz seeds
)

func hexSeed(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// builtBatches are v2 batches for every codec and attribute combination,
// legacy messages and wrappers for every legacy codec, and 2 MiB
// decompression bombs (those that compress below seedBatchLimit).
func builtBatches(tb testing.TB) [][]byte {
	tb.Helper()
	var c Codecs
	var out [][]byte
	ts := int64(1700000000000)
	recs := []RecordSpec{
		{OffsetDelta: 0, Timestamp: ts, Key: []byte("k0"), Value: []byte(`{"id":0}`)},
		{OffsetDelta: 1, Timestamp: ts + 5, Key: nil, Value: []byte("v1"), Headers: []Header{{Key: []byte("h"), Value: []byte("x")}, {Key: []byte{}, Value: nil}}},
		{OffsetDelta: 2, Timestamp: ts - 3, Key: []byte{}, Value: nil},
	}
	for codec := CompressionNone; codec <= CompressionZstd; codec++ {
		for _, s := range []BatchSpec{
			{BaseOffset: 0, Compression: codec, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: 0},
			{BaseOffset: 100, Compression: codec, ProducerID: 1000, ProducerEpoch: 3, BaseSequence: 7, PartitionLeaderEpoch: 5, Transactional: true},
			{BaseOffset: 200, Compression: codec, ProducerID: 1001, ProducerEpoch: 0, BaseSequence: math.MaxInt32 - 1, LogAppendTime: true, MaxTimestamp: &ts},
		} {
			b, err := c.AppendBatch(nil, s, recs)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, b)
		}
		// A bomb: 2 MiB of zeros, above FuzzRecords' 1 MiB cap.
		if codec != CompressionNone {
			b, err := c.AppendBatch(nil, BatchSpec{Compression: codec, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
				[]RecordSpec{{Timestamp: ts, Value: make([]byte, 2<<20)}})
			if err != nil {
				tb.Fatal(err)
			}
			if len(b) <= seedBatchLimit {
				out = append(out, b)
			}
		}
	}
	// Control batches: COMMIT, ABORT and both MIRROR_PID_RESET variants.
	cluster := "Zm9vYmFyYmF6cXV4MTIzNA"
	for _, ctl := range []struct {
		typ   ControlType
		value []byte
	}{
		{ControlCommit, AppendEndTxnMarkerValue(nil, 7)},
		{ControlAbort, AppendEndTxnMarkerValue(nil, 0)},
		{ControlMirrorPidReset, AppendMirrorPidResetValue(nil, nil)},
		{ControlMirrorPidReset, AppendMirrorPidResetValue(nil, &cluster)},
	} {
		b, err := c.AppendBatch(nil, BatchSpec{BaseOffset: 9, Control: true, Transactional: ctl.typ <= ControlCommit, ProducerID: 1000, ProducerEpoch: 3, BaseSequence: -1},
			[]RecordSpec{{Timestamp: ts, Key: AppendControlKey(nil, ctl.typ), Value: ctl.value}})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	// Legacy messages and wrappers.
	inner := []LegacySpec{{Offset: 0, Timestamp: ts, Key: []byte("a"), Value: []byte("1")}, {Offset: 1, Timestamp: ts + 1, Value: []byte("2")}}
	for magic := int8(0); magic <= 1; magic++ {
		b, err := c.AppendLegacy(nil, LegacySpec{Offset: 4, Magic: magic, Timestamp: ts, Key: []byte("k"), Value: []byte("v")})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
		for codec := CompressionGzip; codec <= CompressionLZ4; codec++ {
			b, err := c.AppendLegacy(nil, LegacySpec{Offset: 11, Magic: magic, Compression: codec, Timestamp: ts, Inner: inner})
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// specBatches are the spec's batch and message vectors.
func specBatches() [][]byte {
	var out [][]byte
	for _, s := range []string{vecV2Batch, vecCommit, vecEmptyBatch, vecLegacyV1, vecLegacyV0, vecBarrier} {
		out = append(out, hexSeed(s))
	}
	return out
}

// fixtureBatches returns up to perFile entries from the start of each .log
// and .checkpoint file under the repository's testdata/ and the shared real
// fixtures, picking one entry per (magic, codec, control, transactional)
// shape. Roots that do not exist are skipped silently: CI has testdata/
// only once the generator has run, and never the shared fixtures.
func fixtureBatches(perFile int) [][]byte {
	var out [][]byte
	for _, root := range []string{filepath.Join("..", "testdata"), testkit.RealRoot()} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".log") && !strings.HasSuffix(p, ".checkpoint")) {
				return nil
			}
			data, err := testkit.ReadHead(p, seedFileLimit)
			if err != nil {
				return nil
			}
			seen := map[[4]int]bool{}
			for pos, n := 0, 0; pos < len(data) && n < perFile; {
				b, err := ParseBatch(data[pos:])
				if err != nil {
					break
				}
				shape := [4]int{int(b.Magic), int(b.Compression()), boolInt(b.IsControl()), boolInt(b.IsTransactional())}
				if !seen[shape] && len(b.Raw) <= seedBatchLimit {
					seen[shape] = true
					out = append(out, bytes.Clone(b.Raw))
					n++
				}
				pos += len(b.Raw)
			}
			return nil
		})
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fuzzBatches seeds f with every seed batch and calls fn with each input
// that ParseBatch parses; ParseBatch's failures obey the CorruptError
// oracle.
func fuzzBatches(f *testing.F, fn func(t *testing.T, data []byte, b Batch)) {
	for _, s := range allBatchSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBatch(data)
		if err != nil {
			checkCorrupt(t, err, len(data))
			return
		}
		fn(t, data, b)
	})
}

// allBatchSeeds is every seed batch, for the targets that take whole entries.
func allBatchSeeds(tb testing.TB) [][]byte {
	seeds := append(specBatches(), builtBatches(tb)...)
	return append(seeds, fixtureBatches(4)...)
}

// ---------------------------------------------------------------- FuzzParseBatch

// FuzzParseBatch: ParseBatch on arbitrary bytes. On success the entry is
// framed inside the input, every header field re-encodes to the bytes it
// came from, trailing bytes do not matter, and every strict prefix of the
// entry is ErrTruncated. On failure, the error oracle.
func FuzzParseBatch(f *testing.F) {
	for _, s := range allBatchSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Add(make([]byte, 17))
	f.Fuzz(func(t *testing.T, data []byte) {
		before := heapAllocated()
		b, err := ParseBatch(data)
		if got, bound := heapAllocated()-before, allocBound(len(data), 0, CompressionNone); got > bound {
			t.Fatalf("ParseBatch of %d bytes allocated %d bytes, bound %d", len(data), got, bound)
		}
		if err != nil {
			ce := checkCorrupt(t, err, len(data))
			if len(data) < HeaderSizeUpToMagic && (ce.Pos != 0 || !errors.Is(err, ErrTruncated)) {
				t.Fatalf("%d bytes: want ErrTruncated at 0, got %v", len(data), err)
			}
			return
		}
		checkParsedBatch(t, data, &b)
		// Trailing bytes are ignored: the entry alone parses the same.
		alone, err := ParseBatch(bytes.Clone(b.Raw))
		if err != nil || !sameHeader(&alone, &b) {
			t.Fatalf("entry alone parses differently: %v", err)
		}
		// Every strict prefix is truncated, never misread.
		for _, cut := range []int{0, HeaderSizeUpToMagic - 1, HeaderSizeUpToMagic, len(b.Raw) / 2, len(b.Raw) - 1} {
			if cut < 0 || cut >= len(b.Raw) {
				continue
			}
			_, err := ParseBatch(b.Raw[:cut:cut])
			if err == nil || !errors.Is(err, ErrTruncated) {
				t.Fatalf("prefix of %d of the %d-byte entry: err = %v, want ErrTruncated", cut, len(b.Raw), err)
			}
			checkCorrupt(t, err, cut)
		}
	})
}

// checkParsedBatch checks a successfully parsed entry against the bytes it
// came from by re-encoding its header.
func checkParsedBatch(t *testing.T, data []byte, b *Batch) {
	t.Helper()
	size := b.Size()
	if size < LogOverhead+MinLegacyRecordSize || size > int64(len(data)) || int64(len(b.Raw)) != size {
		t.Fatalf("entry of %d bytes (Raw %d) in %d input bytes", size, len(b.Raw), len(data))
	}
	if &b.Raw[0] != &data[0] {
		t.Fatal("Raw does not alias the input")
	}
	be := binary.BigEndian
	// The header as its fields give it (Batch.AppendHeader, which digests
	// and the mirror rebuild headers with) is the header's bytes; for v2
	// the attributes' high byte, which Kafka ignores, comes from the bytes.
	hdr := b.AppendHeader(nil, uint16(b.Raw[21])<<8|uint16(uint8(b.Attributes)))
	switch b.Magic {
	case 2:
		if size < RecordBatchOverhead {
			t.Fatalf("v2 batch of %d bytes", size)
		}
		if b.Attributes&^0xff != 0 {
			t.Fatalf("attributes 0x%x beyond the low byte", b.Attributes)
		}
		if b.CRCValid() != (CRC32C(b.Raw[21:]) == be.Uint32(b.Raw[17:])) {
			t.Fatal("CRCValid disagrees with CRC-32C over [21, end)")
		}
		if len(b.Payload()) != int(size)-RecordBatchOverhead {
			t.Fatalf("payload of %d bytes in a %d-byte batch", len(b.Payload()), size)
		}
	case 0, 1:
		if b.Attributes&^0xff != 0 || b.RecordCount != -1 || b.ProducerID != -1 || b.BaseSequence != -1 || b.LastOffset() != b.BaseOffset {
			t.Fatalf("legacy defaults wrong: %+v", *b)
		}
		if b.Magic == 0 && (b.MaxTimestamp != NoTimestamp || b.TimestampType() != NoTimestampType) {
			t.Fatal("magic 0 has a timestamp")
		}
		if b.CRCValid() != (crc32.ChecksumIEEE(b.Raw[16:]) == b.CRC) {
			t.Fatal("CRCValid disagrees with CRC-32 over the message from its magic byte")
		}
		key, value, err := b.legacyKeyValue()
		if err != nil {
			t.Fatalf("parsed legacy message does not split into key and value: %v", err)
		}
		// key and value fill the rest of the message exactly.
		rest := len(b.Raw) - len(hdr) - 8 - len(key) - len(value)
		if rest != 0 {
			t.Fatalf("legacy key %d + value %d bytes leave %d bytes unaccounted", len(key), len(value), rest)
		}
	default:
		t.Fatalf("magic %d accepted", b.Magic)
	}
	if !bytes.Equal(hdr, b.Raw[:len(hdr)]) {
		t.Fatalf("header re-encodes to\n%x\nwant\n%x", hdr, b.Raw[:len(hdr)])
	}
}

func sameHeader(a, b *Batch) bool {
	x, y := *a, *b
	x.Raw, y.Raw = nil, nil
	return reflect.DeepEqual(x, y) && bytes.Equal(a.Raw, b.Raw)
}

// ---------------------------------------------------------------- FuzzRecords

// recordsCap is FuzzRecords' decompression cap: small, so that the fuzzer
// reaches it from the 2 MiB bomb seeds.
const recordsCap = 1 << 20

// FuzzRecords: Decoder.Records over any parsed entry, v2 or legacy. The
// records never add up to more than the cap (or the input, uncompressed);
// ErrTooLarge comes exactly when the payload really decompresses beyond the
// cap; a v2 batch yields recordsCount records with Kafka's offsets,
// sequences and timestamps; a canonical uncompressed v2 batch re-encodes
// bit-exactly with AppendBatch; the cap does not change what decodes.
func FuzzRecords(f *testing.F) {
	fuzzBatches(f, func(t *testing.T, data []byte, b Batch) {
		compressed := b.Compression() != CompressionNone
		d := Decoder{MaxDecompressed: recordsCap}
		var got []RecordSpec
		var attrs []int8
		total := 0
		before := heapAllocated()
		err := d.Records(&b, func(r *Record) error {
			total += max(r.KeySize(), 0) + max(r.ValueSize(), 0)
			for _, h := range r.Headers {
				total += len(h.Key) + len(h.Value)
			}
			checkRecord(t, &b, r)
			got = append(got, specOf(r))
			attrs = append(attrs, r.Attributes)
			return nil
		})
		allocated := heapAllocated() - before
		// The callback's own copies (total bytes, and a RecordSpec per
		// record) are allocated inside the measured window too.
		if bound := allocBound(len(data), recordsCap, b.Compression()) + uint64(total) + uint64(len(got))*256; allocated > bound {
			t.Fatalf("decoding %d bytes (%s) allocated %d bytes, bound %d", len(data), b.Compression(), allocated, bound)
		}
		if compressed && total > recordsCap || !compressed && total > len(b.Raw) {
			t.Fatalf("records carry %d bytes of keys, values and headers; cap %d, entry %d bytes", total, recordsCap, len(b.Raw))
		}
		if err != nil {
			checkCorrupt(t, err, len(b.Raw))
			if errors.Is(err, ErrTooLarge) {
				if !compressed {
					t.Fatalf("ErrTooLarge for an uncompressed entry: %v", err)
				}
				checkGenuinelyTooLarge(t, &b)
			}
			return
		}
		if !b.IsLegacy() && len(got) != int(b.RecordCount) {
			t.Fatalf("%d records for recordsCount %d", len(got), b.RecordCount)
		}
		if b.IsLegacy() && len(got) == 0 {
			t.Fatal("a legacy entry decoded to no records")
		}
		// The cap only refuses; it never changes what decodes.
		var big Decoder
		var again []RecordSpec
		if err := big.Records(&b, func(r *Record) error { again = append(again, specOf(r)); return nil }); err != nil {
			t.Fatalf("decodes under a %d-byte cap but not under the default: %v", recordsCap, err)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatal("records differ between caps")
		}
		checkV2ReEncode(t, &b, got, attrs)
	})
}

// checkRecord checks one record against its batch.
func checkRecord(t *testing.T, b *Batch, r *Record) {
	t.Helper()
	if b.IsLegacy() {
		if r.Sequence != NoSequence || r.Magic > 1 {
			t.Fatalf("legacy record with sequence %d, magic %d", r.Sequence, r.Magic)
		}
		return
	}
	if r.Magic != 2 || !r.CRCValid {
		t.Fatalf("v2 record with magic %d, CRCValid %v", r.Magic, r.CRCValid)
	}
	if r.Offset != b.BaseOffset+int64(r.OffsetDelta) {
		t.Fatalf("offset %d != baseOffset %d + offsetDelta %d", r.Offset, b.BaseOffset, r.OffsetDelta)
	}
	wantSeq := int32(NoSequence)
	if b.BaseSequence >= 0 {
		wantSeq = IncrementSequence(b.BaseSequence, r.OffsetDelta)
	}
	if r.Sequence != wantSeq {
		t.Fatalf("sequence %d, want %d", r.Sequence, wantSeq)
	}
	if b.TimestampType() == LogAppendTime && r.Timestamp != b.MaxTimestamp {
		t.Fatalf("LogAppendTime record timestamp %d, batch maxTimestamp %d", r.Timestamp, b.MaxTimestamp)
	}
}

// specOf copies a decoded record into a RecordSpec (owning its bytes).
func specOf(r *Record) RecordSpec {
	s := RecordSpec{OffsetDelta: r.OffsetDelta, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
	if r.Magic < 2 {
		s.OffsetDelta = int32(r.Offset) // legacy records have absolute offsets
	}
	for _, h := range r.Headers {
		s.Headers = append(s.Headers, Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)})
	}
	return s
}

// checkGenuinelyTooLarge verifies an ErrTooLarge: under a cap 8 times
// larger the payload must either decompress to more than recordsCap bytes
// or fail too. A payload that fits would be a false refusal.
func checkGenuinelyTooLarge(t *testing.T, b *Batch) {
	t.Helper()
	var c Codecs
	payload := b.Payload()
	out, err := c.Decompress(nil, b.Compression(), b.Magic, payload, 8*recordsCap)
	if err == nil && len(out) <= recordsCap {
		t.Fatalf("ErrTooLarge under a %d-byte cap, but the payload decompresses to %d bytes", recordsCap, len(out))
	}
}

// checkV2ReEncode rebuilds a canonical uncompressed v2 batch from its
// decoded header and records with AppendBatch: the bytes must be the
// input's. Canonical means what AppendBatch can express: attribute bits 7
// and 8..15 clear, record attributes 0, CreateTime (LogAppendTime records
// report maxTimestamp, losing their delta), minimal varints (which shows
// as equal lengths) and nulls written as -1.
func checkV2ReEncode(t *testing.T, b *Batch, recs []RecordSpec, attrs []int8) {
	t.Helper()
	if b.IsLegacy() || b.Compression() != CompressionNone || b.RecordCount == 0 || b.Raw[21] != 0 || b.Attributes&0x80 != 0 || b.TimestampType() == LogAppendTime {
		return
	}
	for _, a := range attrs {
		if a != 0 {
			return
		}
	}
	s := BatchSpec{
		BaseOffset: b.BaseOffset, PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		Transactional: b.IsTransactional(), Control: b.IsControl(),
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		MaxTimestamp: &b.MaxTimestamp, LastOffsetDelta: &b.LastOffsetDelta, BaseTimestamp: &b.BaseTimestamp,
	}
	if h, ok := b.DeleteHorizonMs(); ok {
		s.DeleteHorizonMs = &h
	}
	enc, err := AppendBatch(nil, s, recs)
	if err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	if len(enc) != len(b.Raw) {
		return // non-minimal varints somewhere: valid, not canonical
	}
	want := bytes.Clone(b.Raw)
	binary.BigEndian.PutUint32(want[crcOffset:], CRC32C(want[attributesOffset:]))
	// Kafka reads any negative key, value or header value length as null,
	// which re-encodes as -1 (0x01). With equal lengths the only other
	// difference allowed is a one-byte negative length, an odd byte below
	// 0x80 where the re-encoding has 0x01, and then the CRC.
	for i := range enc {
		if i >= crcOffset && i < attributesOffset {
			continue
		}
		if enc[i] != want[i] && !(enc[i] == 0x01 && want[i]&1 == 1 && want[i] < 0x80) {
			t.Fatalf("decoded batch re-encodes differently at byte %d:\n got %x\nwant %x", i, enc, want)
		}
	}
}

// ---------------------------------------------------------------- FuzzLegacy

// FuzzLegacy wraps the fuzz bytes, compressed with a legacy codec, into a
// v0/v1 wrapper message, so that the fuzzer explores the inner message set
// (offsets, sizes, nesting, CRCs) without having to forge a valid
// compressed stream. Whole legacy entries, wrappers included, are fuzzed
// by FuzzParseBatch and FuzzRecords too. Oracles: the error oracle; inner
// records follow Kafka's offset rules (magic 1: the last inner record has
// the wrapper's offset); each inner message re-encodes bit-exactly with
// AppendLegacy, CRC included; the cap holds.
func FuzzLegacy(f *testing.F) {
	var c Codecs
	ts := int64(1700000000000)
	inner := func(magic int8, specs ...LegacySpec) []byte {
		var b []byte
		for _, s := range specs {
			s.Magic = magic
			b, _ = c.AppendLegacy(b, s)
		}
		return b
	}
	for magic := int8(0); magic <= 1; magic++ {
		set := inner(magic, LegacySpec{Offset: 0, Timestamp: ts, Key: []byte("a"), Value: []byte("1")},
			LegacySpec{Offset: 1, Timestamp: ts + 1, Value: []byte("2")}, LegacySpec{Offset: 2, Timestamp: ts + 2, Key: []byte{}, Value: nil})
		for codec := uint8(CompressionGzip); codec <= uint8(CompressionZstd); codec++ {
			f.Add(uint8(magic), codec, false, int64(2), ts, set)
			f.Add(uint8(magic), codec, true, int64(1002), ts, set)
		}
		f.Add(uint8(magic), uint8(CompressionGzip), false, int64(0), ts, []byte{})
	}
	for _, s := range fixtureBatches(4) {
		b, err := ParseBatch(s)
		if err != nil || !b.IsLegacy() || b.Compression() == CompressionNone {
			continue
		}
		if v, err := c.Decompress(nil, b.Compression(), b.Magic, b.Payload(), 0); err == nil {
			f.Add(uint8(b.Magic), uint8(b.Compression()), b.TimestampType() == LogAppendTime, b.BaseOffset, b.MaxTimestamp, v)
		}
	}
	f.Fuzz(func(t *testing.T, magic, codec uint8, lat bool, wrapperOffset, ts int64, set []byte) {
		m := int8(magic % 2)
		cc := Compression(1 + codec%4)
		var c Codecs
		raw := legacyWrapper(t, &c, m, cc, lat, wrapperOffset, ts, set)
		b, err := ParseBatch(raw)
		if err != nil {
			t.Fatalf("the wrapper does not parse: %v", err)
		}
		d := Decoder{MaxDecompressed: recordsCap}
		var recs []Record
		copied := 0
		before := heapAllocated()
		err = d.Records(&b, func(r *Record) error {
			rc := *r
			rc.Key, rc.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
			copied += len(r.Key) + len(r.Value)
			recs = append(recs, rc)
			return nil
		})
		// The callback's copies are allocated inside the measured window.
		if got, bound := heapAllocated()-before, allocBound(len(raw), recordsCap, cc)+uint64(copied)+uint64(len(recs))*512; got > bound {
			t.Fatalf("decoding a %d-byte wrapper allocated %d bytes, bound %d", len(raw), got, bound)
		}
		if err != nil {
			checkCorrupt(t, err, len(raw))
			if cc == CompressionZstd && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("zstd in a magic %d wrapper: %v, want ErrUnsupported", m, err)
			}
			if errors.Is(err, ErrTooLarge) && len(set) <= recordsCap {
				t.Fatalf("ErrTooLarge for a %d-byte inner set under a %d-byte cap", len(set), recordsCap)
			}
			return
		}
		if cc == CompressionZstd {
			t.Fatal("zstd accepted in a legacy wrapper")
		}
		if len(recs) == 0 {
			t.Fatal("a wrapper decoded to no records")
		}
		// Walk the set as stored: [offset int64][size int32][message].
		var starts []int
		for p := 0; p < len(set); p += LogOverhead + int(binary.BigEndian.Uint32(set[p+8:])) {
			starts = append(starts, p)
		}
		if len(starts) != len(recs) {
			t.Fatalf("%d records from %d inner messages", len(recs), len(starts))
		}
		lastStored := int64(binary.BigEndian.Uint64(set[starts[len(starts)-1]:]))
		var absBase int64
		if m == 1 && wrapperOffset != 0 {
			absBase = wrapperOffset - lastStored
			if recs[len(recs)-1].Offset != wrapperOffset {
				t.Fatalf("last inner offset %d, wrapper offset %d", recs[len(recs)-1].Offset, wrapperOffset)
			}
		}
		for i, r := range recs {
			msg := set[starts[i] : starts[i]+LogOverhead+int(binary.BigEndian.Uint32(set[starts[i]+8:]))]
			stored := int64(binary.BigEndian.Uint64(msg))
			if want := stored + absBase; r.Offset != want {
				t.Fatalf("record %d: offset %d, want stored %d + base %d", i, r.Offset, stored, absBase)
			}
			if m == 1 && lat && r.Timestamp != ts {
				t.Fatalf("record %d: LogAppendTime wrapper, timestamp %d, want %d", i, r.Timestamp, ts)
			}
			if r.CRCValid != (crc32.ChecksumIEEE(msg[16:]) == binary.BigEndian.Uint32(msg[12:])) {
				t.Fatalf("record %d: CRCValid %v disagrees with the stored checksum", i, r.CRCValid)
			}
			// Re-encode the inner message (not possible for LogAppendTime
			// wrappers, whose records report the wrapper's timestamp, nor
			// for attribute bits AppendLegacy cannot set).
			innerLAT := r.Attributes == AttrTimestampType
			if (m == 1 && lat) || (r.Attributes != 0 && !(innerLAT && r.Magic == 1)) {
				continue
			}
			enc, err := c.AppendLegacy(nil, LegacySpec{Offset: stored, Magic: r.Magic, LogAppendTime: innerLAT, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value})
			if err != nil {
				t.Fatal(err)
			}
			// Kafka reads any negative length as null; keep the stored one.
			lenPos := LogOverhead + legacyHeaderV0
			if r.Magic == 1 {
				lenPos = LogOverhead + legacyHeaderV1
			}
			if r.Key == nil {
				copy(enc[lenPos:lenPos+4], msg[lenPos:])
			}
			lenPos += 4 + len(r.Key)
			if r.Value == nil && lenPos+4 <= len(msg) {
				copy(enc[lenPos:lenPos+4], msg[lenPos:])
			}
			binary.BigEndian.PutUint32(enc[12:], r.CRC)
			if !bytes.Equal(enc, msg) {
				t.Fatalf("inner message %d re-encodes differently:\n got %x\nwant %x", i, enc, msg)
			}
		}
	})
}

// legacyWrapper builds a v0/v1 wrapper message whose value is set
// compressed with codec (bypassing AppendLegacy's inner encoding, so that
// set can be any bytes).
func legacyWrapper(t *testing.T, c *Codecs, magic int8, codec Compression, lat bool, offset, ts int64, set []byte) []byte {
	t.Helper()
	value, err := c.Compress(nil, codec, magic, set)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.AppendLegacy(nil, LegacySpec{Offset: offset, Magic: magic, LogAppendTime: lat, Timestamp: ts, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	raw[17] |= byte(codec)
	binary.BigEndian.PutUint32(raw[12:], crc32.ChecksumIEEE(raw[16:]))
	return raw
}

// ---------------------------------------------------------------- FuzzDecompress*

// decompressCap is the cap the codec targets decompress under.
const decompressCap = 64 << 10

// fuzzCodec is the body of the per-codec targets. The fuzz bytes are used
// twice: as a compressed stream (never more than the cap out, a genuine
// ErrTooLarge, the error oracle, an exact cap accepted and one byte less
// refused) and as plaintext (Compress then Decompress returns it
// bit-exactly, again with an exact cap). The same Codecs serves both, so
// state left by a failed decode must not leak into the next.
func fuzzCodec(f *testing.F, codec Compression) {
	var c Codecs
	for _, in := range [][]byte{nil, []byte("abc"), jsonish(3000), randomBytes(70000, 3)} {
		for _, magic := range codecMagics(codec) {
			comp, _ := c.Compress(nil, codec, magic, in)
			f.Add(magic, comp)
		}
	}
	switch codec {
	case CompressionGzip:
		f.Add(int8(1), hexSeed(vecGzipABC))
	case CompressionSnappy:
		f.Add(int8(2), hexSeed(vecXerialHdr))
	case CompressionLZ4:
		f.Add(int8(2), append(hexSeed(vecLZ4HdrV1), 0, 0, 0, 0))
		f.Add(int8(0), append(hexSeed(vecLZ4HdrV0), 0, 0, 0, 0))
		f.Add(int8(2), pierrecFrame(f, jsonish(5000), lz4.BlockChecksumOption(true), lz4.ChecksumOption(true)))
	}
	for _, s := range fixtureBatches(4) {
		if b, err := ParseBatch(s); err == nil && b.Compression() == codec {
			f.Add(b.Magic, b.Payload())
		}
	}
	f.Fuzz(func(t *testing.T, magic int8, data []byte) {
		magic = int8(uint8(magic) % 3)
		var c Codecs
		before := heapAllocated()
		out, err := c.Decompress(nil, codec, magic, data, decompressCap)
		if got, bound := heapAllocated()-before, allocBound(len(data), decompressCap, codec); got > bound {
			t.Fatalf("decompressing %d bytes allocated %d bytes, bound %d", len(data), got, bound)
		}
		if len(out) > decompressCap {
			t.Fatalf("%d bytes out under a %d-byte cap", len(out), decompressCap)
		}
		switch {
		case codec == CompressionZstd && magic < 2:
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("zstd with magic %d: %v, want ErrUnsupported", magic, err)
			}
			return // nothing else to learn; the plaintext half needs magic 2
		case err != nil:
			if len(out) != 0 {
				t.Fatalf("%d bytes returned with the error %v", len(out), err)
			}
			classOf(t, err)
			if ce, ok := AsCorrupt(err); ok && (ce.Pos < 0 || ce.Pos > int64(len(data))) {
				t.Fatalf("position %d outside %d input bytes: %v", ce.Pos, len(data), err)
			}
			if errors.Is(err, ErrTooLarge) {
				var big Codecs
				if more, err := big.Decompress(nil, codec, magic, data, 16*decompressCap); err == nil && len(more) <= decompressCap {
					t.Fatalf("ErrTooLarge under a %d-byte cap, but the stream decompresses to %d bytes", decompressCap, len(more))
				}
			}
		default:
			checkExactCap(t, &c, codec, magic, data, out)
		}

		// The fuzz bytes as plaintext. The compressor is shared between
		// executions (creating a gzip or zstd writer costs more than the
		// rest of the target); its output does not depend on its history.
		comp, err := fuzzEncoder.Compress(nil, codec, magic, data)
		if err != nil {
			t.Fatalf("Compress: %v", err)
		}
		back, err := c.Decompress(nil, codec, magic, comp, max(len(data), 1))
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("round trip of %d bytes: %d bytes back, %v", len(data), len(back), err)
		}
		checkExactCap(t, &c, codec, magic, comp, data)
	})
}

// fuzzEncoder compresses the plaintext half of the codec targets.
var fuzzEncoder Codecs

// checkExactCap: a stream that decompresses to want is accepted under a cap
// of exactly len(want) and refused with ErrTooLarge one byte below.
func checkExactCap(t *testing.T, c *Codecs, codec Compression, magic int8, comp, want []byte) {
	t.Helper()
	if len(want) == 0 {
		return // a cap of 0 means the default
	}
	got, err := c.Decompress(nil, codec, magic, comp, len(want))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("cap = size (%d): %d bytes, %v", len(want), len(got), err)
	}
	if len(want) < 2 {
		return
	}
	if _, err := c.Decompress(nil, codec, magic, comp, len(want)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("cap = size-1 (%d): err = %v, want ErrTooLarge", len(want)-1, err)
	}
}

func FuzzDecompressGzip(f *testing.F)   { fuzzCodec(f, CompressionGzip) }
func FuzzDecompressSnappy(f *testing.F) { fuzzCodec(f, CompressionSnappy) }
func FuzzDecompressLZ4(f *testing.F)    { fuzzCodec(f, CompressionLZ4) }
func FuzzDecompressZstd(f *testing.F)   { fuzzCodec(f, CompressionZstd) }

// ---------------------------------------------------------------- FuzzControl

// FuzzControl: ParseControl on any key and value. The error oracle
// (positions relative to the value, or 0 for the key); for the types with
// an encoder (ABORT, COMMIT, MIRROR_PID_RESET) the parsed value re-encodes
// to a value that parses equal, and to the input itself when the input is
// canonical; the kafka-dump-log JSON of any parsed value is valid JSON.
func FuzzControl(f *testing.F) {
	cluster := "Zm9vYmFyYmF6cXV4MTIzNA"
	for typ := ControlAbort; typ <= ControlMirrorPidReset+1; typ++ {
		f.Add(AppendControlKey(nil, typ), []byte{0, 0, 0})
	}
	f.Add(AppendControlKey(nil, ControlCommit), AppendEndTxnMarkerValue(nil, 7))
	f.Add(AppendControlKey(nil, ControlAbort), AppendEndTxnMarkerValue(nil, -1))
	f.Add(AppendControlKey(nil, ControlMirrorPidReset), AppendMirrorPidResetValue(nil, nil))
	f.Add(AppendControlKey(nil, ControlMirrorPidReset), AppendMirrorPidResetValue(nil, &cluster))
	f.Add(AppendControlKey(nil, ControlSnapshotHeader), hexSeed("0000000000018bcfe5680000"))
	f.Add(AppendControlKey(nil, ControlKRaftVersion), hexSeed("0000000100"))
	f.Add(AppendControlKey(nil, ControlLeaderChange), hexSeed("000000000001020000000100020000000100"))
	f.Add(AppendControlKey(nil, ControlKRaftVoters), hexSeed("0000020000000100112233445566778899aabbccddeeff0002064e414d4505686f737400230000010000000000"))
	var d Decoder
	for _, s := range allBatchSeeds(f) {
		b, err := ParseBatch(s)
		if err != nil || !b.IsControl() {
			continue
		}
		_ = d.Records(&b, func(r *Record) error { f.Add(bytes.Clone(r.Key), bytes.Clone(r.Value)); return nil })
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := ParseControl(key, value)
		if err != nil {
			checkCorrupt(t, err, max(len(key), len(value)))
			return
		}
		if len(key) < 4 {
			t.Fatalf("a %d-byte key parsed", len(key))
		}
		if js := c.KafkaJSON(); js != "" && !json.Valid([]byte(js)) {
			t.Fatalf("KafkaJSON is not JSON: %s", js)
		}
		if c.KeyVersion == 0 && len(key) == 4 && !bytes.Equal(AppendControlKey(nil, c.Type), key) {
			t.Fatalf("key re-encodes to %x, want %x", AppendControlKey(nil, c.Type), key)
		}
		var enc []byte
		switch c.Type {
		case ControlAbort, ControlCommit:
			enc = AppendEndTxnMarkerValue(nil, c.CoordinatorEpoch)
		case ControlMirrorPidReset:
			enc = AppendMirrorPidResetValue(nil, c.SourceClusterID)
		default:
			return
		}
		again, err := ParseControl(AppendControlKey(nil, c.Type), enc)
		if err != nil {
			t.Fatalf("re-encoded %s value does not parse: %v", c.Type, err)
		}
		want := c
		want.KeyVersion, want.Version = 0, 0 // the encoders write version 0
		if !reflect.DeepEqual(again, want) {
			t.Fatalf("re-encoded %s value parses to %+v, want %+v", c.Type, again, want)
		}
		// Canonical input (version 0, minimal varints, no tagged fields,
		// nothing after the fields) is reproduced byte for byte.
		if c.Version == 0 && len(enc) == len(value) && !bytes.Equal(enc, value) {
			t.Fatalf("%s value re-encodes to %x, want %x", c.Type, enc, value)
		}
	})
}

// ---------------------------------------------------------------- FuzzBatchRoundTrip

// FuzzBatchRoundTrip builds a v2 batch from fuzz-derived header fields and
// records with AppendBatch, then parses and decodes it: every header field
// and every record equals what was encoded, the CRC is valid, and
// re-encoding the decoded batch reproduces it bit-exactly.
func FuzzBatchRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint8(0), int64(0), int32(0), int64(-1), int16(-1), int32(-1), int64(1700000000000), []byte("\x00\x03abc\x05hello"))
	f.Add(uint8(1), uint8(2), int64(100), int32(5), int64(1000), int16(3), int32(7), int64(1700000000000), []byte("\x21\x02ab\x02hi\x61kk\x04"))
	f.Add(uint8(2), uint8(1), int64(math.MaxInt64-10), int32(-1), int64(7), int16(0), int32(math.MaxInt32), int64(-1), []byte("\x10\xff\x11\x12\x13"))
	f.Add(uint8(3), uint8(4), int64(9), int32(0), int64(1000), int16(3), int32(-1), int64(0), []byte("\x00\x04\x00\x00\x00\x07\x03\x00\x00\x00"))
	f.Add(uint8(4), uint8(8), int64(1), int32(2), int64(3), int16(4), int32(5), int64(6), []byte("\xff\xfe\xfd\xfc"))
	f.Add(uint8(4), uint8(16), int64(0), int32(0), int64(-1), int16(-1), int32(-1), int64(0), []byte{})
	f.Fuzz(func(t *testing.T, codec, flags uint8, baseOffset int64, ple int32, pid int64, epoch int16, seq int32, ts int64, data []byte) {
		s := BatchSpec{
			BaseOffset: baseOffset, PartitionLeaderEpoch: ple, Compression: Compression(codec % 5),
			LogAppendTime: flags&1 != 0, Transactional: flags&2 != 0, Control: flags&4 != 0,
			ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		}
		if flags&8 != 0 {
			s.DeleteHorizonMs = &ts
		}
		if flags&16 != 0 {
			appendTime := ts ^ 0x5555
			s.MaxTimestamp = &appendTime
		}
		recs := recordsFrom(data, ts)
		var c Codecs
		raw, err := c.AppendBatch(nil, s, recs)
		if err != nil {
			t.Fatalf("AppendBatch: %v", err)
		}
		b, err := ParseBatch(raw)
		if err != nil {
			t.Fatalf("ParseBatch of an AppendBatch result: %v", err)
		}
		if b.Size() != int64(len(raw)) || !b.CRCValid() || b.Magic != 2 {
			t.Fatalf("size %d of %d, CRC valid %v, magic %d", b.Size(), len(raw), b.CRCValid(), b.Magic)
		}
		checkSpecHeader(t, &s, recs, &b)
		d := Decoder{}
		i := 0
		err = d.Records(&b, func(r *Record) error {
			if i >= len(recs) {
				t.Fatalf("more records than the %d encoded", len(recs))
			}
			want := recs[i]
			if s.LogAppendTime {
				want.Timestamp = b.MaxTimestamp
			}
			if got := specOf(r); !reflect.DeepEqual(normHeaders(got), normHeaders(want)) {
				t.Fatalf("record %d:\n got %+v\nwant %+v", i, got, want)
			}
			if r.Offset != baseOffset+int64(want.OffsetDelta) || r.Attributes != 0 {
				t.Fatalf("record %d: offset %d, attributes %d", i, r.Offset, r.Attributes)
			}
			i++
			return nil
		})
		if err != nil || i != len(recs) {
			t.Fatalf("decoded %d of %d records: %v", i, len(recs), err)
		}
		// Decode → encode is bit-exact (deterministic compressors).
		if !s.LogAppendTime {
			var got []RecordSpec
			_ = d.Records(&b, func(r *Record) error { got = append(got, specOf(r)); return nil })
			again, err := c.AppendBatch(nil, s, got)
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("re-encoding the decoded batch differs (%v)", err)
			}
		}
	})
}

// recordsFrom turns fuzz bytes into up to 64 records. Each record consumes
// an op byte, which chooses null/empty/short keys and values, headers, and
// offset gaps (compaction), so the count is bounded by the input.
func recordsFrom(data []byte, ts int64) []RecordSpec {
	var recs []RecordSpec
	delta := int32(0)
	take := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n:n]
		data = data[n:]
		return b
	}
	for len(data) > 0 && len(recs) < 64 {
		op := take(1)[0]
		r := RecordSpec{OffsetDelta: delta, Timestamp: ts + int64(int8(op))*1000}
		if op&1 == 0 {
			r.Key = take(int(op >> 1 & 7))
		}
		if op&0x10 == 0 && len(data) > 0 {
			r.Value = take(int(take(1)[0]))
		}
		if op&0x20 != 0 {
			for h := 0; h < int(op>>6)+1; h++ {
				hd := Header{Key: take(2)}
				if h%2 == 0 {
					hd.Value = take(1)
				}
				r.Headers = append(r.Headers, hd)
			}
		}
		recs = append(recs, r)
		switch {
		case op == 0xff:
			delta = math.MaxInt32 // the largest delta a batch can hold
		case op&0xc0 == 0xc0:
			delta += int32(op & 0x3f) // a compaction gap
		default:
			delta++
		}
	}
	return recs
}

// normHeaders maps an empty header list to nil, as decoding does not keep
// the difference.
func normHeaders(r RecordSpec) RecordSpec {
	if len(r.Headers) == 0 {
		r.Headers = nil
	}
	for i := range r.Headers {
		if r.Headers[i].Key == nil {
			r.Headers[i].Key = []byte{}
		}
	}
	return r
}

// checkSpecHeader checks a parsed header against the spec it was built
// from, with MemoryRecordsBuilder's derivations.
func checkSpecHeader(t *testing.T, s *BatchSpec, recs []RecordSpec, b *Batch) {
	t.Helper()
	baseTs, maxTs := int64(NoTimestamp), int64(NoTimestamp)
	var lastDelta int32
	if len(recs) > 0 {
		baseTs = recs[0].Timestamp
		lastDelta = recs[len(recs)-1].OffsetDelta
	}
	for _, r := range recs {
		maxTs = max(maxTs, r.Timestamp)
	}
	if s.DeleteHorizonMs != nil {
		baseTs = *s.DeleteHorizonMs
	}
	if s.MaxTimestamp != nil {
		maxTs = *s.MaxTimestamp
	}
	codec := s.Compression
	if len(recs) == 0 {
		codec = CompressionNone
	}
	type hdr struct {
		BaseOffset               int64
		PLE                      int32
		Codec                    Compression
		LAT, Txn, Ctl            bool
		Horizon                  bool
		PID                      int64
		Epoch                    int16
		Seq, LastDelta, Count    int32
		BaseTs, MaxTs            int64
		TimestampType            TimestampType
		LastOffset, LastSequence int64
	}
	_, horizon := b.DeleteHorizonMs()
	got := hdr{b.BaseOffset, b.PartitionLeaderEpoch, b.Compression(), b.TimestampType() == LogAppendTime, b.IsTransactional(), b.IsControl(),
		horizon, b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.LastOffsetDelta, b.RecordCount, b.BaseTimestamp, b.MaxTimestamp,
		b.TimestampType(), b.LastOffset(), int64(b.LastSequence())}
	tt := CreateTime
	if s.LogAppendTime {
		tt = LogAppendTime
	}
	lastSeq := int32(NoSequence)
	if s.BaseSequence != NoSequence {
		lastSeq = IncrementSequence(s.BaseSequence, lastDelta)
	}
	want := hdr{s.BaseOffset, s.PartitionLeaderEpoch, codec, s.LogAppendTime, s.Transactional, s.Control,
		s.DeleteHorizonMs != nil, s.ProducerID, s.ProducerEpoch, s.BaseSequence, lastDelta, int32(len(recs)), baseTs, maxTs,
		tt, s.BaseOffset + int64(lastDelta), int64(lastSeq)}
	if got != want {
		t.Fatalf("header\n got %+v\nwant %+v", got, want)
	}
}
