package cluster_test

// kmsgDecoder serves cluster.Decoder with franz-go's kmsg types
// (OffsetCommitKey/Value, GroupMetadataKey/Value, TxnMetadataKey/Value,
// ConsumerMemberAssignment): an implementation independent of kseg's
// decode/schema, so that the views built with each can be compared. kmsg
// has no KIP-848 record types; it returns those as skipped.

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/psm/cluster"
)

type kmsgDecoder struct{}

var _ cluster.Decoder = kmsgDecoder{}

// kip848 names the KIP-848 and share-group record types by key version
// (GroupCoordinatorRecordSerde / CoordinatorRecordType).
var kip848 = map[int16]string{
	3: "ConsumerGroupMetadata", 4: "ConsumerGroupPartitionMetadata", 5: "ConsumerGroupMemberMetadata",
	6: "ConsumerGroupTargetAssignmentMetadata", 7: "ConsumerGroupTargetAssignmentMember", 8: "ConsumerGroupCurrentMemberAssignment",
	9: "ShareGroupPartitionMetadata", 10: "ShareGroupMemberMetadata", 11: "ShareGroupMetadata", 12: "ShareGroupTargetAssignmentMetadata",
	13: "ShareGroupTargetAssignmentMember", 14: "ShareGroupCurrentMemberAssignment", 15: "ShareGroupStatePartitionMetadata",
	16: "ConsumerGroupRegularExpression",
}

// ConsumerOffsets decodes a __consumer_offsets record.
func (kmsgDecoder) ConsumerOffsets(key, value []byte) (cluster.GroupRecord, error) {
	if len(key) < 2 {
		return cluster.GroupRecord{}, fmt.Errorf("key of %d bytes has no version", len(key))
	}
	ver := int16(binary.BigEndian.Uint16(key))
	r := cluster.GroupRecord{KeyVersion: ver, Tombstone: value == nil}
	switch {
	case ver == 0 || ver == 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return r, fmt.Errorf("OffsetCommitKey: %w", err)
		}
		r.Kind, r.Group, r.Topic, r.Partition = cluster.GroupRecordOffsetCommit, k.Group, k.Topic, k.Partition
		if value == nil {
			return r, nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return r, fmt.Errorf("OffsetCommitValue (group %q, %s-%d): %w", k.Group, k.Topic, k.Partition, err)
		}
		ov := &cluster.OffsetCommitValue{Version: v.Version, Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: -1}
		if v.Version >= 3 {
			ov.LeaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 {
			ov.ExpireTimestamp = v.ExpireTimestamp
		}
		r.Offset = ov
	case ver == 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return r, fmt.Errorf("GroupMetadataKey: %w", err)
		}
		r.Kind, r.Group = cluster.GroupRecordGroupMetadata, k.Group
		if value == nil {
			return r, nil
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(value); err != nil {
			return r, fmt.Errorf("GroupMetadataValue (group %q): %w", k.Group, err)
		}
		c := &cluster.ClassicGroupValue{Version: v.Version, ProtocolType: v.ProtocolType, Generation: v.Generation, CurrentStateTimestamp: -1}
		if v.Protocol != nil {
			c.Protocol = *v.Protocol
		}
		if v.Leader != nil {
			c.Leader = *v.Leader
		}
		if v.Version >= 2 {
			c.CurrentStateTimestamp = v.CurrentStateTimestamp
		}
		for _, m := range v.Members {
			cm := cluster.ClassicMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				RebalanceTimeout: m.RebalanceTimeoutMillis, SessionTimeout: m.SessionTimeoutMillis}
			if m.InstanceID != nil {
				cm.GroupInstanceID = *m.InstanceID
			}
			if v.ProtocolType == "consumer" && len(m.Assignment) > 0 {
				// ConsumerProtocolAssignment, the consumer protocol's
				// embedded schema.
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(m.Assignment); err == nil {
					for _, t := range a.Topics {
						cm.Assignment = append(cm.Assignment, cluster.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
					}
				}
			}
			c.Members = append(c.Members, cm)
		}
		r.Classic = c
	default:
		r.Kind = cluster.GroupRecordUnknown
		if name, ok := kip848[ver]; ok {
			r.Kind, r.SkippedType = cluster.GroupRecordSkipped, name+" (no KIP-848 decoder)"
		}
	}
	return r, nil
}

// TransactionState decodes a __transaction_state record.
func (kmsgDecoder) TransactionState(key, value []byte) (cluster.TxnRecord, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return cluster.TxnRecord{}, fmt.Errorf("TransactionLogKey: %w", err)
	}
	r := cluster.TxnRecord{TransactionalID: k.TransactionalID, Tombstone: value == nil}
	if value == nil {
		return r, nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return r, fmt.Errorf("TransactionLogValue (transactional id %q): %w", k.TransactionalID, err)
	}
	tv := &cluster.TxnMetadataValue{Version: v.Version, ProducerID: v.ProducerID, PreviousProducerID: -1, NextProducerID: -1,
		ProducerEpoch: v.ProducerEpoch, TimeoutMs: v.TimeoutMillis, State: cluster.TxnState(v.State),
		LastUpdateTimestamp: v.LastUpdateTimestamp, StartTimestamp: v.StartTimestamp}
	if v.Version >= 1 {
		tv.PreviousProducerID, tv.NextProducerID = v.PreviousProducerID, v.NextProducerID
	}
	for _, t := range v.Topics {
		tv.Partitions = append(tv.Partitions, cluster.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
	}
	r.Value = tv
	return r, nil
}

// The views built with kseg's schema decoder and with kmsg agree on every
// real log directory holding __consumer_offsets and on the bundled ones.
func TestDecodersAgree(t *testing.T) {
	dirs := []string{filepath.Join("..", "..", "testdata", "logdirs", "broker-1"), filepath.Join("..", "..", "testdata", "logdirs", "healthy")}
	for _, d := range [][]string{{"iechenyb__data", "kafka-logs"}, {"DonaldY__kafka-2.7.1", "kafka-logs"}, {"sagarrao1__kafka", "MultiNode", "kafka-logs-2"},
		{"rjmfernandes__flink-on-prem", "data"}, {"smartassets__backend-server", "kafka", "data"}, {"mscaldas2012__kafka-connect-spooldir", "kafka-data"},
		{"checongbinh20011990__mirco_book_shop", "data"}, {"ronem123__rupia-transaction-service", "kafka-logs"}, {"William0423__kafka", "kafka-logs"},
		{"yuanliubei__kafka-source-code", "kafka-logs"}} {
		dirs = append(dirs, realDir(t, d...))
	}
	for _, dir := range dirs {
		inv, err := cluster.OpenInventory([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		o := cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}
		a, b := byBoth(t, func(dec cluster.Decoder) (*cluster.GroupsView, error) { return cluster.LoadGroups(inv, dec, o) })
		if len(a.Groups) == 0 && !strings.Contains(dir, "DonaldY") && !strings.Contains(dir, "yuanliubei") { // those two end in tombstones
			t.Errorf("%s: no group", dir)
		}
		if !reflect.DeepEqual(a.Groups, b.Groups) || len(a.Findings) != len(b.Findings) {
			t.Errorf("%s: the decoders disagree:\nschema %+v\nkmsg   %+v", dir, a.Groups, b.Groups)
		}
		to := cluster.DefaultTxnsOptions()
		to.NumPartitions = 1
		ta, tb := byBoth(t, func(dec cluster.Decoder) (*cluster.TxnsView, error) { return cluster.LoadTxns(inv, dec, to) })
		if !reflect.DeepEqual(ta.Transactions, tb.Transactions) || !reflect.DeepEqual(ta.Open, tb.Open) {
			t.Errorf("%s: the decoders disagree on transactions:\nschema %+v\nkmsg   %+v", dir, ta.Transactions, tb.Transactions)
		}
	}
}

// byBoth is what load makes of the log directories with kseg's schema
// decoder and with kmsg's.
func byBoth[V any](t *testing.T, load func(cluster.Decoder) (V, error)) (schema, kmsg V) {
	t.Helper()
	var err error
	if schema, err = load(cluster.SchemaDecoder{}); err != nil {
		t.Fatal(err)
	}
	if kmsg, err = load(kmsgDecoder{}); err != nil {
		t.Fatal(err)
	}
	return schema, kmsg
}
