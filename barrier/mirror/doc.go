// Package mirror copies a partition as KIP-1279's mirror fetcher does and
// proves mirrored logs consistent: PlanMirror, Apply, Verify and Rollback
// are `kseg mirror`; VerifyEdge and VerifyChain are `kseg verify-chain`.
//
// A mirror copies every batch exactly as it is (offsets, producer ids,
// epochs, CRCs) and maintains the destination's own segments, indexes,
// transaction index, leader epochs and producer snapshots as a broker
// appending them would (segment's IndexBuilder, RollConfig and
// AssignLeaderEpoch). A destination that is not a prefix of its source is
// refused (*DivergedError) unless Options.Align truncates it first, as
// failback does. For one edge U → D, VerifyEdge checks that D is U's
// mirrored region byte for byte, then (if D failed over) ABORT markers, D's
// own barrier and only D's own writes (barrier.md §9; the relation is
// spelled out in chain.go).
//
// # Place in the flow
//
// kseg's packages depend one way:
//
//	cmd → barrier/{mirror,recovery} → barrier → psm → segment/edit → segment → decode
//
// mirror reads logs through segment (a cursor over the segments' scanners,
// mapped, CRCs checked on a second core), recognises barriers through
// barrier, replays producer state through psm, and applies its plan
// through segment/edit's crash-safe engine. It never prints or reads
// flags; cmd parses, calls and renders.
package mirror
