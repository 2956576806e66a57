// Command decodefloor is the floor of a deep dump: what is left of
// `kseg dump --deep` when nothing is rendered. It memory-maps each .log
// whole, frames its batches, and on every core (GOMAXPROCS goroutines, each
// a contiguous share of the bytes) checks each batch's CRC, decompresses it
// and walks its records with kseg's own decode.Decoder — the same codecs
// (klauspost gzip and zstd, s2 snappy, pierrec lz4) and record parser a
// dump uses — then prints the counts. testdata/bench/run.sh puts it next to
// the deep-dump target: no renderer can beat it, so it says how much of the
// gap to the franz-go peer is decompression.
//
//	go run ./testdata/bench/decodefloor FILE.log|DIR...
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/testdata/bench/benchcmd"
	"github.com/kseg/kseg/testdata/bench/logfiles"
)

func main() {
	benchcmd.Main("decodefloor", func() error {
		return logfiles.EachMapped(os.Args[1:], func(f string, data []byte) error {
			batches, records, err := decodeFile(f, data)
			if err == nil {
				fmt.Printf("%s: %d batches, %d records\n", f, batches, records)
			}
			return err
		})
	})
}

func decodeFile(path string, data []byte) (batches, records int64, err error) {
	// Frame: the batch boundaries (a walk of the headers).
	var starts []int
	for p := 0; len(data)-p > decode.HeaderSizeUpToMagic; {
		end := p + decode.LogOverhead + int(binary.BigEndian.Uint32(data[p+8:]))
		if end > len(data) || end <= p {
			break
		}
		starts = append(starts, p)
		p = end
	}
	if len(starts) == 0 {
		return 0, 0, nil
	}
	// Each goroutine decodes a contiguous run of batches holding about
	// 1/n of the bytes.
	n := runtime.GOMAXPROCS(0)
	end := starts[len(starts)-1] + decode.LogOverhead + int(binary.BigEndian.Uint32(data[starts[len(starts)-1]+8:]))
	counts := make([]int64, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	i := 0
	for w := range n {
		j := i
		for j < len(starts) && starts[j] < end*(w+1)/n {
			j++
		}
		run := starts[i:j]
		i = j
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d decode.Decoder
			d.MaxDecompressed = decode.DefaultMaxDecompressed
			for _, p := range run {
				b, err := decode.ParseBatch(data[p:])
				if err == nil {
					_ = b.CRCValid()
					err = d.Records(&b, func(*decode.Record) error { counts[w]++; return nil })
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: batch at %d: %w", path, p, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range counts {
		records += c
	}
	return int64(len(starts)), records, firstErr
}
