package finding

// The registry: every kind kseg reports, with its one severity. A kind is
// reported with the same word by every command that meets the same
// defect (dump's word for damage in a file, whoever finds it), and
// docs/troubleshooting.md says what each means on a broker and what to do.
// To add a kind: a constant below, its entry in registry, its row in
// docs/troubleshooting.md.
const (
	noKind Kind = iota

	// A segment's .log (dump, repair, inject-barrier, replay-psm, the
	// whole-broker views): where broker recovery cuts it, and what else
	// is wrong in it.
	CRCMismatch
	CorruptBatch
	TornTail
	ZeroTail
	SkippedBytes
	OffsetOutOfOrder
	OffsetOverflow
	LeaderEpochRegression
	CorruptRecords
	InvalidMarker
	CorruptLog
	SegmentUnreachable
	SegmentOverlap

	// Indexes (dump --verify-index --index-sanity-check, repair).
	IndexMismatch
	TimeIndexMismatch
	IndexSanity
	IndexLength
	IndexMissing
	TimeIndexMissing
	IndexZeroTail
	IndexRebuilt
	TimeIndexRebuilt
	OrphanIndex
	TxnIndexCorrupt
	TxnIndexPartialEntry
	TxnIndexMismatch
	TxnIndexMissing
	TxnIndexRebuilt

	// Snapshots, checkpoints, partition.metadata.
	SnapshotCorrupt
	SnapshotMismatch
	SnapshotIgnored
	SnapshotAboveLogEnd
	StaleSnapshot
	CheckpointCorrupt
	MetadataCorrupt
	CorruptFile
	LogStartAboveLogEnd
	LeaderEpochAboveLogEnd
	CleanShutdownNoSnapshot
	// The journal of an interrupted kseg edit (inject-barrier, mirror,
	// repair) in a partition directory (dump, replay-psm).
	PendingEdit

	// Producer state (replay-psm, and the replays of repair,
	// inject-barrier and verify-chain).
	SequenceGap
	DuplicateSequence
	EpochRegression
	CoordinatorEpochRegression
	PIDCollision
	NonTxnInOpenTxn
	MarkerWithoutTxn
	HangingTransaction
	OpenTransaction
	OpenTxnAtBarrier
	MirroredOpenTxnAtBarrier
	BarrierIgnored
	InvalidControl
	InvalidBarrierValue
	ExpiredOnLoad
	UnknownTxnCompletion

	// An edge of a mirror chain (verify-chain).
	Mismatch
	MissingBarrier
	BeyondUpstreamEnd
	Gap
	Overlap
	Reordered
	MalformedBarrier
	BarrierNotApplied
	NotCompared
	LeaderEpoch
	LeaderEpochMismatch
	DigestOlder

	// A MirrorMaker 2 replica compared with its source by content
	// (verify-mm2); reordered is verify-chain's word.
	MissingRecords
	BelowTargetStart
	NotYetMirrored
	DuplicateRecords
	DuplicateRecordsAllowed
	ForeignRecords
	SourceReset
	TimestampMismatch
	TimestampsReplaced
	CompactedUpstream
	CompactedDownstream
	BelowSourceStart
	SyncMismatch
	SyncNotVerified
	CheckpointAhead
	CheckpointUnmirrored

	// The whole-broker views (groups, txns, metadata).
	OffsetBelowLogStart
	OffsetAboveLogEnd
	CoordinatorPartitionsMissing
	PartitionNotReplayed
	ImageIncomplete
	AtBeyondLogEnd
	OrphanPartition
	MissingReplica
	LeaderEpochAhead
	LeaderEpochNotCompared

	numKinds
)

// registry holds each kind's name and severity. Indexed by the constants
// above: the compiler refuses a kind entered twice, and a test refuses a
// kind left out or two kinds with one name.
var registry = [numKinds]struct {
	name     string
	severity Severity
}{
	CRCMismatch:           {"crc-mismatch", Error},
	CorruptBatch:          {"corrupt-batch", Error},
	TornTail:              {"torn-tail", Error},
	ZeroTail:              {"zero-tail", Warning},
	SkippedBytes:          {"skipped-bytes", Warning},
	OffsetOutOfOrder:      {"offset-out-of-order", Error},
	OffsetOverflow:        {"offset-overflow", Error},
	LeaderEpochRegression: {"leader-epoch-regression", Error},
	CorruptRecords:        {"corrupt-records", Error},
	InvalidMarker:         {"invalid-marker", Error},
	CorruptLog:            {"corrupt-log", Error},
	SegmentUnreachable:    {"segment-unreachable", Info},
	// A segment's offsets run into the next segment's (segment.Overlap).
	SegmentOverlap: {"segment-overlap", Error},

	IndexMismatch:        {"index-mismatch", Error},
	TimeIndexMismatch:    {"timeindex-mismatch", Error},
	IndexSanity:          {"index-sanity", Error},
	IndexLength:          {"index-length", Error},
	IndexMissing:         {"index-missing", Warning},
	TimeIndexMissing:     {"timeindex-missing", Warning},
	IndexZeroTail:        {"index-zero-tail", Warning},
	IndexRebuilt:         {"index-rebuilt", Info},
	TimeIndexRebuilt:     {"timeindex-rebuilt", Info},
	OrphanIndex:          {"orphan-index", Error},
	TxnIndexCorrupt:      {"txnindex-corrupt", Error},
	TxnIndexPartialEntry: {"txnindex-partial-entry", Warning},
	TxnIndexMismatch:     {"txnindex-mismatch", Error},
	TxnIndexMissing:      {"txnindex-missing", Error},
	TxnIndexRebuilt:      {"txnindex-rebuilt", Info},

	SnapshotCorrupt:         {"snapshot-corrupt", Error},
	SnapshotMismatch:        {"snapshot-mismatch", Error},
	SnapshotIgnored:         {"snapshot-ignored", Info},
	SnapshotAboveLogEnd:     {"snapshot-above-log-end", Info},
	StaleSnapshot:           {"stale-snapshot", Error},
	CheckpointCorrupt:       {"checkpoint-corrupt", Error},
	MetadataCorrupt:         {"metadata-corrupt", Error},
	CorruptFile:             {"corrupt-file", Error},
	LogStartAboveLogEnd:     {"log-start-above-log-end", Error},
	LeaderEpochAboveLogEnd:  {"leader-epoch-above-log-end", Info},
	CleanShutdownNoSnapshot: {"clean-shutdown-no-snapshot", Error},
	PendingEdit:             {"pending-edit", Error},

	SequenceGap:                {"sequence-gap", Warning},
	DuplicateSequence:          {"duplicate-sequence", Warning},
	EpochRegression:            {"epoch-regression", Warning},
	CoordinatorEpochRegression: {"coordinator-epoch-regression", Warning},
	PIDCollision:               {"pid-collision", Error},
	NonTxnInOpenTxn:            {"non-transactional-in-open-txn", Error},
	MarkerWithoutTxn:           {"marker-without-txn", Info},
	// A transaction open at the end of the log: hanging once older than
	// the transaction timeout, open (it may still be in progress) before.
	HangingTransaction: {"hanging-transaction", Error},
	OpenTransaction:    {"open-transaction", Warning},
	// A transaction open at a barrier: D's own barrier's, or one mirrored
	// from the upstream with the barrier (the upstream's, copied).
	OpenTxnAtBarrier:         {"open-txn-at-barrier", Error},
	MirroredOpenTxnAtBarrier: {"mirrored-open-txn-at-barrier", Info},
	BarrierIgnored:           {"barrier-ignored", Info},
	// A control batch that does not parse; a barrier whose value does not
	// decode is still a barrier (the prototype reads the key's type only).
	InvalidControl:       {"invalid-control", Error},
	InvalidBarrierValue:  {"invalid-barrier-value", Warning},
	ExpiredOnLoad:        {"expired-on-load", Info},
	UnknownTxnCompletion: {"unknown-txn-completion", Error},

	Mismatch:          {"mismatch", Error},
	MissingBarrier:    {"missing-barrier", Error},
	BeyondUpstreamEnd: {"beyond-upstream-end", Error},
	Gap:               {"gap", Error},
	Overlap:           {"overlap", Error},
	Reordered:         {"reordered", Error},
	MalformedBarrier:  {"malformed-barrier", Error},
	BarrierNotApplied: {"barrier-not-applied", Error},
	NotCompared:       {"not-compared", Info},
	// A mirrored batch's partitionLeaderEpoch differs from the upstream's:
	// a note, or with --strict-epochs (byte-identical copies required) an
	// error.
	LeaderEpoch:         {"leader-epoch", Info},
	LeaderEpochMismatch: {"leader-epoch-mismatch", Error},
	// One side of an edge is a digest (kseg digest) taken before the
	// other side wrote the data it is compared with: not compared.
	DigestOlder: {"digest-older", Warning},

	MissingRecords:   {"missing-records", Error},
	BelowTargetStart: {"below-target-start", Info},
	NotYetMirrored:   {"not-yet-mirrored", Info},
	DuplicateRecords: {"duplicate-records", Error},
	// --allow-duplicates: MM2 without exactly-once delivers at least once.
	DuplicateRecordsAllowed: {"duplicate-records-allowed", Info},
	ForeignRecords:          {"foreign-records", Error},
	SourceReset:             {"source-reset", Error},
	TimestampMismatch:       {"timestamp-mismatch", Error},
	TimestampsReplaced:      {"timestamps-replaced", Warning},
	CompactedUpstream:       {"compacted-upstream", Info},
	CompactedDownstream:     {"compacted-downstream", Info},
	BelowSourceStart:        {"below-source-start", Info},
	SyncMismatch:            {"sync-mismatch", Error},
	SyncNotVerified:         {"sync-not-verified", Info},
	CheckpointAhead:         {"checkpoint-ahead", Error},
	CheckpointUnmirrored:    {"checkpoint-unmirrored", Error},

	OffsetBelowLogStart:          {"offset-below-log-start", Error},
	OffsetAboveLogEnd:            {"offset-above-log-end", Error},
	CoordinatorPartitionsMissing: {"coordinator-partitions-missing", Warning},
	PartitionNotReplayed:         {"partition-not-replayed", Warning},
	// The metadata image cannot be made; asked for at an offset beyond
	// the log end, it is the one at the end.
	ImageIncomplete:  {"image-incomplete", Error},
	AtBeyondLogEnd:   {"at-beyond-log-end", Warning},
	OrphanPartition:  {"orphan-partition", Error},
	MissingReplica:   {"missing-replica", Error},
	LeaderEpochAhead: {"leader-epoch-ahead", Error},
	// A partition's leader-epoch-checkpoint does not parse (dump calls the
	// file checkpoint-corrupt): its leader epoch is not compared with the
	// image.
	LeaderEpochNotCompared: {"leader-epoch-not-compared", Warning},
}
