package clustertest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// The bundled example directories, under <out>: node 1 of a two-broker
// KRaft cluster (node 2's disk is not included; the metadata assigns it
// the __consumer_offsets partitions other than 5 and 9).
//
//	broker-1/  findings: group "audit" committed below orders-0's log start
//	           (retention deleted offsets 0..4); transactional id "pay-1"
//	           aborted by its coordinator while payments-0 still holds its
//	           transaction open (a hanging transaction); topic "events"
//	           deleted and recreated with a new id while events-0 on disk is
//	           the old one (an orphan, and the new replica missing); orders-0
//	           written in leader epoch 2 while the metadata says 0
//	healthy/   the same cluster with nothing wrong
//
// Both hold one __transaction_state partition (transaction.state.log.num.partitions=1,
// as docker-compose clusters often set) and the __consumer_offsets
// partitions their groups hash to among 50.
var LogDirNames = []string{"broker-1", "healthy"}

// Producer ids and the numbers the docs and tests state.
const (
	PayOnePID = 4000 // "pay-1": open in payments-0, aborted by the coordinator
	PayTwoPID = 4001 // "pay-2": committed everywhere
	// OrdersLogStart is broker-1's orders-0 log start offset.
	OrdersLogStart = 5
	// AuditCommitted is group "audit"'s committed offset in broker-1.
	AuditCommitted = 2
	// BillingCommitted is group "billing"'s committed offset.
	BillingCommitted = 12
)

func topicID(n byte) *[16]byte {
	var id [16]byte
	for i := range id {
		id[i] = n
	}
	return &id
}

// Generate writes every directory of LogDirNames under out (replacing it).
func Generate(out string) error {
	for _, name := range LogDirNames {
		dir := filepath.Join(out, name)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := generate(dir, name == "broker-1"); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func generate(dir string, broken bool) error {
	if err := WriteMetaProperties(dir, 1, "kseg-example-cluster-0"); err != nil {
		return err
	}
	for _, write := range []func(string, bool) error{writeOrders, writePayments, writeConsumerOffsets, writeTransactionState} {
		if err := write(dir, broken); err != nil {
			return err
		}
	}
	if broken {
		// events-0 of the first incarnation of "events".
		if _, err := WritePartition(dir, "events", 0, topicID(EventsOldID), DataBatch(0, T0, 3)); err != nil {
			return err
		}
	}
	if err := writeMetadata(dir, broken); err != nil {
		return err
	}
	return WriteCheckpoints(dir)
}

// writeOrders writes orders-0: 15 records; on broker-1 retention deleted
// the first segment (offsets 0..4), and the last batch was written by a
// leader in epoch 2, which the metadata log never recorded.
func writeOrders(dir string, broken bool) error {
	var orders [][]byte
	for base := int64(0); base < 15; base += 5 {
		if broken && base < OrdersLogStart {
			continue
		}
		b := DataBatch(base, T0+base*1000, 5)
		if broken && base == 10 {
			b = withLeaderEpoch(b, OrdersDiskEpoch)
		}
		orders = append(orders, b)
	}
	_, err := WritePartition(dir, "orders", 0, topicID(0x0a), orders...)
	return err
}

// writePayments writes payments-0: pay-2 commits; on broker-1 pay-1's
// transaction is open.
func writePayments(dir string, broken bool) error {
	t := T0
	var pay [][]byte
	if broken {
		pay = append(pay, TxnBatch(0, t+10000, PayOnePID, 0, 0, 2))
	} else {
		pay = append(pay, DataBatch(0, t+10000, 2))
	}
	pay = append(pay, TxnBatch(2, t+11000, PayTwoPID, 0, 0, 2), Marker(4, t+12000, PayTwoPID, 0, true, 0))
	_, err := WritePartition(dir, "payments", 0, topicID(0x0b), pay...)
	return err
}

// writeConsumerOffsets writes the __consumer_offsets partitions: "billing"
// is a stable classic group; on broker-1 "audit" committed offset 2 of
// orders-0, which retention deleted. "gone" committed and was deleted
// (tombstones) on both.
func writeConsumerOffsets(dir string, broken bool) error {
	t := T0
	byPart := map[int32][]KV{}
	add := func(group string, kvs ...KV) {
		p := cluster.CoordinatorPartition(group, cluster.DefaultOffsetsPartitions)
		byPart[p] = append(byPart[p], kvs...)
	}
	add("billing",
		GroupMetadata("billing", "range", 3, "billing-1-5f0c", t+20000, []Member{{ID: "billing-1-5f0c", ClientID: "billing-1", Host: "/10.0.0.7", Assigned: map[string][]int32{"orders": {0}}}}),
		OffsetCommit("billing", "orders", 0, BillingCommitted, 0, "", t+21000))
	add("gone", OffsetCommit("gone", "orders", 0, 3, 0, "", t+22000), OffsetTombstone("gone", "orders", 0))
	if broken {
		add("audit", OffsetCommit("audit", "orders", 0, AuditCommitted, 0, "nightly", t+3000))
	}
	for p, kvs := range byPart {
		if _, err := WritePartition(dir, cluster.ConsumerOffsetsTopic, p, topicID(0x01), kvBatches(kvs, t+30000)...); err != nil {
			return err
		}
	}
	return nil
}

// writeTransactionState writes __transaction_state-0: the coordinator's
// records. pay-2 went Ongoing → PrepareCommit → CompleteCommit. On
// broker-1 pay-1 went Ongoing → PrepareAbort → CompleteAbort, but its
// ABORT marker never reached payments-0.
func writeTransactionState(dir string, broken bool) error {
	t := T0
	pays := map[string][]int32{"payments": {0}}
	var txn []KV
	if broken {
		txn = append(txn,
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(cluster.TxnOngoing), 60000, pays, t+10000, t+10000),
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(cluster.TxnPrepareAbort), 60000, pays, t+10000, t+70000),
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(cluster.TxnCompleteAbort), 60000, nil, t+10000, t+70001))
	}
	txn = append(txn,
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(cluster.TxnOngoing), 60000, pays, t+11000, t+11000),
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(cluster.TxnPrepareCommit), 60000, pays, t+11000, t+11900),
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(cluster.TxnCompleteCommit), 60000, nil, t+11000, t+12001))
	_, err := WritePartition(dir, cluster.TransactionStateTopic, 0, topicID(0x02), kvBatches(txn, t+40000)...)
	return err
}

// kvBatches are one batch per record, at offsets from 0, a second apart
// from ts on.
func kvBatches(kvs []KV, ts int64) [][]byte {
	var batches [][]byte
	for i, kv := range kvs {
		batches = append(batches, Batch(int64(i), ts+int64(i)*1000, kv))
	}
	return batches
}

// Topic ids (partition.metadata and the metadata log) and the offsets of
// the metadata log the docs and tests name.
const (
	EventsOldID = 0x0e // "events" before it was deleted; events-0 on broker-1's disk
	EventsNewID = 0x0f // "events" recreated
	// OrdersDiskEpoch is the leader epoch of broker-1's last orders-0 batch.
	OrdersDiskEpoch = 2
	// MetadataSnapshotAt is the end offset of the KRaft snapshot.
	MetadataSnapshotAt = 60
	// EventsRemovedAt is the offset of RemoveTopicRecord for the first
	// "events" on broker-1: the image before it still has the old id.
	EventsRemovedAt = 66
)

func withLeaderEpoch(raw []byte, epoch int32) []byte {
	b := append([]byte(nil), raw...)
	// partitionLeaderEpoch is at byte 12, outside the CRC-covered part.
	b[12], b[13], b[14], b[15] = byte(epoch>>24), byte(epoch>>16), byte(epoch>>8), byte(epoch)
	return b
}

func uuid(n byte) schema.UUID { return schema.UUID(*topicID(n)) }

func topicRecords(name string, id byte, replicas func(p int32) []int32, n int32) [][]byte {
	recs := [][]byte{Meta("TopicRecord", map[string]any{"Name": name, "TopicId": uuid(id)})}
	for p := int32(0); p < n; p++ {
		r := replicas(p)
		recs = append(recs, Meta("PartitionRecord", map[string]any{"PartitionId": p, "TopicId": uuid(id), "Replicas": Ints(r...),
			"Isr": Ints(r...), "RemovingReplicas": Ints(), "AddingReplicas": Ints(), "Leader": r[0], "LeaderEpoch": int32(0), "PartitionEpoch": int32(0)}))
	}
	return recs
}

func node1(int32) []int32 { return []int32{1} }

// writeMetadata writes node 1's __cluster_metadata-0: the records of a
// two-broker cluster's controller, a snapshot at MetadataSnapshotAt, and
// on broker-1 the deletion and recreation of "events".
func writeMetadata(dir string, broken bool) error {
	t := T0
	broker := func(id int32, port int32) []byte {
		return Meta("RegisterBrokerRecord", map[string]any{"BrokerId": id, "IncarnationId": uuid(byte(0x20 + id)), "BrokerEpoch": int64(10 + id),
			"EndPoints": []map[string]any{{"Name": "PLAINTEXT", "Host": "localhost", "Port": uint16(port), "SecurityProtocol": int16(0)}},
			"Features":  []map[string]any{{"Name": "metadata.version", "MinSupportedVersion": int16(1), "MaxSupportedVersion": int16(19)}},
			"Rack":      nil, "Fenced": false})
	}
	var recs [][]byte
	recs = append(recs,
		Meta("FeatureLevelRecord", map[string]any{"Name": "metadata.version", "FeatureLevel": int16(19)}),
		broker(1, 9092), broker(2, 9094))
	// __consumer_offsets: 5 and 9 (the groups' partitions) on node 1, the
	// rest on node 2.
	recs = append(recs, topicRecords("__consumer_offsets", 0x01, func(p int32) []int32 {
		if p == 5 || p == 9 {
			return []int32{1}
		}
		return []int32{2}
	}, 50)...)
	recs = append(recs, topicRecords("__transaction_state", 0x02, node1, 1)...)
	recs = append(recs, topicRecords("orders", 0x0a, node1, 1)...)
	recs = append(recs, topicRecords("payments", 0x0b, node1, 1)...)
	if len(recs) != MetadataSnapshotAt {
		return fmt.Errorf("%d records before the snapshot, want %d", len(recs), MetadataSnapshotAt)
	}
	recs = append(recs,
		Meta("ConfigRecord", map[string]any{"ResourceType": int8(2), "ResourceName": "orders", "Name": "retention.ms", "Value": "604800000"}),
		Meta("ProducerIdsRecord", map[string]any{"BrokerId": int32(1), "BrokerEpoch": int64(11), "NextProducerId": int64(5000)}),
		Meta("AccessControlEntryRecord", map[string]any{"Id": uuid(0x30), "ResourceType": int8(2), "ResourceName": "orders", "PatternType": int8(3),
			"Principal": "User:billing", "Host": "*", "Operation": int8(3), "PermissionType": int8(3)}),
		Meta("ClientQuotaRecord", map[string]any{"Entity": []map[string]any{{"EntityType": "user", "EntityName": "billing"}}, "Key": "consumer_byte_rate", "Value": float64(1048576)}))
	if broken {
		// "events" is created, deleted at EventsRemovedAt and created
		// again with a new id; broker-1 was offline meanwhile, so its
		// disk still holds the first one.
		recs = append(recs, topicRecords("events", EventsOldID, node1, 1)...)
		if len(recs) != EventsRemovedAt {
			return fmt.Errorf("RemoveTopicRecord at %d, want %d", len(recs), EventsRemovedAt)
		}
		recs = append(recs, Meta("RemoveTopicRecord", map[string]any{"TopicId": uuid(EventsOldID)}))
		recs = append(recs, topicRecords("events", EventsNewID, node1, 1)...)
	}
	// Ten records a batch, in leader epoch 1, as the active controller
	// appends them.
	var batches [][]byte
	for i := 0; i < len(recs); i += 10 {
		batches = append(batches, MetaBatch(int64(i), t+int64(i), 1, recs[i:min(i+10, len(recs))]...))
	}
	_, err := WriteMetadata(dir, t+MetadataSnapshotAt, 1, MetadataSnapshotAt, batches...)
	return err
}

// WriteCheckpoints writes the log directory's recovery-point,
// replication (high watermark) and log-start checkpoints for every
// partition, as a broker that shut down cleanly leaves them.
func WriteCheckpoints(dir string) error {
	ld, err := segment.OpenLogDir(dir)
	if err != nil {
		return err
	}
	var ends, starts []segment.OffsetCheckpointEntry
	for _, p := range ld.Partitions {
		pd, err := segment.OpenPartitionDir(p)
		if err != nil {
			return err
		}
		var start, end int64 = -1, 0
		for _, s := range pd.Segments {
			if start < 0 {
				start = s.BaseOffset
			}
			lf, err := segment.OpenLog(s.Log)
			if err != nil {
				return err
			}
			sc := lf.Scanner(segment.ScanOptions{})
			for sc.Next() {
				end = sc.Batch().NextOffset()
			}
			lf.Close()
		}
		ends = append(ends, segment.OffsetCheckpointEntry{Topic: pd.Topic, Partition: pd.Partition, Offset: end})
		starts = append(starts, segment.OffsetCheckpointEntry{Topic: pd.Topic, Partition: pd.Partition, Offset: max(start, 0)})
	}
	for name, es := range map[string][]segment.OffsetCheckpointEntry{
		"recovery-point-offset-checkpoint": ends, "replication-offset-checkpoint": ends, "log-start-offset-checkpoint": starts,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), segment.EncodeOffsetCheckpoint(es), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// PartitionsLogDir writes a log directory of n data partitions bench-0 …
// bench-(n-1) of about size bytes each (segtest.LogDir: segments,
// indexes, producer snapshots, leader-epoch-checkpoint,
// partition.metadata), one __consumer_offsets partition in which group
// "bench-readers" has committed every data partition (half-way through
// its log), one __transaction_state partition holding the data
// partitions' transactional ids (segtest's producers 5000..5007, their
// transactions committed), meta.properties, and the recovery-point,
// replication and log-start checkpoints with a line for every partition:
// what a broker hosting n partitions keeps, for the benchmarks and tests
// of how the log-directory commands scale with n.
func PartitionsLogDir(out string, n int, size int64) error {
	if err := segtest.LogDir(out, n, size, segtest.LargeOptions{Seed: 1}); err != nil {
		return err
	}
	if err := WriteMetaProperties(out, 1, "kseg-bench-cluster-000"); err != nil {
		return err
	}
	if err := WriteCheckpoints(out); err != nil {
		return err
	}
	ends, err := segment.ReadOffsetCheckpoint(filepath.Join(out, segment.ReplicationOffsetCheckpointName))
	if err != nil {
		return err
	}
	var commits []KV
	for _, e := range ends {
		commits = append(commits, OffsetCommit("bench-readers", e.Topic, e.Partition, e.Offset/2, 5, "", T0))
	}
	var co [][]byte
	for i := 0; i < len(commits); i += 100 {
		co = append(co, Batch(int64(i), T0, commits[i:min(i+100, len(commits))]...))
	}
	if _, err := WritePartition(out, cluster.ConsumerOffsetsTopic, 0, nil, co...); err != nil {
		return err
	}
	var ts []KV
	for i := range 8 {
		ts = append(ts, Txn(fmt.Sprintf("bench-txn-%d", i), 5000+int64(i), int16(i%2), kmsg.TransactionStateCompleteCommit, 60000, nil, T0, T0))
	}
	if _, err := WritePartition(out, cluster.TransactionStateTopic, 0, nil, Batch(0, T0, ts...)); err != nil {
		return err
	}
	// Again, now with the internal partitions' lines.
	return WriteCheckpoints(out)
}
