package mirror_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/barrier/mirror"
)

// Plan a mirror of testdata/partitions/orders-0 into a new destination
// without changing a byte (what `kseg mirror --dry-run` prints): every
// batch, into one segment of the broker's default 1 GiB. Then check an edge
// as verify-chain does, here the source against itself: every batch
// mirrored, no barrier of its own, in sync.
func ExamplePlanMirror() {
	logDir, err := os.MkdirTemp("", "kseg-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(logDir)
	src := "../../testdata/partitions/orders-0"
	p, err := mirror.PlanMirror(src, filepath.Join(logDir, "orders-0"), mirror.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("new directory %v: offsets [%d, %d), %d batches, segments %v\n", p.CreateDir, p.From, p.To, p.Copied.Batches, p.SegmentsCreated)

	e, err := mirror.VerifyEdge(src, src, mirror.ChainOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("edge: %s, %d errors\n", e.Status, e.Errors())
	// Output:
	// new directory true: offsets [0, 73), 30 batches, segments [0]
	// edge: in-sync, 0 errors
}
