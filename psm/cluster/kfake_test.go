package cluster_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/kafkatest"
)

// Log directories whose data partitions real kgo clients produced through
// kfake (idempotent records, committed and open transactions, a
// DeleteRecords that moved the log start), next to coordinator partitions
// whose records kmsg encodes as the coordinators write them. kfake keeps
// its groups and transactions in memory, so the internal topics cannot be
// fetched from it.

// writeCoordinator writes the records of an internal-topic partition, one
// batch each, as a coordinator appends them.
func writeCoordinator(t *testing.T, dir, topic string, partition int32, ts int64, kvs ...clustertest.KV) {
	t.Helper()
	var batches [][]byte
	for i, kv := range kvs {
		batches = append(batches, clustertest.Batch(int64(i), ts+int64(i), kv))
	}
	if _, err := clustertest.WritePartition(dir, topic, partition, nil, batches...); err != nil {
		t.Fatal(err)
	}
}

func firstBatchOffset(t *testing.T, raws [][]byte, pid int64) int64 {
	t.Helper()
	for _, r := range raws {
		b, err := decode.ParseBatch(r)
		if err != nil {
			t.Fatal(err)
		}
		if b.ProducerID == pid && !b.IsControl() {
			return b.BaseOffset
		}
	}
	t.Fatalf("no batch of producer %d", pid)
	return -1
}

// txnScenario: "tx-ok" commits and "tx-hang" leaves its transaction open
// in payments-0; the coordinator record for "tx-hang" is given by state.
func txnScenario(t *testing.T, hangState cluster.TxnState, hangParts map[string][]int32, withCoordinator bool) (dir string, hangPID, first int64) {
	c := kafkatest.NewCluster(t)
	c.CreateTopic(t, "payments", 1)
	c.Transact(t, "tx-ok", "payments", 0, 2, kafkatest.Commit)
	c.Transact(t, "tx-hang", "payments", 0, 3, kafkatest.Open)
	raws := c.RawBatches(t, "payments", 0)
	dir = t.TempDir()
	kafkatest.WritePartition(t, dir, "payments", 0, raws)
	hangPID = kafkatest.TxnProducerID("tx-hang")
	first = firstBatchOffset(t, raws, hangPID)
	if withCoordinator {
		ts := clustertest.T0
		writeCoordinator(t, dir, cluster.TransactionStateTopic, 0, ts,
			clustertest.Txn("tx-ok", kafkatest.TxnProducerID("tx-ok"), 1, kmsg.TransactionState(cluster.TxnCompleteCommit), 60000, nil, ts, ts),
			clustertest.Txn("tx-hang", hangPID, 0, kmsg.TransactionState(hangState), 60000, hangParts, ts, ts))
	}
	return dir, hangPID, first
}

func loadTxns(t *testing.T, o cluster.TxnsOptions, dirs ...string) *cluster.TxnsView {
	t.Helper()
	return mustLoad(t, dirs, func(inv *cluster.Inventory) (*cluster.TxnsView, error) {
		return cluster.LoadTxns(inv, cluster.SchemaDecoder{}, o)
	})
}

// kseg txns is a running cluster's view (docs/txns.md): .kafka_cleanshutdown
// in the log directory, with no producer snapshot in payments-0, would make
// a restarting broker skip the producer-state rebuild
// (UnifiedLog.rebuildProducerState) and forget the transaction — what
// replay-psm reports as clean-shutdown-no-snapshot — but the view still
// shows the transaction the log holds, hanging, and its LSO pin.
func TestTxnsIgnoreCleanShutdownMarker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	dir, pid, first := txnScenario(t, cluster.TxnCompleteAbort, nil, true)
	if err := os.WriteFile(filepath.Join(dir, segment.CleanShutdownName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pd, err := segment.OpenPartitionDir(filepath.Join(dir, "payments-0"))
	if err != nil {
		t.Fatal(err)
	}
	if !psm.SkipsRebuild(pd, true) {
		t.Fatal("payments-0 has a producer snapshot: the test needs none")
	}
	o := cluster.DefaultTxnsOptions()
	o.NumPartitions = 1
	v := loadTxns(t, o, dir)
	if len(v.Open) != 1 || v.Open[0].ProducerID != pid || v.Open[0].Verdict != cluster.VerdictHanging || !v.Open[0].PinsLSO || v.Open[0].LastStableOffset != first {
		t.Errorf("open %+v; want producer %d hanging from %d, pinning the LSO", v.Open, pid, first)
	}
}

// The coordinator aborted "tx-hang" (CompleteAbort, no partitions left)
// but payments-0 never got the ABORT marker: hanging, pinning the LSO at
// the transaction's first offset.
func TestTxnsHangingAfterCoordinatorAbort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	dir, pid, first := txnScenario(t, cluster.TxnCompleteAbort, nil, true)
	o := cluster.DefaultTxnsOptions()
	o.NumPartitions = 1
	v := loadTxns(t, o, dir)
	if len(v.Transactions) != 2 || v.Transactions[0].TransactionalID != "tx-hang" || v.Transactions[0].State != cluster.TxnCompleteAbort {
		t.Fatalf("transactions %+v", v.Transactions)
	}
	if len(v.Open) != 1 {
		t.Fatalf("open %+v", v.Open)
	}
	h := v.Open[0]
	if h.Verdict != cluster.VerdictHanging || h.ProducerID != pid || h.FirstOffset != first || h.TransactionalID != "tx-hang" ||
		h.Topic != "payments" || h.Partition != 0 || !h.PinsLSO || h.LastStableOffset != first || h.AgeMs < 0 {
		t.Errorf("open transaction %+v; want hanging, producer %d from %d", h, pid, first)
	}
	if want := "abort --topic payments --partition 0 --start-offset " + itoa(first); !strings.HasSuffix(h.AbortCommand(), want) {
		t.Errorf("abort command %q", h.AbortCommand())
	}
	if len(v.Findings) != 1 || v.Findings[0].Kind != finding.HangingTransaction || v.Findings[0].Severity() != finding.Error || len(v.Unanswerable) != 0 {
		t.Errorf("findings %+v unanswerable %v", v.Findings, v.Unanswerable)
	}
}

// The coordinator still lists payments-0 in an Ongoing transaction: it
// will write the marker; not hanging, no finding.
func TestTxnsOngoingIsNotHanging(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	dir, _, _ := txnScenario(t, cluster.TxnOngoing, map[string][]int32{"payments": {0}}, true)
	o := cluster.DefaultTxnsOptions()
	o.NumPartitions = 1
	v := loadTxns(t, o, dir)
	if len(v.Open) != 1 || v.Open[0].Verdict != cluster.VerdictOngoing || len(v.Findings) != 0 {
		t.Errorf("open %+v findings %+v", v.Open, v.Findings)
	}
}

// Without the coordinator's partitions the view says what it cannot
// answer; a transaction younger than transaction.max.timeout.ms is
// "unknown" (a warning, not a finding), an older one hanging by age.
func TestTxnsCoordinatorMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	dir, pid, first := txnScenario(t, 0, nil, false)
	o := cluster.DefaultTxnsOptions()
	v := loadTxns(t, o, dir)
	if len(v.Unanswerable) != 1 || !strings.Contains(v.Unanswerable[0], "no __transaction_state partition") {
		t.Errorf("unanswerable %v", v.Unanswerable)
	}
	if len(v.Open) != 1 || v.Open[0].Verdict != cluster.VerdictUnknown || finding.HasErrors(v.Findings) {
		t.Errorf("open %+v findings %+v", v.Open, v.Findings)
	}
	// An hour later, by the producer's own clock, it is hanging by age.
	o.Now = v.Open[0].LastTimestamp + 3600_000
	v = loadTxns(t, o, dir)
	if len(v.Open) != 1 || v.Open[0].Verdict != cluster.VerdictHanging || v.Open[0].ProducerID != pid || v.Open[0].FirstOffset != first || !finding.HasErrors(v.Findings) {
		t.Errorf("an hour later: open %+v findings %+v", v.Open, v.Findings)
	}
	// One of two coordinator partitions present: the other is named.
	writeCoordinator(t, dir, cluster.TransactionStateTopic, 0, clustertest.T0)
	o.NumPartitions, o.TransactionalIDs = 2, []string{"tx-hang"}
	v = loadTxns(t, o, dir)
	if len(v.MissingCoordinators) != 1 || v.MissingCoordinators[0] != 1 || len(v.Unanswerable) != 2 {
		t.Errorf("missing %v unanswerable %v", v.MissingCoordinators, v.Unanswerable)
	}
}

// orders-0 after DeleteRecords moved its log start to 4 (kfake's
// DeleteRecords; the records were produced by idempotent kgo producers):
// "lagging" committed 1 (below the start), "ahead" 100 (above the end,
// as after a failover to a replica with less), "fine" 5 (lag 1).
// "deleted" committed and was tombstoned; "txn-aborted" committed inside
// a transaction that was aborted, "txn-committed" inside one committed.
func TestGroupsOffsetsOutsideTheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	c := kafkatest.NewCluster(t)
	c.CreateTopic(t, "orders", 1)
	for range 3 {
		c.ProduceIdempotent(t, "orders", 0, 2)
	}
	if err := c.Fake.DeleteRecords("orders", 0, 4); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kafkatest.WritePartition(t, dir, "orders", 0, c.RawBatches(t, "orders", 0))

	ts := clustertest.T0
	commit := func(g string, off int64) clustertest.KV {
		return clustertest.OffsetCommit(g, "orders", 0, off, 0, "", ts)
	}
	batches := [][]byte{
		clustertest.Batch(0, ts, commit("lagging", 1), commit("ahead", 100), commit("fine", 5), commit("deleted", 3)),
		clustertest.Batch(4, ts, clustertest.OffsetTombstone("deleted", "orders", 0)),
		txnCommitBatch(5, 7000, commit("txn-aborted", 6)),
		clustertest.Marker(6, ts, 7000, 0, false, 0),
		txnCommitBatch(7, 7001, commit("txn-committed", 6)),
		clustertest.Marker(8, ts, 7001, 0, true, 0),
		clustertest.Batch(9, ts, clustertest.GroupMetadata("fine", "range", 7, "m1", ts,
			[]clustertest.Member{{ID: "m1", ClientID: "c1", Host: "/h", Assigned: map[string][]int32{"orders": {0}}}})),
	}
	if _, err := clustertest.WritePartition(dir, cluster.ConsumerOffsetsTopic, 0, nil, batches...); err != nil {
		t.Fatal(err)
	}
	v := loadGroups(t, cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}, dir)
	var names []string
	for _, g := range v.Groups {
		names = append(names, g.Group)
	}
	if strings.Join(names, ",") != "ahead,fine,lagging,txn-committed" {
		t.Fatalf("groups %v: want ahead, fine, lagging, txn-committed (deleted and txn-aborted gone)", names)
	}
	want := map[string]struct {
		lag  int64
		kind finding.Kind
	}{"lagging": {-1, finding.OffsetBelowLogStart}, "ahead": {-1, finding.OffsetAboveLogEnd}, "fine": {1, 0}, "txn-committed": {0, 0}}
	for _, g := range v.Groups {
		c := g.Offsets[0]
		if c.Log == nil || c.Log.LogStartOffset != 4 || c.Log.LogEndOffset != 6 || c.Lag != want[g.Group].lag {
			t.Errorf("%s: %+v log %+v", g.Group, c, c.Log)
		}
	}
	kinds := map[string]finding.Kind{}
	for _, f := range v.Findings {
		kinds[f.Subject] = f.Kind
		if f.Severity() != finding.Error {
			t.Errorf("finding %+v is not an error", f)
		}
	}
	for g, w := range want {
		if kinds[g] != w.kind {
			t.Errorf("%s: finding %q, want %q", g, kinds[g], w.kind)
		}
	}
	fine := findGroup(v, "fine")
	if fine.State != "Stable" || fine.Protocol != "range" || fine.Generation != 7 || len(fine.Members) != 1 || partitionsOf(fine.Members[0].Assignment) != "orders:0" {
		t.Errorf("fine: %+v", fine)
	}
}

func txnCommitBatch(offset, pid int64, kv clustertest.KV) []byte {
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: offset, Transactional: true, ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0},
		[]decode.RecordSpec{{Timestamp: clustertest.T0, Key: kv.Key, Value: kv.Value}})
	if err != nil {
		panic(err)
	}
	return b
}

func partitionsOf(ps []cluster.TopicPartitions) string {
	var s []string
	for _, p := range ps {
		for _, n := range p.Partitions {
			s = append(s, p.Topic+":"+itoa(int64(n)))
		}
	}
	return strings.Join(s, ",")
}

// The bundled example directories: broker-1 has exactly the two findings
// its generator put there; healthy has none.
func TestBundledLogDirs(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "logdirs")
	o := cluster.DefaultTxnsOptions()
	o.NumPartitions = 1
	for _, name := range clustertest.LogDirNames {
		dir := filepath.Join(root, name)
		g := loadGroups(t, cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}, dir)
		tx := loadTxns(t, o, dir)
		all := append(g.Findings, tx.Findings...)
		if name == "healthy" {
			if len(all) != 0 {
				t.Errorf("healthy: findings %+v", all)
			}
			continue
		}
		if len(all) != 2 || all[0].Kind != finding.OffsetBelowLogStart || all[0].Offset != clustertest.AuditCommitted ||
			all[1].Kind != finding.HangingTransaction || len(tx.Open) != 1 || tx.Open[0].ProducerID != clustertest.PayOnePID {
			t.Errorf("%s: findings %+v open %+v", name, all, tx.Open)
		}
	}
}

// A group asked for by name whose coordinator partition is on another
// disk is not reported absent: the view says it cannot tell. broker-1
// holds __consumer_offsets-5 and -9 of the 50 its metadata image gives
// the topic (the rest are node 2's): "foo" hashes to 24 (unanswerable),
// "gone" to 5 (deleted there: answered, no group), "billing" to 9.
func TestGroupsCoordinatorMissing(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "logdirs", "broker-1")
	for _, c := range []struct{ name, partition string }{{"foo", "24"}, {"gone", "5"}, {"billing", "9"}} {
		if got := itoa(int64(cluster.CoordinatorPartition(c.name, 50))); got != c.partition {
			t.Fatalf("CoordinatorPartition(%q, 50) = %s, want %s", c.name, got, c.partition)
		}
	}
	v := loadGroups(t, cluster.GroupsOptions{Groups: []string{"foo", "gone", "billing"}, PSM: psmDefaults()}, dir)
	if len(v.Groups) != 1 || v.Groups[0].Group != "billing" {
		t.Errorf("groups %+v", v.Groups)
	}
	if len(v.Unanswerable) != 1 || !strings.Contains(v.Unanswerable[0], `group "foo" is coordinated by __consumer_offsets-24 (of 50 partitions, from the metadata image)`) {
		t.Errorf("unanswerable %q", v.Unanswerable)
	}
	// Told the topic has 10 partitions, "foo" is in 4: still not here.
	v = loadGroups(t, cluster.GroupsOptions{Groups: []string{"foo"}, NumPartitions: 10, PSM: psmDefaults()}, dir)
	if len(v.Unanswerable) != 1 || !strings.Contains(v.Unanswerable[0], "__consumer_offsets-4 (of 10 partitions, from offsets.topic.num.partitions as given)") {
		t.Errorf("unanswerable with 10 partitions %q", v.Unanswerable)
	}
	if v := loadGroups(t, cluster.GroupsOptions{PSM: psmDefaults()}, dir); len(v.Unanswerable) != 0 {
		t.Errorf("no group asked for: unanswerable %q", v.Unanswerable)
	}
}

// A topic recreated through the test broker: kgo produced to "events",
// the topic was deleted and created again, and kfake gave the new one a
// new topic id. Node 1's disk holds the first incarnation's events-0
// (its records, its id in partition.metadata) while the metadata log
// records the creation, RemoveTopicRecord and the re-creation with the
// ids kfake assigned: the directory is an orphan of the recreated topic
// and the new replica is missing. A disk holding the new incarnation's
// events-0 is clean.
func TestMetadataTopicRecreatedThroughKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	c := kafkatest.NewCluster(t)
	incarnation := func() ([16]byte, [][]byte) {
		c.CreateTopic(t, "events", 1)
		c.ProduceIdempotent(t, "events", 0, 3)
		return c.Fake.TopicInfo("events").TopicID, c.RawBatches(t, "events", 0)
	}
	oldID, oldRaws := incarnation()
	if err := c.Fake.DeleteTopic("events"); err != nil {
		t.Fatal(err)
	}
	newID, newRaws := incarnation()
	if oldID == newID {
		t.Fatalf("kfake reused topic id %s", segment.TopicIDString(oldID))
	}
	meta := func(ld string) {
		t.Helper()
		topic := func(id [16]byte) [][]byte {
			return [][]byte{clustertest.Meta("TopicRecord", map[string]any{"Name": "events", "TopicId": schema.UUID(id)}),
				clustertest.Meta("PartitionRecord", map[string]any{"PartitionId": int32(0), "TopicId": schema.UUID(id), "Replicas": clustertest.Ints(1),
					"Isr": clustertest.Ints(1), "RemovingReplicas": clustertest.Ints(), "AddingReplicas": clustertest.Ints(), "Leader": int32(1),
					"LeaderEpoch": int32(0), "PartitionEpoch": int32(0)})}
		}
		recs := append(topic(oldID), clustertest.Meta("RemoveTopicRecord", map[string]any{"TopicId": schema.UUID(oldID)}))
		recs = append(recs, topic(newID)...)
		if _, err := clustertest.WriteMetadata(ld, clustertest.T0, 1, 0, clustertest.MetaBatch(0, clustertest.T0, 1, recs...)); err != nil {
			t.Fatal(err)
		}
		if err := clustertest.WriteMetaProperties(ld, 1, "kfake"); err != nil {
			t.Fatal(err)
		}
	}

	stale := t.TempDir()
	meta(stale)
	kafkatest.WritePartitionWith(t, stale, "events", 0, oldRaws, segment.AppenderOptions{TopicID: &oldID})
	v := loadMetadata(t, -1, stale)
	k := findingKinds(v.Findings)
	if !slices.Equal(k[finding.OrphanPartition], []string{"events-0"}) || !slices.Equal(k[finding.MissingReplica], []string{"events-0"}) || len(v.Findings) != 2 {
		t.Errorf("stale disk: findings %v", k)
	}
	if rows := diskRow(v, "events", 0); len(rows) != 2 || rows[0].Status != "recreated" || rows[0].DiskTopicID != segment.TopicIDString(oldID) ||
		rows[0].ImageTopicID != segment.TopicIDString(newID) || rows[1].Status != "missing" {
		t.Errorf("stale disk rows %+v", rows)
	}
	// Before RemoveTopicRecord (offset 2) the directory matches.
	if before := loadMetadata(t, 2, stale); len(before.Findings) != 0 {
		t.Errorf("--at 2: findings %+v", before.Findings)
	}

	current := t.TempDir()
	meta(current)
	kafkatest.WritePartitionWith(t, current, "events", 0, newRaws, segment.AppenderOptions{TopicID: &newID})
	if v := loadMetadata(t, -1, current); len(v.Findings) != 0 || diskRow(v, "events", 0)[0].Status != "ok" {
		t.Errorf("current disk: findings %+v rows %+v", v.Findings, v.Disk)
	}
}

// KIP-664's verdict for every coordinator state "tx-hang"'s record can
// be in while payments-0 holds its transaction open: hanging unless the
// record is of an open transaction that lists payments-0 (the
// coordinator will write that marker). A transaction listing only
// another partition, one completed, one aborted, or an id the
// coordinator expired (its record tombstoned, so no id has the producer
// id) never gets a marker in payments-0; without a record, only age
// decides, as find-hanging's transaction.max.timeout.ms does.
func TestTxnsVerdictByCoordinatorState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	payments0, payments1 := map[string][]int32{"payments": {0}}, map[string][]int32{"payments": {1}}
	for _, c := range []struct {
		name    string
		state   cluster.TxnState
		parts   map[string][]int32
		verdict string
	}{
		{"ongoing, lists payments-0", cluster.TxnOngoing, payments0, cluster.VerdictOngoing},
		{"prepare-commit, lists payments-0", cluster.TxnPrepareCommit, payments0, cluster.VerdictOngoing},
		{"prepare-abort, lists payments-0", cluster.TxnPrepareAbort, payments0, cluster.VerdictOngoing},
		{"ongoing, lists payments-1 only", cluster.TxnOngoing, payments1, cluster.VerdictHanging},
		{"complete-commit", cluster.TxnCompleteCommit, nil, cluster.VerdictHanging},
		{"complete-abort", cluster.TxnCompleteAbort, nil, cluster.VerdictHanging},
		{"empty", cluster.TxnEmpty, nil, cluster.VerdictHanging},
		{"dead", cluster.TxnDead, nil, cluster.VerdictHanging},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, pid, first := txnScenario(t, c.state, c.parts, true)
			o := cluster.DefaultTxnsOptions()
			o.NumPartitions = 1
			v := loadTxns(t, o, dir)
			if len(v.Open) != 1 || v.Open[0].Verdict != c.verdict || v.Open[0].ProducerID != pid || v.Open[0].FirstOffset != first || v.Open[0].TransactionalID != "tx-hang" {
				t.Fatalf("open %+v, want %s", v.Open, c.verdict)
			}
			if hanging := c.verdict == cluster.VerdictHanging; finding.HasErrors(v.Findings) != hanging {
				t.Errorf("findings %+v", v.Findings)
			}
		})
	}

	// Expired: the coordinator tombstoned "tx-hang" (transactional.id.expiration.ms).
	t.Run("expired", func(t *testing.T) {
		dir, pid, _ := txnScenario(t, cluster.TxnCompleteAbort, nil, false)
		writeCoordinator(t, dir, cluster.TransactionStateTopic, 0, clustertest.T0,
			clustertest.Txn("tx-hang", pid, 0, kmsg.TransactionState(cluster.TxnOngoing), 60000, payments0, clustertest.T0, clustertest.T0),
			clustertest.KV{Key: clustertest.Txn("tx-hang", pid, 0, 0, 0, nil, 0, 0).Key})
		o := cluster.DefaultTxnsOptions()
		o.NumPartitions = 1
		v := loadTxns(t, o, dir)
		if len(v.Transactions) != 0 || len(v.Open) != 1 || v.Open[0].Verdict != cluster.VerdictUnknown || v.Open[0].TransactionalID != "" {
			t.Fatalf("young: transactions %+v open %+v", v.Transactions, v.Open)
		}
		o.Now = v.Open[0].LastTimestamp + 3600_000
		if v := loadTxns(t, o, dir); v.Open[0].Verdict != cluster.VerdictHanging || !strings.Contains(v.Open[0].Reason, "no transactional id in any of the 1 __transaction_state partitions has producer id") {
			t.Errorf("an hour later: %+v", v.Open[0])
		}
	})
}
