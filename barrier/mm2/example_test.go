package mm2_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/barrier/mm2"
	"github.com/kseg/kseg/barrier/mm2/mm2test"
)

// Verify a replica that MM2 wrote while a task restarted: it copied
// source offsets 46..50 twice.
func ExampleVerify() {
	dir, _ := os.MkdirTemp("", "kseg-mm2-example-")
	defer os.RemoveAll(dir)
	src, tgt := filepath.Join(dir, "a", "orders-0"), filepath.Join(dir, "b", "A.orders-0")
	if _, err := mm2test.WriteSource(src, mm2test.SourceOptions{Records: 100}); err != nil {
		fmt.Println(err)
		return
	}
	fault := mm2test.Fault{Kind: mm2test.Restart, At: 50, N: 5}
	if _, err := mm2test.Replicate(src, mm2test.Paths{Target: tgt}, mm2test.Options{Fault: fault}); err != nil {
		fmt.Println(err)
		return
	}

	rep, err := mm2.Verify(src, tgt, mm2.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.OK(), rep.Matched, rep.Copies)
	for _, r := range rep.Runs {
		fmt.Println(r.Kind, r.Source, r.Target)
	}
	// Output:
	// false 100 105
	// duplicate-records {46 50} {51 55}
}
