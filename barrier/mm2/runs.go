package mm2

import (
	"fmt"

	"github.com/kseg/kseg/segment/finding"
)

// openRun is a run being extended: the records met so far, and the ranks
// of its last record on each side it has records on (-1 for none), to
// tell whether the next record continues it.
type openRun struct {
	Run
	srcRank, tgtRank int64
}

// runSet collects the runs of every kind: consecutive records of a kind
// merge into one run while they are consecutive on the sides the kind
// has records on (by rank, so that compaction holes and control records
// between them do not cut a run).
type runSet struct {
	max    int
	open   map[finding.Kind]*openRun
	kept   []Run
	counts map[finding.Kind]int64
	runs   map[finding.Kind]int64
	// message words a closed run.
	message func(r *Run) string
}

func newRunSet(max int, message func(r *Run) string) *runSet {
	return &runSet{max: max, open: map[finding.Kind]*openRun{}, counts: map[finding.Kind]int64{},
		runs: map[finding.Kind]int64{}, message: message}
}

// add counts one record of kind k: src and tgt are its source and target
// records (nil for the side it has none on), near the last match on the
// other side.
func (rs *runSet) add(k finding.Kind, src, tgt *item, srcNear, tgtNear int64) {
	rs.counts[k]++
	o := rs.open[k]
	if o != nil && continues(o.srcRank, src) && continues(o.tgtRank, tgt) {
		o.Count++
		if src != nil {
			o.Source.Last, o.srcRank = src.off, src.rank
		}
		if tgt != nil {
			o.Target.Last, o.tgtRank = tgt.off, tgt.rank
		}
		return
	}
	rs.close(k)
	o = &openRun{Run: Run{Kind: k, Count: 1, Source: noRange(), Target: noRange(), SourceNear: srcNear, TargetNear: tgtNear},
		srcRank: -1, tgtRank: -1}
	if src != nil {
		o.Source, o.srcRank = Range{src.off, src.off}, src.rank
	}
	if tgt != nil {
		o.Target, o.tgtRank = Range{tgt.off, tgt.off}, tgt.rank
	}
	rs.open[k] = o
}

// addRange counts n consecutive source records of kind k, from first to
// last, in one go (a far scan's skip).
func (rs *runSet) addRange(k finding.Kind, n int64, first, last *item, tgtNear int64) {
	if n <= 0 {
		return
	}
	rs.add(k, first, nil, -1, tgtNear)
	o := rs.open[k]
	o.Count += n - 1
	rs.counts[k] += n - 1
	o.Source.Last, o.srcRank = last.off, last.rank
}

// addTargetRange counts n consecutive target records of kind k, from
// first to last, in one go (a foreign run).
func (rs *runSet) addTargetRange(k finding.Kind, n int64, first, last *item, srcNear int64) {
	if n <= 0 {
		return
	}
	rs.add(k, nil, first, srcNear, -1)
	o := rs.open[k]
	o.Count += n - 1
	rs.counts[k] += n - 1
	o.Target.Last, o.tgtRank = last.off, last.rank
}

// continues: it (nil: the kind has no record on this side) follows the
// run's last record on its side, of rank last.
func continues(last int64, it *item) bool {
	if it == nil {
		return last < 0
	}
	return last >= 0 && it.rank == last+1
}

func (rs *runSet) close(k finding.Kind) {
	o := rs.open[k]
	if o == nil {
		return
	}
	delete(rs.open, k)
	rs.runs[k]++
	if rs.runs[k] > int64(rs.max) {
		return
	}
	r := o.Run
	r.Message = rs.message(&r)
	rs.kept = append(rs.kept, r)
}

func (rs *runSet) closeAll() {
	for _, k := range finding.Kinds() {
		rs.close(k)
	}
}

// records is "1 record" or "N records".
func records(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return fmt.Sprintf("%d records", n)
}

// span is "offset 7" or "offsets 7..9".
func span(r Range) string {
	if r.First == r.Last {
		return fmt.Sprintf("offset %d", r.First)
	}
	return fmt.Sprintf("offsets %d..%d", r.First, r.Last)
}

// near says where a one-sided run sits on the other side.
func near(side string, off int64) string {
	if off < 0 {
		return ""
	}
	return fmt.Sprintf(" (after the %s's offset %d)", side, off)
}

// runMessage words a run for Finding.Message.
func runMessage(allowDuplicates bool) func(r *Run) string {
	return func(r *Run) string {
		n := records(r.Count)
		switch r.Kind {
		case finding.MissingRecords:
			return fmt.Sprintf("source %s (%s) have no copy in the target, though later source records do%s: lost by the mirror", span(r.Source), n, near("target", r.TargetNear))
		case finding.BelowTargetStart:
			return fmt.Sprintf("source %s (%s) come before the first record the target holds a copy of: the mirror started later, or the target's retention deleted them", span(r.Source), n)
		case finding.NotYetMirrored:
			return fmt.Sprintf("source %s (%s) come after the last record the target holds a copy of: not mirrored yet (lag)", span(r.Source), n)
		case finding.CompactedDownstream:
			return fmt.Sprintf("source %s (%s) have no copy in the target, where as many offsets hold no record%s: the target's log cleaner removed the copies", span(r.Source), n, near("target", r.TargetNear))
		case finding.DuplicateRecords, finding.DuplicateRecordsAllowed:
			s := fmt.Sprintf("target %s (%s) copy source %s again", span(r.Target), n, span(r.Source))
			if allowDuplicates {
				return s + ": at-least-once delivery (a restarted task re-copies from its last committed offset)"
			}
			return s + ": the mirror re-copied them (a task restart without exactly-once); --allow-duplicates accepts at-least-once delivery"
		case finding.Reordered:
			return fmt.Sprintf("target %s (%s) copy source %s after copies of later source records: out of order", span(r.Target), n, span(r.Source))
		case finding.TimestampMismatch:
			return fmt.Sprintf("target %s (%s) copy source %s with other timestamps: MM2 produces with the source record's timestamp", span(r.Target), n, span(r.Source))
		case finding.TimestampsReplaced:
			return fmt.Sprintf("target %s (%s) are in LogAppendTime batches: the target's broker replaced the source timestamps (message.timestamp.type), which are not compared", span(r.Target), n)
		}
		return oneSidedTargetMessage(r, n)
	}
}

func oneSidedTargetMessage(r *Run, n string) string {
	switch r.Kind {
	case finding.ForeignRecords:
		return fmt.Sprintf("target %s (%s) are copies of no source record%s", span(r.Target), n, near("source", r.SourceNear))
	case finding.SourceReset:
		return fmt.Sprintf("target %s (%s) are copies of no source record and come before the copy of the source's offset 0: the source topic was deleted and re-created (its offsets started over) after MM2 copied them, or they were produced to the target directly", span(r.Target), n)
	case finding.CompactedUpstream:
		return fmt.Sprintf("target %s (%s) are copies of no source record, where the source lacks as many offsets%s: the source's log cleaner removed the originals", span(r.Target), n, near("source", r.SourceNear))
	case finding.BelowSourceStart:
		return fmt.Sprintf("target %s (%s) precede the copy of the source's first record, and the source's log starts above 0: copies of records the source's retention has deleted, not compared", span(r.Target), n)
	}
	return fmt.Sprintf("%s: %s", r.Kind, n)
}
