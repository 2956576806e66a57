package dump

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// writeLargeSegment writes a .log of at least size bytes into dir
// (segtest.LargeSegment's mix, uncompressed and lz4).
func writeLargeSegment(tb testing.TB, dir string, size int64) string {
	tb.Helper()
	path, _, err := segtest.LargeSegmentFile(dir, size, segtest.LargeOptions{Seed: 5, Codecs: []decode.Compression{decode.CompressionNone, decode.CompressionLZ4}})
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// discardStreams are streams whose output goes nowhere but for its last
// few KiB, so only the dumper's own memory is measured.
func discardStreams() (*ui.Streams, *tailWriter) {
	s, _, _ := ui.TestStreams()
	tw := &tailWriter{}
	s.Out, s.Err = tw, io.Discard
	return s, tw
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 8<<10 {
		w.b = append(w.b[:0], w.b[len(w.b)-4<<10:]...)
	}
	return len(p), nil
}

// TestDumpMemoryFlat dumps a 64 MiB segment (batch level, then with
// records and data) and requires the heap in use to stay under 64 MiB
// throughout: the scanner holds a window, never the file.
func TestDumpMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 64 MiB segment")
	}
	path := writeLargeSegment(t, t.TempDir(), 64<<20)
	for _, args := range [][]string{
		{"dump", "--output", "json", path},
		{"dump", "--output", "json", "--deep", "--print-data", path},
		{"dump", "--output", "kafka", "--deep", path},
	} {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		s := testkit.StartHeapSampler(2 * time.Millisecond)
		streams, tail := discardStreams()
		code := clitest.RunStreams(context.Background(), streams, args...)
		peak := s.Stop()
		if code != ui.ExitOK {
			t.Fatalf("kseg %s: exit %d", strings.Join(args, " "), code)
		}
		st, _ := os.Stat(path)
		if args[2] == "json" && !strings.Contains(string(tail.b), fmt.Sprintf(`"validBytes":%d,`, st.Size())) {
			t.Errorf("kseg %s: the dump did not reach the end of the segment: %s", strings.Join(args, " "), tail.b)
		}
		t.Logf("kseg %s: heap in use %.1f MiB before, peak %.1f MiB", strings.Join(args[:len(args)-1], " "),
			float64(before.HeapInuse)/(1<<20), float64(peak)/(1<<20))
		if peak >= 64<<20 {
			t.Errorf("kseg %s: heap in use peaked at %.1f MiB dumping a 64 MiB segment; want < 64 MiB",
				strings.Join(args, " "), float64(peak)/(1<<20))
		}
	}
}

// BenchmarkDumpLargeSegment dumps a generated segment of 1 GiB (batch
// level, JSON lines to io.Discard) and reports the peak heap in use and
// the heap obtained from the OS during the dump.
//
//	go test ./cmd -run '^$' -bench DumpLargeSegment -benchtime 1x
func BenchmarkDumpLargeSegment(b *testing.B) {
	const size = 1 << 30
	path := writeLargeSegment(b, b.TempDir(), size)
	args := []string{"dump", "--output", "json", path}
	b.SetBytes(size)
	b.ResetTimer()
	var peak, sysDelta uint64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := testkit.StartHeapSampler(5 * time.Millisecond)
		streams, _ := discardStreams()
		if code := clitest.RunStreams(context.Background(), streams, args...); code != ui.ExitOK {
			b.Fatalf("exit %d", code)
		}
		peak = max(peak, s.Stop())
		runtime.ReadMemStats(&after)
		sysDelta = max(sysDelta, after.HeapSys-min(after.HeapSys, before.HeapSys))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(sysDelta)/(1<<20), "heap-sys-delta-MiB")
}

// budgetSegment writes a segment of n zstd batches, each of one record:
// a key of 128 KiB of random bytes, so that every batch is a job of the
// deep dump's pipeline of its own (jobs of up to 128 KiB), and a value of
// size zero bytes.
func budgetSegment(tb testing.TB, n, size int) string {
	tb.Helper()
	rng := rand.New(rand.NewPCG(28, 9))
	key := make([]byte, 128<<10)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	var log []byte
	for i := range n {
		raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: int64(i), Compression: decode.CompressionZstd,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []decode.RecordSpec{{Key: key, Value: make([]byte, size)}})
		if err != nil {
			tb.Fatal(err)
		}
		log = append(log, raw...)
	}
	path := filepath.Join(tb.TempDir(), "zeros-0", "00000000000000000000.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, log, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// deepDumpPeak runs dump --deep on path at GOMAXPROCS procs, returning
// the sha256 of stdout and the peak heap in use above the start
// (testkit.HeapSampler, every millisecond).
func deepDumpPeak(tb testing.TB, procs int, path string, extra ...string) ([32]byte, uint64) {
	tb.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	// A collection at every 5 % of growth: the peak is then what is live,
	// not garbage whose amount follows the heap other tests left.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var start runtime.MemStats
	runtime.ReadMemStats(&start)
	sampler := testkit.StartHeapSampler(time.Millisecond)
	st, out, errb := ui.TestStreams()
	code := clitest.RunStreams(context.Background(), st, append(append([]string{"dump", "--deep", "-o", "json"}, extra...), path)...)
	peak := sampler.Stop()
	if code != ui.ExitOK {
		tb.Fatalf("exit %d: %s", code, errb.String())
	}
	return sha256.Sum256(out.Bytes()), peak - min(peak, start.HeapInuse)
}

// TestDeepDumpMemoryFlatInCores: a deep dump holds about as much at
// GOMAXPROCS=16 as at 2 — the renderers share one budget of decompressed
// bytes — and prints the same (issue 28: 256 MiB more per decoding
// worker at the cap, 4.1 GB at GOMAXPROCS=16 for a 2.7 MB segment).
// Batches of 32 MiB under a 64 MiB cap: sixteen renderers without the
// budget hold 15 × 32 MiB.
func TestDeepDumpMemoryFlatInCores(t *testing.T) {
	path := budgetSegment(t, 16, 32<<20)
	sum2, peak2 := deepDumpPeak(t, 2, path, "--max-decompressed-bytes", "67108864")
	sum16, peak16 := deepDumpPeak(t, 16, path, "--max-decompressed-bytes", "67108864")
	t.Logf("peak heap above the start: %d MiB at GOMAXPROCS=2, %d MiB at 16", peak2>>20, peak16>>20)
	if sum2 != sum16 {
		t.Error("the output differs between GOMAXPROCS=2 and 16")
	}
	// Without the budget sixteen renderers hold 15 × 32 MiB more than two;
	// with it the difference is garbage the collector has not reached yet,
	// up to three batches on a loaded machine (once 65 MiB at load 7).
	if peak16 > peak2+96<<20 || peak16 > 192<<20 {
		t.Errorf("peak heap %d MiB at GOMAXPROCS=16 against %d MiB at 2: memory grows with the cores", peak16>>20, peak2>>20)
	}
}

// BenchmarkDeepDumpBudget: the same deep dump at GOMAXPROCS 2 and 16,
// with the peak heap (issue 28 item 9's dimension).
func BenchmarkDeepDumpBudget(b *testing.B) {
	path := budgetSegment(b, 16, 32<<20)
	for _, procs := range []int{2, 16} {
		b.Run(map[int]string{2: "GOMAXPROCS=2", 16: "GOMAXPROCS=16"}[procs], func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				_, p := deepDumpPeak(b, procs, path, "--max-decompressed-bytes", "67108864")
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak>>20), "peak-MiB")
		})
	}
}

// TestDecodedJSONAllocatesNothing: writing a record's "decoded" object
// (an internal topic's, an MM2 topic's) into the record line's writer
// allocates nothing of its own. writeDecodedJSON once built the object in
// a JSONWriter of its own, which the func value it hands it to moved to
// the heap: one allocation per decoded record of a deep JSON dump. The
// records here do not decode (a constant error), so the body, whose
// decoded values allocate, is not what is counted.
func TestDecodedJSONAllocatesNothing(t *testing.T) {
	failed := errors.New("record has no value")
	internal := &scan.RecordView{Internal: &schema.Decoded{Topic: "__consumer_offsets"}, InternalErr: failed}
	mm2rv := &scan.RecordView{MM2Topic: "mm2-offsets.source.internal", MM2Err: failed}
	j := &ui.JSONWriter{B: make([]byte, 0, 1<<10)}
	for _, tc := range []struct {
		name, want string
		write      func()
	}{
		{"internal", `{"topic":"__consumer_offsets","error":"record has no value"}`, func() { writeInternalJSON(j, internal) }},
		{"mm2", `{"topic":"mm2-offsets.source.internal","error":"record has no value"}`, func() { writeMM2JSON(j, mm2rv) }},
	} {
		if n := testing.AllocsPerRun(100, func() { j.B = j.B[:0]; tc.write() }); n != 0 {
			t.Errorf("%s: %v allocations per decoded object, want 0", tc.name, n)
		}
		if string(j.B) != tc.want {
			t.Errorf("%s: decoded object %s, want %s", tc.name, j.B, tc.want)
		}
	}
}
