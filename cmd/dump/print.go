package dump

import (
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/dumplog"
	"github.com/kseg/kseg/segment/scan"
)

// dump's printers: one per --output (text, table, json, kafka), each in
// its own file, implementing the engine's scan.Printer and what of its
// optional capabilities they can (STYLE.md pattern 14); the engine only
// produces events. unitPrinter is the printers' own.

// unitPrinter is a printer whose run-wide reports wait for the end of a
// parallel log-directory dump (jobs.go): CloseUnit is Close without
// them, for one unit of the run; absorb takes over another unit's
// printer's, and the final printer's Close writes them all. Implemented by
// dumplog.Printer (kafka-dump-log's index summary and non-consecutive
// offsets come once, at the end).
type unitPrinter interface {
	CloseUnit() error
	Absorb(other scan.Printer)
}

// Who implements what: the compiler checks the lists.
var (
	_ scan.Printer = (*textDumpPrinter)(nil)
	_ scan.Printer = (*tableDumpPrinter)(nil)
	_ scan.Printer = (*jsonDumpPrinter)(nil)
	_ scan.Printer = (*dumplog.Printer)(nil)

	_ scan.Forker              = (*textDumpPrinter)(nil)
	_ scan.Forker              = (*jsonDumpPrinter)(nil)
	_ scan.Forker              = (*dumplog.Printer)(nil)
	_ unitPrinter              = (*dumplog.Printer)(nil)
	_ scan.JobResetter         = (*jsonDumpPrinter)(nil)
	_ scan.RecordsStopper      = (*dumplog.Printer)(nil)
	_ scan.IndexProblemPrinter = (*dumplog.Printer)(nil)
	_ scan.Stopper             = (*dumplog.Printer)(nil)
)

func newDumpPrinter(s *ui.Streams, o *Options) scan.Printer {
	switch o.Output {
	case "json":
		return newJSONDumpPrinter(s, o)
	case "kafka":
		return dumplog.NewPrinter(s.Out, s.Err, o.dumpLogOptions())
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

// dumpLogOptions are the kafka printer's options.
func (o *Options) dumpLogOptions() *dumplog.Options {
	return &dumplog.Options{
		Deep: o.Deep, PrintData: o.PrintData, SkipRecordMetadata: o.SkipRecordMetadata, VerifyIndex: o.VerifyIndex,
		KeyDecoder: o.dec.keyDecoder, ValueDecoder: o.dec.valueDecoder, Filtered: o.Filtered(),
	}
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

// forkStreams are the streams of a worker's printer: stdout into the
// sink, stderr recorded in order with it.
func forkStreams(s *ui.Streams, sink *scan.Sink) *ui.Streams {
	c := *s
	c.Out, c.Err = sink, sink.Stderr()
	return &c
}
