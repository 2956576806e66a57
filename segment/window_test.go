package segment_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// scanAll scans path and returns every batch's position and bytes (copied)
// and the tail.
func scanAll(t *testing.T, path string, opts segment.ScanOptions) ([]int64, [][]byte, segment.Tail) {
	t.Helper()
	lf := segtest.OpenLog(t, path)
	sc := lf.Scanner(opts)
	var pos []int64
	var raws [][]byte
	for sc.Next() {
		pos = append(pos, sc.Pos())
		raws = append(raws, bytes.Clone(sc.Batch().Raw))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pos, raws, sc.Tail()
}

// TestScannerMmapMatchesPread: mapped windows frame every fixture, healthy
// or broken, exactly as positional reads do, with windows small enough to
// slide many times.
func TestScannerMmapMatchesPread(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "broken", "*", "*", "*.log"))
	logs = append(logs, more...)
	if len(logs) < 10 {
		t.Fatalf("only %d fixture logs", len(logs))
	}
	for _, path := range logs {
		for _, bs := range []int{64, 300, 4096} {
			wantPos, wantRaw, wantTail := scanAll(t, path, segment.ScanOptions{BufferSize: bs})
			gotPos, gotRaw, gotTail := scanAll(t, path, segment.ScanOptions{BufferSize: bs, Mmap: true})
			if len(gotPos) != len(wantPos) || gotTail.Kind != wantTail.Kind || gotTail.ValidBytes != wantTail.ValidBytes {
				t.Fatalf("%s (window %d): mapped scan %d batches, tail %v at %d; read scan %d, %v at %d",
					path, bs, len(gotPos), gotTail.Kind, gotTail.ValidBytes, len(wantPos), wantTail.Kind, wantTail.ValidBytes)
			}
			for i := range gotPos {
				if gotPos[i] != wantPos[i] || !bytes.Equal(gotRaw[i], wantRaw[i]) {
					t.Fatalf("%s (window %d): batch %d differs", path, bs, i)
				}
			}
		}
	}
}

// TestScannerRetainedWindows: batches whose window is retained stay valid
// after the scanner has moved on, mapped or read, until released.
func TestScannerRetainedWindows(t *testing.T) {
	path, _, err := segtest.LargeSegmentFile(t.TempDir(), 6<<20, segtest.LargeOptions{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := scanAll(t, path, segment.ScanOptions{})
	for _, mmap := range []bool{false, true} {
		lf, err := segment.OpenLog(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := lf.Scanner(segment.ScanOptions{BufferSize: 256 << 10, Mmap: mmap})
		type heldBatch struct {
			w   *segment.Window
			i   int
			raw []byte
		}
		var held []heldBatch
		// check verifies that held batches read as they did when scanned.
		check := func(hs []heldBatch) {
			for _, h := range hs {
				if !bytes.Equal(h.raw, want[h.i]) {
					t.Fatalf("mmap %v: retained batch %d changed", mmap, h.i)
				}
				if b, err := decode.ParseBatch(h.raw); err != nil || !b.CRCValid() {
					t.Fatalf("mmap %v: retained batch %d: %v", mmap, h.i, err)
				}
			}
		}
		n := 0
		for sc.Next() {
			w := sc.Window()
			w.Retain()
			held = append(held, heldBatch{w, n, sc.Batch().Raw})
			n++
			if len(held) > 300 { // release the oldest half now and then
				check(held[:150])
				for _, h := range held[:150] {
					h.w.Release()
				}
				held = held[150:]
			}
		}
		if sc.Err() != nil || sc.Tail().Kind != segment.TailClean || n != len(want) {
			t.Fatalf("mmap %v: %v %v, %d batches", mmap, sc.Err(), sc.Tail().Kind, n)
		}
		check(held)
		for _, h := range held {
			h.w.Release()
		}
		sc.Close()
		lf.Close()
	}
}
