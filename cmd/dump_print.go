package cmd

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// dumpPrinter renders dump events. There is one implementation per
// --output (text, table, json, kafka), each in its own file; dump.go only
// produces events (STYLE.md pattern 14). Every printer renders every
// event; what only some printers can do is an optional capability below,
// which dump asks for by interface.
type dumpPrinter interface {
	// A file: BeginFile, its content, EndFile. Unknown is a file dump
	// does not decode (why says so).
	BeginFile(f dumpFile)
	Unknown(f dumpFile, why string)
	EndFile(f dumpFile)

	// A .log: LogStart, then each batch (Batch, its records, EndBatch),
	// then LogEnd with the file's summary.
	LogStart(f dumpFile)
	Batch(b *batchView)
	Record(b *batchView, r *recordView)
	EndBatch(b *batchView)
	LogEnd(f dumpFile, s *logSummary)

	// The entries of the other files.
	OffsetIndexEntry(f dumpFile, e segment.IndexEntry)
	TimeIndexEntry(f dumpFile, e segment.TimeIndexEntry)
	// IndexNote is a one-line statement about an index: "is empty",
	// "passed sanity check".
	IndexNote(f dumpFile, note string)
	AbortedTxn(f dumpFile, e segment.AbortedTxn)
	SnapshotEntry(f dumpFile, e segment.SnapshotEntry)
	LeaderEpoch(f dumpFile, e segment.EpochEntry)
	OffsetCheckpoint(f dumpFile, e segment.OffsetCheckpointEntry)
	PartitionMetadata(f dumpFile, pm segment.PartitionMetadata)
	TextLine(f dumpFile, line string)

	// Finding is a problem found in a file, with its kind, severity and
	// position (finding.Finding; Offset is the batch's baseOffset).
	Finding(fd finding.Finding)
	// Close writes out what the printer holds, run-wide reports included.
	Close() error
}

// The optional capabilities of a dumpPrinter. parallelPrinter, a printer
// whose batches workers render, is declared with the pipeline
// (dump_pipeline.go); the others are here.

// unitPrinter is a printer whose run-wide reports wait for the end of a
// parallel log-directory dump (dump_jobs.go): closeUnit is Close without
// them, for one unit of the run; absorb takes over another unit's
// printer's, and the final printer's Close writes them all. Implemented by
// kafkaDumpPrinter (kafka-dump-log's index summary and non-consecutive
// offsets come once, at the end).
type unitPrinter interface {
	closeUnit() error
	absorb(other dumpPrinter)
}

// jobResetter is a printer whose worker forks must forget a batch a
// failed job left half-rendered (batchRenderer.render). Implemented by
// jsonDumpPrinter.
type jobResetter interface {
	resetJob()
}

// recordsStopper is a printer that stops the run where a batch's records
// do not decode, as kafka-dump-log's deep iteration throws there
// (batchRenderer.renderBatch). Implemented by kafkaDumpPrinter
// (dump_kafka_stop.go).
type recordsStopper interface {
	recordsFailed(b *decode.Batch, ce *decode.CorruptError) error
}

// indexProblemPrinter is a printer that summarizes index mismatches by the
// check that failed, as kafka-dump-log does at the end of a run: it gets
// each index-mismatch or timeindex-mismatch finding with its check instead
// of Finding. Implemented by kafkaDumpPrinter.
type indexProblemPrinter interface {
	IndexProblem(f finding.Finding, p *segment.IndexProblem)
}

// Who implements what: the compiler checks the lists above.
var (
	_ dumpPrinter = (*textDumpPrinter)(nil)
	_ dumpPrinter = (*tableDumpPrinter)(nil)
	_ dumpPrinter = (*jsonDumpPrinter)(nil)
	_ dumpPrinter = (*kafkaDumpPrinter)(nil)

	_ parallelPrinter     = (*textDumpPrinter)(nil)
	_ parallelPrinter     = (*jsonDumpPrinter)(nil)
	_ parallelPrinter     = (*kafkaDumpPrinter)(nil)
	_ unitPrinter         = (*kafkaDumpPrinter)(nil)
	_ jobResetter         = (*jsonDumpPrinter)(nil)
	_ recordsStopper      = (*kafkaDumpPrinter)(nil)
	_ indexProblemPrinter = (*kafkaDumpPrinter)(nil)
)

func newDumpPrinter(s *ui.Streams, o *dumpOptions) dumpPrinter {
	switch o.output {
	case "json":
		return newJSONDumpPrinter(s, o)
	case "kafka":
		return newKafkaDumpPrinter(s, o)
	case "table":
		return newTableDumpPrinter(s, o)
	}
	return newTextDumpPrinter(s, o)
}

// formatData renders a key or value for text output. nil is null.
func formatData(b []byte, format string) string { return string(appendData(nil, b, format)) }

// appendData appends formatData(b, format) without allocating.
func appendData(dst, b []byte, format string) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	switch format {
	case "hex":
		return hex.AppendEncode(dst, b)
	case "base64":
		return ui.AppendBase64(dst, b)
	case "utf8":
		if utf8.Valid(b) {
			return strconv.AppendQuote(dst, bytesString(b))
		}
		return strconv.AppendQuote(dst, strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	if printableUTF8(b) {
		return strconv.AppendQuote(dst, bytesString(b))
	}
	return hex.AppendEncode(append(dst, "0x"...), b)
}

// appendValidUTF8 appends b as kafka-dump-log's StringDecoder prints it:
// Java's new String(bytes, UTF_8), which replaces malformed input with
// U+FFFD by the JDK's rules (one per invalid byte for most binary data; see
// decode.AppendJavaUTF8). Valid input (nearly all of it) is copied as is.
func appendValidUTF8(dst, b []byte) []byte { return decode.AppendJavaUTF8(dst, b) }

// bytesString views b as a string without copying it, for read-only use
// within a call (strconv.AppendQuote takes a string). The string must not
// outlive b's contents.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// appendField appends label then v in decimal.
func appendField(dst []byte, label string, v int64) []byte {
	return strconv.AppendInt(append(dst, label...), v, 10)
}

// printableUTF8 reports whether b is valid UTF-8 made of printable runes
// (tabs and newlines allowed), the test for showing it as text.
func printableUTF8(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			if r, size = utf8.DecodeRune(b[i:]); r == utf8.RuneError && size == 1 {
				return false // invalid UTF-8
			}
		}
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
		i += size
	}
	return true
}

// outBufSize is the printers' output buffer.
const outBufSize = 256 << 10

// outBufs recycles the printers' output buffers: a log-directory dump
// makes a printer per partition.
var outBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, outBufSize) }}

// newOutBuf is a pooled buffered writer on w.
func newOutBuf(w io.Writer) *bufio.Writer {
	b := outBufs.Get().(*bufio.Writer)
	b.Reset(w)
	return b
}

// releaseOutBuf flushes *w and, when it came from newOutBuf, returns it to
// the pool, leaving a writer that refuses further writes.
func releaseOutBuf(w *outWriter) error {
	err := (*w).Flush()
	if b, ok := (*w).(*bufio.Writer); ok {
		b.Reset(nil)
		outBufs.Put(b)
		*w = closedWriter{}
	}
	return err
}

// closedWriter is a printer's writer after Close.
type closedWriter struct{}

var errPrinterClosed = errors.New("dump printer used after Close")

func (closedWriter) Write([]byte) (int, error)       { return 0, errPrinterClosed }
func (closedWriter) WriteString(string) (int, error) { return 0, errPrinterClosed }
func (closedWriter) WriteByte(byte) error            { return errPrinterClosed }
func (closedWriter) Flush() error                    { return nil }
