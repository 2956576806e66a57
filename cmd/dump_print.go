package cmd

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kseg/kseg/segment"
)

// dumpPrinter renders dump events. There is one implementation per
// --output (text, table, json, kafka), each in its own file; dump.go only
// produces events (STYLE.md pattern 14).
type dumpPrinter interface {
	BeginFile(f dumpFile)
	Unknown(f dumpFile, why string)
	LogStart(f dumpFile)
	Batch(b *batchView)
	Record(b *batchView, r *recordView)
	EndBatch(b *batchView)
	LogEnd(f dumpFile, s *logSummary)
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
	// IndexMismatches is the kafka-dump-log style verification summary for
	// one index file; other printers render findings instead.
	Finding(fd finding)
	EndFile(f dumpFile)
	Close() error
}

func newDumpPrinter(s *Streams, o *dumpOptions) dumpPrinter {
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
func formatData(b []byte, format string) string {
	if b == nil {
		return "null"
	}
	switch format {
	case "hex":
		return hex.EncodeToString(b)
	case "base64":
		return base64.StdEncoding.EncodeToString(b)
	case "utf8":
		return strconv.Quote(strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	if printableUTF8(b) {
		return strconv.Quote(string(b))
	}
	return "0x" + hex.EncodeToString(b)
}

// printableUTF8 reports whether b is valid UTF-8 made of printable runes
// (tabs and newlines allowed), the test for showing it as text.
func printableUTF8(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}
