package dump

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// writeLargeSegment writes a .log of at least size bytes into dir, cheaply:
// a few batches are built once (uncompressed and lz4, ~64 KiB each) and
// repeated with a rewritten baseOffset, which the CRC does not cover.
func writeLargeSegment(tb testing.TB, dir string, size int64) string {
	tb.Helper()
	var codecs decode.Codecs
	var templates [][]byte
	var counts []int64
	for i, codec := range []decode.Compression{decode.CompressionNone, decode.CompressionNone, decode.CompressionLZ4, decode.CompressionNone} {
		n := 100
		recs := make([]decode.RecordSpec, n)
		for j := range recs {
			v := []byte(strings.Repeat(fmt.Sprintf("batch %d record %d; ", i, j), 30))
			recs[j] = decode.RecordSpec{OffsetDelta: int32(j), Timestamp: 1700000000000 + int64(j), Key: fmt.Appendf(nil, "key-%d", j), Value: v}
		}
		b, err := codecs.AppendBatch(nil, decode.BatchSpec{Compression: codec, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
		if err != nil {
			tb.Fatal(err)
		}
		templates = append(templates, b)
		counts = append(counts, int64(n))
	}
	path := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 4<<20)
	var written, offset int64
	for i := 0; written < size; i++ {
		b := templates[i%len(templates)]
		binary.BigEndian.PutUint64(b, uint64(offset))
		if _, err := w.Write(b); err != nil {
			tb.Fatal(err)
		}
		written += int64(len(b))
		offset += counts[i%len(templates)]
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
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
		s := clitest.StartHeapSampler(2 * time.Millisecond)
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
		s := clitest.StartHeapSampler(5 * time.Millisecond)
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
