// Command gen writes large, realistic Kafka partitions for benchmarks:
// mixed codecs, transactional and idempotent producers with COMMIT and
// ABORT markers, headers, large (100 KiB) and tiny records, all from a fixed
// seed (see segtest.LargeSegment for the mix).
//
//	go run ./testdata/bench/gen -size 1GiB -out DIR [-codecs mixed|none|gzip|snappy|lz4|zstd|LIST] [-seed N]
//	    writes DIR/bench-0/00000000000000000000.log: one segment of at least -size bytes
//	go run ./testdata/bench/gen -partitions 1000 -size 64KiB -out DIR
//	    writes DIR as a log directory of 1000 partitions of about -size bytes each,
//	    appended as a broker appends (segments, indexes, snapshots, checkpoints)
//	go run ./testdata/bench/gen -size 160MiB -segment-bytes 16KiB -out DIR
//	    writes DIR/bench-0 as one partition of about -size bytes appended as a
//	    broker appends, rolling a segment at -segment-bytes (about 10,000 here):
//	    the source of a mirror into many destination segments
//	go run ./testdata/bench/gen -producers 1000000 -out DIR
//	    writes DIR/bench-0/00000000000000000000.log: one batch of one record from
//	    each of that many idempotent producers (a million: 69 MB)
//	go run ./testdata/bench/gen -mm2-replica SRC -out DIR
//	    writes DIR/A.<topic>-<partition>, a MirrorMaker 2 replica of the partition
//	    SRC, as MirrorSourceTask writes one (barrier/mm2/mm2test), and its offset
//	    syncs in DIR/mm2-offset-syncs.B.internal-0
//
// LIST is a comma-separated list of codecs, e.g. zstd,lz4,gzip.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kseg/kseg/barrier/mm2/mm2test"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
	"github.com/kseg/kseg/testdata/bench/benchcmd"
)

func main() { benchcmd.Main("gen", run) }

func run() error {
	size := benchcmd.SizeFlag("size", "1GiB", "bytes per segment (or per partition with -partitions): N, NKiB, NMiB, NGiB")
	out := flag.String("out", "", "output directory (created)")
	codecsFlag := flag.String("codecs", "mixed", "mixed, none, gzip, snappy, lz4, zstd, or a comma-separated list")
	seed := flag.Uint64("seed", 1, "content seed")
	partitions := flag.Int("partitions", 0, "write a log directory of this many partitions instead of one large segment")
	producers := flag.Int("producers", 0, "write one segment holding one batch from each of this many idempotent producers instead")
	segBytes := benchcmd.SizeFlag("segment-bytes", "", "write one partition rolling segments at this size (N, NKiB, NMiB) instead of one large segment")
	replicaOf := flag.String("mm2-replica", "", "write an MM2 replica of this partition directory instead")
	flag.Parse()
	if *out == "" {
		return errors.New("-out is required")
	}
	if *replicaOf != "" {
		return mm2Replica(*replicaOf, *out)
	}
	opts := segtest.LargeOptions{Seed: *seed}
	var err error
	if opts.Codecs, err = parseCodecs(*codecsFlag); err != nil {
		return err
	}
	start := time.Now()
	switch {
	case *producers > 0:
		return writeProducers(filepath.Join(*out, "bench-0"), *producers, start)
	case *segBytes > 0:
		dir := filepath.Join(*out, "bench-0")
		if err := segtest.Partition(dir, *size, *segBytes, opts); err != nil {
			return err
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
		fmt.Printf("%s: about %d bytes in %d segments of at most %d bytes in %s\n", dir, *size, len(logs), *segBytes, time.Since(start).Round(time.Millisecond))
		return nil
	case *partitions > 0:
		if err := segtest.LogDir(*out, *partitions, *size, opts); err != nil {
			return err
		}
		fmt.Printf("%s: %d partitions of about %d bytes in %s\n", *out, *partitions, *size, time.Since(start).Round(time.Millisecond))
		return nil
	}
	return writeLargeSegment(filepath.Join(*out, "bench-0"), *size, opts, start)
}

// parseCodecs reads -codecs: "mixed" (nil: segtest's rotation) or a
// comma-separated list of codec names.
func parseCodecs(s string) ([]decode.Compression, error) {
	if s == "mixed" {
		return nil, nil
	}
	var cs []decode.Compression
	for _, name := range strings.Split(s, ",") {
		c, err := decode.ParseCompression(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// createFirstSegment creates dir and its first .log, which must not exist.
func createFirstSegment(dir string) (string, *os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	return path, f, err
}

// writeLargeSegment writes one segment of about size bytes into dir (which
// must not hold it yet) and prints what it holds.
func writeLargeSegment(dir string, size int64, opts segtest.LargeOptions, start time.Time) error {
	path, st, err := segtest.LargeSegmentFile(dir, size, opts)
	if err != nil {
		return err
	}
	d := time.Since(start)
	fmt.Printf("%s: %d bytes, %d batches (%d control: %d commits, %d aborts), %d records, offsets 0..%d; %s (%.0f MiB/s)\n",
		path, st.Bytes, st.Batches, st.ControlBatches, st.Commits, st.Aborts, st.Records, st.NextOffset-1,
		d.Round(time.Millisecond), float64(st.Bytes)/(1<<20)/d.Seconds())
	for c := decode.CompressionNone; c <= decode.CompressionZstd; c++ {
		if n := st.BatchesByCodec[c]; n > 0 {
			fmt.Printf("  %-6s %d batches\n", c, n)
		}
	}
	return nil
}

// writeProducers writes dir/00000000000000000000.log: n v2 batches of one
// record, each from its own idempotent producer (producerId 1000+i, epoch
// 0, baseSequence 0), so that a producer-state replay holds n producers.
func writeProducers(dir string, n int, start time.Time) error {
	path, f, err := createFirstSegment(dir)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 4<<20)
	var buf []byte
	for i := range n {
		buf, err = decode.AppendBatch(buf[:0], decode.BatchSpec{BaseOffset: int64(i), PartitionLeaderEpoch: 1, ProducerID: int64(1000 + i)},
			[]decode.RecordSpec{{Timestamp: 1_700_000_000_000 + int64(i), Value: []byte("v")}})
		if err != nil {
			f.Close()
			return err
		}
		if _, err := w.Write(buf); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s: %d producers, one batch each, in %s\n", path, n, time.Since(start).Round(time.Millisecond))
	return nil
}

// mm2Replica writes an MM2 replica of src under out, with MM2's defaults
// (max.poll.records 500, batch.size 16384, offset.lag.max 100) and the
// broker's segment.bytes.
func mm2Replica(src, out string) error {
	name, ok := segment.ParsePartitionDir(filepath.Base(filepath.Clean(src)))
	if !ok {
		return fmt.Errorf("%s: not named <topic>-<partition>", src)
	}
	start := time.Now()
	tgt := filepath.Join(out, segment.PartitionDirNameFor("A."+name.Topic, name.Partition))
	syncs := filepath.Join(out, "mm2-offset-syncs.B.internal-0")
	res, err := mm2test.Replicate(src, mm2test.Paths{Target: tgt, OffsetSyncs: syncs}, mm2test.Options{SegmentBytes: segment.DefaultSegmentBytes})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d copies, %d offset syncs; %s\n", tgt, res.Copies, len(res.Syncs), time.Since(start).Round(time.Millisecond))
	return nil
}
