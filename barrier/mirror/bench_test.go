package mirror

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

// benchSource writes a partition directory of one segment of about size
// bytes of segtest.LargeSegment content (every codec, transactions,
// aborts) with a partition.metadata, as testdata/bench/run.sh's mirror
// group prepares it, and returns it with the offset of the first batch at
// or after 99 % of its bytes (where the incremental mirror's destination
// ends).
func benchSource(b *testing.B, size int64) (src string, cut int64) {
	b.Helper()
	src = filepath.Join(b.TempDir(), "bench-0")
	log, _, err := segtest.LargeSegmentFile(src, size, segtest.LargeOptions{Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, segment.PartitionMetadataName), []byte("version: 0\ntopic_id: EBESExQVFhcYGRobHB0eHw\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	lf, err := segment.OpenLog(log)
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close()
	st, _ := os.Stat(log)
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	cut = -1
	for sc.Next() {
		if sc.Pos() >= st.Size()*99/100 {
			cut = sc.Batch().BaseOffset
			break
		}
	}
	if cut < 0 {
		b.Fatal("no batch at 99 %")
	}
	return src, cut
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMirror times kseg mirror's whole work (plan, backup, staged
// copy, fsyncs, commit, read-back verification) on 12 MiB: "full" into
// an empty log directory, "incremental" the last 1 % into a mirror of the
// first 99 % (restored, untimed, before every run). cpu-ns/op is the
// process's CPU time, which still compares on a machine other work keeps
// busy; MB/s is of the source segment.
func BenchmarkMirror(b *testing.B) {
	const size = 12 << 20
	src, cut := benchSource(b, size)
	st, err := os.Stat(filepath.Join(src, segment.SegmentFileName(0, segment.LogSuffix)))
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	p99 := filepath.Join(root, "p99", "bench-0")
	if err := os.MkdirAll(filepath.Dir(p99), 0o755); err != nil {
		b.Fatal(err)
	}
	o := DefaultOptions()
	o.Upto = cut
	p, err := PlanMirror(src, p99, o)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(root, "p99.bk")}); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, prepare func(dst string)) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		var cpu time.Duration
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			logs := filepath.Join(root, "run", "logs")
			if err := os.RemoveAll(filepath.Join(root, "run")); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(logs, 0o755); err != nil {
				b.Fatal(err)
			}
			dst := filepath.Join(logs, "bench-0")
			prepare(dst)
			c0 := processCPU()
			b.StartTimer()
			p, err := PlanMirror(src, dst, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			rep, err := Apply(p, edit.Options{BackupDir: filepath.Join(root, "run", "bk")})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cpu += processCPU() - c0
			if !rep.Verification.OK() {
				b.Fatalf("verification: %+v", rep.Verification)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
	b.Run("full", func(b *testing.B) { run(b, func(string) {}) })
	b.Run("incremental", func(b *testing.B) {
		run(b, func(dst string) { barriertest.CopyTree(b, p99, dst) })
	})
}

// BenchmarkMirrorManySegments mirrors a source into an empty destination
// that rolls a segment every 16 KiB (issue 29, item 2): 1,000 destination
// segments of a 12 MiB source, about 4,000 files (the .log, its indexes, a
// producer snapshot at every roll). The engine's cost must grow with the files, not with
// their square: it appends the journal's records instead of rewriting it
// after every file, keeps what is done in a set, and fsyncs the directory
// and the journal once per batch of files. ns/op and allocs/op are of the
// whole mirror (plan, staging, commit, read-back); testdata/bench/run.sh
// (group mirrorsegs) times 10,000 segments against cp -r with an fsync per
// file.
func BenchmarkMirrorManySegments(b *testing.B) {
	const segBytes = 16 << 10
	src := filepath.Join(b.TempDir(), "bench-0")
	if _, _, err := segtest.LargeSegmentFile(src, 1000*segBytes*3/4, segtest.LargeOptions{Seed: 7, NoLarge: true, Codecs: []decode.Compression{decode.CompressionZstd}}); err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	b.ReportAllocs()
	segs := 0
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(filepath.Join(root, "run")); err != nil {
			b.Fatal(err)
		}
		logs := filepath.Join(root, "run", "logs")
		if err := os.MkdirAll(logs, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		o := DefaultOptions()
		o.SegmentBytes = segBytes
		p, err := PlanMirror(src, filepath.Join(logs, "bench-0"), o)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Apply(p, edit.Options{BackupDir: filepath.Join(root, "run", "bk")})
		if err != nil {
			b.Fatal(err)
		}
		if !rep.Verification.OK() {
			b.Fatalf("verification: %+v", rep.Verification)
		}
		segs = len(p.SegmentsCreated)
	}
	b.ReportMetric(float64(segs), "segments")
}
