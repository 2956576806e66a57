package kafkatest

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestTimeout bounds every helper's client work so that a stuck test
// fails rather than hangs.
const requestTimeout = 30 * time.Second

// TxnTimeout is the transaction timeout Transact asks for. kfake aborts an
// open transaction (writing an ABORT marker) when it expires; kfake's maximum
// (transaction.max.timeout.ms) is 15 minutes.
const TxnTimeout = 10 * time.Minute

// Cluster is a one-broker kfake cluster on 127.0.0.1 plus helpers that
// produce with real kgo clients and read the stored batches back.
type Cluster struct {
	// Fake is the underlying kfake cluster, for controls and inspection.
	Fake *kfake.Cluster

	mu      sync.Mutex
	nextPID int64 // next pinned idempotent producer id; -1 when not pinned
}

// NewCluster starts a kfake cluster with one broker listening on 127.0.0.1
// (kfake always binds 127.0.0.1:<port>). opts are passed to kfake after the
// package defaults (kfake.NumBrokers(1)); the cluster is closed by
// tb.Cleanup.
func NewCluster(tb testing.TB, opts ...kfake.Opt) *Cluster {
	tb.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)
	kf, err := kfake.NewCluster(all...)
	if err != nil {
		tb.Fatalf("kafkatest: start kfake: %v", err)
	}
	tb.Cleanup(kf.Close)
	return &Cluster{Fake: kf, nextPID: -1}
}

// Addrs returns the broker host:port addresses (all 127.0.0.1).
func (c *Cluster) Addrs() []string { return c.Fake.ListenAddrs() }

// Client returns a kgo client seeded with the cluster's brokers and closed by
// tb.Cleanup. Defaults, which opts may override: manual partitioning (each
// record goes to its Record.Partition), ProducerLinger(0), acks=all.
func (c *Cluster) Client(tb testing.TB, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	cl := c.newClient(tb, opts...)
	tb.Cleanup(cl.Close)
	return cl
}

// newClient is Client without the cleanup: the helpers close their clients
// themselves.
func (c *Cluster) newClient(tb testing.TB, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	all := append([]kgo.Opt{
		kgo.SeedBrokers(c.Addrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		tb.Fatalf("kafkatest: new client: %v", err)
	}
	return cl
}

// CreateTopic creates topic with the given number of partitions.
func (c *Cluster) CreateTopic(tb testing.TB, topic string, partitions int32) {
	tb.Helper()
	if err := c.Fake.CreateTopic(topic, partitions, nil); err != nil {
		tb.Fatalf("kafkatest: create topic %q: %v", topic, err)
	}
}

// TxnProducerID is the producer id kfake gives a transactional id the first
// time it sees it (txns.go pids.create): FNV-64 of the id, top bit cleared.
// Its first epoch is 0.
func TxnProducerID(transactionalID string) int64 {
	h := fnv.New64()
	h.Write([]byte(transactionalID))
	return int64(h.Sum64()) & math.MaxInt64
}

// PinIdempotentProducerIDs makes producer ids of idempotent
// (non-transactional) producers deterministic: from now on, the k-th
// non-transactional InitProducerID the cluster receives gets producer id
// first+k with epoch 0. Without this kfake picks random ids. Two clusters
// pinned to the same first give their n-th idempotent producers the same id.
// Transactional InitProducerID requests are left to kfake. Calling it again
// restarts the sequence at the new first.
func (c *Cluster) PinIdempotentProducerIDs(first int64) {
	c.mu.Lock()
	pinned := c.nextPID >= 0
	c.nextPID = first
	c.mu.Unlock()
	if pinned {
		return
	}
	c.Fake.ControlKey(int16(kmsg.InitProducerID), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.InitProducerIDRequest)
		if req.TransactionalID != nil {
			return nil, nil, false // kfake handles it; the control stays installed
		}
		c.Fake.KeepControl()
		c.mu.Lock()
		id := c.nextPID
		c.nextPID++
		c.mu.Unlock()
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID = id
		resp.ProducerEpoch = 0
		return resp, nil, true
	})
}

// Gen builds the key and value of the i-th record of a batch.
type Gen func(i int) (key, value []byte)

// Records returns n records for topic/partition with key "key-<i>" and value
// "value-<i>" (or gen's, when gen is not nil). Their timestamps are zero, so
// kgo stamps them with the wall clock at produce time, as a real producer
// does: kfake stamps its transaction markers with time.Now() too, and record
// timestamps far from the markers' would look like a log spanning years (and
// make segment.Appender roll by segment.ms). Use FixedTimestamps for
// reproducible data batches.
func Records(topic string, partition int32, n int, gen Gen) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		var k, v []byte
		if gen != nil {
			k, v = gen(i)
		} else {
			k, v = fmt.Appendf(nil, "key-%d", i), fmt.Appendf(nil, "value-%d", i)
		}
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: k, Value: v}
	}
	return recs
}

// FixedTimestamps sets the timestamp of recs[i] to base + i ms and returns
// recs. Data batches of such records are byte-for-byte reproducible when
// the producer id and epoch are too.
func FixedTimestamps(recs []*kgo.Record, base time.Time) []*kgo.Record {
	for i, r := range recs {
		r.Timestamp = base.Add(time.Duration(i) * time.Millisecond)
	}
	return recs
}

// batchingOpts make every Flush send exactly the records buffered since
// the previous Flush as one batch per partition: nothing is sent before
// Flush because of the linger, and Flush stops the linger.
func batchingOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(time.Minute)}
}

// ProduceBatch produces recs with cl and flushes once every partition they
// go to is loaded, so they land as one record batch per partition (if they
// fit in ProducerBatchMaxBytes); it fails tb on any error. cl must not send
// before Flush (a long linger, or manual flushing).
func ProduceBatch(tb testing.TB, ctx context.Context, cl *kgo.Client, recs []*kgo.Record) {
	tb.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, r := range recs {
		wg.Add(1)
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	// Wait until the client has loaded every partition the records go to
	// before flushing. kgo moves records buffered for a topic it does not
	// know yet into the partition's buffer only once it publishes the
	// partition; a flush racing that move can drain the first record alone,
	// splitting the batch on a loaded machine.
	for _, r := range recs {
		for {
			if leader, _, err := cl.PartitionLeader(r.Topic, r.Partition); err == nil && leader >= 0 {
				break
			}
			if ctx.Err() != nil {
				tb.Fatalf("kafkatest: %s-%d never loaded", r.Topic, r.Partition)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		tb.Fatalf("kafkatest: flush: %v", err)
	}
	wg.Wait()
	if len(errs) > 0 {
		tb.Fatalf("kafkatest: produce: %v", errs[0])
	}
	// Give the sink's drain loop of this flush time to end before the
	// caller buffers its next batch: kgo's drain loop (sink.drain, franz-go
	// v1.22) sends whatever a partition has buffered without looking at
	// its linger, so records produced while it still runs went out at once
	// and split the next batch (TestMultiBatchTxn: [2..3] [4..4] instead
	// of [2..4], 3 runs in 40). kgo has no signal for an idle sink; the
	// loop ends microseconds after the last promise.
	time.Sleep(drainSettle)
}

// drainSettle is how long ProduceBatch leaves the sink's drain loop to end.
const drainSettle = 20 * time.Millisecond

// ProduceIdempotent produces n default records (Records with a nil Gen) to
// topic/partition with a fresh idempotent producer, as one batch, and
// returns once they are acknowledged (acks=all). opts are extra kgo options
// for the producer client.
func (c *Cluster) ProduceIdempotent(tb testing.TB, topic string, partition int32, n int, opts ...kgo.Opt) {
	tb.Helper()
	c.ProduceIdempotentBatches(tb, [][]*kgo.Record{Records(topic, partition, n, nil)}, opts...)
}

// ProduceIdempotentBatches produces each inner slice as one batch (in order,
// each acknowledged before the next is sent) with one fresh idempotent
// producer: one producer id, sequences continuing across the batches.
func (c *Cluster) ProduceIdempotentBatches(tb testing.TB, batches [][]*kgo.Record, opts ...kgo.Opt) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cl := c.newClient(tb, append(batchingOpts(), opts...)...)
	defer cl.Close()
	for _, recs := range batches {
		ProduceBatch(tb, ctx, cl, recs)
	}
}

// TxnEnd says how Transact ends its transaction.
type TxnEnd int

const (
	// Commit ends the transaction with EndTxn(commit): a COMMIT marker.
	Commit TxnEnd = iota
	// Abort ends it with EndTxn(abort): an ABORT marker.
	Abort
	// Open leaves it ongoing: data batches, no marker. kfake aborts it
	// (writing an ABORT marker) after TxnTimeout or when the same
	// transactional id initializes again.
	Open
)

func (e TxnEnd) String() string {
	switch e {
	case Commit:
		return "commit"
	case Abort:
		return "abort"
	case Open:
		return "open"
	}
	return fmt.Sprintf("TxnEnd(%d)", int(e))
}

// Transact runs one transaction with a fresh client for transactionalID: it
// produces n default records (Records with a nil Gen) to topic/partition as
// one batch, then commits, aborts or leaves the transaction open.
func (c *Cluster) Transact(tb testing.TB, txnID, topic string, partition int32, n int, end TxnEnd, opts ...kgo.Opt) {
	tb.Helper()
	c.TransactBatches(tb, txnID, [][]*kgo.Record{Records(topic, partition, n, nil)}, end, opts...)
}

// TransactBatches is Transact with explicit batches: each inner slice is
// produced and acknowledged as one batch inside a single transaction.
func (c *Cluster) TransactBatches(tb testing.TB, txnID string, batches [][]*kgo.Record, end TxnEnd, opts ...kgo.Opt) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	all := append(batchingOpts(), kgo.TransactionalID(txnID), kgo.TransactionTimeout(TxnTimeout))
	cl := c.newClient(tb, append(all, opts...)...)
	defer cl.Close() // closing does not end the transaction
	if err := cl.BeginTransaction(); err != nil {
		tb.Fatalf("kafkatest: begin transaction %q: %v", txnID, err)
	}
	for _, recs := range batches {
		ProduceBatch(tb, ctx, cl, recs)
	}
	if end == Open {
		return
	}
	commit := kgo.TransactionEndTry(end == Commit)
	if err := cl.EndTransaction(ctx, commit); err != nil {
		tb.Fatalf("kafkatest: end transaction %q (%v): %v", txnID, end, err)
	}
}

// RawBatches returns every batch stored in topic/partition, in offset order,
// each as its own entry (12-byte log overhead: baseOffset int64, length
// int32, then the batch) byte-for-byte as the broker stores it, with the
// offsets the broker assigned, control batches included. It fetches with
// read_uncommitted from the log start offset until the high watermark
// (which kfake keeps at the log end).
func (c *Cluster) RawBatches(tb testing.TB, topic string, partition int32) [][]byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	info := c.Fake.TopicInfo(topic)
	if info == nil {
		tb.Fatalf("kafkatest: no topic %q", topic)
	}
	cl := c.newClient(tb)
	defer cl.Close()
	broker := cl.Broker(int(c.Fake.LeaderFor(topic, partition)))

	var out [][]byte
	offset := int64(-1) // -1: start at the log start offset of the first response
	for empty := 0; ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MinBytes = 0
		req.MaxBytes = 64 << 20
		req.IsolationLevel = 0 // read_uncommitted: everything, open transactions included
		req.SessionID = 0
		req.SessionEpoch = -1 // no fetch session
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rt.TopicID = info.TopicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = max(offset, 0)
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = 64 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)

		kresp, err := broker.Request(ctx, req)
		if err != nil {
			tb.Fatalf("kafkatest: fetch %s-%d: %v", topic, partition, err)
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			tb.Fatalf("kafkatest: fetch %s-%d: %v", topic, partition, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			tb.Fatalf("kafkatest: fetch %s-%d: unexpected response shape", topic, partition)
		}
		sp := resp.Topics[0].Partitions[0]
		if offset < 0 && sp.LogStartOffset > 0 && (sp.ErrorCode == 0 || sp.ErrorCode == kerr.OffsetOutOfRange.Code) {
			offset = sp.LogStartOffset // records were deleted: start at the log start
			continue
		}
		if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
			tb.Fatalf("kafkatest: fetch %s-%d at %d: %v", topic, partition, rp.FetchOffset, err)
		}
		offset = rp.FetchOffset

		entries, next := splitEntries(sp.RecordBatches)
		if len(entries) == 0 {
			if offset >= sp.HighWatermark {
				return out
			}
			if empty++; empty > 3 {
				tb.Fatalf("kafkatest: fetch %s-%d at %d: no batches below high watermark %d", topic, partition, offset, sp.HighWatermark)
			}
			continue
		}
		empty = 0
		out = append(out, entries...)
		offset = next
		if offset >= sp.HighWatermark {
			return out
		}
	}
}

// splitEntries splits a record set into whole entries (copies), dropping a
// trailing partial one, and returns the offset after the last entry.
func splitEntries(set []byte) (entries [][]byte, next int64) {
	for len(set) >= 12 {
		size := 12 + int(int32(binary.BigEndian.Uint32(set[8:12])))
		if size < 12+49 || size > len(set) {
			break // partial (or unparsable) trailing entry
		}
		e := append([]byte(nil), set[:size]...)
		entries = append(entries, e)
		base := int64(binary.BigEndian.Uint64(e[0:8]))
		lastDelta := int64(int32(binary.BigEndian.Uint32(e[23:27])))
		next = base + lastDelta + 1
		set = set[size:]
	}
	return entries, next
}
