// Package repair does offline, planned first and applied explicitly, what
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
//	cmd → barrier/{mirror,repair} → barrier → psm → segment/edit → segment → decode
//
// repair takes the recovery rule, the index rules and the checkpoint
// look-ups from segment, rebuilds producer state through psm, and applies
// its plan through segment/edit. It never prints or reads flags; cmd
// parses, calls and renders.
package repair
