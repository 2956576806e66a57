package scan

import (
	"math"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Options say what a run reads and checks. The zero value is not ready:
// start from DefaultOptions (or set FromOffset, ToOffset and
// MaxDecompressed yourself). `kseg dump` sets them from its flags, `kseg
// check` from dump's flags with --verify-index and --index-sanity-check.
type Options struct {
	// Deep decodes the records of every batch (kafka-dump-log
	// --deep-iteration); control batches are always decoded.
	Deep bool
	// MaxBytes cuts each .log at this many bytes when MaxBytesLimit is
	// set (KIP-824 --max-bytes; 0 then reads nothing).
	MaxBytes      int64
	MaxBytesLimit bool

	// The filters: batches and records within [FromOffset, ToOffset],
	// of ProducerID when HasProducerFilter, control batches only when
	// ControlOnly. The other files' entries are narrowed to the ones
	// about the selected batches (select.go).
	FromOffset, ToOffset int64
	ProducerID           int64
	HasProducerFilter    bool
	ControlOnly          bool

	// VerifyIndex checks .index and .timeindex entries against the .log;
	// IndexSanityCheck runs the broker's sanity check on them.
	VerifyIndex      bool
	IndexSanityCheck bool
	// VerifyIndexesInWalk verifies a segment's indexes in the walk over
	// its .log that reads its batches (walkverify.go), instead of a walk
	// of their own when the index is reached: one read of the segment
	// (kseg check).
	VerifyIndexesInWalk bool
	// MaxDecompressed caps what one batch may decompress to.
	MaxDecompressed int64
	// NoVerifyCRC skips the CRC-32C of every batch.
	NoVerifyCRC bool
	// DecodeWorkers renders the batches of one segment on this many
	// goroutines (0: GOMAXPROCS; 1: serial).
	DecodeWorkers int
	// UnitPipelineBytes: a unit (units.go) whose .log files hold this
	// much is read through the batch pipeline.
	UnitPipelineBytes int64
	// NoResync stops at the first batch that does not frame, as the
	// broker does, instead of searching for the next valid one.
	NoResync bool

	// DumpLogSegments reads the files as kafka-dump-log (DumpLogSegments
	// of Kafka 4.3) does: it dispatches on the file name, never
	// resynchronises, and stops the run where Kafka throws (dumplog.go).
	DumpLogSegments bool
	// LogArgError, when set, is the message DumpLogSegments throws at the
	// first .log or .checkpoint (a --max-bytes jopt cannot convert);
	// NegativeMaxBytes is a negative --max-bytes, RawMaxBytes its value,
	// which FileRecords.slice refuses after the file's header line.
	LogArgError      string
	NegativeMaxBytes bool
	RawMaxBytes      int64

	// ForcedTopic decodes every data record as a record of this internal
	// topic (a kafka-dump-log decoder flag); otherwise the records of
	// Kafka's and MirrorMaker 2's internal topics are decoded by the
	// partition directory's name unless NoDecodeInternal (or
	// DumpLogSegments) says not to.
	ForcedTopic      string
	NoDecodeInternal bool

	// LogDirs reads each log directory's checkpoints once per run (nil:
	// a cache of the run's own).
	LogDirs *segment.LogDirCache
	// Budget bounds the decompressed bytes every renderer of the run
	// holds together (nil: one of the run's own, see NewBudget).
	Budget *decode.Budget
	// PartitionCheck, when set, is run once the last .log of a partition
	// directory is read, beside the segment-overlap check: kseg passes
	// psm.CheckLogStart (a log-start-offset-checkpoint entry above the
	// log end). Its error means the check could not be made and is
	// ignored: the file it reads is reported when it is dumped.
	PartitionCheck func(pd *segment.PartitionDir) (*finding.Finding, error)
}

// DefaultOptions are the options of a plain `kseg dump`: every offset,
// Kafka's decompression cap, CRCs checked, resync after damage.
func DefaultOptions() Options {
	return Options{
		FromOffset:        math.MinInt64,
		ToOffset:          math.MaxInt64,
		ProducerID:        -2,
		MaxDecompressed:   decode.DefaultMaxDecompressed,
		UnitPipelineBytes: BigUnitBytes,
	}
}

// DecompressBudget is the least budget of decompressed bytes a run's
// renderers share, whatever the cap (MaxDecompressed; the budget is at
// least the cap, so that a batch at the cap can be decoded).
const DecompressBudget = 64 << 20

// NewBudget is the budget of decompressed bytes for a run with the cap
// maxDecompressed.
func NewBudget(maxDecompressed int64) *decode.Budget {
	return decode.NewBudget(max(maxDecompressed, DecompressBudget))
}

// Filtered reports whether the filters hide some records.
func (o *Options) Filtered() bool {
	return o.FromOffset != math.MinInt64 || o.ToOffset != math.MaxInt64 || o.HasProducerFilter || o.ControlOnly
}

// BatchSelected applies the filters to batch b.
func (o *Options) BatchSelected(b *decode.Batch) bool {
	if b.LastOffset() < o.FromOffset || b.BaseOffset > o.ToOffset {
		return false
	}
	if o.HasProducerFilter && b.ProducerID != o.ProducerID {
		return false
	}
	if o.ControlOnly && !b.IsControl() {
		return false
	}
	return true
}
