package mm2

import (
	"github.com/kseg/kseg/segment/finding"
)

// Isolation is the isolation.level of MM2's source consumer
// (MirrorSourceConfig.sourceConsumerConfig passes consumer.* and
// source.consumer.* through; the consumer's default is read_uncommitted).
type Isolation int

const (
	// ReadUncommitted: MM2's default. The consumer returns every data
	// record up to the high watermark, those of aborted and open
	// transactions included, so MM2 copies them.
	ReadUncommitted Isolation = iota
	// ReadCommitted: what exactly.once.support requires
	// (MirrorSourceConnector.consumerUsesReadCommitted). The consumer
	// skips aborted transactions and stops at the last stable offset.
	ReadCommitted
)

func (i Isolation) String() string {
	if i == ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}

// Options tune Verify.
type Options struct {
	// Isolation is MM2's source consumer's isolation.level.
	Isolation Isolation
	// AllowDuplicates reports copies made more than once as
	// duplicate-records-allowed (info) instead of duplicate-records: MM2
	// without exactly.once.support delivers at least once.
	AllowDuplicates bool
	// Window is how many source records the comparison keeps to recognise
	// duplicates and reorders (0: DefaultWindow). A source record copied
	// again more than Window records later is reported as foreign.
	Window int
	// OffsetSyncs and Checkpoints are partition directories of the
	// offset-syncs and checkpoints topics ("" when not given).
	OffsetSyncs, Checkpoints string
	// SourceTopic and TargetTopic name the partitions' topics when their
	// directories are not named <topic>-<partition> ("" otherwise).
	SourceTopic, TargetTopic string
	// MaxRuns is how many runs of each kind the report keeps (0:
	// DefaultMaxRuns); the counts always cover every run.
	MaxRuns int
	// Progress, when set, is told the bytes of the source and target logs
	// read, as they are read.
	Progress func(n int64)
}

// DefaultWindow is Options.Window's default: 2^18 records, 18 MiB (72
// bytes each).
const DefaultWindow = 1 << 18

// DefaultMaxRuns is Options.MaxRuns's default.
const DefaultMaxRuns = 100000

// Range is an inclusive range of offsets; First and Last are -1 when it
// is empty.
type Range struct {
	First, Last int64
}

func noRange() Range { return Range{First: -1, Last: -1} }

// Run is a stretch of records of one kind: consecutive source records
// (missing-records, below-target-start, not-yet-mirrored,
// compacted-downstream) or consecutive target records (the others).
type Run struct {
	Kind  finding.Kind
	Count int64
	// Source and Target are the offsets the run covers on each side: the
	// source records missing, the target records that are foreign, and
	// for copies (duplicates, reorders, timestamps) both. A side the run
	// has no records on is empty (-1).
	Source, Target Range
	// SourceNear and TargetNear place a run that has records on one side
	// only: the offset, on the other side, of the last record matched
	// before it (-1 when none).
	SourceNear, TargetNear int64
	Message                string
}

// Side describes one of the two partitions.
type Side struct {
	Dir       string
	Topic     string
	Partition int32
	// LogStart and LogEnd are the log start offset and the offset after
	// the last batch; Records counts the data records the comparison
	// reads (after the isolation level's choices), ControlRecords the
	// control records never copied.
	LogStart, LogEnd int64
	Records          int64
	ControlRecords   int64
	// Aborted counts data records of aborted transactions left out of the
	// comparison: the source's under read_committed, the target's always
	// (MM2's own aborted transactions in exactly-once mode).
	Aborted int64
	// LastStable is the last stable offset the source's comparison stops
	// at under read_committed (-1 otherwise, or when no transaction is
	// open); Uncommitted counts the records at and after it.
	LastStable  int64
	Uncommitted int64
	// Holes counts offsets between the log start and end that hold no
	// record at all (removed by the log cleaner).
	Holes int64
	// CleanerCheckpoint is the partition's entry in its log directory's
	// cleaner-offset-checkpoint (-1 when none).
	CleanerCheckpoint int64
	// LogAppendTime counts records of LogAppendTime batches; NoTimestamp
	// records without one (magic 0).
	LogAppendTime, NoTimestamp int64
}

// SyncCheck is the verdict on one offset sync of the source partition.
type SyncCheck struct {
	UpstreamOffset, DownstreamOffset int64
	// Kind is 0 when both offsets hold records of the same content,
	// SyncMismatch or SyncNotVerified otherwise.
	Kind    finding.Kind
	Message string
}

// CheckpointCheck is the verdict on one checkpoint of the target
// partition.
type CheckpointCheck struct {
	Group                            string
	UpstreamOffset, DownstreamOffset int64
	// Exact is the exact translation of UpstreamOffset: the target offset
	// of the (last) copy of the first source record at or after it, or the
	// target's end when none is copied.
	Exact int64
	// Behind is how many target records lie in [DownstreamOffset, Exact)
	// (a consumer failing over reads them again); Ahead how many lie in
	// [Exact, DownstreamOffset) when the checkpoint is past the exact
	// translation (a consumer failing over skips them).
	Behind, Ahead int64
	// Kind is 0 when the checkpoint is at or below Exact, CheckpointAhead
	// otherwise.
	Kind    finding.Kind
	Message string
}

// Report is what Verify found.
type Report struct {
	Source, Target Side
	Isolation      Isolation
	Window         int
	// Copies counts target records matched to a source record (first
	// copies and duplicates), Matched the source records with at least
	// one copy. Mirrored is the source range from the first to the last
	// record copied.
	Copies, Matched int64
	Mirrored        Range
	// Runs holds, per kind, the runs kept (at most Options.MaxRuns of
	// each, the first ones); Counts the records and RunCounts the runs of
	// each kind, kept or not.
	Runs      []Run
	Counts    map[finding.Kind]int64
	RunCounts map[finding.Kind]int64
	// Findings are the rest: damage met reading either log (crc-mismatch,
	// corrupt-records, torn-tail …), offset syncs and checkpoints.
	Findings []finding.Finding

	// OffsetSyncs holds the checks of the offset syncs for the source
	// partition (nil without Options.OffsetSyncs); SyncsOther counts
	// the syncs for other partitions, not checked.
	OffsetSyncs []SyncCheck
	SyncsOther  int64
	// Checkpoints holds the checks of the checkpoints for the target
	// partition (nil without Options.Checkpoints); CheckpointsOther
	// counts the others.
	Checkpoints      []CheckpointCheck
	CheckpointsOther int64
}

// Errors counts the runs and findings of severity error.
func (r *Report) Errors() int64 {
	var n int64
	for k, c := range r.RunCounts {
		if k.Severity() == finding.Error {
			n += c
		}
	}
	for _, f := range r.Findings {
		if f.Severity() == finding.Error {
			n++
		}
	}
	for _, s := range r.OffsetSyncs {
		if s.Kind.Severity() == finding.Error {
			n++
		}
	}
	for _, c := range r.Checkpoints {
		if c.Kind.Severity() == finding.Error {
			n++
		}
	}
	return n
}

// OK reports a replica without an error: what verify-mm2 exits 0 for.
func (r *Report) OK() bool { return r.Errors() == 0 }
