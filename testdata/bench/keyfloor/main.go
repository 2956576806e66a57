// Command keyfloor is the floor of kseg groups and kseg txns: the least
// any tool that rebuilds a compacted internal topic's state must do. It
// reads each .log of the partition directories given (segments in
// base-offset order, as their names sort), frames the batches, checks
// each CRC-32C, walks the records with kseg's own decode.Decoder and
// keeps the latest value of every key in a map (a copy of the key and of
// the value; a tombstone deletes the key) — what the log cleaner keeps,
// and what a coordinator loads before it interprets a single byte. It
// decodes no schema, and prints the number of live keys and their bytes.
// It runs on one core.
//
//	go run ./testdata/bench/keyfloor DIR/__consumer_offsets-0 [DIR/...]
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/testdata/bench/benchcmd"
)

func main() { benchcmd.Main("keyfloor", run) }

func run() error {
	live := map[string][]byte{}
	var records int64
	for _, dir := range os.Args[1:] {
		logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
		if err != nil {
			return err
		}
		sort.Strings(logs)
		for _, f := range logs {
			n, err := replay(f, live)
			if err != nil {
				return err
			}
			records += n
		}
	}
	var bytes int64
	for k, v := range live {
		bytes += int64(len(k) + len(v))
	}
	fmt.Printf("%d records, %d live keys, %d bytes of keys and values\n", records, len(live), bytes)
	return nil
}

// replay applies every record of one segment to live. The segment is
// read through a 1 MiB buffer (a mapping of it would count its pages in
// the floor's resident memory; kseg reads through bounded windows too).
func replay(path string, live map[string][]byte) (records int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var d decode.Decoder
	d.MaxDecompressed = decode.DefaultMaxDecompressed
	var buf []byte
	for pos := int64(0); ; {
		head, err := r.Peek(decode.LogOverhead)
		if err != nil {
			return records, nil // the end, or a torn header
		}
		size := decode.LogOverhead + int(binary.BigEndian.Uint32(head[8:]))
		if size <= decode.LogOverhead || size > 64<<20 {
			return records, nil
		}
		if cap(buf) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(r, buf); err != nil {
			return records, nil // a torn batch
		}
		at := pos
		pos += int64(size)
		b, err := decode.ParseBatch(buf)
		if err != nil || !b.CRCValid() || b.IsControl() {
			continue
		}
		err = d.Records(&b, func(r *decode.Record) error {
			records++
			if r.Value == nil {
				delete(live, string(r.Key))
				return nil
			}
			if v, ok := live[string(r.Key)]; ok && cap(v) >= len(r.Value) {
				live[string(r.Key)] = append(v[:0], r.Value...)
				return nil
			}
			live[string(r.Key)] = append([]byte(nil), r.Value...)
			return nil
		})
		if err != nil {
			return records, fmt.Errorf("%s: batch at %d: %w", path, at, err)
		}
	}
}
