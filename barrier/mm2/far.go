package mm2

import (
	"github.com/kseg/kseg/segment/finding"
)

// farScanWanted: target record x is found nowhere in the window, and
// neither is any record of the lookahead, so the target may have jumped
// beyond the window (a skip of more records than it holds, or a target
// that starts far into the source): worth reading the rest of the source
// for it, unless the source is all in the window already or a recent far
// scan failed (each failure doubles the target records to wait before
// the next, so that a long foreign stretch costs a few scans, not one per
// record).
func (m *matcher) farScanWanted(x *item) bool {
	if m.srcEnd || x.rank < m.farFrom || m.w.hi == m.w.lo {
		return false
	}
	for i := 1; i < len(m.tq); i++ {
		if _, ok := m.w.index[m.tq[i].h]; ok {
			return false
		}
	}
	return true
}

// farCandidate is a source record of the far scan with the content of
// target record tq[ti], and how many records after it agree so far.
type farCandidate struct {
	at     int // index in buf
	ti     int
	agreed int
}

// farScan reads the source after the window, on a stream of its own, for
// the current target record or one of its lookahead: the first source
// record that has the content of tq[ti] and is followed by copies of the
// rest of the lookahead. When found, the window moves there (the source
// records in between were skipped: missing, or below the target's start)
// and the ti target records before tq[ti] are foreign; true. When the
// source ends without one, nothing moves; false.
func (m *matcher) farScan(x *item) bool {
	want := map[uint64]int{}
	for i := len(m.tq) - 1; i >= 0; i-- {
		want[m.tq[i].h] = i
	}
	lastSlot := m.w.at(m.w.hi - 1)
	cfg := m.srcCfg
	cfg.from, cfg.prevOff, cfg.prevHoles, cfg.rank = lastSlot.off+1, lastSlot.off, lastSlot.holes, m.w.hi
	cfg.findings, cfg.progress = false, nil
	fs := openStream(cfg)
	var pos lookupPos
	var buf []item
	var cands []farCandidate
	var skipped int64
	var firstSkipped, lastSkipped item
	found := -1
	for found < 0 {
		it := fs.next()
		if it == nil {
			if len(cands) > 0 {
				found = 0
			}
			break
		}
		m.srcLookup.observe(&pos, it)
		buf = append(buf, *it)
		kept := cands[:0]
		for _, c := range cands {
			if m.tq[c.ti+1+c.agreed].h != it.h {
				continue
			}
			c.agreed++
			kept = append(kept, c)
			if c.ti+1+c.agreed == len(m.tq) && found < 0 {
				found = len(kept) - 1
			}
		}
		cands = kept
		if ti, ok := want[it.h]; ok && found < 0 {
			cands = append(cands, farCandidate{at: len(buf) - 1, ti: ti})
			if ti == len(m.tq)-1 {
				found = len(cands) - 1
			}
		}
		// Records no candidate needs are skipped for good.
		keep := len(buf)
		for _, c := range cands {
			keep = min(keep, c.at)
		}
		for _, b := range buf[:keep] {
			if skipped == 0 {
				firstSkipped = b
			}
			lastSkipped = b
			skipped++
		}
		buf = buf[keep:]
		for i := range cands {
			cands[i].at -= keep
		}
	}
	if found < 0 {
		fs.close()
		m.farFrom = x.rank + m.farBackoff
		m.farBackoff *= 2
		return false
	}
	c := cands[found]
	for _, b := range buf[:c.at] {
		if skipped == 0 {
			firstSkipped = b
		}
		lastSkipped = b
		skipped++
	}
	m.moveTo(fs, pos, buf[c.at:], skipped, &firstSkipped, &lastSkipped, &m.tq[c.ti])
	m.force = c.ti
	return true
}

// moveTo makes fs the source stream, its records rest (already read) the
// window, after the skipped records between the window and them; y is
// the target record that copies rest[0].
func (m *matcher) moveTo(fs *stream, pos lookupPos, rest []item, skipped int64, first, last *item, y *item) {
	var unmatched int64
	for r := m.next; r < m.w.hi; r++ {
		if m.w.at(r).matches == 0 {
			unmatched++
		}
	}
	explained := m.lastOK && unmatched+skipped > 0 && y.holes-m.lastTgt.holes >= unmatched+skipped
	for r := m.next; r < m.w.hi; r++ {
		m.w.at(r).explained = explained
	}
	// Everything behind is now far behind: out of the window, in order.
	// rest[0] is copied next (by y): what it skips is not lag, and when
	// nothing was copied before, it is the first copy (what comes before
	// it is below the target's start, or its cleaner's when y has as many
	// holes before it).
	m.next = m.w.hi
	if m.firstMatched < 0 {
		m.firstMatched, m.firstTgtHoles, m.mirrored.First = rest[0].rank, y.holes, rest[0].off
	}
	m.maxMatched = max(m.maxMatched, rest[0].rank)
	for m.w.lo < m.w.hi {
		m.evict()
	}
	if skipped > 0 {
		rank := rest[0].rank - skipped
		k := m.uncopiedKind(rank, explained)
		m.runs.addRange(k, skipped, first, last, m.lastEvictedTo)
	}
	if m.src == m.first {
		m.src.drainAsync()
	} else {
		m.src.close()
	}
	m.src, m.srcPos = fs, pos
	m.w.dropIndex()
	m.w.lo, m.w.hi = rest[0].rank, rest[0].rank
	m.next = m.w.lo
	for i := range rest {
		m.w.push(&rest[i])
	}
	m.farBackoff = lookahead
}

// closeForeign says what the open run of unmatched target records is,
// now that the source record of rank b (slot s) is matched after it (b <
// 0: the target ended). Their originals may be gone from the source: its
// cleaner removed them (as many offsets without a record where they
// were), its retention (they precede the copy of its first record), or
// the source topic was re-created (they precede the copy of its offset
// 0); else they are foreign.
func (m *matcher) closeForeign(b int64, s *slot) {
	if m.foreignN == 0 {
		return
	}
	n, a := m.foreignN, m.foreignAt
	m.foreignN = 0
	k := finding.ForeignRecords
	aHoles := m.foreignHoles
	switch {
	case s == nil && a >= 0:
		if m.srcHolesEnd-aHoles >= n {
			k = finding.CompactedUpstream
		}
	case s == nil:
		if m.src.stats.records == 0 && m.srcLogStart > 0 {
			k = finding.BelowSourceStart
		}
	case a >= 0:
		if b > a && s.holes-aHoles >= n {
			k = finding.CompactedUpstream
		}
	case s.holes >= n:
		k = finding.CompactedUpstream
	case b == 0 && m.srcLogStart > 0:
		k = finding.BelowSourceStart
	case b == 0 && s.off == 0:
		k = finding.SourceReset
	}
	m.runs.addTargetRange(k, n, &m.foreign[0], &m.foreign[1], m.foreignNear)
}

// finish closes the comparison at the target's end: every source record
// left (in the window, then the rest of the stream) says what it is, then
// the open foreign run (which needs the source's holes to its end).
func (m *matcher) finish() {
	for m.w.lo < m.w.hi {
		m.evict()
	}
	for {
		it := m.src.next()
		if it == nil {
			break
		}
		m.srcLookup.observe(&m.srcPos, it)
		m.runs.add(m.uncopiedKind(it.rank, false), it, nil, -1, m.lastEvictedTo)
	}
	m.srcEnd, m.srcHolesEnd = true, m.src.stats.holes
	m.closeForeign(-1, nil)
	m.runs.closeAll()
}
