package digest_test

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/digest/digesttest"
	"github.com/kseg/kseg/segment/segtest"
)

// benchSize is the benchmark segment's size: KSEG_BENCH_MIB MiB, 64 by
// default (testdata/bench/run.sh times kseg digest on its 1 GiB segment).
func benchSize() int64 {
	if v, err := strconv.Atoi(os.Getenv("KSEG_BENCH_MIB")); err == nil && v > 0 {
		return int64(v) << 20
	}
	return 64 << 20
}

// benchPartition writes a partition of one segtest.LargeSegment segment
// (mixed codecs, batches of a few bytes to 300 KiB, markers).
func benchPartition(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "bench-0")
	if _, _, err := segtest.LargeSegmentFile(dir, benchSize(), segtest.LargeOptions{Seed: 5}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkWrite times kseg digest's work on the benchmark segment
// (framing, every CRC checked on a second core, every batch hashed),
// beside BenchmarkCRCWalk on the same kind of segment: the digest's goal
// is 1.1× the CRC walk (testdata/bench/run.sh measures it on 1 GiB).
func BenchmarkWrite(b *testing.B) {
	dir := benchPartition(b)
	for _, h := range []digest.Hash{digest.XXH3, digest.SHA256} {
		for _, mmap := range []bool{false, true} {
			name := h.String() + "/read"
			if mmap {
				name = h.String() + "/mmap"
			}
			b.Run(name, func(b *testing.B) {
				var sum *digest.Summary
				var cpu time.Duration
				for b.Loop() {
					var cw digesttest.CountWriter
					c0 := processCPU()
					s, err := digest.Write(&cw, dir, digest.Options{Hash: h, From: -1, Mmap: mmap})
					if err != nil {
						b.Fatal(err)
					}
					cpu += processCPU() - c0
					sum = s
				}
				b.SetBytes(sum.LogBytes)
				b.ReportMetric(float64(sum.Bytes)/float64(sum.Batches), "bytes/batch")
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkCRCWalk is testdata/bench/crcfloor's walk: the segment
// mapped, every batch framed and its CRC checked, on one core.
func BenchmarkCRCWalk(b *testing.B) {
	dir := benchPartition(b)
	path := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	tab := crc32.MakeTable(crc32.Castagnoli)
	var cpu time.Duration
	defer func() { b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		c0 := processCPU()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for p := 0; len(data)-p > 17; {
			l := int(binary.BigEndian.Uint32(data[p+8:]))
			end := p + 12 + l
			if l < 14 || end > len(data) {
				break
			}
			if crc32.Checksum(data[p+21:end], tab) == binary.BigEndian.Uint32(data[p+17:]) {
				n++
			}
			p = end
		}
		syscall.Munmap(data)
		f.Close()
		cpu += processCPU() - c0
		if n == 0 {
			b.Fatal("no batch")
		}
	}
}

// processCPU is the process's CPU time (user and system), which still
// compares on a machine other work keeps busy.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
