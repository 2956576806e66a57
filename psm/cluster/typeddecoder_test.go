package cluster

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/decode/schema/schematest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

type kv struct{ key, value []byte }

// internalRecords reads every record of the partition directories of
// topic under root (any depth).
func internalRecords(t *testing.T, root, topic string) []kv {
	t.Helper()
	var out []kv
	var dec decode.Decoder
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || schema.TopicOf(d.Name()) != topic {
			return nil
		}
		pd, err := segment.OpenPartitionDir(p)
		if err != nil {
			return nil
		}
		for _, s := range pd.Segments {
			lf, err := segment.OpenLog(s.Log)
			if err != nil {
				continue
			}
			sc := lf.Scanner(segment.ScanOptions{})
			for sc.Next() {
				b := sc.Batch()
				if b.IsControl() {
					continue
				}
				_ = dec.Records(b, func(r *decode.Record) error {
					out = append(out, kv{bytes.Clone(r.Key), bytes.Clone(r.Value)})
					return nil
				})
			}
			lf.Close()
		}
		return filepath.SkipDir
	})
	return out
}

// kmsgRecords are offset commits, group metadata and transaction records
// of every version kmsg writes, with random contents.
func kmsgRecords(rng *rand.Rand) (offsets, txns []kv) {
	str := func() string { return string([]byte{byte('a' + rng.IntN(26)), byte('a' + rng.IntN(26))}) }
	parts := func() []int32 { // empty now and then
		ps := []int32{}
		for range rng.IntN(3) {
			ps = append(ps, rng.Int32N(9))
		}
		return ps
	}
	for i := range 400 {
		k := kmsg.OffsetCommitKey{Version: int16(i % 2), Group: str(), Topic: str(), Partition: rng.Int32N(100)}
		v := kmsg.OffsetCommitValue{Version: int16(i % 5), Offset: rng.Int64(), LeaderEpoch: rng.Int32N(9) - 1, Metadata: str(),
			CommitTimestamp: rng.Int64(), ExpireTimestamp: rng.Int64()}
		offsets = append(offsets, kv{k.AppendTo(nil), v.AppendTo(nil)}, kv{k.AppendTo(nil), nil})
		gk := kmsg.GroupMetadataKey{Version: 2, Group: str()}
		gv := kmsg.GroupMetadataValue{Version: int16(i % 5), ProtocolType: []string{"consumer", "connect", ""}[i%3], Generation: rng.Int32(),
			CurrentStateTimestamp: rng.Int64()}
		if i%4 > 0 {
			p, l := str(), str()
			gv.Protocol, gv.Leader = &p, &l
		}
		for range rng.IntN(3) {
			a := kmsg.ConsumerMemberAssignment{Version: int16(rng.IntN(4))}
			for range rng.IntN(3) {
				a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: str(), Partitions: parts()})
			}
			raw := a.AppendTo(nil)
			switch rng.IntN(5) {
			case 0:
				raw = raw[:rng.IntN(len(raw)+1)] // bytes that do not decode
			case 1:
				raw = nil
			}
			inst := str()
			gv.Members = append(gv.Members, kmsg.GroupMetadataValueMember{MemberID: str(), InstanceID: &inst, ClientID: str(), ClientHost: str(),
				RebalanceTimeoutMillis: rng.Int32(), SessionTimeoutMillis: rng.Int32(), Subscription: []byte{0, 0}, Assignment: raw})
		}
		offsets = append(offsets, kv{gk.AppendTo(nil), gv.AppendTo(nil)}, kv{gk.AppendTo(nil), nil})
		tk := kmsg.TxnMetadataKey{Version: 0, TransactionalID: str()}
		tv := kmsg.TxnMetadataValue{Version: int16(i % 2), ProducerID: rng.Int64(), ProducerEpoch: int16(rng.IntN(9)), TimeoutMillis: rng.Int32(),
			State: kmsg.TransactionState(rng.IntN(8)), LastUpdateTimestamp: rng.Int64(), StartTimestamp: rng.Int64(),
			PreviousProducerID: rng.Int64N(3) - 1, NextProducerID: rng.Int64N(3) - 1, ClientTransactionVersion: int16(rng.IntN(3))}
		for range rng.IntN(3) {
			tv.Topics = append(tv.Topics, kmsg.TxnMetadataValueTopic{Topic: str(), Partitions: parts()})
		}
		txns = append(txns, kv{tk.AppendTo(nil), tv.AppendTo(nil)}, kv{tk.AppendTo(nil), nil})
	}
	return offsets, txns
}

// mutations are rs with, for each, a truncation of key or value and a
// flipped bit.
func mutations(rng *rand.Rand, rs []kv) []kv {
	out := rs
	for _, r := range rs {
		if len(r.value) > 0 {
			out = append(out, kv{r.key, r.value[:rng.IntN(len(r.value))]})
			f := bytes.Clone(r.value)
			f[rng.IntN(len(f))] ^= byte(1 << rng.IntN(8))
			out = append(out, kv{r.key, f})
		}
		if len(r.key) > 0 {
			f := bytes.Clone(r.key)
			f[rng.IntN(len(f))] ^= byte(1 << rng.IntN(8))
			out = append(out, kv{f, r.value}, kv{r.key[:rng.IntN(len(r.key))], r.value})
		}
	}
	return out
}

// TestTypedDecoderAgrees: SchemaDecoder's typed path gives, for every
// record it reads, exactly what the generic path (DecodeInternal's
// *schema.Struct and the accessors) gives, and leaves to the generic path
// only records the typed decoders do not read; on a real broker's
// __consumer_offsets (the shared fixtures), on an example of every
// message and version with every field set (schematest), on kmsg's
// records of every version with random contents, and on truncations and
// bit flips of all of them. Most records take the typed path.
func TestTypedDecoderAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	offsets, txns := kmsgRecords(rng)
	for _, topic := range []string{schema.ConsumerOffsets, schema.TransactionState} {
		ex, err := schematest.Examples(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ex {
			if topic == schema.ConsumerOffsets {
				offsets = append(offsets, kv{e.Key, e.Value})
			} else {
				txns = append(txns, kv{e.Key, e.Value})
			}
		}
	}
	offsets = append(offsets, internalRecords(t, filepath.Join("..", "..", "testdata", "logdirs"), schema.ConsumerOffsets)...)
	txns = append(txns, internalRecords(t, filepath.Join("..", "..", "testdata", "logdirs"), schema.TransactionState)...)
	real := testkit.RealRoot()
	if _, err := os.Stat(real); err == nil {
		offsets = append(offsets, internalRecords(t, real, schema.ConsumerOffsets)...)
	} else {
		t.Log("real fixtures absent (../shared/fixtures/real): generated records only")
	}
	// The share is of the records the views replay through the typed
	// decoders. Record type 0 (LegacyOffsetCommitKey, what 0.8.2 brokers
	// wrote) is left to the generic path, which skips it: kmsgRecords
	// writes half its offset commits with key version 0, and without the
	// real fixtures they would be a sixth of all records.
	typed, legacy := 0, 0
	for _, r := range offsets {
		if len(r.key) >= 2 && binary.BigEndian.Uint16(r.key) == 0 {
			legacy++
			continue
		}
		if _, ok := typedConsumerOffsets(r.key, r.value); ok {
			typed++
		}
	}
	for _, r := range txns {
		if _, ok := typedTransactionState(r.key, r.value); ok {
			typed++
		}
	}
	n := len(offsets) + len(txns) - legacy
	t.Logf("%d of %d records read by the typed decoders (before mutations; %d of record type 0 aside)", typed, n, legacy)
	if typed < n*9/10 {
		t.Errorf("only %d of %d records took the typed path", typed, n)
	}
	agree(t, mutations(rng, offsets), typedConsumerOffsets, genericConsumerOffsets)
	agree(t, mutations(rng, txns), typedTransactionState, genericTransactionState)
}

// agree fails t on the first record of rs that the typed decoder reads
// (ok) other than the generic reader does.
func agree[R any](t *testing.T, rs []kv, typed func(key, value []byte) (R, bool), generic func(key, value []byte) (R, error)) {
	t.Helper()
	for _, r := range rs {
		got, ok := typed(r.key, r.value)
		want, err := generic(r.key, r.value)
		if !ok {
			continue
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("key %x value %x:\ntyped   %+v\ngeneric %+v (%v)", r.key, r.value, got, want, err)
		}
	}
}

// twice is rs followed by rs shuffled: a replay of it updates what it
// made, in another order.
func twice(rng *rand.Rand, rs []kv) []kv {
	again := slices.Clone(rs)
	rng.Shuffle(len(again), func(i, j int) { again[i], again[j] = again[j], again[i] })
	return append(rs, again...)
}

// TestTxnReplayFastPathAgrees: the transactions replay's in-place path
// (txnKeyID, typedTxnValue into the id's entry) ends with exactly the
// transactional ids, states and findings of the path through
// Decoder.TransactionState, over kmsg's records of every version, their
// truncations and bit flips, and the same records again in another
// order (updates in place, tombstones of ids present and absent, values
// that do not decode after ones that did).
func TestTxnReplayFastPathAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 5))
	_, txns := kmsgRecords(rng)
	rs := twice(rng, mutations(rng, txns))
	replay := func(fast bool) ([]*Transaction, []finding.Finding) {
		tr := newTxnReplay(SchemaDecoder{}, "d")
		tr.fast = fast
		for i, r := range rs {
			if err := tr.record(&record{Offset: int64(i), Key: r.key, Value: r.value}); err != nil {
				t.Fatal(err)
			}
		}
		return tr.appendTo(nil), tr.findings
	}
	got, gotF := replay(true)
	want, wantF := replay(false)
	if len(got) == 0 || len(gotF) == 0 {
		t.Fatalf("%d transactions, %d findings: the records test too little", len(got), len(gotF))
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotF, wantF) {
		t.Fatalf("in place: %d ids, %d findings; through the decoder: %d ids, %d findings", len(got), len(gotF), len(want), len(wantF))
	}
	for _, r := range rs {
		id, ok := txnKeyID(r.key)
		tr, tok := typedTransactionState(r.key, nil)
		if ok != tok || ok && string(id) != tr.TransactionalID {
			t.Fatalf("key %x: txnKeyID %q %v, typed decoder %q %v", r.key, id, ok, tr.TransactionalID, tok)
		}
	}
}

// TestGroupsReplayFastPathAgrees: the groups replay's in-place path for
// offset commits (commitInPlace) ends with exactly the groups and
// findings of the path through Decoder.ConsumerOffsets, over kmsg's
// records of every version, their truncations and bit flips, and the
// same records again in another order; and offsetCommitKeyFields reads
// exactly the keys the typed decoder reads as offset commits.
func TestGroupsReplayFastPathAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 6))
	offsets, _ := kmsgRecords(rng)
	rs := twice(rng, mutations(rng, offsets))
	replay := func(fast bool) ([]Group, []finding.Finding, map[string]int) {
		gr := newGroupsReplay(SchemaDecoder{}, "d")
		gr.fast = fast
		for i, r := range rs {
			if err := gr.apply(&record{Offset: int64(i), Key: r.key, Value: r.value}); err != nil {
				t.Fatal(err)
			}
		}
		var gs []Group
		for name, a := range gr.groups {
			gs = append(gs, a.group(name, "d", nil))
		}
		slices.SortFunc(gs, func(a, b Group) int { return strings.Compare(a.Group, b.Group) })
		return gs, gr.findings, gr.skipped
	}
	got, gotF, gotS := replay(true)
	want, wantF, wantS := replay(false)
	commits := 0
	for _, g := range got {
		commits += len(g.Offsets)
	}
	if commits == 0 {
		t.Fatal("no offset commits: the records test too little")
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotF, wantF) || !reflect.DeepEqual(gotS, wantS) {
		t.Fatalf("in place: %d groups, %d findings; through the decoder: %d groups, %d findings", len(got), len(gotF), len(want), len(wantF))
	}
	for _, r := range rs {
		g, tp, p, ok := offsetCommitKeyFields(r.key)
		gr, tok := typedOffsetsKey(r.key, true)
		tok = tok && gr.Kind == GroupRecordOffsetCommit
		if ok != tok || ok && (string(g) != gr.Group || string(tp) != gr.Topic || p != gr.Partition) {
			t.Fatalf("key %x: offsetCommitKeyFields %q %q %d %v, typed decoder %+v %v", r.key, g, tp, p, ok, gr, tok)
		}
	}
}

// TestLegacyOffsetCommitReplayed: an offset commit of record type 0
// (LegacyOffsetCommitKey and LegacyOffsetCommitValue, what 0.8.2 brokers
// wrote) is an offset commit, as GroupCoordinatorShard.replay converts
// it, not a record the groups view skips.
func TestLegacyOffsetCommitReplayed(t *testing.T) {
	k := kmsg.NewOffsetCommitKey()
	k.Version, k.Group, k.Topic, k.Partition = 0, "old-group", "orders", 2
	v := kmsg.NewOffsetCommitValue()
	v.Version, v.Offset, v.Metadata, v.CommitTimestamp = 0, 1234, "m", 1400000000000
	r, err := SchemaDecoder{}.ConsumerOffsets(k.AppendTo(nil), v.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != GroupRecordOffsetCommit || r.Group != "old-group" || r.Topic != "orders" || r.Partition != 2 ||
		r.Offset == nil || r.Offset.Offset != 1234 || r.Offset.Metadata != "m" || r.Offset.CommitTimestamp != 1400000000000 || r.Offset.LeaderEpoch != -1 {
		t.Fatalf("type-0 offset commit read as %+v (offset %+v)", r, r.Offset)
	}
	tomb, err := SchemaDecoder{}.ConsumerOffsets(k.AppendTo(nil), nil)
	if err != nil || tomb.Kind != GroupRecordOffsetCommit || !tomb.Tombstone {
		t.Fatalf("type-0 tombstone read as %+v (%v)", tomb, err)
	}
}
