package psm

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/kafkatest"
	"github.com/kseg/kseg/segment/segtest"
)

// Logs written by real kgo producers against franz-go's kfake broker:
// idempotent and transactional producers, commits, aborts and an open
// transaction. The aborted transactions must be exactly the .txnindex
// entries an appending broker writes (kafkatest.AbortedTxns, an
// independent implementation), and the state must be what the client did.
func TestReplayKfakeTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	c := kafkatest.NewCluster(t)
	c.CreateTopic(t, "orders", 1)
	c.PinIdempotentProducerIDs(1000)
	c.ProduceIdempotentBatches(t, [][]*kgo.Record{kafkatest.Records("orders", 0, 3, nil), kafkatest.Records("orders", 0, 2, nil)})
	c.Transact(t, "payments", "orders", 0, 3, kafkatest.Commit)
	c.Transact(t, "payments", "orders", 0, 2, kafkatest.Abort)
	c.Transact(t, "refunds", "orders", 0, 4, kafkatest.Abort)
	c.Transact(t, "audit", "orders", 0, 2, kafkatest.Open)
	batches := c.RawBatches(t, "orders", 0)
	dir := kafkatest.WritePartition(t, t.TempDir(), "orders", 0, batches)
	pd := segtest.OpenDir(t, dir)
	opts := DefaultOptions()
	opts.FromSnapshot = SnapshotNone
	r, err := Rebuild(pd, opts)
	if err != nil {
		t.Fatal(err)
	}
	onlyAnomalies(t, r, finding.OpenTransaction)
	if r.HasErrors() {
		t.Errorf("anomalies %+v", r.Anomalies)
	}

	want, err := kafkatest.AbortedTxns(batches)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Aborted) != len(want) || len(want) != 2 {
		t.Fatalf("aborted %+v, broker index %+v", r.Aborted, want)
	}
	for i, w := range want {
		if got := r.Aborted[i]; got.ProducerID != w.ProducerID || got.FirstOffset != w.FirstOffset || got.LastOffset != w.LastOffset || got.LastStableOffset != w.LastStableOffset {
			t.Errorf("aborted[%d] = %+v, want %+v", i, got, w)
		}
	}

	idem := mustProducer(t, r, 1000)
	if idem.ProducerEpoch != 0 || idem.LastSeq() != 4 || len(idem.Batches) != 2 || idem.CoordinatorEpoch != -1 {
		t.Errorf("idempotent producer %+v", idem)
	}
	// payments: 1st transaction at epoch 0, 2nd at epoch 2 (kgo uses EndTxn
	// v5, so kfake bumps the epoch at the end of each transaction and at the
	// next InitProducerID); kfake's markers carry the transaction's epoch.
	pay := mustProducer(t, r, kafkatest.TxnProducerID("payments"))
	if pay.ProducerEpoch != 2 || pay.CoordinatorEpoch != 0 || pay.CurrentTxnFirstOffset != -1 || len(pay.Batches) != 1 || pay.LastSeq() != 1 {
		t.Errorf("payments %+v", pay)
	}
	audit := mustProducer(t, r, kafkatest.TxnProducerID("audit"))
	if audit.CurrentTxnFirstOffset < 0 || len(r.Ongoing) != 1 || r.Ongoing[0].ProducerID != audit.ProducerID {
		t.Fatalf("open transaction: %+v, ongoing %+v", audit, r.Ongoing)
	}
	if r.FirstUndecidedOffset != audit.CurrentTxnFirstOffset || r.LastStableOffset != audit.CurrentTxnFirstOffset {
		t.Errorf("fuo %d lso %d, want %d", r.FirstUndecidedOffset, r.LastStableOffset, audit.CurrentTxnFirstOffset)
	}
}

// A failover between two kfake clusters: the same transactional id gets
// the same producer id on both, so the destination log holds cluster A's
// producer and then cluster B's reusing its id. With a MIRROR_PID_RESET
// barrier in between, B's producer starts clean; without one (or with
// --ignore-barriers) it is a pid-collision. Idempotent producers pinned to
// the same ids collide the same way.
func TestReplayKfakeFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kfake clusters")
	}
	run := func(c *kafkatest.Cluster) [][]byte {
		c.CreateTopic(t, "orders", 1)
		c.PinIdempotentProducerIDs(7000)
		c.Transact(t, "app", "orders", 0, 3, kafkatest.Commit)
		c.Transact(t, "app", "orders", 0, 3, kafkatest.Commit)
		c.ProduceIdempotent(t, "orders", 0, 4)
		return c.RawBatches(t, "orders", 0)
	}
	a := run(kafkatest.NewCluster(t))
	b := run(kafkatest.NewCluster(t))

	// Destination: A's log as mirrored, then (optionally) the barrier the
	// failover writes, then B's batches at the following offsets.
	build := func(withBarrier bool) (*segment.PartitionDir, int64, int64) {
		var log [][]byte
		next := int64(0)
		for _, raw := range a {
			log = append(log, raw)
			bb, _ := decode.ParseBatch(raw)
			next = bb.NextOffset()
		}
		bar := int64(-1)
		if withBarrier {
			bar = next
			raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: next, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true},
				[]decode.RecordSpec{{Timestamp: lastTimestamp(t, a), Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)}})
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, raw)
			next++
		}
		firstB := next
		for _, raw := range b {
			cp := append([]byte(nil), raw...)
			bb, _ := decode.ParseBatch(cp)
			binary.BigEndian.PutUint64(cp[0:], uint64(next)) // baseOffset is outside the CRC
			next += bb.NextOffset() - bb.BaseOffset
			log = append(log, cp)
		}
		dir := kafkatest.WritePartition(t, t.TempDir(), "orders", 0, log)
		pd := segtest.OpenDir(t, dir)
		return pd, bar, firstB
	}
	opts := DefaultOptions()
	opts.FromSnapshot = SnapshotNone
	appPID := kafkatest.TxnProducerID("app")

	pd, bar, firstB := build(true)
	r, err := Rebuild(pd, opts)
	if err != nil {
		t.Fatal(err)
	}
	onlyAnomalies(t, r)
	if len(r.Barriers) != 1 || r.Barriers[0].Offset != bar || r.Barriers[0].ProducersCleared != 2 {
		t.Errorf("barriers %+v", r.Barriers)
	}
	for _, e := range r.Producers {
		if e.LastDataOffset() < firstB {
			t.Errorf("producer %d from before the barrier survived: %+v", e.ProducerID, e)
		}
	}
	if e := mustProducer(t, r, appPID); e.ProducerEpoch != 2 {
		t.Errorf("B's app producer %+v", e)
	}

	ign := opts
	ign.IgnoreBarriers = true
	r, err = Rebuild(pd, ign)
	if err != nil {
		t.Fatal(err)
	}
	col := anomalies(r, finding.PIDCollision)
	if len(col) != 2 {
		t.Fatalf("ignoring the barrier: %+v", r.Anomalies)
	}
	if col[0].ProducerID != appPID || col[0].Offset != firstB || col[1].ProducerID != 7000 {
		t.Errorf("collisions %+v", col)
	}

	pd, _, _ = build(false)
	r, err = Rebuild(pd, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(anomalies(r, finding.PIDCollision)) != 2 || !r.HasErrors() {
		t.Errorf("no barrier: %+v", r.Anomalies)
	}
}

func lastTimestamp(t *testing.T, batches [][]byte) int64 {
	b, err := decode.ParseBatch(batches[len(batches)-1])
	if err != nil {
		t.Fatal(err)
	}
	return b.MaxTimestamp
}
