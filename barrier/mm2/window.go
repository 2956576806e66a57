package mm2

// slot is a source record in the window, with what the comparison has
// learnt about it.
type slot struct {
	item
	// tgt is the offset of the last target record found to be its copy.
	tgt int64
	// chain is the rank of the next older slot with the same hash, -1
	// (valid while the window is indexed).
	chain int64
	// matches counts the target records found to be its copies.
	matches int32
	// explained: skipped over where the target lacks as many offsets
	// (its cleaner removed them): compacted-downstream, not missing.
	explained bool
}

// window is the ring of source records around the comparison's position
// (m.next): up to half its size ahead of it, the rest behind it, so that
// a target record can be found among the source records it skips to
// (missing records), went back to (duplicates) or came too late for
// (reordered). Records are addressed by rank, their ordinal in the
// source stream; the ring holds the ranks [lo, hi).
type window struct {
	slots  []slot
	lo, hi int64
	// index maps a content hash to the newest slot holding it, the older
	// ones chained through slot.chain. It is built at the first mismatch
	// and dropped after a window's worth of records in order, so that a
	// clean replica never pays for it.
	index map[uint64]int64
}

func (w *window) size() int64 { return int64(len(w.slots)) }

// at is the slot of rank r, which must be in [lo, hi).
func (w *window) at(r int64) *slot { return &w.slots[r%w.size()] }

func (w *window) push(it *item) {
	s := w.at(w.hi)
	*s = slot{item: *it, tgt: -1, chain: -1}
	if w.index != nil {
		if old, ok := w.index[it.h]; ok {
			s.chain = old
		}
		w.index[it.h] = w.hi
	}
	w.hi++
}

// pop removes the oldest slot and returns it (valid until the next push).
func (w *window) pop() *slot {
	s := w.at(w.lo)
	if w.index != nil && w.index[s.h] == w.lo {
		delete(w.index, s.h)
	}
	w.lo++
	return s
}

func (w *window) buildIndex() {
	if w.index != nil {
		return
	}
	w.index = make(map[uint64]int64, w.hi-w.lo)
	for r := w.lo; r < w.hi; r++ {
		s := w.at(r)
		s.chain = -1
		if old, ok := w.index[s.h]; ok {
			s.chain = old
		}
		w.index[s.h] = r
	}
}

func (w *window) dropIndex() { w.index = nil }

// same walks the slots holding hash h, newest first, while fn returns
// true (the window must be indexed).
func (w *window) same(h uint64, fn func(r int64) bool) {
	r, ok := w.index[h]
	for ok && r >= w.lo {
		if !fn(r) {
			return
		}
		r = w.at(r).chain
		ok = r >= 0
	}
}
