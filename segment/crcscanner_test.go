package segment_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// crcSegment writes a 12 MiB generated segment whose batches number 3, 500
// and the last have a payload byte flipped (CRC mismatches), followed by a
// torn batch, and returns its path.
func crcSegment(t testing.TB) string {
	path, _, err := segtest.LargeSegmentFile(t.TempDir(), 12<<20, segtest.LargeOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	data := testkit.ReadFile(t, path)
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var pos []int64
	var sizes []int64
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		pos = append(pos, sc.Pos())
		sizes = append(sizes, sc.Batch().Size())
	}
	lf.Close()
	if len(pos) < 600 {
		t.Fatalf("only %d batches", len(pos))
	}
	for _, i := range []int{3, 500, len(pos) - 1} {
		data[pos[i]+sizes[i]-1] ^= 0x5a
	}
	// A torn batch: the header of the first batch again, with nothing after.
	data = append(data, data[:40]...)
	testkit.WriteFile(t, path, data)
	return path
}

type scanned struct {
	pos   int64
	base  int64
	crcOK bool
}

// TestCRCScannerMatchesScanner: the pipelined scan sees the batches, the
// CRC verdicts, the tail and the error of a plain scan that checks CRCs
// itself, whether mapped or read, on one CPU or two, from a start position
// and up to a limit.
func TestCRCScannerMatchesScanner(t *testing.T) {
	path := crcSegment(t)
	lf := segtest.OpenLog(t, path)
	var all []scanned
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		all = append(all, scanned{sc.Pos(), sc.Batch().BaseOffset, sc.Batch().CRCValid()})
	}
	wantTail := sc.Tail()
	if wantTail.Kind != segment.TailTornBatch {
		t.Fatalf("tail %v, want torn-batch", wantTail.Kind)
	}
	bad := 0
	for _, s := range all {
		if !s.crcOK {
			bad++
		}
	}
	if bad != 3 {
		t.Fatalf("%d CRC mismatches in the fixture, want 3", bad)
	}
	for _, procs := range []int{1, 2} {
		for _, mmap := range []bool{false, true} {
			for _, o := range []segment.ScanOptions{
				{Mmap: mmap, BufferSize: 1 << 20},
				{Mmap: mmap, BufferSize: 1 << 20, Start: all[100].pos, Limit: all[700].pos},
			} {
				old := runtime.GOMAXPROCS(procs)
				c := lf.CRCScanner(o, true)
				var got []scanned
				for c.Next() {
					if c.Batch().Size() != int64(len(c.Batch().Raw)) {
						t.Fatalf("batch at %d: Raw of %d bytes, size %d", c.Pos(), len(c.Batch().Raw), c.Batch().Size())
					}
					got = append(got, scanned{c.Pos(), c.Batch().BaseOffset, c.CRCValid()})
				}
				c.Close()
				runtime.GOMAXPROCS(old)
				want := all
				if o.Start > 0 {
					want = all[100:700]
				}
				if c.Err() != nil {
					t.Fatalf("procs %d mmap %v: %v", procs, mmap, c.Err())
				}
				if len(got) != len(want) {
					t.Fatalf("procs %d mmap %v start %d: %d batches, want %d", procs, mmap, o.Start, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("procs %d mmap %v: batch %d is %+v, want %+v", procs, mmap, i, got[i], want[i])
					}
				}
				if o.Limit == 0 && !sameTail(c.Tail(), wantTail) {
					t.Fatalf("procs %d mmap %v: tail %+v, want %+v", procs, mmap, c.Tail(), wantTail)
				}
			}
		}
	}
}

// TestCRCScannerAbandoned: a scan closed midway stops its helper and
// releases its windows (a second Close and Next are harmless), and without
// checkCRC every verdict is true.
func TestCRCScannerAbandoned(t *testing.T) {
	path := crcSegment(t)
	lf := segtest.OpenLog(t, path)
	before := runtime.NumGoroutine()
	for _, n := range []int{0, 1, 300} {
		c := lf.CRCScanner(segment.ScanOptions{Mmap: true, BufferSize: 1 << 20}, false)
		for i := 0; i < n && c.Next(); i++ {
			if !c.CRCValid() {
				t.Fatal("a CRC verdict without checkCRC")
			}
		}
		c.Close()
		c.Close()
		if c.Next() {
			t.Fatal("Next after Close")
		}
	}
	// Close joins the helper, so a leak is a goroutine that never ends.
	// What may still be counted for a moment is the runtime's own: the
	// finalizer goroutine counts as a user goroutine while it runs
	// finalizers (os.File's, after a GC), which on a loaded machine can
	// take longer than a few yields. Poll for a while before calling it a
	// leak.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines left running, %d before", g, before)
	}
}

// TestCRCScannerTruncated: a mapped file truncated under the scan (a
// broker truncating its log) ends it with an error, whichever goroutine
// meets the fault: the helper's becomes Err, the caller's is a panic its
// SetPanicOnFault turns into a runtime error it recovers. It never hangs
// or kills the process, and Close releases everything.
func TestCRCScannerTruncated(t *testing.T) {
	path := crcSegment(t)
	lf := segtest.OpenLog(t, path)
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	c := lf.CRCScanner(segment.ScanOptions{Mmap: true, BufferSize: 1 << 20}, true)
	defer c.Close()
	for i := 0; i < 50 && c.Next(); i++ {
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	fault := func() (fault any) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { fault = recover() }()
		for c.Next() {
			_ = c.Batch().Raw[len(c.Batch().Raw)-1]
		}
		return nil
	}()
	if fault != nil {
		if _, ok := fault.(interface{ Addr() uintptr }); !ok {
			t.Fatalf("panic %v, want a memory fault", fault)
		}
		return
	}
	if c.Err() == nil || !strings.Contains(c.Err().Error(), "changed while it was read") {
		t.Fatalf("the scan of a truncated mapping ended with %v, want the fault as an error", c.Err())
	}
}

// BenchmarkCRCScanner is BenchmarkScannerCRC with the CRCs checked on a
// second goroutine ahead of the reader: what a producer-state replay
// costs beyond its state machine.
func BenchmarkCRCScanner(b *testing.B) {
	path, size := benchSegment(b)
	for _, mmap := range []bool{false, true} {
		name := "pread"
		if mmap {
			name = "mmap"
		}
		b.Run(name, func(b *testing.B) {
			lf := segtest.OpenLog(b, path)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				c := lf.CRCScanner(segment.ScanOptions{Mmap: mmap}, true)
				for c.Next() {
					if !c.CRCValid() {
						b.Fatal("crc mismatch")
					}
				}
				c.Close()
				if c.Err() != nil || c.Tail().Kind != segment.TailClean {
					b.Fatalf("scan: %v, tail %v", c.Err(), c.Tail().Kind)
				}
			}
		})
	}
}

func sameTail(a, b segment.Tail) bool {
	if a.Kind != b.Kind || a.ValidBytes != b.ValidBytes || a.End != b.End || (a.Err == nil) != (b.Err == nil) {
		return false
	}
	return a.Err == nil || a.Err.Error() == b.Err.Error()
}
