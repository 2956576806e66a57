package dump

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// Benchmarks of dump's rendering and of whole dumps over a generated
// segment (segtest.LargeSegment, mixed codecs):
//
//	go test ./cmd -run '^$' -bench 'Printers|Dump$' -benchmem
//
// Bytes per second are of the segment as stored.

// decodedBatch is a batch with its records copied out of the decoder.
type decodedBatch struct {
	b       decode.Batch
	records []decode.Record
	ctl     []*decode.Control
}

func decodedBatches(tb testing.TB, size int64) ([]decodedBatch, int64) {
	tb.Helper()
	var buf bytes.Buffer
	st, err := segtest.LargeSegment(&buf, size, segtest.LargeOptions{Seed: 5})
	if err != nil {
		tb.Fatal(err)
	}
	log := buf.Bytes()
	var out []decodedBatch
	var d decode.Decoder
	for p := 0; p < len(log); {
		b, err := decode.ParseBatch(log[p:])
		if err != nil {
			tb.Fatal(err)
		}
		p += int(b.Size())
		db := decodedBatch{b: b}
		err = d.Records(&b, func(r *decode.Record) error {
			c := *r
			c.Key = bytes.Clone(r.Key)
			c.Value = bytes.Clone(r.Value)
			c.Headers = append([]decode.Header(nil), r.Headers...)
			for i := range c.Headers {
				c.Headers[i].Key = bytes.Clone(c.Headers[i].Key)
				c.Headers[i].Value = bytes.Clone(c.Headers[i].Value)
			}
			db.records = append(db.records, c)
			var ctl *decode.Control
			if b.IsControl() {
				cc, err := decode.ParseControl(r.Key, r.Value)
				if err != nil {
					return err
				}
				ctl = &cc
			}
			db.ctl = append(db.ctl, ctl)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, db)
	}
	return out, st.Bytes
}

// BenchmarkPrinters renders decoded batches (and their records) with the
// json, text and kafka printers into io.Discard: the cost of rendering
// alone, without I/O or decoding.
func BenchmarkPrinters(b *testing.B) {
	batches, size := decodedBatches(b, 16<<20)
	valid := true
	for _, output := range []string{"json", "text", "kafka"} {
		for _, mode := range []string{"batches", "records", "data"} {
			b.Run(output+"/"+mode, func(b *testing.B) {
				s, _, _ := ui.TestStreams()
				s.Out = discardWriter{}
				var args []string
				switch mode {
				case "records":
					args = []string{"--deep"}
				case "data":
					args = []string{"--print-data"}
				}
				o := testDumpOptions(b, output, args...)
				p := newDumpPrinter(s, o)
				f := scan.File{Path: "bench-0/00000000000000000000.log", Info: segment.FileInfo{Kind: segment.KindLog}}
				p.BeginFile(f)
				// Views outlive the loop (as in dump), so the loop allocates
				// only what the printer does.
				var bv scan.BatchView
				var rv scan.RecordView
				b.SetBytes(size)
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					for i := range batches {
						db := &batches[i]
						bv = scan.BatchView{File: f.Path, Position: 0, Batch: &db.b, CRCValid: &valid}
						p.Batch(&bv)
						if o.Deep || db.b.IsControl() {
							for k := range db.records {
								rv = scan.RecordView{Record: &db.records[k], Control: db.ctl[k]}
								p.Record(&bv, &rv)
							}
						}
						p.EndBatch(&bv)
					}
				}
				cpu.report(b)
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// discardWriter is io.Discard with a type of its own (bufio would see
// through io.Discard's ReadFrom otherwise; it does not matter here).
type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// benchLog writes a generated segment of size bytes (mixed codecs) into a
// partition directory under b's temporary directory.
func benchLog(b *testing.B, size int64) (string, int64) {
	dir := b.TempDir()
	path := filepath.Join(dir, "bench-0", segment.SegmentFileName(0, segment.LogSuffix))
	clitest.Mkdir(b, filepath.Dir(path))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := segtest.LargeSegment(f, size, segtest.LargeOptions{Seed: 5})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Bytes
}

// cpuMeter reports cpu-ns/op next to ns/op: on a machine that other work
// keeps busy, wall times mean little, CPU times still compare (a parallel
// dump should cost about the CPU of a serial one, and finish in half the
// time on two idle cores).
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{clitest.ProcessCPU()} }

func (m cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(clitest.ProcessCPU()-m.start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkCRCFloor is testdata/bench/crcfloor in-process, on the file
// BenchmarkDump dumps: map the segment whole, walk the batch headers, check
// every CRC-32C on one core. The batch-level dump's target (issue 16) is a
// ratio to it.
func BenchmarkCRCFloor(b *testing.B) {
	path, size := benchLog(b, 64<<20)
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if n := crcFloor(b, path); n == 0 {
			b.Fatal("no batches")
		}
	}
	cpu.report(b)
}

func crcFloor(b *testing.B, path string) int {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Munmap(data)
	be := binary.BigEndian
	batches := 0
	for p := 0; len(data)-p > 17; {
		end := p + 12 + int(be.Uint32(data[p+8:]))
		if end > len(data) || decode.CRC32C(data[p+21:end]) != be.Uint32(data[p+17:]) {
			b.Fatalf("batch at %d", p)
		}
		batches++
		p = end
	}
	return batches
}

// BenchmarkDump runs whole dumps of a 64 MiB generated segment, serial
// (--decode-workers 1) and on GOMAXPROCS workers.
func BenchmarkDump(b *testing.B) {
	path, size := benchLog(b, 64<<20)
	for _, flags := range []string{"-o json --no-verify-crc", "-o json", "-o json --deep --print-data", "-o text --deep", "-o kafka --deep --print-data"} {
		for _, workers := range []string{"1", "0"} {
			name := strings.ReplaceAll(strings.ReplaceAll(flags, " ", ""), "-", "")
			if workers == "1" {
				name += "/serial"
			} else {
				name += "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				benchRun(b, append(append([]string{"dump", "--decode-workers", workers}, strings.Fields(flags)...), path), size)
			})
		}
	}
}

// BenchmarkLogDir runs dump and replay-psm over a log directory of one
// 32 MiB partition among 200 small ones (what issue 16's "one big
// partition among small ones" target measures at 1 GiB and 999), on
// --jobs workers:
//
//	go test ./cmd -run '^$' -bench LogDir -benchmem
func BenchmarkLogDir(b *testing.B) {
	ld := b.TempDir()
	if err := segtest.LogDir(ld, 200, 64<<10, segtest.LargeOptions{Seed: 17}); err != nil {
		b.Fatal(err)
	}
	big, _ := benchLog(b, 32<<20)
	if err := os.Rename(filepath.Dir(big), filepath.Join(ld, "backlog-0")); err != nil {
		b.Fatal(err)
	}
	var total int64
	filepath.WalkDir(ld, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return err
	})
	for _, args := range [][]string{
		{"dump", "-o", "json"},
		{"dump", "-o", "json", "--deep", "--print-data"},
		{"replay-psm", "-o", "json"},
	} {
		b.Run(strings.Join(args, ""), func(b *testing.B) {
			benchRun(b, append(slices.Clone(args), ld), total)
		})
	}
}

// BenchmarkDumpVerifyIndex is issue 16's "dump --verify-index at most
// 1.2× dump" on a 64 MiB partition with both indexes (rebuilt as a broker
// writes them, one entry every 4 KiB): the .index and .timeindex are
// checked in one walk over the log, beside the printing of their entries.
func BenchmarkDumpVerifyIndex(b *testing.B) {
	path, size := benchLog(b, 64<<20)
	idx, tidx, err := segment.RebuildIndexes(path, 0, 4096)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Dir(path)
	for name, content := range map[string][]byte{segment.IndexSuffix: idx, segment.TimeIndexSuffix: tidx} {
		testkit.WriteFile(b, filepath.Join(dir, segment.SegmentFileName(0, name)), content)
	}
	for _, flags := range [][]string{{"-o", "json"}, {"-o", "json", "--verify-index"}} {
		b.Run(strings.Join(flags, ""), func(b *testing.B) {
			benchRun(b, append(append([]string{"dump"}, flags...), dir), size)
		})
	}
}

// benchRun runs kseg with args (output discarded) once per iteration,
// reporting bytes per second of n bytes, allocations and CPU time.
func benchRun(b *testing.B, args []string, n int64) {
	b.SetBytes(n)
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		s, _, _ := ui.TestStreams()
		s.Out, s.Err = discardWriter{}, discardWriter{}
		if code := clitest.RunStreams(context.Background(), s, args...); code != ui.ExitOK {
			b.Fatalf("kseg %s: exit %d", strings.Join(args, " "), code)
		}
	}
	cpu.report(b)
}
