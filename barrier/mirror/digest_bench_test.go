package mirror

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kseg/kseg/segment/digest/digesttest"
)

// BenchmarkVerifyEdgeDigests times verify-chain's edge check over two
// digests of a busy log of 16 KiB batches (KSEG_BENCH_GIB GiB of log, 1
// by default; testdata/bench/run.sh's digest group does 100 GiB), written
// directly (digesttest): the lockstep walk compares every batch's header
// and hash, and D's producer state is replayed from its digest. The
// digests are streamed: memory stays flat whatever the log's size
// (B/op, and the peak RSS run.sh reports). log-MB/s counts the log the
// digests describe, both sides.
func BenchmarkVerifyEdgeDigests(b *testing.B) {
	gib := int64(1)
	if v, err := strconv.Atoi(os.Getenv("KSEG_BENCH_GIB")); err == nil && v > 0 {
		gib = int64(v)
	}
	const size = 16 << 10
	batches := gib << 30 / size
	dir := b.TempDir()
	var logBytes int64
	paths := make([]string, 2)
	for i, name := range []string{"u", "d"} {
		paths[i] = filepath.Join(dir, name+".digest")
		f, err := os.Create(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		n, err := digesttest.Write(f, digesttest.Options{BatchSize: size, Batches: batches, HeadersOnly: true, Topic: "busy"})
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		logBytes = n
	}
	b.SetBytes(2 * logBytes)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		c0 := processCPU()
		rep, err := VerifyEdge(paths[0], paths[1], ChainOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
		if rep.Status != EdgeInSync || !rep.OK() {
			b.Fatalf("status %s: %+v", rep.Status, rep.Findings)
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
