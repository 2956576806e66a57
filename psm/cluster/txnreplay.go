package cluster

import (
	"hash/maphash"
	"math/bits"

	"github.com/kseg/kseg/segment/finding"
)

// txnReplay is the replay of one __transaction_state partition: the
// latest record of each transactional id, updated in place (a
// __transaction_state of a million ids holds ten million records).
//
// Its memory is the view's: at 100,000 ids the replay's own structures
// beside the view's were what put kseg txns at twice keyfloor's peak
// RSS (the collector lets the heap grow to twice what is live). So:
//   - the entries are the view's Transactions themselves, in pages that
//     never move (no growing slice: no quarter held spare, no old and new
//     array at once), and the view points into them rather than copying
//     them (a copy was 12 MiB beside the pages at the end);
//   - the index is an open-addressed table of entry numbers (4 bytes a
//     slot, at most half full, the ids hashed from their bytes) rather
//     than a map[string]: a map of 100,000 ids is 3–6 MiB and leaves as
//     much again behind as it grows;
//   - an id's partition arrays stay with its entry when its transaction
//     completes (no partitions) for the next transaction to fill, rather
//     than going to the collector at every transaction: the usual id
//     moves Empty, Ongoing, PrepareCommit, CompleteCommit, Ongoing, …
type txnReplay struct {
	dec Decoder
	dir string
	// slots is the index: entry number + 1 of the id whose hash (seed)
	// starts its probe there, 0 for none; len(slots) is a power of two
	// at least twice n.
	slots []int32
	seed  maphash.Seed
	// pages hold the entries: page p of txnPageMin<<p entries up to
	// txnPageMax, then txnPageMax each; n entries are in use, of the held
	// the pages have room for.
	pages    [][]Transaction
	n, held  int
	findings []finding.Finding
	// fast: dec is SchemaDecoder, whose reading of a record the replay
	// repeats in place; topics interns the topic names of the
	// transactions' partitions, scratch is txnValueV0's.
	fast    bool
	topics  map[string]string
	scratch []txnPartsScratch
}

// Pages double from txnPageMin entries (a partition of a few ids costs a
// few KiB: 50 coordinator partitions of a handful of ids each are the
// usual cluster) to txnPageMax (512 KiB), the size of every page after
// the txnSmallPages first, which hold txnSmall entries.
const (
	txnPageMin    = 64
	txnPageMax    = 4096
	txnSmallPages = 7 // 64 … 4096
	txnSmall      = txnPageMin * (1<<txnSmallPages - 1)
	txnSlotsMin   = 64
)

func newTxnReplay(dec Decoder, dir string) *txnReplay {
	_, fast := dec.(SchemaDecoder)
	return &txnReplay{dec: dec, dir: dir, slots: make([]int32, txnSlotsMin), seed: maphash.MakeSeed(), fast: fast, topics: map[string]string{}}
}

// entry is entry number k.
func (t *txnReplay) entry(k int) *Transaction {
	if k < txnSmall {
		p := bits.Len(uint(k/txnPageMin+1)) - 1
		return &t.pages[p][k-txnPageMin*(1<<p-1)]
	}
	k -= txnSmall
	return &t.pages[txnSmallPages+k/txnPageMax][k%txnPageMax]
}

// find is the slot of id (its entry number + 1 in it), or of the empty
// slot where its probe ends (0 in it).
func (t *txnReplay) find(id []byte) int { return probe(t, id, maphash.Bytes(t.seed, id)) }

// findString is find for an id the decoder made.
func (t *txnReplay) findString(id string) int { return probe(t, id, maphash.String(t.seed, id)) }

// probe walks the index from id's hash h to id's slot or an empty one.
func probe[S string | []byte](t *txnReplay, id S, h uint64) int {
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		if s := t.slots[i]; s == 0 || t.entry(int(s-1)).TransactionalID == string(id) {
			return i
		}
	}
}

// home is the slot where the probe of entry k's id starts.
func (t *txnReplay) home(k int) int {
	return int(maphash.String(t.seed, t.entry(k).TransactionalID)) & (len(t.slots) - 1)
}

// add takes a new entry for id, at slot i (find's empty slot for it).
func (t *txnReplay) add(id string, i int) *Transaction {
	if t.n == t.held {
		size := txnPageMax
		if p := len(t.pages); p < txnSmallPages {
			size = txnPageMin << p
		}
		t.pages = append(t.pages, make([]Transaction, size))
		t.held += size
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
		i = t.findString(id)
	}
	t.slots[i] = int32(t.n + 1)
	e := t.entry(t.n)
	*e = Transaction{TransactionalID: id, Coordinator: t.dir}
	t.n++
	return e
}

// grow doubles the index.
func (t *txnReplay) grow() {
	t.slots = make([]int32, 2*len(t.slots))
	mask := len(t.slots) - 1
	for k := range t.n {
		i := t.home(k)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(k + 1)
	}
}

// remove deletes the entry at slot i: the last entry takes its place.
func (t *txnReplay) remove(i int) {
	if t.slots[i] == 0 {
		return
	}
	k, last := int(t.slots[i]-1), t.n-1
	// Empty slot i, shifting back the probes that passed over it (linear
	// probing's deletion without tombstones).
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		h := t.home(int(t.slots[j] - 1))
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
	if k != last {
		j := t.home(last)
		for t.slots[j] != int32(last+1) {
			j = (j + 1) & mask
		}
		t.slots[j] = int32(k + 1)
		*t.entry(k) = *t.entry(last)
	}
	*t.entry(last) = Transaction{}
	t.n--
}

// appendTo appends a pointer to every entry: the view's Transactions are
// the replay's entries.
func (t *txnReplay) appendTo(out []*Transaction) []*Transaction {
	for k := range t.n {
		e := t.entry(k)
		if len(e.Partitions) == 0 {
			e.Partitions = nil // arrays kept for a next transaction
		}
		out = append(out, e)
	}
	t.slots, t.pages = nil, nil
	return out
}

// record applies one record: a transactional id's new state, or its
// tombstone.
func (t *txnReplay) record(r *record) error {
	if t.fast {
		// The usual record, read without allocating: the id looked up by
		// its bytes, the value read into the id's entry (a string is made
		// only for an id met for the first time).
		if id, ok := txnKeyID(r.Key); ok {
			i := t.find(id)
			if r.Value == nil {
				t.remove(i)
				return nil
			}
			var scratch TxnMetadataValue
			dst := &scratch
			if s := t.slots[i]; s != 0 {
				dst = &t.entry(int(s - 1)).TxnMetadataValue
			}
			held := dst.Partitions
			if txnValueV0(r.Value, dst, t.topics, &t.scratch) || typedTxnValue(r.Value, dst) {
				if dst.Partitions == nil && held != nil {
					dst.Partitions = held[:0]
				}
				e := t.entryAt(i, id)
				if dst == &scratch {
					e.TxnMetadataValue = scratch
				}
				e.RecordOffset = r.Offset
				return nil
			}
			// Not the typed decoder's: the decoder below words it.
		}
	}
	tr, err := t.dec.TransactionState(r.Key, r.Value)
	if err != nil {
		t.findings = append(t.findings, undecodable(TransactionStateTopic, t.dir, r.Offset, err))
		return nil
	}
	i := t.findString(tr.TransactionalID)
	if tr.Tombstone || tr.Value == nil {
		t.remove(i)
		return nil
	}
	var e *Transaction
	if s := t.slots[i]; s != 0 {
		e = t.entry(int(s - 1))
	} else {
		e = t.add(tr.TransactionalID, i)
	}
	e.TxnMetadataValue, e.RecordOffset = *tr.Value, r.Offset
	return nil
}

// entryAt is the entry at slot i, a new one for id when the slot is
// empty.
func (t *txnReplay) entryAt(i int, id []byte) *Transaction {
	if s := t.slots[i]; s != 0 {
		return t.entry(int(s - 1))
	}
	return t.add(string(id), i)
}
