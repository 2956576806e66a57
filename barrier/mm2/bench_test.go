package mm2

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/mm2/mm2test"
)

// BenchmarkVerify verifies a clean replica of a source of KSEG_MM2_BENCH_SOURCE
// (a partition directory; by default one of 20000 records written here)
// and its replica KSEG_MM2_BENCH_TARGET. testdata/bench/run.sh times the
// command against the CRC walk of both logs (docs/performance.md); this
// benchmark reports bytes per second and allocations for profiling.
func BenchmarkVerify(b *testing.B) {
	src, tgt := os.Getenv("KSEG_MM2_BENCH_SOURCE"), os.Getenv("KSEG_MM2_BENCH_TARGET")
	if src == "" || tgt == "" {
		dir := b.TempDir()
		src, tgt = filepath.Join(dir, "a", "orders-0"), filepath.Join(dir, "b", "A.orders-0")
		if _, err := mm2test.WriteSource(src, mm2test.SourceOptions{Records: 20000, SegmentBytes: 1 << 20}); err != nil {
			b.Fatal(err)
		}
		if _, err := mm2test.Replicate(src, mm2test.Paths{Target: tgt}, mm2test.Options{SegmentBytes: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(logBytes(b, src) + logBytes(b, tgt))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Verify(src, tgt, Options{})
		if err != nil || !rep.OK() {
			b.Fatalf("%v %+v", err, rep.Counts)
		}
	}
}

func logBytes(b *testing.B, dir string) int64 {
	var n int64
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		st, err := os.Stat(l)
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return n
}
