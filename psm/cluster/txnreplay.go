package cluster

import (
	"fmt"

	"github.com/kseg/kseg/segment/finding"
)

// txnReplay is the replay of one __transaction_state partition: the
// latest record of each transactional id, updated in place (a
// __transaction_state of a million ids holds ten million records). The
// entries are kept in pages of fixed size, never in one slice that
// grows: a growing slice holds up to a quarter more than it uses, and its
// old and new arrays both while it is copied; pages cost neither, and the
// view's slice is allocated once at the end, at its exact size.
type txnReplay struct {
	dec Decoder
	dir string
	// index maps a transactional id to its entry's number (page
	// n/txnPage, slot n%txnPage); n entries are in use.
	index    map[string]int
	pages    [][]txnEntry
	n        int
	findings []finding.Finding
	// fast: dec is SchemaDecoder, whose reading of a record the replay
	// repeats in place; topics interns the topic names of the
	// transactions' partitions, scratch is txnValueV0's.
	fast    bool
	topics  map[string]string
	scratch []txnPartsScratch
}

// txnEntry is a transactional id's latest record that decoded.
type txnEntry struct {
	id     string
	offset int64
	v      TxnMetadataValue
}

// txnPage is the number of entries in a page (512 KiB).
const txnPage = 4096

func newTxnReplay(dec Decoder, dir string) *txnReplay {
	_, fast := dec.(SchemaDecoder)
	return &txnReplay{dec: dec, dir: dir, index: map[string]int{}, fast: fast, topics: map[string]string{}}
}

func (t *txnReplay) entry(n int) *txnEntry { return &t.pages[n/txnPage][n%txnPage] }

// add takes a new entry for id.
func (t *txnReplay) add(id string) *txnEntry {
	if t.n%txnPage == 0 && t.n/txnPage == len(t.pages) {
		t.pages = append(t.pages, make([]txnEntry, txnPage))
	}
	t.index[id] = t.n
	e := t.entry(t.n)
	e.id = id
	t.n++
	return e
}

// remove deletes id's entry: the last entry takes its place.
func (t *txnReplay) remove(id string) {
	k, ok := t.index[id]
	if !ok {
		return
	}
	last := t.entry(t.n - 1)
	if k != t.n-1 {
		*t.entry(k) = *last
		t.index[last.id] = k
	}
	*last = txnEntry{}
	t.n--
	delete(t.index, id)
}

// appendTo appends the entries as Transactions, letting each page go once
// copied.
func (t *txnReplay) appendTo(out []Transaction) []Transaction {
	for p := range t.pages {
		for i := range min(txnPage, t.n-p*txnPage) {
			e := &t.pages[p][i]
			out = append(out, Transaction{TransactionalID: e.id, TxnMetadataValue: e.v, Coordinator: t.dir, RecordOffset: e.offset})
		}
		t.pages[p] = nil
	}
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
			if r.Value == nil {
				t.remove(string(id))
				return nil
			}
			var scratch TxnMetadataValue
			k, ok := t.index[string(id)]
			dst := &scratch
			if ok {
				dst = &t.entry(k).v
			}
			if txnValueV0(r.Value, dst, t.topics, &t.scratch) || typedTxnValue(r.Value, dst) {
				var e *txnEntry
				if ok {
					e = t.entry(k)
				} else {
					e = t.add(string(id))
					e.v = scratch
				}
				e.offset = r.Offset
				return nil
			}
			// Not the typed decoder's: the decoder below words it.
		}
	}
	tr, err := t.dec.TransactionState(r.Key, r.Value)
	if err != nil {
		t.findings = append(t.findings, newFinding(finding.CorruptRecords, TransactionStateTopic, t.dir, r.Offset,
			fmt.Sprintf("record at offset %d does not decode: %v", r.Offset, err)))
		return nil
	}
	if tr.Tombstone || tr.Value == nil {
		t.remove(tr.TransactionalID)
		return nil
	}
	k, ok := t.index[tr.TransactionalID]
	var e *txnEntry
	if ok {
		e = t.entry(k)
	} else {
		e = t.add(tr.TransactionalID)
	}
	e.v, e.offset = *tr.Value, r.Offset
	return nil
}
