package barriertest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkatest"
)

// TxnID is the transactional id every cluster's producers use in the
// mirror topologies. kfake, like two independent Kafka clusters, gives it
// the same producer id (kafkatest.TxnProducerID) on every cluster, so the
// ids collide across a failover.
const TxnID = "orders-tx"

// FirstIdempotentPID is where every cluster's idempotent producer ids start
// (kafkatest.Cluster.PinIdempotentProducerIDs): the first idempotent
// producer of each cluster gets 1000, and they collide too.
const FirstIdempotentPID = 1000

// TopicID is the topic id the topologies' source partitions carry in
// partition.metadata (a mirror keeps it).
var TopicID = [16]byte{0x6b, 0x73, 0x65, 0x67, 0x2d, 0x6d, 0x69, 0x72, 0x72, 0x6f, 0x72, 0x2d, 0x74, 0x65, 0x73, 0x74}

// Producers are one cluster's producers writing one partition: real kgo
// clients on a kfake cluster. Take hands over what they wrote since the
// last Take, to be laid out (WriteSource) or appended (AppendLocal) as
// that cluster's broker would.
type Producers struct {
	C         *kafkatest.Cluster
	Topic     string
	Partition int32
	taken     int
	now       time.Time
}

// NewProducers starts a cluster with the topic (partition+1 partitions)
// and pins its idempotent producer ids to start at FirstIdempotentPID.
func NewProducers(tb testing.TB, topic string, partition int32) *Producers {
	tb.Helper()
	c := kafkatest.NewCluster(tb)
	c.CreateTopic(tb, topic, partition+1)
	c.PinIdempotentProducerIDs(FirstIdempotentPID)
	return &Producers{C: c, Topic: topic, Partition: partition, now: time.Now()}
}

// records are n records with timestamps a millisecond apart, from a base
// near the wall clock fixed at NewProducers: batch sizes are then the same
// on every run (kfake stamps its markers with the wall clock, so record
// timestamps far from it would make the appender roll by segment.ms).
func (p *Producers) records(n int) []*kgo.Record {
	return kafkatest.FixedTimestamps(kafkatest.Records(p.Topic, p.Partition, n, nil), p.now)
}

// client is a kgo client on the producers' cluster with the settings of
// kafkatest's helpers, plus manual flushing: nothing is sent before Flush.
func (p *Producers) client(tb testing.TB, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	all := append([]kgo.Opt{
		kgo.SeedBrokers(p.C.Addrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ManualFlushing(),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		tb.Fatalf("barriertest: new client: %v", err)
	}
	return cl
}

// produceOne produces recs as exactly one batch, whatever the timing: the
// records are buffered (manual flushing sends nothing) and
// kafkatest.ProduceBatch flushes only once the partition is loaded, so the
// batch layout, and every offset-dependent output, is the same on every run.
func (p *Producers) produceOne(tb testing.TB, cl *kgo.Client, recs []*kgo.Record) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kafkatest.ProduceBatch(tb, ctx, cl, recs)
}

// Txn runs one transaction of transactional id TxnID with one batch of n
// records, ending it as end says (kafkatest.Open leaves it open), with a
// fresh client as kafkatest.Cluster.Transact does.
func (p *Producers) Txn(tb testing.TB, n int, end kafkatest.TxnEnd) {
	tb.Helper()
	cl := p.client(tb, kgo.TransactionalID(TxnID), kgo.TransactionTimeout(kafkatest.TxnTimeout))
	defer cl.Close() // closing does not end the transaction
	if err := cl.BeginTransaction(); err != nil {
		tb.Fatalf("barriertest: begin transaction: %v", err)
	}
	p.produceOne(tb, cl, p.records(n))
	if end == kafkatest.Open {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(end == kafkatest.Commit)); err != nil {
		tb.Fatalf("barriertest: end transaction (%v): %v", end, err)
	}
}

// Idempotent produces one batch per count with a new idempotent producer
// (the cluster's next pinned producer id).
func (p *Producers) Idempotent(tb testing.TB, counts ...int) {
	tb.Helper()
	cl := p.client(tb)
	defer cl.Close()
	for _, n := range counts {
		p.produceOne(tb, cl, p.records(n))
	}
}

// Take returns the batches the cluster stored since the last Take, with
// the offsets its broker gave them.
func (p *Producers) Take(tb testing.TB) [][]byte {
	tb.Helper()
	all := p.C.RawBatches(tb, p.Topic, p.Partition)
	out := all[p.taken:]
	p.taken = len(all)
	return out
}

// SourceTraffic is what the topologies' source cluster writes first:
//
//	0-2   txn TxnID (epoch 0)        3  COMMIT
//	4-5   idempotent 1000 seq 0-1    6  idempotent 1000 seq 2
//	7-8   txn TxnID (epoch 2)        9  ABORT
//	10-11 txn TxnID (epoch 4), open at the end
//	12    idempotent 1001 seq 0
//
// Its last stable offset is 10.
func (p *Producers) SourceTraffic(tb testing.TB) {
	tb.Helper()
	p.Txn(tb, 3, kafkatest.Commit)
	p.Idempotent(tb, 2, 1)
	p.Txn(tb, 2, kafkatest.Abort)
	p.Txn(tb, 2, kafkatest.Open)
	p.Idempotent(tb, 1)
}

// LocalTraffic is what a destination cluster's own producers write after
// a failover: TxnID commits a transaction of two records (the same
// producer id as the source's, at a lower epoch on a fresh cluster), then
// the cluster's next idempotent producer (1000 on a fresh cluster) writes
// one batch.
func (p *Producers) LocalTraffic(tb testing.TB) {
	tb.Helper()
	p.Txn(tb, 2, kafkatest.Commit)
	p.Idempotent(tb, 1)
}

// WriteSource lays batches out as <logDir>/<topic>-<partition> with
// 400-byte segments, an index entry every 100 bytes and TopicID in
// partition.metadata, as the source cluster's broker would have.
func WriteSource(tb testing.TB, logDir, topic string, partition int32, batches [][]byte) string {
	tb.Helper()
	id := TopicID
	return kafkatest.WritePartitionWith(tb, logDir, topic, partition, batches,
		segment.AppenderOptions{SegmentBytes: 400, IndexIntervalBytes: 100, TopicID: &id})
}

// PartitionDir is <root>/<cluster>/<topic>-<partition>, with its log
// directory created.
func PartitionDir(tb testing.TB, root, cluster, topic string, partition int32) string {
	tb.Helper()
	return filepath.Join(mkdir(tb, filepath.Join(root, cluster)), segment.PartitionDirNameFor(topic, partition))
}

// On returns producers writing topic/partition on the same cluster as p
// (creating the topic with partition+1 partitions if needed): one
// cluster's producers on another of its partitions.
func (p *Producers) On(tb testing.TB, topic string, partition int32) *Producers {
	tb.Helper()
	if p.C.Fake.TopicInfo(topic) == nil {
		p.C.CreateTopic(tb, topic, partition+1)
	}
	return &Producers{C: p.C, Topic: topic, Partition: partition, now: p.now}
}
