// Package psm is an offline ProducerStateManager: it rebuilds a partition's
// producer state from its log (and optionally a producer snapshot) with the
// semantics the Kafka broker applies when it loads a log, so the result can
// be compared with the broker's own .snapshot files, used to compute the
// last stable offset and aborted transactions, or written as a snapshot.
//
// What it mirrors (apache/kafka, storage module):
//
//	ProducerStateManager   producers map, ongoing/unreplicated txns, expiry,
//	                       snapshot load (truncateAndReload/loadFromSnapshot)
//	ProducerAppendInfo     per-batch validation under AppendOrigin.REPLICATION
//	ProducerStateEntry     epoch/batch-metadata rules (5-batch window)
//	LogSegment.recover     one batch at a time, lastStableOffset per marker
//	UnifiedLog.rebuildProducerState / loadProducersFromRecords
//	                       replay window: [max(snapshot, logStart), end),
//	                       and the clean-shutdown short-cut (no snapshot:
//	                       no rebuild, empty state)
//	LogLoader / Partition.createLog
//	                       log start above the log end, the starting
//	                       high watermark (LogDirState)
//
// A snapshot file is judged against every state the broker may have
// written at its offset (CheckSnapshots, CheckSnapshotAt, the
// stale-snapshot check): kseg's rebuild, or that state with producers
// kept below a moved log start (onLogStartOffsetIncremented) or never
// expired by a recovery (loadProducersFromRecords).
//
// plus KIP-1279's MIRROR_PID_RESET barrier: a control batch of type 7
// (producerId -1) that empties the producer map at its offset. Batches are
// applied strictly in log order, one at a time, so no update from before a
// barrier can be applied after it (barrier.md §10, pitfalls 1 and 2).
//
// Replay reads batch headers only. The single record of a control batch is
// decoded (it is never compressed); data batches are never decompressed.
//
// The package is a library: it returns values and anomalies, never prints.
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier →
// psm → segment/edit → segment → decode.
// psm knows producer state, not flags: it reads a partition through
// segment (Scanner, snapshots, checkpoints) and control records through
// decode.Decoder.FirstRecord, the same reader the broker's
// ProducerAppendInfo.append amounts to. cmd's replay-psm renders its
// Result; barrier and its rooms replay through it to plan an injection, a
// mirror or a repair and to verify a chain.
package psm
