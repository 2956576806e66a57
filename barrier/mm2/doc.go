// Package mm2 verifies a MirrorMaker 2 replica against its source, by
// content (docs/mm2.md). MM2 keeps neither offsets nor bytes: its
// MirrorSourceTask reads the source partition with a consumer and
// re-produces every record to the target partition of the same number,
// keeping what SourceRecord carries — key, value, headers in order,
// timestamp — and nothing else (new offsets, batches, producer ids,
// CRCs). So Verify compares records, not batches:
//
//	source  s0 s1 s2 s3 s4 s5 s6 s7 …            (data records MM2's consumer returns)
//	target  s0 s1 s2 s5 s6 s2 s3 … f s7 …        (copies, in target order)
//	              └ s3 s4 missing ┘└ dup ┘ └ foreign
//
// Each side is read once, streaming, on a goroutine of its own that checks
// each batch's CRC and then reduces each of its records to a 64-bit hash
// of its key, value and headers, plus its timestamp (the two passes over
// a batch follow each other, so the second reads from the cache). The target is
// walked in order against a window of source records around the position
// expected next: a copy of that record moves on; anything else is placed
// where the window holds its content, weighing each place by how many of
// the following target records it explains (a skip forward leaves missing
// records, a step back starts duplicates, a record skipped earlier comes
// late, or none: foreign). A target that jumps further than the window is
// followed by a second reader of the source. Memory is the window's
// (Options.Window records), whatever the size of the logs.
//
// What MM2 does not copy is left out, not reported: control batches
// (consumers never return them); under read_committed
// (MirrorSourceConnector.consumerUsesReadCommitted, required by
// exactly.once.support) aborted transactions and the records at and after
// the last stable offset — under MM2's default, read_uncommitted, both are
// copied; the target's own aborted transactions (MM2's exactly-once
// producer aborting and retrying). A compacted source or target is told by
// its offsets without records: copies of records the source's cleaner
// removed, and records whose copies the target's cleaner removed, are
// info.
//
// Offset translation is checked against the same walk: each OffsetSync
// (OffsetSyncWriter) must pair records of the same content, and each
// Checkpoint (MirrorCheckpointTask, translating from OffsetSyncStore) must
// name a downstream offset at or below the exact translation of its
// upstream offset — the target position of the last copy of the first
// source record at or after it — or a consumer failing over skips
// records.
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery,mm2} →
// barrier → psm → segment/edit → segment → decode. mm2 is a room of
// barrier, beside barrier/mirror (which verifies KIP-1279 mirrors byte for
// byte): it reads partitions through segment, records through decode,
// MM2's own topics through decode/mm2, and replays producer state through
// psm for the transactions' fates. cmd's verify-mm2 renders its Report;
// mm2test writes the replicas its tests and kseg's fixtures use.
package mm2
