// Command digestgen writes two digests (kseg digest's format) of the same
// busy log, without the log: testdata/bench/run.sh times kseg
// verify-chain over them, for logs far larger than the machine's disk
// (100 GiB by default). Each data batch's hash is an xxh3 of its header
// (digesttest.Options.HeadersOnly); a digest read does the same work as
// over a real log's.
//
//	go run ./testdata/bench/digestgen -gib 100 -batch 16KiB -out DIR
//	    writes DIR/u.digest and DIR/d.digest, and prints their size
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/digest/digesttest"
	"github.com/kseg/kseg/testdata/bench/benchcmd"
)

func main() {
	gib := flag.Int64("gib", 100, "GiB of log each digest describes")
	size := benchcmd.SizeFlag("batch", "16KiB", "bytes per data batch: N or NKiB")
	out := flag.String("out", "", "output directory (created)")
	hash := flag.String("hash", "xxh3-128", "the batch hash: xxh3-128 or sha256")
	flag.Parse()
	h, err := digest.ParseHash(*hash)
	if err != nil || *out == "" || *size < 62 {
		fmt.Fprintln(os.Stderr, "usage: digestgen -gib N -batch SIZE -out DIR [-hash xxh3-128|sha256]")
		os.Exit(2)
	}
	benchcmd.Main("digestgen", func() error { return write(*out, *gib, int(*size), h) })
}

// write writes out/u.digest and out/d.digest, each describing gib GiB of
// log in batches of size bytes, and prints their sizes.
func write(out string, gib int64, size int, h digest.Hash) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	batches := gib << 30 / int64(size)
	for _, name := range []string{"u", "d"} {
		path := filepath.Join(out, name+".digest")
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		logBytes, err := digesttest.Write(f, digesttest.Options{BatchSize: size, Batches: batches, Hash: h, HeadersOnly: true})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		st, _ := os.Stat(path)
		fmt.Printf("%s: %d bytes describing %d bytes of log in %d batches (%.3f %%)\n", path, st.Size(), logBytes, batches,
			100*float64(st.Size())/float64(logBytes))
	}
	return nil
}
