// Package segment knows Kafka's on-disk files: partition and log
// directories, file naming, offset/time/transaction indexes, producer-state
// snapshots and the small text checkpoint files. It reads them read-only,
// returns values and *decode.CorruptError for damaged input, and writes new
// files only through the atomic temp-file + fsync + rename protocol
// (WriteFileAtomic).
//
// A partition directory as the broker leaves it:
//
//	<topic>-<partition>/
//	  00000000000000000000.log          record batches (framed by the scanner)
//	  00000000000000000000.index        8-byte  {relativeOffset int32, position int32}
//	  00000000000000000000.timeindex    12-byte {timestamp int64, relativeOffset int32}
//	  00000000000000000000.txnindex     34-byte aborted transactions (optional)
//	  00000000000000001234.snapshot     producer state as of offset 1234 (exclusive)
//	  leader-epoch-checkpoint           "0\n<N>\n<epoch> <startOffset>\n"…
//	  partition.metadata                "version: 0\ntopic_id: <base64url>"
//
// All binary integers are big-endian.
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier →
// psm → segment/edit → segment → decode.
// segment knows files, not producer state: it frames the batches of a .log
// (Scanner, with validBytes and a classified Tail) and leaves their
// contents to decode, whose *CorruptError it rebases to file positions.
// Kafka's file rules are written here once, for every package above:
// where broker recovery cuts a segment (Recover, CutKind:
// LogSegment.recover), the index entries and rolls of a segment being
// appended to (IndexBuilder, RollConfig.ShouldRoll: LogSegment.append and
// shouldRoll), leader-epoch assignment (AssignLeaderEpoch:
// LeaderEpochFileCache.assign), index verification (VerifySegmentIndexes,
// IndexCheck) and the log directory's checkpoint look-ups
// (CheckpointOffset). psm replays what it frames; segment/edit writes
// what the planners in barrier decide from what it reads.
package segment
