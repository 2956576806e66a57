// Command gen regenerates kseg's binary test fixtures (testdata/partitions
// and testdata/broken) from the code in segment/segtest, the example log
// directories of kseg groups and kseg txns (testdata/logdirs) from
// psm/cluster/clustertest, and the MirrorMaker 2 replicas of kseg verify-mm2
// (testdata/mm2) from barrier/mm2/mm2test. Run it from the repository root:
//
//	go run ./testdata/gen            # writes ./testdata
//	go run ./testdata/gen -out DIR   # writes DIR/partitions, DIR/broken, DIR/logdirs, DIR/mm2
//
// The output is deterministic; segment/segtest's tests check that it
// reproduces the committed files byte for byte.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/barrier/mm2/mm2test"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment/segtest"
)

func main() {
	out := flag.String("out", "testdata", "directory to write partitions/ and broken/ into")
	flag.Parse()
	if err := segtest.Generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := clustertest.Generate(filepath.Join(*out, "logdirs")); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := mm2test.Generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
