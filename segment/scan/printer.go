package scan

import (
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Printer hears what a run reads, in file order. kseg dump has one per
// output format (text, table, json, and kafka-dump-log's, in
// segment/dumplog); kseg check one that keeps the findings. Every printer
// hears every event; what only some printers can do is an optional
// capability below, which the run asks for by interface.
type Printer interface {
	// A file: BeginFile, its content, EndFile. Unknown is a file the run
	// does not decode (why says so).
	BeginFile(f File)
	Unknown(f File, why string)
	EndFile(f File)

	// A .log: LogStart, then each batch (Batch, its records, EndBatch),
	// then LogEnd with the file's summary.
	LogStart(f File)
	Batch(b *BatchView)
	Record(b *BatchView, r *RecordView)
	EndBatch(b *BatchView)
	LogEnd(f File, s *LogSummary)

	// The entries of the other files.
	OffsetIndexEntry(f File, e segment.IndexEntry)
	TimeIndexEntry(f File, e segment.TimeIndexEntry)
	// IndexNote is a one-line statement about an index: "is empty.",
	// "passed sanity check.".
	IndexNote(f File, note string)
	AbortedTxn(f File, e segment.AbortedTxn)
	SnapshotEntry(f File, e segment.SnapshotEntry)
	LeaderEpoch(f File, e segment.EpochEntry)
	OffsetCheckpoint(f File, e segment.OffsetCheckpointEntry)
	PartitionMetadata(f File, pm segment.PartitionMetadata)
	TextLine(f File, line string)

	// Finding is a problem found in a file, with its kind, severity and
	// position (finding.Finding; Offset is the batch's baseOffset).
	Finding(fd finding.Finding)
	// Close writes out what the printer holds, run-wide reports included.
	Close() error
}

// The optional capabilities of a Printer.

// Forker is a printer whose batches can be rendered on workers
// (pipeline.go).
type Forker interface {
	Printer
	// Fork returns a printer for one worker, writing to sink. Only Batch,
	// Record, EndBatch and Finding are called on it.
	Fork(sink *Sink) Printer
	// Emit writes what a fork rendered for one job, in file order.
	Emit(b *BatchOut)
}

// JobResetter is a printer whose worker forks must forget a batch a
// failed job left half-rendered (Renderer.render).
type JobResetter interface {
	ResetJob()
}

// RecordsStopper is a printer that stops the run where a batch's records
// do not decode under Deep, as kafka-dump-log's deep iteration throws
// there (Renderer.renderBatch). It returns the error that stops the
// run (a *StopError).
type RecordsStopper interface {
	RecordsFailed(b *decode.Batch, ce *decode.CorruptError) error
}

// IndexProblemPrinter is a printer that summarizes index mismatches by
// the check that failed, as kafka-dump-log does at the end of a run: it
// gets each index-mismatch or timeindex-mismatch finding with its check
// instead of Finding.
type IndexProblemPrinter interface {
	IndexProblem(f finding.Finding, p *segment.IndexProblem)
}

// Stopper is a printer that prints the message where DumpLogSegments
// stops (dumplog.go), as kafka-dump-log prints the exception, and returns
// the *StopError that ends the run.
type Stopper interface {
	Stop(msg string) error
}

// BatchView is a batch as printers see it.
type BatchView struct {
	File     string
	Position int64
	Batch    *decode.Batch
	CRCValid *bool // nil when not verified
}

// RecordView is a record as printers see it, with its control record
// decoded when the batch is a control batch.
type RecordView struct {
	Record  *decode.Record
	Control *decode.Control // nil for data records
	// ControlErr is set when a control batch's record does not decode.
	ControlErr error
	// Internal is a data record of one of Kafka's internal topics,
	// decoded (internal.go); InternalErr when it does not decode.
	Internal    *schema.Decoded
	InternalErr error
	// MM2 is a data record of a MirrorMaker 2 topic (MM2Topic), decoded
	// (internal.go); MM2Err when it does not decode.
	MM2      *mm2.Record
	MM2Topic string
	MM2Err   error
}

// Discard is a Printer that renders nothing: embed it in a printer that
// hears only some events (kseg check's keeps the findings).
type Discard struct{}

func (Discard) BeginFile(File)                                       {}
func (Discard) Unknown(File, string)                                 {}
func (Discard) EndFile(File)                                         {}
func (Discard) LogStart(File)                                        {}
func (Discard) Batch(*BatchView)                                     {}
func (Discard) Record(*BatchView, *RecordView)                       {}
func (Discard) EndBatch(*BatchView)                                  {}
func (Discard) LogEnd(File, *LogSummary)                             {}
func (Discard) OffsetIndexEntry(File, segment.IndexEntry)            {}
func (Discard) TimeIndexEntry(File, segment.TimeIndexEntry)          {}
func (Discard) IndexNote(File, string)                               {}
func (Discard) AbortedTxn(File, segment.AbortedTxn)                  {}
func (Discard) SnapshotEntry(File, segment.SnapshotEntry)            {}
func (Discard) LeaderEpoch(File, segment.EpochEntry)                 {}
func (Discard) OffsetCheckpoint(File, segment.OffsetCheckpointEntry) {}
func (Discard) PartitionMetadata(File, segment.PartitionMetadata)    {}
func (Discard) TextLine(File, string)                                {}
func (Discard) Finding(finding.Finding)                              {}
func (Discard) Close() error                                         { return nil }

var _ Printer = Discard{}
