// Package barrier builds, recognises and validates the KIP-1279
// MIRROR_PID_RESET control batch, and plans and applies its crash-safe
// injection into a stopped mirror partition (`kseg inject-barrier`).
//
// The barrier is a v2 control batch with one record (barrier.md §4.3, §4.4):
//
//	off  size field                 value
//	0    8    baseOffset            the log end offset where it is appended
//	8    4    batchLength           63 (version-only value)
//	12   4    partitionLeaderEpoch  the leader epoch it is written in
//	16   1    magic                 2
//	17   4    crc                   CRC-32C over bytes [21, end)
//	21   2    attributes            0x0020: control, not transactional, CreateTime, no compression
//	23   4    lastOffsetDelta       0
//	27   8    baseTimestamp         write time (ms)
//	35   8    maxTimestamp          = baseTimestamp
//	43   8    producerId            -1
//	51   2    producerEpoch         -1
//	53   4    baseSequence          -1
//	57   4    recordsCount          1
//	61   14   record                key 00 00 00 07 (version 0, type 7),
//	                                value MirrorPidResetRecord v0: 00 00 00
//	                                (or 00 00 + compact SourceClusterId + 00)
//
// baseOffset and partitionLeaderEpoch lie outside the CRC, so the CRC of a
// barrier depends only on its timestamp and value (barrier.md §4.3).
//
// A replay that meets the barrier drops every producer
// (ProducerStateManager.expireMirroredProducers in the KIP-1279 prototype);
// it leaves ongoing transactions alone, which is why a barrier must never be
// written while one is open (barrier.md §5, §10 pitfall 8).
//
// The package also plans and applies the barrier's crash-safe injection
// (PlanInjection, ApplyInjection, VerifyInjection, RollbackInjection:
// `kseg inject-barrier`). Mirroring a partition and verifying mirrored
// logs along chains are in barrier/mirror (`kseg mirror`,
// `kseg verify-chain`); a broker's log recovery done offline is in
// barrier/recovery (`kseg repair`); the journaled edit engine under all
// three is segment/edit.
//
// # Place in the flow
//
// kseg's packages depend one way:
//
//	cmd → barrier/{mirror,recovery} → barrier → psm → segment/edit → segment → decode
//
// barrier sits above producer state and the files: it frames logs and
// finds where broker recovery would cut them through segment, builds and
// reads batches through decode, replays producer state through psm to
// decide where a cut is safe, and writes through segment/edit. mirror uses it for the
// batch only (recovery writes no barrier); it never imports either. It never
// prints or reads flags; cmd parses, calls and renders.
package barrier
