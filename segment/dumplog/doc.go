// Package dumplog is kafka-dump-log's output format: the lines the Java
// port of DumpLogSegments of Kafka 4.3 (KAFKA-14579; formats.md §9)
// prints for each file it dumps, byte for byte, so that scripts written
// against kafka-dump-log.sh read kseg's output unchanged. It is a format,
// as encoding/json is, not a command: Printer renders the events of the
// dump engine (segment/scan) — `kseg dump --output kafka` and `kseg
// kafka-dump-log` print through it, and a library caller may too.
//
// It lives under segment/, beside the engine whose events it renders,
// because it is about files — "Dumping <file>", index and snapshot
// entries, "Found N invalid bytes at the end of <file>", the end-of-run
// reports per file — and decode/ knows bytes, not files.
//
// stdout is the Java tool's; findings the Java tool would not print go to
// the error writer, keeping stdout diffable against the real tool. Where
// DumpLogSegments throws, the engine stops the run (scan.Options
// .DumpLogSegments) and Printer prints the exception's message as
// mainNoExit does (stop.go).
package dumplog

// Options are what kafka-dump-log's options change in its output.
type Options struct {
	// Deep is --deep-iteration: a line per record.
	Deep bool
	// PrintData is --print-data-log: records' keys and payloads.
	PrintData bool
	// SkipRecordMetadata is --skip-record-metadata.
	SkipRecordMetadata bool
	// VerifyIndex is --verify-index-only: index entries are not printed.
	VerifyIndex bool
	// KeyDecoder and ValueDecoder are --key-decoder-class and
	// --value-decoder-class (StringDecoder, the zero value, by default).
	KeyDecoder, ValueDecoder Decoder
	// Filtered: kseg's filters (--offsets, --producer-id,
	// --control-only) hide records, so gaps between the records shown
	// are not reported as non-consecutive offsets.
	Filtered bool
}
