package scan_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/scan/scantest"
	"github.com/kseg/kseg/segment/segtest"
)

const testdata = "../../testdata"

// run reads paths with o through a Recorder, as a library caller does:
// no command tree, no flags, no streams.
func run(t *testing.T, o scan.Options, workers int, paths ...string) (*scantest.Recorder, *scan.Run, error) {
	t.Helper()
	files, unread, err := scan.Collect(paths, o.DumpLogSegments, nil)
	if err != nil || len(unread) > 0 {
		t.Fatalf("collect: %v %v", err, unread)
	}
	rec := &scantest.Recorder{}
	st := scan.NewRun(rec, &o, workers, false)
	defer st.Close()
	var fileErrs []error
	st.FileError = func(err error) { fileErrs = append(fileErrs, err) }
	ioErr, err := st.Files(context.Background(), files, 0)
	if err == nil {
		err = ioErr
	}
	if len(fileErrs) > 0 && ioErr == nil {
		t.Errorf("FileError heard %v, yet no ioErr", fileErrs)
	}
	return rec, st, err
}

// TestLibraryCallerWithoutCLI: a library caller runs the engine over a
// partition directory with a printer of its own. A healthy partition
// gives every batch and no finding; a partition with a CRC mismatch gives
// the finding with its file, byte position and baseOffset, counted as an
// error, and the log's summary counts it.
func TestLibraryCallerWithoutCLI(t *testing.T) {
	o := scan.DefaultOptions()
	o.Deep = true
	checked := 0
	o.PartitionCheck = func(pd *segment.PartitionDir) (*finding.Finding, error) {
		checked++
		return nil, nil
	}
	rec, st, err := run(t, o, 1, filepath.Join(testdata, "partitions", "orders-0"))
	if err != nil || st.Errors() != 0 || len(rec.Findings) != 0 {
		t.Fatalf("healthy partition: err %v, %d errors, findings %v", err, st.Errors(), rec.Findings)
	}
	if checked != 1 {
		t.Errorf("PartitionCheck ran %d times for one partition, want once after its last .log", checked)
	}
	if !strings.Contains(rec.String(), "batch 0 baseOffset 0") || !strings.Contains(rec.String(), "record 0 ") {
		t.Errorf("no first batch and record:\n%.1500s", rec.String())
	}

	dir := filepath.Join(testdata, "broken", "crc-mismatch", "events-0")
	rec, st, err = run(t, scan.DefaultOptions(), 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	var crc *finding.Finding
	for i, f := range rec.Findings {
		if f.Kind == finding.CRCMismatch {
			crc = &rec.Findings[i]
		}
	}
	if crc == nil || st.Errors() == 0 {
		t.Fatalf("no crc-mismatch finding (%d errors):\n%s", st.Errors(), rec.String())
	}
	if crc.File != filepath.Join(dir, "00000000000000000000.log") || crc.Position < 0 || crc.Offset < 0 ||
		!strings.Contains(crc.Message, "position "+strconv.FormatInt(crc.Position, 10)) {
		t.Errorf("finding without its place: file %q position %d offset %d: %s", crc.File, crc.Position, crc.Offset, crc.Message)
	}
	if !strings.Contains(rec.String(), "crcErrors 1 ") {
		t.Errorf("the summary does not count the CRC error:\n%s", rec.String())
	}
}

// TestRunStopsWhereKafkaStops: with DumpLogSegments a zero-filled tail
// longer than a header stops the run with Kafka's message, as a
// *StopError; without it the tail is a warning and the run goes on.
func TestRunStopsWhereKafkaStops(t *testing.T) {
	dir := filepath.Join(testdata, "broken", "zero-tail")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("zero-tail fixture: %v", err)
	}
	part := filepath.Join(dir, ents[0].Name())
	o := scan.DefaultOptions()
	o.DumpLogSegments = true
	_, _, err = run(t, o, 1, part)
	if !scan.IsStop(err) || !strings.Contains(err.Error(), "Found record size 0 smaller than minimum record overhead") {
		t.Fatalf("DumpLogSegments: %v, want a stop at the zero-filled tail", err)
	}
	rec, st, err := run(t, scan.DefaultOptions(), 1, part)
	if err != nil || st.Warnings() == 0 || !strings.Contains(rec.String(), "zero-tail") {
		t.Fatalf("dump: %v, %d warnings:\n%s", err, st.Warnings(), rec.String())
	}
}

// TestCRCPipelineMatchesSerial: a batch-level run checks CRCs on the CRC
// pipeline, and the events are the serial run's however the checks are
// shared: all on the run's goroutine (no worker), or mostly on workers.
func TestCRCPipelineMatchesSerial(t *testing.T) {
	path := scantest.DamagedSegment(t, t.TempDir(), 12<<20)
	want, serial, err := run(t, scan.DefaultOptions(), 1, path)
	if err != nil || !serial.Serial() {
		t.Fatalf("serial: %v (serial %v)", err, serial.Serial())
	}
	if !strings.Contains(want.String(), "crc-mismatch") {
		t.Fatalf("no CRC mismatch reported:\n%.2000s", want.String())
	}
	for _, workers := range []int{0, 2, 4} {
		files := []scan.File{scan.NewFile(path)}
		o := scan.DefaultOptions()
		rec := &scantest.Recorder{}
		st := scan.NewRun(rec, &o, max(workers, 2), false)
		if !st.CRCPipelineWorkers(workers) {
			t.Fatalf("a batch-level run on %d workers does not use the CRC pipeline", workers)
		}
		if _, err := st.Files(context.Background(), files, 0); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if got := rec.String(); got != want.String() {
			t.Errorf("%d workers: events differ from the serial run", workers)
		}
	}
}

// TestMappedFileTruncated: a segment truncated while it is mapped faults
// on access; a worker rendering a job, or checking its CRCs (crc.go),
// turns the fault into an error for the file instead of dying.
func TestMappedFileTruncated(t *testing.T) {
	path := scantest.DamagedSegment(t, t.TempDir(), 12<<20)
	lf := segtest.OpenLog(t, path)
	sc := lf.Scanner(segment.ScanOptions{Mmap: true})
	defer sc.Close()
	for sc.Next() && sc.Pos() < 6<<20 {
	}
	if sc.Pos() < 6<<20 {
		t.Fatal("scan ended early")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := scan.CheckCRCsGuarded(path, sc.Pos(), sc.Batch()); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("CRC check: error %v, want a fault turned into an error", err)
	}
	o := scan.DefaultOptions()
	o.Deep = true
	if err := scan.RenderGuarded(&o, &scantest.Recorder{}, path, sc.Pos(), sc.Batch()); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("render: error %v, want a fault turned into an error", err)
	}
}

// TestEngineNeverPrints: the engine is a library below the face: it
// imports nothing of cmd/ or cobra, and writes to no stream of the
// process, nor exits.
func TestEngineNeverPrints(t *testing.T) {
	fset := token.NewFileSet()
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/cmd") || strings.Contains(path, "cobra") || strings.Contains(path, "pflag") {
				t.Errorf("%s imports %s", p, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				switch name := x.Name + "." + sel.Sel.Name; name {
				case "os.Stdout", "os.Stderr", "os.Exit", "fmt.Print", "fmt.Println", "fmt.Printf", "log.Fatal", "log.Printf":
					t.Errorf("%s: %s uses %s", p, fset.Position(sel.Pos()), name)
				}
			}
			return true
		})
	}
}

// TestIndexTrailingBytes: an .index or .timeindex whose length is not a
// whole number of entries is an index-length finding at the first byte
// past the last whole entry, whichever index it is.
func TestIndexTrailingBytes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testdata, "partitions", "orders-0"))); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for suffix, extra := range map[string]int{segment.IndexSuffix: 3, segment.TimeIndexSuffix: 5} {
		p := filepath.Join(dir, segment.SegmentFileName(0, suffix))
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, extra)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		size := map[string]int64{segment.IndexSuffix: segment.OffsetIndexEntrySize, segment.TimeIndexSuffix: segment.TimeIndexEntrySize}[suffix]
		want[p] = fmt.Sprintf("%s: %d bytes is not a multiple of %d: %d trailing bytes at %d",
			filepath.Base(p), st.Size()+int64(extra), size, extra, st.Size())
	}
	rec, _, err := run(t, scan.DefaultOptions(), 1, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rec.Findings {
		if f.Kind == finding.IndexLength {
			if got := fmt.Sprintf("%s at %d", f.Message, f.Position); got != want[f.File] {
				t.Errorf("%s: %q, want %q", f.File, got, want[f.File])
			}
			delete(want, f.File)
		}
	}
	if len(want) > 0 {
		t.Errorf("no index-length finding for %v", want)
	}
}
