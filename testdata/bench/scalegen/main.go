// Command scalegen writes the log directories of issue 29's scale
// benchmarks, each growing one dimension at a time, deterministically:
//
//	go run ./testdata/bench/scalegen -dim partitions -n 5000 [-size 16KiB] -out DIR
//	    DIR is a log directory of N data partitions bench-0 … bench-(N-1)
//	    (segtest.LogDir: segments, indexes, producer snapshots,
//	    leader-epoch-checkpoint, partition.metadata), one
//	    __consumer_offsets partition in which group "bench-readers" has
//	    committed every data partition (half-way through its log), one
//	    __transaction_state partition holding the data partitions'
//	    transactional ids, meta.properties, and the recovery-point,
//	    replication and log-start checkpoints with a line for every
//	    partition: what a broker with N partitions keeps.
//	go run ./testdata/bench/scalegen -dim producers -n 1000000 [-batches 1] -out DIR
//	    DIR/many-0 holds N idempotent producers (one in a hundred
//	    transactional), each writing -batches batches of one record
//	    (segtest.Producers), producer snapshots at every roll and at the end.
//	go run ./testdata/bench/scalegen -dim groups -n 10000000 [-keys 1000000] -out DIR
//	    DIR/__consumer_offsets-0 holds N offset commits (OffsetCommitKey v1 /
//	    OffsetCommitValue v3) over -keys live keys: groups of 10 partitions
//	    of topic "orders", each group committing its 10 partitions in one
//	    batch, the groups in turn; every group has a GroupMetadata record
//	    (one member, range assignor) before its first commit.
//	go run ./testdata/bench/scalegen -dim zstd -n 32 -out DIR
//	    DIR/zeros-0 holds N zstd batches of one record each: a key of 128
//	    KiB of random bytes (so that each batch is a job of dump --deep's
//	    pipeline of its own) and a value of 32 MiB of zeros, a few hundred
//	    KiB on disk decompressing to 32 MiB: what makes a deep dump's
//	    memory grow with the cores without a shared budget.
//	go run ./testdata/bench/scalegen -dim txns -n 1000000 -out DIR
//	    DIR/__transaction_state-0 holds N transactional ids, each moving
//	    through Empty, then Ongoing, PrepareCommit, CompleteCommit three
//	    times (ten records per id), one record per batch as the
//	    transaction coordinator appends them, the ids in turn.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm/broker/brokertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
}

func run() error {
	dim := flag.String("dim", "", "partitions, producers, groups, txns or zstd")
	n := flag.Int("n", 0, "the dimension's size: partitions, producers, commit records or transactional ids")
	out := flag.String("out", "", "output log directory (created)")
	sizeFlag := flag.String("size", "16KiB", "partitions: bytes per data partition")
	batches := flag.Int("batches", 1, "producers: batches per producer")
	keys := flag.Int("keys", 0, "groups: live keys (group × partition); 0 = n, every commit a key of its own")
	flag.Parse()
	if *out == "" || *n <= 0 {
		return errors.New("-out and -n are required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	start := time.Now()
	var err error
	switch *dim {
	case "partitions":
		var size int64
		if size, err = parseSize(*sizeFlag); err == nil {
			err = partitions(*out, *n, size)
		}
	case "producers":
		err = segtest.Producers(filepath.Join(*out, "many-0"), *n, segtest.ProducersOptions{BatchesPerProducer: *batches, TransactionalEvery: 100})
	case "groups":
		k := *keys
		if k <= 0 {
			k = *n
		}
		err = groups(*out, *n, k)
	case "txns":
		err = txns(*out, *n)
	case "zstd":
		err = zeros(*out, *n)
	default:
		return fmt.Errorf("-dim %q: want partitions, producers, groups, txns or zstd", *dim)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s %d in %s\n", *out, *dim, *n, time.Since(start).Round(time.Millisecond))
	return nil
}

// partitions writes the log directory of -dim partitions.
func partitions(out string, n int, size int64) error {
	return brokertest.PartitionsLogDir(out, n, size)
}

// groups writes DIR/__consumer_offsets-0 of -dim groups.
func groups(out string, n, keys int) error {
	const perGroup = 10
	ngroups := max(keys/perGroup, 1)
	w, err := newWriter(out, "__consumer_offsets")
	if err != nil {
		return err
	}
	group := func(g int) string { return fmt.Sprintf("bench-group-%07d", g) }
	written, round := 0, 0
	for written < n {
		for g := 0; g < ngroups && written < n; g++ {
			name := group(g)
			var kvs []brokertest.KV
			if round == 0 {
				m := brokertest.Member{ID: name + "-member-0-5f1c7e0e", ClientID: "consumer-" + name + "-1", Host: "/10.0.0.1",
					Assigned: map[string][]int32{"orders": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}
				if err := w.batch(brokertest.GroupMetadata(name, "range", 1, m.ID, brokertest.T0, []brokertest.Member{m})); err != nil {
					return err
				}
			}
			for p := 0; p < perGroup && written < n; p++ {
				kvs = append(kvs, brokertest.OffsetCommit(name, "orders", int32(p), int64(round*1000+p), 5, "", brokertest.T0+int64(written)))
				written++
			}
			if err := w.batch(kvs...); err != nil {
				return err
			}
		}
		round++
	}
	return w.close()
}

// txns writes DIR/__transaction_state-0 of -dim txns.
func txns(out string, n int) error {
	w, err := newWriter(out, "__transaction_state")
	if err != nil {
		return err
	}
	states := []kmsg.TransactionState{kmsg.TransactionStateEmpty,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit}
	parts := map[string][]int32{"orders": {3}, "payments": {1}}
	for step, st := range states {
		for i := range n {
			ts := brokertest.T0 + int64(step*n+i)
			var ps map[string][]int32
			if st != kmsg.TransactionStateEmpty && st != kmsg.TransactionStateCompleteCommit {
				ps = parts
			}
			kv := brokertest.Txn("bench-txn-"+strconv.Itoa(i), 2_000_000+int64(i), int16(step/3), st, 60000, ps, ts, ts)
			if err := w.batch(kv); err != nil {
				return err
			}
		}
	}
	return w.close()
}

// zeros writes DIR/zeros-0 of -dim zstd.
func zeros(out string, n int) error {
	rng := rand.New(rand.NewPCG(28, 9))
	key := make([]byte, 128<<10)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	value := make([]byte, 32<<20)
	a, err := segment.OpenAppender(filepath.Join(out, "zeros-0"), segment.AppenderOptions{NoSync: true})
	if err != nil {
		return err
	}
	var c decode.Codecs
	for i := range n {
		raw, err := c.AppendBatch(nil, decode.BatchSpec{BaseOffset: int64(i), Compression: decode.CompressionZstd,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []decode.RecordSpec{{Timestamp: brokertest.T0, Key: key, Value: value}})
		if err != nil {
			return err
		}
		if err := a.Append(raw); err != nil {
			return err
		}
	}
	return a.Close()
}

// writer appends coordinator batches to one internal-topic partition.
type writer struct {
	app  *segment.Appender
	next int64
	ts   int64
}

func newWriter(out, topic string) (*writer, error) {
	dir := filepath.Join(out, segment.PartitionDirNameFor(topic, 0))
	// offsets.topic.segment.bytes and transaction.state.log.segment.bytes
	// default to 100 MiB.
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentBytes: 100 << 20, IndexIntervalBytes: 4096, NoSync: true})
	if err != nil {
		return nil, err
	}
	return &writer{app: a, ts: brokertest.T0}, nil
}

func (w *writer) batch(kvs ...brokertest.KV) error {
	raw := brokertest.Batch(w.next, w.ts, kvs...)
	w.next += int64(len(kvs))
	w.ts += int64(len(kvs))
	return w.app.Append(raw)
}

func (w *writer) close() error { return w.app.Close() }

// parseSize reads 123, 64KiB, 512MiB, 4GiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}
