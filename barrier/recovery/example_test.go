package recovery_test

import (
	"fmt"

	"github.com/kseg/kseg/barrier/recovery"
)

// Plan a repair without changing a byte: what `kseg repair --dry-run`
// prints. testdata/broken/torn-tail/events-0 holds only the first 40 bytes
// of its last batch, as a crash mid-write leaves it: recovery cuts the
// segment at its last valid byte (segment.Recover) and the indexes and the
// producer snapshot follow.
func ExamplePlanRepair() {
	p, err := recovery.PlanRepair("../../testdata/broken/torn-tail/events-0", recovery.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range p.Segments {
		if s.Cut != nil {
			fmt.Printf("%s: %d batches kept, cut at position %d (%s, %d bytes)\n", s.Log, s.Batches, s.Cut.Position, s.Cut.Kind, s.Cut.Bytes)
		}
	}
	fmt.Printf("log end %d -> %d; %d file operations\n", p.LogEndOffset, p.NewLogEndOffset, len(p.Ops))
	// Output:
	// 00000000000000000000.log: 5 batches kept, cut at position 535 (torn-tail, 40 bytes)
	// log end 10 -> 10; 4 file operations
}
