package cmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// The parallel dump (dump_pipeline.go) must print exactly what the serial
// one prints. The golden tests check whichever path GOMAXPROCS picks;
// these run both on purpose and compare every byte, on the fixtures and on
// a generated segment big enough for many jobs and several mapped windows.

func sameRun(t *testing.T, serial, parallel clitest.Result) {
	t.Helper()
	if serial.Code != parallel.Code || serial.Stdout != parallel.Stdout || serial.Stderr != parallel.Stderr {
		t.Errorf("kseg %s: parallel run differs from the serial one (exit %d vs %d)\nstdout: %s\nstderr: %s",
			strings.Join(parallel.Args, " "), serial.Code, parallel.Code,
			clitest.FirstDiff(serial.Stdout, parallel.Stdout), clitest.FirstDiff(serial.Stderr, parallel.Stderr))
	}
}

func TestDumpParallelMatchesSerialFixtures(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"partitions", "broken"} {
		names := segtest.PartitionNames
		if kind == "broken" {
			names = segtest.BrokenNames
		}
		for _, name := range names {
			t.Run(kind+"/"+name, func(t *testing.T) {
				work := t.TempDir()
				clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, kind, name), filepath.Join(work, name))
				for _, args := range goldenRuns(name, kind == "broken") {
					args = append(slices.Clone(args), filepath.Join(work, name))
					serial := clitest.Run(append([]string{args[0], "--decode-workers", "1"}, args[1:]...)...)
					for _, workers := range []string{"3"} {
						sameRun(t, serial, clitest.Run(append([]string{args[0], "--decode-workers", workers}, args[1:]...)...))
					}
				}
			})
		}
	}
}

// writeDamagedSegment writes a generated segment of about size bytes with
// damage spread through it: CRC mismatches, a compressed batch whose
// records do not decode (CRC recomputed, so only deep decoding finds it)
// and a jump in offsets (a non-consecutive report).
func writeDamagedSegment(t *testing.T, dir string, size int64) string {
	t.Helper()
	var sb strings.Builder
	if _, err := segtest.LargeSegment(&sb, size, segtest.LargeOptions{Seed: 7}); err != nil {
		t.Fatal(err)
	}
	log := []byte(sb.String())
	be := binary.BigEndian
	var positions []int
	for p := 0; p < len(log); p += decode.LogOverhead + int(be.Uint32(log[p+8:])) {
		positions = append(positions, p)
	}
	n := len(positions)
	for _, i := range []int{n / 7, n / 3, n/2 + 1} { // CRC mismatches
		p := positions[i]
		log[p+decode.RecordBatchOverhead+3] ^= 0x40
	}
	damagedRecords := false
	for _, i := range positions[n/4:] { // a compressed batch with damaged records
		b, err := decode.ParseBatch(log[i:])
		if err != nil {
			t.Fatal(err)
		}
		if b.Compression() == decode.CompressionLZ4 && !b.IsControl() {
			end := i + int(b.Size())
			log[end-6] ^= 0xff // inside the last lz4 block
			be.PutUint32(log[i+17:], decode.CRC32C(log[i+21:end]))
			damagedRecords = true
			break
		}
	}
	if !damagedRecords {
		t.Fatal("no lz4 batch to damage")
	}
	for _, p := range positions[2*n/3:] { // offsets jump by 5 (outside the CRC)
		be.PutUint64(log[p:], be.Uint64(log[p:])+5)
	}
	part := filepath.Join(dir, "bench-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(part, segment.SegmentFileName(0, segment.LogSuffix))
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDumpParallelMatchesSerialLargeSegment(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 12 MiB segment")
	}
	path := writeDamagedSegment(t, t.TempDir(), 12<<20) // more than one 8 MiB mapped window
	for _, flags := range [][]string{
		{"--output", "json"},
		{"--output", "json", "--deep", "--print-data"},
		{"--output", "kafka", "--deep", "--print-data"},
		{"--output", "text", "--deep", "--print-data"},
		{"--output", "json", "--deep", "--offsets", "100000:400000"},
		{"--output", "kafka", "--deep", "--producer-id", "5003"},
		{"--output", "text", "--no-verify-crc", "--control-only"},
		// Batch level: CRCs on workers, printing on the dump goroutine
		// (dump_crc.go), every printer.
		{"--output", "text"},
		{"--output", "table"},
		{"--output", "kafka"},
		{"--output", "json", "--offsets", "100000:400000"},
		{"--output", "kafka", "--control-only"},
	} {
		// Each flag set in a parallel subtest: they read the one segment.
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			t.Parallel()
			largeSegmentRun(t, path, flags)
		})
	}
}

// largeSegmentRun is one flag set of
// TestDumpParallelMatchesSerialLargeSegment: serial, then 2 and 3 decode
// workers, the same output.
func largeSegmentRun(t *testing.T, path string, flags []string) {
	args := append(append([]string{"dump"}, flags...), path)
	serial := clitest.Run(append([]string{"dump", "--decode-workers", "1"}, args[1:]...)...)
	if serial.Code != ui.ExitFindings && !slices.Contains(flags, "--no-verify-crc") {
		t.Errorf("kseg %s: exit %d, want %d (the damage is not reported)\n%s", strings.Join(args, " "), serial.Code, ui.ExitFindings, serial.Stderr)
	}
	for _, want := range map[string][]string{
		"json --deep --print-data": {`"kind":"crc-mismatch"`, `"kind":"corrupt-records"`},
		// kafka-dump-log stops at the batch whose records do not
		// decode, before its end-of-run reports.
		"kafka --deep --print-data": {"isvalid: false", "lz4", "corrupt"},
	}[strings.Join(flags[1:], " ")] {
		if !strings.Contains(serial.Stdout+serial.Stderr, want) {
			t.Errorf("kseg %s: no %q in the output", strings.Join(args, " "), want)
		}
	}
	for _, workers := range []string{"2", "3"} {
		sameRun(t, serial, clitest.Run(append([]string{"dump", "--decode-workers", workers}, args[1:]...)...))
	}
}

// TestDumpCRCPipeline: a batch-level dump picks the CRC pipeline, and its
// output is the serial one however the checks are shared: all on the dump
// goroutine (no worker), or mostly on workers.
func TestDumpCRCPipeline(t *testing.T) {
	path := writeDamagedSegment(t, t.TempDir(), 12<<20)
	for _, output := range []string{"json", "text", "kafka", "table"} {
		o := &dumpOptions{maxDecompressed: decode.DefaultMaxDecompressed, producerID: -2, output: output, keyFormat: "auto", valueFormat: "auto", maxBytesFlag: math.MaxInt32}
		if err := o.Validate([]string{path}); err != nil {
			t.Fatal(err)
		}
		dump := func(st *dumpState, s *ui.Streams, out, errb *bytes.Buffer) string {
			defer st.close()
			files := []dumpFile{{path: path, info: segment.FileInfo{Kind: segment.KindLog}}}
			if _, err := st.dumpFiles(context.Background(), s.Err, files, 0, newDumpProgress(s, files)); err != nil {
				t.Fatal(err)
			}
			if err := st.p.Close(); err != nil {
				t.Fatal(err)
			}
			return out.String() + "\n--- stderr\n" + errb.String()
		}
		s, out, errb := ui.TestStreams()
		serial := newDumpState(s, o, 1)
		if serial.pipe != nil {
			t.Fatalf("%s: one worker: a pipeline", output)
		}
		want := dump(serial, s, out, errb)
		if !strings.Contains(want, "crc") {
			t.Fatalf("%s: no CRC mismatch reported:\n%.2000s", output, want)
		}
		for _, workers := range []int{0, 2, 4} {
			s, out, errb := ui.TestStreams()
			st := newDumpState(s, o, max(workers, 2))
			cp, ok := st.pipe.(*crcPipeline)
			if !ok {
				t.Fatalf("%s: a batch-level dump on %d workers uses %T, not the CRC pipeline", output, workers, st.pipe)
			}
			if workers == 0 {
				cp.workers = 0 // every job checked by the dump goroutine itself
			}
			if got := dump(st, s, out, errb); got != want {
				t.Errorf("%s, %d workers: output differs from the serial dump: %s", output, workers, clitest.FirstDiff(want, got))
			}
		}
	}
}

// truncatedMappedBatch maps a generated segment, moves to a batch in the
// second half of its first 8 MiB window, and truncates the file under it (a
// broker truncating its log under a dump): touching the batch's bytes
// faults. The mapping lives until the test ends.
func truncatedMappedBatch(t *testing.T) (string, int64, *decode.Batch) {
	path := writeDamagedSegment(t, t.TempDir(), 12<<20)
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lf.Close() })
	sc := lf.Scanner(segment.ScanOptions{Mmap: true})
	t.Cleanup(sc.Close)
	for sc.Next() && sc.Pos() < 6<<20 {
	}
	if sc.Pos() < 6<<20 {
		t.Fatal("scan ended early")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	return path, sc.Pos(), sc.Batch()
}

// TestDumpMappedFileTruncated: a segment truncated while it is mapped
// faults on access; a worker rendering a job, or checking its CRCs
// (dump_crc.go), turns the fault into an error for the file instead of
// dying.
func TestDumpMappedFileTruncated(t *testing.T) {
	path, pos, b := truncatedMappedBatch(t)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	crc := &batchJob{file: path, crcJob: true}
	crc.add(pos, b, true, nil)
	checkCRCsGuarded(crc)
	if crc.err == nil || !strings.Contains(crc.err.Error(), "changed while it was read") {
		t.Errorf("CRC check: error %v, want a fault turned into an error", crc.err)
	}
	o := &dumpOptions{deep: true, maxDecompressed: decode.DefaultMaxDecompressed, producerID: -2, output: "json", keyFormat: "auto", valueFormat: "auto"}
	if err := o.Validate([]string{path}); err != nil {
		t.Fatal(err)
	}
	s, _, _ := ui.TestStreams()
	r := newBatchRenderer(o, newDumpPrinter(s, o))
	j := &batchJob{file: path}
	j.add(pos, b, true, nil)
	renderGuarded(r, j)
	if j.err == nil || !strings.Contains(j.err.Error(), "changed while it was read") {
		t.Fatalf("render: error %v, want a fault turned into an error", j.err)
	}
}
