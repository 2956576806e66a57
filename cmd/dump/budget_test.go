package dump

import (
	"context"
	"crypto/sha256"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
)

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
// the sha256 of stdout and the peak heap above the start (sampled every
// millisecond).
func deepDumpPeak(tb testing.TB, procs int, path string, extra ...string) ([32]byte, uint64) {
	tb.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	// A collection at every 5 % of growth: the peak is then what is live,
	// not garbage whose amount follows the heap other tests left.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		ss := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(ss)
			if v := ss[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	st, out, errb := ui.TestStreams()
	code := clitest.RunStreams(context.Background(), st, append(append([]string{"dump", "--deep", "-o", "json"}, extra...), path)...)
	close(done)
	if code != ui.ExitOK {
		tb.Fatalf("exit %d: %s", code, errb.String())
	}
	return sha256.Sum256(out.Bytes()), peak.Load() - min(peak.Load(), base)
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
	if peak16 > peak2+48<<20 || peak16 > 192<<20 {
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
