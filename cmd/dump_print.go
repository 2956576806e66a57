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
	"github.com/kseg/kseg/segment/scan"
)

// dump's printers: one per --output (text, table, json, kafka), each in
// its own file, implementing the engine's scan.Printer and what of its
// optional capabilities they can (STYLE.md pattern 14); the engine only
// produces events. unitPrinter is the printers' own.

// unitPrinter is a printer whose run-wide reports wait for the end of a
// parallel log-directory dump (dump_jobs.go): closeUnit is Close without
// them, for one unit of the run; absorb takes over another unit's
// printer's, and the final printer's Close writes them all. Implemented by
// kafkaDumpPrinter (kafka-dump-log's index summary and non-consecutive
// offsets come once, at the end).
type unitPrinter interface {
	closeUnit() error
	absorb(other scan.Printer)
}

// Who implements what: the compiler checks the lists.
var (
	_ scan.Printer = (*textDumpPrinter)(nil)
	_ scan.Printer = (*tableDumpPrinter)(nil)
	_ scan.Printer = (*jsonDumpPrinter)(nil)
	_ scan.Printer = (*kafkaDumpPrinter)(nil)

	_ scan.Forker              = (*textDumpPrinter)(nil)
	_ scan.Forker              = (*jsonDumpPrinter)(nil)
	_ scan.Forker              = (*kafkaDumpPrinter)(nil)
	_ unitPrinter              = (*kafkaDumpPrinter)(nil)
	_ scan.JobResetter         = (*jsonDumpPrinter)(nil)
	_ scan.RecordsStopper      = (*kafkaDumpPrinter)(nil)
	_ scan.IndexProblemPrinter = (*kafkaDumpPrinter)(nil)
	_ scan.Stopper             = (*kafkaDumpPrinter)(nil)
)

func newDumpPrinter(s *ui.Streams, o *dumpOptions) scan.Printer {
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
func releaseOutBuf(w *scan.Writer) error {
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

// forkStreams are the streams of a worker's printer: stdout into the
// sink, stderr recorded in order with it.
func forkStreams(s *ui.Streams, sink *scan.Sink) *ui.Streams {
	c := *s
	c.Out, c.Err = sink, sink.Stderr()
	return &c
}
