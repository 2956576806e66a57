package cluster_test

import (
	"slices"
	"testing"

	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
)

// scriptDecoder decodes a record whose key is one byte i as script[i]: the
// state code is exercised on KIP-848 records without a decoder of their
// schemas (kmsg has none).
type scriptDecoder struct{ script []cluster.GroupRecord }

func (d scriptDecoder) ConsumerOffsets(key, value []byte) (cluster.GroupRecord, error) {
	r := d.script[key[0]]
	r.Tombstone = value == nil
	return r, nil
}

func (scriptDecoder) TransactionState(key, value []byte) (cluster.TxnRecord, error) {
	return cluster.TxnRecord{}, nil
}

// A KIP-848 consumer group replayed as GroupCoordinatorShard does: epoch,
// target assignment epoch, members and their current assignments (topic
// ids resolved through partition.metadata), a member removed by a
// tombstone; the state follows ConsumerGroup.maybeUpdateGroupState.
func TestConsumerGroupKIP848(t *testing.T) {
	member := func(id string) cluster.GroupRecord {
		return cluster.GroupRecord{Kind: cluster.GroupRecordConsumerGroupMember, Group: "g", MemberID: id,
			Member: &cluster.ConsumerGroupMemberValue{ClientID: "client-" + id, ClientHost: "/h", SubscribedTopicNames: []string{"orders"}, RebalanceTimeoutMs: 1000}}
	}
	current := func(id string, epoch int32, p int32) cluster.GroupRecord {
		return cluster.GroupRecord{Kind: cluster.GroupRecordConsumerGroupCurrentMemberAssignment, Group: "g", MemberID: id,
			Current: &cluster.CurrentMemberAssignmentValue{MemberEpoch: epoch, Assigned: []cluster.TopicIDPartitions{{TopicID: ordersID, Partitions: []int32{p}}}}}
	}
	script := []cluster.GroupRecord{
		{Kind: cluster.GroupRecordConsumerGroupMetadata, Group: "g", ConsumerGroupEpoch: 4},
		member("a"), member("b"), member("c"),
		{Kind: cluster.GroupRecordConsumerGroupTargetAssignmentMetadata, Group: "g", AssignmentEpoch: 4},
		current("a", 4, 0), current("b", 3, 1), current("c", 4, 2),
		member("c"), // index 8: written as a tombstone below
		{Kind: cluster.GroupRecordSkipped, Group: "g", SkippedType: "ConsumerGroupPartitionMetadata"},
	}
	kv := func(i byte, tombstone bool) clustertest.KV {
		if tombstone {
			return clustertest.KV{Key: []byte{i}}
		}
		return clustertest.KV{Key: []byte{i}, Value: []byte{1}}
	}
	cases := []struct {
		name  string
		recs  []clustertest.KV
		state string
		n     int
	}{
		{"reconciling", []clustertest.KV{kv(0, false), kv(1, false), kv(2, false), kv(3, false), kv(4, false), kv(5, false), kv(6, false), kv(7, false), kv(8, true), kv(9, false)}, "Reconciling", 2},
		{"stable", []clustertest.KV{kv(0, false), kv(1, false), kv(4, false), kv(5, false)}, "Stable", 1},
		{"assigning", []clustertest.KV{kv(0, false), kv(1, false), kv(5, false)}, "Assigning", 1},
		{"empty", []clustertest.KV{kv(0, false), kv(4, false)}, "Empty", 0},
		{"deleted", []clustertest.KV{kv(0, false), kv(4, false), kv(0, true)}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := loadKIP848Groups(t, c.recs, scriptDecoder{script})
			if c.state == "" {
				if len(v.Groups) != 0 {
					t.Fatalf("deleted group still listed: %+v", v.Groups)
				}
				return
			}
			if len(v.Groups) != 1 {
				t.Fatalf("groups %+v", v.Groups)
			}
			g := v.Groups[0]
			if g.Type != "consumer" || g.State != c.state || g.Generation != 4 || len(g.Members) != c.n {
				t.Errorf("group %+v, want state %s with %d members", g, c.state, c.n)
			}
			for _, m := range g.Members {
				if m.ClientID != "client-"+m.MemberID || (m.MemberEpoch >= 0 && (len(m.Assignment) != 1 || m.Assignment[0].Topic != "orders")) {
					t.Errorf("member %+v: assignment not resolved to orders via partition.metadata %s", m, segment.TopicIDString(ordersID))
				}
			}
			if c.name == "reconciling" && v.Skipped["ConsumerGroupPartitionMetadata"] != 1 {
				t.Errorf("skipped %v", v.Skipped)
			}
		})
	}
}

// kip848Bytes builds __consumer_offsets records of a KIP-848 group byte by
// byte from the coordinator's message schemas (group-coordinator
// src/main/resources/common/message/ConsumerGroup*Key/Value.json, Kafka
// 4.0): a key is the record type (int16) and the key's fields in the
// non-flexible encoding; a value is its version (int16) and its fields in
// the flexible encoding (compact strings and arrays, a tagged-field count
// after each struct). No schema table is used, so SchemaDecoder's reading
// of them is checked against the layout, not against itself.
type kip848Bytes []byte

func (b kip848Bytes) i8(v int8) kip848Bytes   { return append(b, byte(v)) }
func (b kip848Bytes) i16(v int16) kip848Bytes { return append(b, byte(v>>8), byte(v)) }
func (b kip848Bytes) i32(v int32) kip848Bytes {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// str is a non-flexible string (int16 length).
func (b kip848Bytes) str(s string) kip848Bytes { return append(b.i16(int16(len(s))), s...) }

// cstr is a compact string (uvarint length+1); cnull a null one.
func (b kip848Bytes) cstr(s string) kip848Bytes { return append(append(b, byte(len(s)+1)), s...) }
func (b kip848Bytes) cnull() kip848Bytes        { return append(b, 0) }

// carr opens a compact array of n elements.
func (b kip848Bytes) carr(n int) kip848Bytes { return append(b, byte(n+1)) }

// tags is an empty tagged-field section.
func (b kip848Bytes) tags() kip848Bytes { return append(b, 0) }

// TestConsumerGroupKIP848Bytes: a Kafka 4.0 consumer group ("kip848",
// epoch 5) as its coordinator writes it — ConsumerGroupMetadata (type 3),
// ConsumerGroupMemberMetadata (5) of member "m-1" (client "consumer-1",
// host "/10.0.0.9", subscribed to orders, rebalance timeout 300000 ms),
// ConsumerGroupTargetAssignmentMetadata (6, assignment epoch 5) and
// ConsumerGroupCurrentMemberAssignment (8: member epoch 5, previous 4,
// state 0 = STABLE, orders-0 assigned by topic id), then an offset commit
// of orders-0 at 2 — decoded by the CLI's decoder (SchemaDecoder): a
// Stable group of one member holding orders-0, its commit with lag 1.
func TestConsumerGroupKIP848Bytes(t *testing.T) {
	const group, member = "kip848", "m-1"
	kv := func(k, v kip848Bytes) clustertest.KV { return clustertest.KV{Key: k, Value: v} }
	recs := []clustertest.KV{
		kv(kip848Bytes{}.i16(3).str(group),
			kip848Bytes{}.i16(0).i32(5).tags()),
		kv(kip848Bytes{}.i16(5).str(group).str(member),
			kip848Bytes{}.i16(0).cnull().cnull().cstr("consumer-1").cstr("/10.0.0.9").carr(1).cstr("orders").cnull().i32(300000).cstr("uniform").tags()),
		kv(kip848Bytes{}.i16(6).str(group),
			kip848Bytes{}.i16(0).i32(5).tags()),
		kv(kip848Bytes{}.i16(8).str(group).str(member),
			append(kip848Bytes{}.i16(0).i32(5).i32(4).i8(0).carr(1), ordersID[:]...).carr(1).i32(0).tags().carr(0).tags()),
		clustertest.OffsetCommit(group, "orders", 0, 2, 0, "", clustertest.T0),
	}
	v := loadKIP848Groups(t, recs, cluster.SchemaDecoder{})
	if len(v.Groups) != 1 || len(v.Skipped) != 0 || len(v.Findings) != 0 {
		t.Fatalf("groups %+v skipped %v findings %v", v.Groups, v.Skipped, v.Findings)
	}
	g := v.Groups[0]
	if g.Group != group || g.Type != "consumer" || g.State != "Stable" || g.Generation != 5 || g.AssignmentEpoch != 5 || g.MetadataOffset != 0 || len(g.Members) != 1 {
		t.Fatalf("group %+v", g)
	}
	m := g.Members[0]
	if m.MemberID != member || m.ClientID != "consumer-1" || m.ClientHost != "/10.0.0.9" || m.RebalanceTimeoutMs != 300000 ||
		!slices.Equal(m.Subscribed, []string{"orders"}) || m.MemberEpoch != 5 || m.State != "Stable" || partitionsOf(m.Assignment) != "orders:0" {
		t.Errorf("member %+v", m)
	}
	if len(g.Offsets) != 1 || g.Offsets[0].Offset != 2 || g.Offsets[0].Lag != 1 {
		t.Errorf("offsets %+v", g.Offsets)
	}
}

// ordersID is the topic id of the data partition orders-0 the KIP-848
// groups' assignments name.
var ordersID = [16]byte{0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a}

// loadKIP848Groups writes recs as __consumer_offsets-0 beside orders-0 (3
// records) in a fresh log directory and loads its groups through dec.
func loadKIP848Groups(t *testing.T, recs []clustertest.KV, dec cluster.Decoder) *cluster.GroupsView {
	t.Helper()
	dir := t.TempDir()
	if _, err := clustertest.WritePartition(dir, cluster.ConsumerOffsetsTopic, 0, nil, clustertest.Batch(0, clustertest.T0, recs...)); err != nil {
		t.Fatal(err)
	}
	if _, err := clustertest.WritePartition(dir, "orders", 0, &ordersID, clustertest.DataBatch(0, clustertest.T0, 3)); err != nil {
		t.Fatal(err)
	}
	return mustLoad(t, []string{dir}, func(inv *cluster.Inventory) (*cluster.GroupsView, error) {
		return cluster.LoadGroups(inv, dec, cluster.GroupsOptions{PSM: psmDefaults()})
	})
}
