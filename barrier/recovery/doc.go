// Package recovery does offline, planned first and applied explicitly, what
// a broker's log recovery does to an unclean partition (LogLoader.recoverLog,
// LogSegment.recover): `kseg repair`. PlanRepair examines the segments
// from the recovery point on and cuts each where segment.Recover says
// recovery would, deletes the segments recovery could no longer reach,
// rebuilds .index, .timeindex and .txnindex from what is kept, and
// rewrites the producer snapshot at the new log end; Apply writes it
// through the edit engine (lock, backup, journal; a rerun finishes an
// interrupted repair, Rollback undoes it), Verify reads it back.
//
// # Place in the flow
//
// kseg's packages depend one way:
//
//	cmd → barrier/{mirror,recovery} → barrier → psm → segment/edit → segment → decode
//
// Why "recovery", on the barrier floor: what it does is the broker's log
// recovery, not a barrier; it lives beside barrier/mirror because, like
// the barrier's injection and the mirror, it is a planner of a write
// command whose plan the edit engine applies (the house puts repair's plan
// on the barrier floor), and it needs producer state (psm) to rebuild the
// snapshot at the new log end, so it cannot sit lower.
//
// recovery takes the recovery rule, the index rules and the checkpoint
// look-ups from segment, rebuilds producer state through psm, and applies
// its plan through segment/edit. It never prints or reads flags; cmd
// parses, calls and renders.
package recovery
