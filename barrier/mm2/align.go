package mm2

import (
	"github.com/kseg/kseg/segment/finding"
)

// lookahead is how many target records after the current one a decision
// weighs: a candidate position scores by how many of them continue it.
const lookahead = 16

// maxCandidates bounds the positions weighed for one target record on
// each side of m.next (repetitive content can hold thousands).
const maxCandidates = 16

// matcher aligns the target's records with the source's, in one pass over
// each. The target is MM2's copy: stretches of the source in source
// order, with records lost (a skip forward), copied again (a step back,
// after a restart), out of order, or that are no copy of anything
// (foreign). For each target record it asks whether it copies the source
// record expected next (m.next, the one after the last copied in order);
// if not, it weighs the positions in the window where the record's
// content is, and staying put, by how many of the next target records
// each explains.
type matcher struct {
	opts Options
	// src is the source stream the window reads; first the one it read
	// first (a far scan replaces src).
	src, first *stream
	srcCfg     streamConfig
	srcPos     lookupPos
	tgt        *stream
	tgtPos     lookupPos
	srcEnd     bool
	tq         []item // the current target record and the ones after it
	tqBuf      []item // tq's buffer
	tgtEnd     bool

	w    window
	next int64
	// firstMatched and maxMatched are the lowest and highest ranks copied.
	firstMatched, maxMatched int64
	// firstTgtHoles is the holes of the target record that copies the
	// source record of rank firstMatched.
	firstTgtHoles int64
	// last is the last source record copied in order (not a late copy),
	// and the target record that copied it.
	last          item
	lastTgt       item
	lastOK        bool
	inOrder       int64 // records copied in order since the last mismatch
	force         int   // target records a far scan found foreign
	farFrom       int64 // no far scan before this target rank
	farBackoff    int64
	lastEvictedTo int64 // the target offset of the last matched slot evicted

	// foreign is the run of target records with no source record, open
	// until the next match says what they are.
	foreign  []item // first and last
	foreignN int64
	// foreignAt, foreignNear and foreignHoles are the rank, offset and
	// holes of the last source record copied in order before them (-1,
	// -1, 0 when none).
	foreignAt, foreignNear, foreignHoles int64

	runs        *runSet
	srcLookup   *offsetLookup
	tgtLookup   *offsetLookup
	crossings   *crossings
	downRanks   *offsetRanks
	srcLogStart int64
	srcHolesEnd int64 // set when the source stream ends

	copies, matched int64
	mirrored        Range
}

func newMatcher(opts Options, src, tgt *stream, srcCfg streamConfig) *matcher {
	size := opts.Window
	if size <= 0 {
		size = DefaultWindow
	}
	size = max(size, 4*lookahead)
	maxRuns := opts.MaxRuns
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	tqBuf := make([]item, 0, 64*lookahead)
	return &matcher{opts: opts, src: src, first: src, srcCfg: srcCfg, tgt: tgt, tq: tqBuf, tqBuf: tqBuf, w: window{slots: make([]slot, size)},
		firstMatched: -1, maxMatched: -1, mirrored: noRange(), farBackoff: lookahead, lastEvictedTo: -1,
		runs: newRunSet(maxRuns, runMessage(opts.AllowDuplicates)), srcLogStart: srcCfg.logStart}
}

// target is the current target record (nil at the end), the lookahead
// filled behind it.
func (m *matcher) target() *item {
	for !m.tgtEnd && len(m.tq) <= lookahead {
		if len(m.tq) == cap(m.tq) {
			// advance only reslices: move what is left to the front of
			// the buffer when it runs out.
			m.tq = append(m.tqBuf[:0], m.tq...)
		}
		it := m.tgt.next()
		if it == nil {
			m.tgtEnd = true
			break
		}
		m.tgtLookup.observe(&m.tgtPos, it)
		m.downRanks.observe(it)
		m.tq = append(m.tq, *it)
	}
	if len(m.tq) == 0 {
		return nil
	}
	return &m.tq[0]
}

func (m *matcher) advance() { m.tq = m.tq[1:] }

// run aligns the whole target, then reads the rest of the source.
func (m *matcher) run() {
	for x := m.target(); x != nil; x = m.target() {
		m.step(x)
		m.advance()
	}
	m.finish()
}

func (m *matcher) step(x *item) {
	if x.flags&flagLogAppendTime != 0 {
		m.runs.add(finding.TimestampsReplaced, nil, x, -1, -1)
	}
	if m.force > 0 {
		m.force--
		m.unmatched(x)
		return
	}
	if s := m.get(m.next); s != nil && s.h == x.h {
		m.match(m.next, x, inOrder)
		if m.inOrder++; m.inOrder > m.w.size() {
			m.w.dropIndex()
		}
		return
	}
	m.inOrder = 0
	m.mismatch(x)
}

// How a target record copies a source record.
const (
	inOrder = iota // the one expected next, or after a skip forward
	again          // one already copied: a step back (duplicates follow)
	late           // one skipped before: out of order
)

// decision is one way to place a target record: copying the source
// record of rank r (how), or none (stay).
type decision struct {
	stay  bool
	r     int64
	how   int
	score int
}

// priority breaks ties between equally good decisions: a late copy
// (which saves a record from being missing) before a skip forward, a
// skip before a step back, anything before calling the record foreign.
func (d decision) priority() int {
	switch {
	case d.stay:
		return 3
	case d.how == late:
		return 0
	case d.how == inOrder:
		return 1
	}
	return 2
}

func (m *matcher) better(d, best decision) bool {
	if d.score != best.score {
		return d.score > best.score
	}
	if d.priority() != best.priority() {
		return d.priority() < best.priority()
	}
	return abs(d.r-m.next) < abs(best.r-m.next)
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func (m *matcher) mismatch(x *item) {
	m.w.buildIndex()
	best := decision{stay: true, score: m.agree(1, m.next)}
	cands := m.candidates(x)
	for _, r := range cands {
		var d decision
		switch s := m.w.at(r); {
		case r >= m.next:
			d = decision{r: r, how: inOrder, score: 1 + m.agree(1, r+1)}
		case s.matches > 0:
			d = decision{r: r, how: again, score: 1 + m.agree(1, r+1)}
		default:
			d = decision{r: r, how: late, score: 1 + m.agree(1, m.next)}
		}
		if m.better(d, best) {
			best = d
		}
	}
	if len(cands) == 0 && m.farScanWanted(x) && m.farScan(x) {
		m.step(x)
		return
	}
	if best.stay {
		m.unmatched(x)
		return
	}
	if best.how == inOrder && best.r > m.next {
		m.skip(best.r, x)
	}
	m.match(best.r, x, best.how)
}

// candidates are the ranks of the window's slots with x's content: up to
// maxCandidates nearest behind m.next and ahead of it, reading the source
// ahead until one ahead is found or the window's forward half is full.
func (m *matcher) candidates(x *item) []int64 {
	var behind, ahead []int64
	walked := 0
	m.w.same(x.h, func(r int64) bool {
		walked++
		switch {
		case r >= m.next:
			if len(ahead) == maxCandidates {
				ahead = ahead[1:]
			}
			ahead = append(ahead, r)
		case len(behind) < maxCandidates:
			behind = append(behind, r)
		}
		return walked < 64*maxCandidates && (len(behind) < maxCandidates || r >= m.next)
	})
	for len(ahead) == 0 && m.fill() {
		if m.w.at(m.w.hi-1).h == x.h {
			ahead = append(ahead, m.w.hi-1)
		}
	}
	return append(behind, ahead...)
}

// agree counts how many target records from tq[ti] on copy the source
// records from rank r on (at most lookahead), reading the source ahead.
func (m *matcher) agree(ti int, r int64) int {
	n := 0
	for ; n < lookahead && ti+n < len(m.tq); n++ {
		s := m.get(r + int64(n))
		if s == nil || s.h != m.tq[ti+n].h {
			break
		}
	}
	return n
}

// get is the slot of rank r, reading the source ahead as far as it; nil
// when r was evicted, or lies beyond the source's end or the window's
// forward half.
func (m *matcher) get(r int64) *slot {
	if r < m.w.lo {
		return nil
	}
	for r >= m.w.hi {
		if !m.fill() {
			return nil
		}
	}
	return m.w.at(r)
}

// fill reads one source record into the window: false at the source's
// end, or when the window's forward half is full.
func (m *matcher) fill() bool {
	if m.srcEnd || m.w.hi-m.next >= m.w.size()/2 {
		return false
	}
	if m.w.hi-m.w.lo == m.w.size() {
		m.evict()
	}
	it := m.src.next()
	if it == nil {
		m.srcEnd = true
		m.srcHolesEnd = m.src.stats.holes
		return false
	}
	m.srcLookup.observe(&m.srcPos, it)
	m.w.push(it)
	return true
}

// evict drops the oldest slot, saying what an uncopied record was.
func (m *matcher) evict() {
	r := m.w.lo
	s := m.w.pop()
	if s.matches > 0 {
		m.lastEvictedTo = s.tgt
		return
	}
	m.runs.add(m.uncopiedKind(r, s.explained), &s.item, nil, -1, m.lastEvictedTo)
}

// uncopiedKind is what a source record of rank r without a copy is.
// When nothing at all was copied, every source record is lag.
func (m *matcher) uncopiedKind(r int64, explained bool) finding.Kind {
	switch {
	case explained:
		return finding.CompactedDownstream
	case m.firstMatched < 0:
		return finding.NotYetMirrored
	case r < m.firstMatched && m.firstTgtHoles >= m.firstMatched:
		// As many offsets without a record before the target's first copy:
		// its cleaner removed them.
		return finding.CompactedDownstream
	case r < m.firstMatched:
		return finding.BelowTargetStart
	case r > m.maxMatched:
		return finding.NotYetMirrored
	}
	return finding.MissingRecords
}

// skip moves past the source records [m.next, r) for target record x:
// those not copied are missing, unless the target lacks at least as many
// offsets since its last copy (its cleaner removed them).
func (m *matcher) skip(r int64, x *item) {
	var n int64
	for q := m.next; q < r; q++ {
		if m.w.at(q).matches == 0 {
			n++
		}
	}
	if m.lastOK && n > 0 && x.holes-m.lastTgt.holes >= n {
		for q := m.next; q < r; q++ {
			m.w.at(q).explained = true
		}
	}
}

// match records target record x as a copy of the source record of rank r.
func (m *matcher) match(r int64, x *item, how int) {
	s := m.w.at(r)
	s.matches++
	s.tgt = x.off
	m.copies++
	if s.matches == 1 {
		m.matched++
	}
	m.closeForeign(r, s)
	if s.matches > 1 {
		k := finding.DuplicateRecords
		if m.opts.AllowDuplicates {
			k = finding.DuplicateRecordsAllowed
		}
		m.runs.add(k, &s.item, x, -1, -1)
	}
	if how == late {
		m.runs.add(finding.Reordered, &s.item, x, -1, -1)
	}
	if comparableTS(&s.item, x) && s.ts != x.ts {
		m.runs.add(finding.TimestampMismatch, &s.item, x, -1, -1)
	}
	if m.firstMatched < 0 || r < m.firstMatched {
		m.firstMatched, m.mirrored.First, m.firstTgtHoles = r, s.off, x.holes
	}
	if r > m.maxMatched {
		m.maxMatched, m.mirrored.Last = r, s.off
	}
	if how == late {
		return
	}
	prev := int64(-1)
	if m.lastOK {
		prev = m.last.off
	}
	m.crossings.cross(prev, s.off, x)
	m.last, m.lastTgt, m.lastOK = s.item, *x, true
	m.next = r + 1
	m.farBackoff = lookahead
}

// unmatched records target record x as a copy of no source record found:
// what it is depends on the next match (closeForeign).
func (m *matcher) unmatched(x *item) {
	if m.foreignN == 0 {
		m.foreign = append(m.foreign[:0], *x, *x)
		m.foreignAt, m.foreignNear, m.foreignHoles = -1, -1, 0
		if m.lastOK {
			m.foreignAt, m.foreignNear, m.foreignHoles = m.last.rank, m.last.off, m.last.holes
		}
	}
	m.foreign[1] = *x
	m.foreignN++
}
