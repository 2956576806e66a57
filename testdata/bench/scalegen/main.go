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
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
	"github.com/kseg/kseg/testdata/bench/benchcmd"
)

func main() { benchcmd.Main("scalegen", run) }

func run() error {
	dim := flag.String("dim", "", "partitions, producers, groups, txns or zstd")
	n := flag.Int("n", 0, "the dimension's size: partitions, producers, commit records or transactional ids")
	out := flag.String("out", "", "output log directory (created)")
	size := benchcmd.SizeFlag("size", "16KiB", "partitions: bytes per data partition")
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
		err = partitions(*out, *n, *size)
	case "producers":
		err = segtest.Producers(filepath.Join(*out, "many-0"), *n, segtest.ProducersOptions{BatchesPerProducer: *batches, TransactionalEvery: 100})
	case "groups":
		k := *keys
		if k <= 0 {
			k = *n
		}
		err = clustertest.CommitsLog(*out, *n, k)
	case "txns":
		err = clustertest.TxnLog(*out, *n)
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
	return clustertest.PartitionsLogDir(out, n, size)
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
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []decode.RecordSpec{{Timestamp: clustertest.T0, Key: key, Value: value}})
		if err != nil {
			return err
		}
		if err := a.Append(raw); err != nil {
			return err
		}
	}
	return a.Close()
}
