package broker_test

import (
	"testing"

	"github.com/kseg/kseg/psm/broker"
	"github.com/kseg/kseg/psm/broker/brokertest"
	"github.com/kseg/kseg/segment"
)

// scriptDecoder decodes a record whose key is one byte i as script[i]: the
// state code is exercised on KIP-848 records without a decoder of their
// schemas (kmsg has none).
type scriptDecoder struct{ script []broker.GroupRecord }

func (d scriptDecoder) ConsumerOffsets(key, value []byte) (broker.GroupRecord, error) {
	r := d.script[key[0]]
	r.Tombstone = value == nil
	return r, nil
}

func (scriptDecoder) TransactionState(key, value []byte) (broker.TxnRecord, error) {
	return broker.TxnRecord{}, nil
}

// A KIP-848 consumer group replayed as GroupCoordinatorShard does: epoch,
// target assignment epoch, members and their current assignments (topic
// ids resolved through partition.metadata), a member removed by a
// tombstone; the state follows ConsumerGroup.maybeUpdateGroupState.
func TestConsumerGroupKIP848(t *testing.T) {
	var ordersID [16]byte
	for i := range ordersID {
		ordersID[i] = 0x0a
	}
	member := func(id string) broker.GroupRecord {
		return broker.GroupRecord{Kind: broker.GroupRecordConsumerGroupMember, Group: "g", MemberID: id,
			Member: &broker.ConsumerGroupMemberValue{ClientID: "client-" + id, ClientHost: "/h", SubscribedTopicNames: []string{"orders"}, RebalanceTimeoutMs: 1000}}
	}
	current := func(id string, epoch int32, p int32) broker.GroupRecord {
		return broker.GroupRecord{Kind: broker.GroupRecordConsumerGroupCurrentMemberAssignment, Group: "g", MemberID: id,
			Current: &broker.CurrentMemberAssignmentValue{MemberEpoch: epoch, Assigned: []broker.TopicIDPartitions{{TopicID: ordersID, Partitions: []int32{p}}}}}
	}
	script := []broker.GroupRecord{
		{Kind: broker.GroupRecordConsumerGroupMetadata, Group: "g", ConsumerGroupEpoch: 4},
		member("a"), member("b"), member("c"),
		{Kind: broker.GroupRecordConsumerGroupTargetAssignmentMetadata, Group: "g", AssignmentEpoch: 4},
		current("a", 4, 0), current("b", 3, 1), current("c", 4, 2),
		member("c"), // index 8: written as a tombstone below
		{Kind: broker.GroupRecordSkipped, Group: "g", SkippedType: "ConsumerGroupPartitionMetadata"},
	}
	kv := func(i byte, tombstone bool) brokertest.KV {
		if tombstone {
			return brokertest.KV{Key: []byte{i}}
		}
		return brokertest.KV{Key: []byte{i}, Value: []byte{1}}
	}
	cases := []struct {
		name  string
		recs  []brokertest.KV
		state string
		n     int
	}{
		{"reconciling", []brokertest.KV{kv(0, false), kv(1, false), kv(2, false), kv(3, false), kv(4, false), kv(5, false), kv(6, false), kv(7, false), kv(8, true), kv(9, false)}, "Reconciling", 2},
		{"stable", []brokertest.KV{kv(0, false), kv(1, false), kv(4, false), kv(5, false)}, "Stable", 1},
		{"assigning", []brokertest.KV{kv(0, false), kv(1, false), kv(5, false)}, "Assigning", 1},
		{"empty", []brokertest.KV{kv(0, false), kv(4, false)}, "Empty", 0},
		{"deleted", []brokertest.KV{kv(0, false), kv(4, false), kv(0, true)}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := brokertest.WritePartition(dir, broker.ConsumerOffsetsTopic, 0, nil, brokertest.Batch(0, brokertest.T0, c.recs...)); err != nil {
				t.Fatal(err)
			}
			if _, err := brokertest.WritePartition(dir, "orders", 0, &ordersID, brokertest.DataBatch(0, brokertest.T0, 3)); err != nil {
				t.Fatal(err)
			}
			inv, err := broker.OpenInventory([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			v, err := broker.LoadGroups(inv, scriptDecoder{script}, broker.GroupsOptions{PSM: psmDefaults()})
			if err != nil {
				t.Fatal(err)
			}
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
