package brokertest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/psm/broker"
	"github.com/kseg/kseg/segment"
)

// The bundled example directories, under <out>:
//
//	broker-1/  findings: group "audit" committed below orders-0's log start
//	           (retention deleted offsets 0..4), and transactional id
//	           "pay-1" aborted by its coordinator while payments-0 still
//	           holds its transaction open (a hanging transaction)
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
	t := T0
	// orders-0: 15 records; on broker-1 retention deleted the first
	// segment (offsets 0..4).
	var orders [][]byte
	for base := int64(0); base < 15; base += 5 {
		if broken && base < OrdersLogStart {
			continue
		}
		orders = append(orders, DataBatch(base, t+base*1000, 5))
	}
	if _, err := WritePartition(dir, "orders", 0, topicID(0x0a), orders...); err != nil {
		return err
	}
	// payments-0: pay-2 commits; on broker-1 pay-1's transaction is open.
	var pay [][]byte
	if broken {
		pay = append(pay, TxnBatch(0, t+10000, PayOnePID, 0, 0, 2))
	} else {
		pay = append(pay, DataBatch(0, t+10000, 2))
	}
	pay = append(pay, TxnBatch(2, t+11000, PayTwoPID, 0, 0, 2), Marker(4, t+12000, PayTwoPID, 0, true, 0))
	if _, err := WritePartition(dir, "payments", 0, topicID(0x0b), pay...); err != nil {
		return err
	}

	// __consumer_offsets: "billing" is a stable classic group; on broker-1
	// "audit" committed offset 2 of orders-0, which retention deleted.
	// "gone" committed and was deleted (tombstones) on both.
	byPart := map[int32][]KV{}
	add := func(group string, kvs ...KV) {
		p := broker.CoordinatorPartition(group, broker.DefaultOffsetsPartitions)
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
		var batches [][]byte
		for i, kv := range kvs {
			batches = append(batches, Batch(int64(i), t+30000+int64(i)*1000, kv))
		}
		if _, err := WritePartition(dir, broker.ConsumerOffsetsTopic, p, topicID(0x01), batches...); err != nil {
			return err
		}
	}

	// __transaction_state-0: the coordinator's records. pay-2 went
	// Ongoing → PrepareCommit → CompleteCommit. On broker-1 pay-1 went
	// Ongoing → PrepareAbort → CompleteAbort, but its ABORT marker never
	// reached payments-0.
	pays := map[string][]int32{"payments": {0}}
	var txn []KV
	if broken {
		txn = append(txn,
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(broker.TxnOngoing), 60000, pays, t+10000, t+10000),
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(broker.TxnPrepareAbort), 60000, pays, t+10000, t+70000),
			Txn("pay-1", PayOnePID, 0, kmsg.TransactionState(broker.TxnCompleteAbort), 60000, nil, t+10000, t+70001))
	}
	txn = append(txn,
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(broker.TxnOngoing), 60000, pays, t+11000, t+11000),
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(broker.TxnPrepareCommit), 60000, pays, t+11000, t+11900),
		Txn("pay-2", PayTwoPID, 0, kmsg.TransactionState(broker.TxnCompleteCommit), 60000, nil, t+11000, t+12001))
	var batches [][]byte
	for i, kv := range txn {
		batches = append(batches, Batch(int64(i), t+40000+int64(i)*1000, kv))
	}
	if _, err := WritePartition(dir, broker.TransactionStateTopic, 0, topicID(0x02), batches...); err != nil {
		return err
	}
	return writeCheckpoints(dir)
}

// writeCheckpoints writes the log directory's recovery-point,
// replication (high watermark) and log-start checkpoints for every
// partition, as a broker that shut down cleanly leaves them.
func writeCheckpoints(dir string) error {
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
