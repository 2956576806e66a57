package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment/finding"
)

// TestTxnReplayIndex: the replay's open-addressed index and paged
// entries against a map, over ids that come and go (a tombstone of an id
// present or absent, new ids, updates) across the pages' and the
// table's sizes: after every step each live id is found at its own
// entry with its latest offset, every other id is not found, and
// appendTo yields exactly the live ids.
func TestTxnReplayIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 7))
	tr := newTxnReplay(SchemaDecoder{}, "d")
	model := map[string]int64{}
	const ids = 12_000 // past the small pages (8,128 entries) and several doublings of the index
	check := func(step int) {
		if tr.n != len(model) {
			t.Fatalf("step %d: %d entries, want %d", step, tr.n, len(model))
		}
		for id, off := range model {
			s := tr.slots[tr.find([]byte(id))]
			if s == 0 {
				t.Fatalf("step %d: %q not found", step, id)
			}
			if e := tr.entry(int(s - 1)); e.TransactionalID != id || e.RecordOffset != off {
				t.Fatalf("step %d: %q found as %q at offset %d, want offset %d", step, id, e.TransactionalID, e.RecordOffset, off)
			}
		}
	}
	for step := range 200_000 {
		id := fmt.Sprintf("txn-%d", rng.IntN(ids))
		i := tr.find([]byte(id))
		// Grow first, remove for a long stretch, then mix.
		remove := rng.IntN(10) < 2 || step > 60_000 && step < 90_000 && rng.IntN(10) < 9
		if remove {
			tr.remove(i)
			delete(model, id)
		} else {
			tr.entryAt(i, []byte(id)).RecordOffset = int64(step)
			model[id] = int64(step)
		}
		if tr.slots[tr.find([]byte("absent"))] != 0 {
			t.Fatalf("step %d: an absent id is found", step)
		}
		if step%9_973 == 0 || step == 89_999 {
			check(step)
		}
	}
	check(-1)
	var got []string
	for _, e := range tr.appendTo(nil) {
		got = append(got, e.TransactionalID)
	}
	want := make([]string, 0, len(model))
	for id := range model {
		want = append(want, id)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("appendTo: %d ids, want %d", len(got), len(want))
	}
}

// TestReplaysReportUndecodableRecords: a __consumer_offsets or
// __transaction_state record whose key is cut short (an OffsetCommitKey,
// a TransactionLogKey, whose string runs past its end) is a
// corrupt-records finding at its offset, naming the topic and the
// partition directory, and the replay goes on.
func TestReplaysReportUndecodableRecords(t *testing.T) {
	groups, txns := newGroupsReplay(SchemaDecoder{}, "g-dir"), newTxnReplay(SchemaDecoder{}, "t-dir")
	for _, tc := range []struct {
		topic, dir string
		key        []byte
		apply      func(*record) error
		findings   *[]finding.Finding
	}{
		{ConsumerOffsetsTopic, "g-dir", []byte{0, 1, 0, 5, 'g'}, groups.apply, &groups.findings},
		{TransactionStateTopic, "t-dir", []byte{0, 0, 0, 5, 't'}, txns.record, &txns.findings},
	} {
		if err := tc.apply(&record{Offset: 7, Key: tc.key, Value: []byte{0, 0}}); err != nil {
			t.Fatalf("%s: %v", tc.topic, err)
		}
		if len(*tc.findings) != 1 {
			t.Fatalf("%s: findings %v, want one", tc.topic, *tc.findings)
		}
		f := (*tc.findings)[0]
		if f.Kind != finding.CorruptRecords || f.Subject != tc.topic || f.PartitionDir != tc.dir || f.Offset != 7 ||
			!strings.HasPrefix(f.Message, "record at offset 7 does not decode: ") {
			t.Errorf("%s: %+v", tc.topic, f)
		}
	}
}
