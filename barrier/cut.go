// Where the log is cut and what the cut removes: the last stable offset's
// fixed point (psm.md §7), aligned down to a batch's base
// (LocalLog.truncateTo), and pass two over the cut segment and everything
// after it.

package barrier

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// findCut is where the log is cut: its end in abort mode; in truncate
// mode its last stable offset, recomputed until nothing below the cut is
// open (psm.md §7: cutting at L removes every batch with lastOffset >= L,
// which can remove the marker of a transaction that started before L and
// so reopen it). It records the cut and the producers the barrier clears.
func (pl *planner) findCut(kept []*segScan, r0 *psm.Result, end int64) (int64, error) {
	p := pl.p
	cut := end
	state := r0
	p.CutIterations = []int64{}
	if pl.opts.Mode == ModeTruncate {
		for {
			l := state.LastStableOffset
			if l >= cut {
				break
			}
			if l < p.LogStartOffset {
				return 0, edit.Refuse(edit.RefuseBelowLogStart, pl.dir, "the last stable offset %d is below the log start offset %d", l, p.LogStartOffset)
			}
			l, err := pl.alignDown(kept, l)
			if err != nil {
				return 0, err
			}
			p.CutIterations = append(p.CutIterations, l)
			if state, err = pl.rebuild(l); err != nil {
				return 0, fmt.Errorf("rebuilding producer state up to %d: %w", l, err)
			}
			cut = l
		}
		if len(state.Ongoing) > 0 {
			t := state.Ongoing[0]
			return 0, edit.Refuse(RefuseOpenTransactions, pl.dir,
				"producer %d's transaction from offset %d would still be open at the barrier (it starts before the log start offset %d)",
				t.ProducerID, t.FirstOffset, p.LogStartOffset)
		}
	}
	if cut < p.LogStartOffset {
		return 0, edit.Refuse(edit.RefuseBelowLogStart, pl.dir, "the cut %d is below the log start offset %d", cut, p.LogStartOffset)
	}
	p.Cut = cut
	p.ProducersAtCut = len(state.Producers)
	return cut, nil
}

// passTwo reads the cut segment kept[ci] and everything after it: the
// last batch kept (nil when none), the cut segment's kept batches indexed
// from scratch, and what the cut removes (batches, records, producers,
// bytes, transactions), recorded in the plan.
func (pl *planner) passTwo(kept, dropped []*segScan, ci int, end int64) (*batchMeta, *segment.IndexBuilder, error) {
	p, cut, cs := pl.p, pl.p.Cut, kept[ci]
	var lastKept *batchMeta
	for _, s := range kept[:ci] {
		if s.last != nil {
			lastKept = s.last
		}
	}
	p.CutPosition = cs.valid
	rebuilt := segment.NewIndexBuilder(cs.files.BaseOffset, pl.opts.IndexIntervalBytes)
	rm := &removal{p: p, pids: map[int64]bool{}, open: map[int64]*DroppedTxn{}}
	cutFound := false
	var indexErr error
	if _, err := scanSegment(cs.files, func(m *batchMeta) bool {
		switch {
		case m.Last < cut:
			lastKept = new(batchMeta)
			*lastKept = *m
			indexErr = rebuilt.Append(m.Size, m.Last, m.MaxTs)
			return indexErr == nil
		case !cutFound:
			p.CutPosition = m.Pos
			cutFound = true
		}
		rm.add(m)
		return true
	}, nil); err != nil {
		return nil, nil, err
	}
	if indexErr != nil {
		return nil, nil, fmt.Errorf("%s: %w", cs.files.Log, indexErr)
	}
	// The segments after the cut, and those the tail repair drops: what
	// the plan removes is everything the operation removes, the repair's
	// share included (the plan is the truth or it is nothing).
	for _, s := range append(append([]*segScan(nil), kept[ci+1:]...), dropped...) {
		if _, err := scanSegment(s.files, func(m *batchMeta) bool { rm.add(m); return true }, nil); err != nil {
			return nil, nil, err
		}
	}
	if tr := p.TailRepair; tr != nil {
		// Batches that frame past the damage but fail their checks are
		// lost too; their records cannot be counted.
		p.Removed.Batches += kept[len(kept)-1].lost
	}
	rm.finish()
	p.Removed.Offsets = end - cut
	if tr := p.TailRepair; tr != nil {
		p.Removed.Offsets = max(end, tr.LogEndOffset) - cut
	}
	p.Removed.Bytes = cs.size - p.CutPosition
	for _, s := range kept[ci+1:] {
		p.Removed.Bytes += s.size
	}
	for _, s := range dropped {
		p.Removed.Bytes += s.size
	}
	if cs.cut != nil && cs.cut.Kind == segment.CutZeroFilled && p.TailRepair == nil {
		pl.warnf("%s: %d zero bytes of preallocation after position %d are removed", filepath.Base(cs.files.Log), cs.size-cs.valid, cs.valid)
	}
	return lastKept, rebuilt, nil
}

// removal counts what the cut removes, batch by batch: batches, records,
// producers, and the transactions whose data goes (open ones, and those
// whose marker goes with them).
type removal struct {
	p    *InjectionPlan
	pids map[int64]bool
	open map[int64]*DroppedTxn
}

// add counts the removed batch m.
func (rm *removal) add(m *batchMeta) {
	p := rm.p
	p.Removed.Batches++
	p.Removed.Records += int64(m.Records)
	if m.PID > decode.NoProducerID {
		rm.pids[m.PID] = true
	}
	switch {
	case m.Txn && !m.Control:
		if rm.open[m.PID] == nil {
			rm.open[m.PID] = &DroppedTxn{ProducerID: m.PID, FirstOffset: m.Base, MarkerOffset: -1, State: "open"}
		}
		rm.open[m.PID].Records += int64(m.Records)
	case m.Txn && m.Control && (m.MarkerType == decode.ControlAbort || m.MarkerType == decode.ControlCommit):
		if t := rm.open[m.PID]; t != nil {
			t.MarkerOffset = m.Base
			t.State = "committed"
			if m.MarkerType == decode.ControlAbort {
				t.State = "aborted"
			}
			p.DroppedTxns = append(p.DroppedTxns, *t)
			delete(rm.open, m.PID)
		}
	}
}

// finish records the transactions still open and the producers removed,
// in order.
func (rm *removal) finish() {
	p := rm.p
	for _, t := range rm.open {
		p.DroppedTxns = append(p.DroppedTxns, *t)
	}
	slices.SortFunc(p.DroppedTxns, func(a, b DroppedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	for pid := range rm.pids {
		p.Removed.Producers = append(p.Removed.Producers, pid)
	}
	slices.Sort(p.Removed.Producers)
}

// alignDown moves l down to the base of the batch that contains it: a cut
// at l removes every batch whose lastOffset >= l (LocalLog.truncateTo), so
// the log then ends at that batch's base.
func (pl *planner) alignDown(kept []*segScan, l int64) (int64, error) {
	var s *segScan
	for _, k := range kept {
		if k.files.BaseOffset <= l {
			s = k
		}
	}
	if s == nil || l >= s.next {
		return l, nil
	}
	out := l
	_, err := scanSegment(s.files, func(m *batchMeta) bool {
		if m.Last >= l {
			out = min(l, m.Base)
			return false
		}
		return true
	}, nil)
	return out, err
}
