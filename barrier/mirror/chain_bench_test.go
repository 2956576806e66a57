package mirror

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

// BenchmarkVerifyEdge times verify-chain's edge check (the lockstep walk
// comparing every byte, with D's replay beside it) of a 12 MiB source
// against a full mirror of it, as testdata/bench/run.sh's chain group does
// on 1 GiB. MB/s counts both logs; cpu-ns/op is the process's CPU time.
func BenchmarkVerifyEdge(b *testing.B) {
	const size = 12 << 20
	src, _ := benchSource(b, size)
	root := b.TempDir()
	dst := filepath.Join(root, "logs", "bench-0")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		b.Fatal(err)
	}
	p, err := PlanMirror(src, dst, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(root, "bk")}); err != nil {
		b.Fatal(err)
	}
	var bytes int64
	for _, d := range []string{src, dst} {
		pd := segtest.OpenDir(b, d)
		for _, s := range pd.Segments {
			if st, err := os.Stat(s.Log); err == nil {
				bytes += st.Size()
			}
		}
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		c0 := processCPU()
		rep, err := VerifyEdge(src, dst, ChainOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
		if rep.Status != EdgeInSync {
			b.Fatalf("status %s: %+v", rep.Status, rep.Findings)
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
