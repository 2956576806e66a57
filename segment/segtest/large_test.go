package segtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// TestLargeSegment: the benchmark generator writes what it claims — the
// same bytes for the same seed, clean framing, valid CRCs, the codecs
// asked for, per-producer sequences without gaps, transactions closed by
// markers — and at least the size asked for.
func TestLargeSegment(t *testing.T) {
	const size = 3 << 20
	var a, b bytes.Buffer
	st, err := LargeSegment(&a, size, LargeOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LargeSegment(&b, size, LargeOptions{Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same seed, different bytes")
	}
	if st.Bytes != int64(a.Len()) || st.Bytes < size {
		t.Fatalf("stats say %d bytes, wrote %d, asked for %d", st.Bytes, a.Len(), size)
	}
	checkLarge(t, a.Bytes(), st, nil)

	var c bytes.Buffer
	only := []decode.Compression{decode.CompressionZstd, decode.CompressionGzip}
	st, err = LargeSegment(&c, 1<<20, LargeOptions{Seed: 1, Codecs: only})
	if err != nil {
		t.Fatal(err)
	}
	checkLarge(t, c.Bytes(), st, only)
}

func checkLarge(t *testing.T, log []byte, st LargeStats, codecs []decode.Compression) {
	t.Helper()
	sc := segment.NewScanner(bytes.NewReader(log), int64(len(log)), segment.ScanOptions{})
	nextSeq := map[int64]int32{}
	inTxn := map[int64]bool{}
	seen := map[decode.Compression]bool{}
	var d decode.Decoder
	var batches, records, large int64
	next := int64(0)
	for sc.Next() {
		bt := sc.Batch()
		batches++
		if !bt.CRCValid() {
			t.Fatalf("batch at %d: crc mismatch", sc.Pos())
		}
		if bt.BaseOffset != next {
			t.Fatalf("batch at %d: baseOffset %d, want %d", sc.Pos(), bt.BaseOffset, next)
		}
		next = bt.NextOffset()
		err := d.Records(bt, func(r *decode.Record) error {
			records++
			if len(r.Value) >= 100<<10 {
				large++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("batch at %d: %v", sc.Pos(), err)
		}
		if bt.IsControl() {
			if !bt.IsTransactional() || !inTxn[bt.ProducerID] {
				t.Fatalf("batch at %d: marker of producer %d outside a transaction", sc.Pos(), bt.ProducerID)
			}
			inTxn[bt.ProducerID] = false
			continue
		}
		seen[bt.Compression()] = true
		if bt.IsTransactional() {
			inTxn[bt.ProducerID] = true
		}
		if bt.HasProducerID() {
			if want := nextSeq[bt.ProducerID]; bt.BaseSequence != want {
				t.Fatalf("batch at %d: producer %d baseSequence %d, want %d", sc.Pos(), bt.ProducerID, bt.BaseSequence, want)
			}
			nextSeq[bt.ProducerID] = bt.LastSequence() + 1
		}
	}
	if sc.Err() != nil || sc.Tail().Kind != segment.TailClean {
		t.Fatalf("scan: %v, tail %v", sc.Err(), sc.Tail().Kind)
	}
	for pid, open := range inTxn {
		if open {
			t.Errorf("producer %d: transaction left open", pid)
		}
	}
	if batches != st.Batches || records != st.Records || next != st.NextOffset {
		t.Errorf("stats %+v; found %d batches, %d records, next offset %d", st, batches, records, next)
	}
	if st.Commits == 0 || st.Aborts == 0 || len(nextSeq) < 20 {
		t.Errorf("%d commits, %d aborts, %d producers: want some of each", st.Commits, st.Aborts, len(nextSeq))
	}
	if codecs == nil {
		codecs = []decode.Compression{decode.CompressionNone, decode.CompressionGzip, decode.CompressionSnappy, decode.CompressionLZ4, decode.CompressionZstd}
		if large == 0 {
			t.Error("no 100 KiB records")
		}
	}
	for _, c := range codecs {
		if !seen[c] {
			t.Errorf("no %s batch", c)
		}
	}
	if len(seen) != len(codecs) {
		t.Errorf("codecs %v, want %v", seen, codecs)
	}
}

// TestLogDir: a small log directory of generated partitions, each a
// well-formed partition directory.
func TestLogDir(t *testing.T) {
	dir := t.TempDir()
	if err := LogDir(dir, 3, 48<<10, LargeOptions{Seed: 2}); err != nil {
		t.Fatal(err)
	}
	ld, err := segment.OpenLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != 3 {
		t.Fatalf("partitions %v", ld.Partitions)
	}
	for _, p := range ld.Partitions {
		pd, err := segment.OpenPartitionDir(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(pd.Segments) == 0 || pd.Segments[0].Index == "" || len(pd.Snapshots) == 0 || pd.LeaderEpochCheckpoint == "" || pd.PartitionMetadata == "" {
			t.Errorf("%s: %s, epochs %q, metadata %q", p, pd, pd.LeaderEpochCheckpoint, pd.PartitionMetadata)
		}
		st, err := os.Stat(filepath.Join(p, segment.SegmentFileName(0, segment.LogSuffix)))
		if err != nil || st.Size() < 48<<10 {
			t.Errorf("%s: log %v, %v", p, st, err)
		}
	}
}
