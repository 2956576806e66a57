package segment_test

import (
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// Scanner benchmarks over a generated 64 MiB segment (mixed codecs; the
// file stays in the page cache, so this is the CPU cost of framing):
//
//	go test ./segment -run '^$' -bench Scanner -benchmem

// benchSegment writes the segment into a temporary directory of b.
func benchSegment(b *testing.B) (string, int64) {
	path, st, err := segtest.LargeSegmentFile(b.TempDir(), 64<<20, segtest.LargeOptions{Seed: 11})
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Bytes
}

func benchScan(b *testing.B, path string, size int64, mmap, crc bool) {
	lf := segtest.OpenLog(b, path)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		sc := lf.Scanner(segment.ScanOptions{Mmap: mmap})
		n := 0
		for sc.Next() {
			if crc && !sc.Batch().CRCValid() {
				b.Fatal("crc mismatch")
			}
			n++
		}
		if sc.Err() != nil || sc.Tail().Kind != segment.TailClean || n == 0 {
			b.Fatalf("scan: %v, tail %v, %d batches", sc.Err(), sc.Tail().Kind, n)
		}
	}
}

// BenchmarkScannerHeaderWalk frames every batch and parses its header.
func BenchmarkScannerHeaderWalk(b *testing.B) {
	path, size := benchSegment(b)
	b.Run("pread", func(b *testing.B) { benchScan(b, path, size, false, false) })
	b.Run("mmap", func(b *testing.B) { benchScan(b, path, size, true, false) })
}

// BenchmarkScannerCRC also checks every CRC-32C: what a batch-level dump
// and a producer-state replay do per batch.
func BenchmarkScannerCRC(b *testing.B) {
	path, size := benchSegment(b)
	b.Run("pread", func(b *testing.B) { benchScan(b, path, size, false, true) })
	b.Run("mmap", func(b *testing.B) { benchScan(b, path, size, true, true) })
}
