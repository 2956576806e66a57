package decode

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// The two batches of formats.md §9.5 (a transactional batch with a header
// and a COMMIT marker) and the barrier of barrier.md §4.4.
const (
	spec95Batch1 = "0000000000000000000000490000000302e6ef6d830010000000010000018bcfe568000000018bcfe5680100000000000003e80000000000000000000214000000046b300476300018000202010476310202680278"
	spec95Batch2 = "0000000000000002000000420000000302c3c617a40030000000000000018bcfe568050000018bcfe5680500000000000003e80000ffffffff000000012000000008000000010c00000000000700"
	specBarrier  = "00000000000000000000003f0000000002bbdac33c0020000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff000000011a00000008000000070600000000"
)

// TestLayoutCoversEveryByte: for an uncompressed batch the annotated fields
// tile the entry exactly, so explain shows every byte once.
func TestLayoutCoversEveryByte(t *testing.T) {
	for _, h := range []string{spec95Batch1, spec95Batch2, specBarrier} {
		raw, _ := hex.DecodeString(h)
		fs := mustLayout(t, raw)
		next := 0
		for _, f := range fs {
			if f.Pos != next {
				t.Fatalf("field %s at %d, want %d", f.Name, f.Pos, next)
			}
			next += f.Len
		}
		if next != len(raw) {
			t.Fatalf("fields cover %d of %d bytes", next, len(raw))
		}
	}
}

func TestLayoutNamesControlAndHeaders(t *testing.T) {
	raw, _ := hex.DecodeString(spec95Batch1 + spec95Batch2)
	var d Decoder
	var all []string
	for len(raw) > 0 {
		b, err := ParseBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := d.Layout(&b)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			all = append(all, f.Name+"="+f.Value)
		}
		raw = raw[b.Size():]
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"headerKey=\"h\"", "crc=3874450819 (0xe6ef6d83, valid)", "(control type 1 COMMIT)", "offsetDelta=1 (offset 1)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("layout lacks %q:\n%s", want, joined)
		}
	}
}

func TestLayoutCompressedRecordsAreMarked(t *testing.T) {
	raw, err := AppendBatch(nil, BatchSpec{Compression: CompressionZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]RecordSpec{{OffsetDelta: 0, Timestamp: 5, Key: []byte("k"), Value: []byte("v")}, {OffsetDelta: 1, Timestamp: 6, Value: []byte("w")}})
	if err != nil {
		t.Fatal(err)
	}
	fs := mustLayout(t, raw)
	var dec, recs int
	for _, f := range fs {
		if f.Decompressed {
			dec++
		}
		if strings.HasPrefix(f.Name, "record[") {
			recs++
		}
	}
	if recs != 2 || dec == 0 {
		t.Fatalf("records %d, decompressed fields %d", recs, dec)
	}
}

// A record whose length is 0 has no attributes byte. Layout reports it as
// damaged, with Records' field and class, instead of reading the byte after
// it (or, when the record ends the batch, indexing past the slice, which
// panicked).
func TestLayoutZeroLengthRecord(t *testing.T) {
	raw, _ := hex.DecodeString(specBarrier)
	// The barrier's record: length varint at 61 (0x1a = 13); make it 0 and
	// drop the 13-byte body, so the zero-length record ends the batch.
	raw = append(raw[:61:61], 0x00)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-LogOverhead))
	binary.BigEndian.PutUint32(raw[17:], CRC32C(raw[21:]))
	b, err := ParseBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	fs, err := d.Layout(&b)
	recErr := d.Records(&b, func(*Record) error { return nil })
	ce, ok := AsCorrupt(err)
	rce, rok := AsCorrupt(recErr)
	if !ok || !rok || ce.Field != "attributes" || rce.Field != "attributes" || !errors.Is(ce, ErrTruncated) || !errors.Is(rce, ErrTruncated) {
		t.Fatalf("Layout: %v; Records: %v; want both a truncated attributes", err, recErr)
	}
	if last := fs[len(fs)-1]; last.Name != "(damaged)" || last.Pos != 61 {
		t.Fatalf("last field %+v, want (damaged) at 61", last)
	}
}

// mustLayout parses the batch at the start of raw and lays it out.
func mustLayout(t *testing.T, raw []byte) []Field {
	t.Helper()
	b, err := ParseBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	fs, err := d.Layout(&b)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
