package barrier_test

import (
	"fmt"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/decode"
)

// Build the MIRROR_PID_RESET barrier a failover appends, check it as a
// reader must, and recognise it as the KIP-1279 prototype does.
func Example() {
	src := "bhKx9kzDTW6IYAX6MriLZQ"
	raw := barrier.Build(barrier.Spec{BaseOffset: 73, PartitionLeaderEpoch: 6, Timestamp: 1700000100000, SourceClusterID: &src})
	fmt.Printf("%d bytes, problems: %v\n", len(raw), barrier.ValidateBatch(raw))

	b, err := decode.ParseBatch(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("offset %d, control %v, producerId %d, is a barrier: %v\n", b.BaseOffset, b.IsControl(), b.ProducerID, barrier.Is(&b))

	// A batch that is not quite a barrier is named field by field.
	raw[22] |= 0x10 // set isTransactional; the CRC now fails too
	for _, p := range barrier.ValidateBatch(raw) {
		fmt.Println(p)
	}
	// Output:
	// 98 bytes, problems: []
	// offset 73, control true, producerId -1, is a barrier: true
	// transactional: isTransactional is true (attributes 0x0030)
	// crc: stored 0xb1c2f3a6, computed 0x75282600
}

// Plan an injection without changing a byte: what `kseg inject-barrier
// --dry-run` prints. In testdata/partitions/txn-0 producer 2002's
// transaction is still open at offset 8, so the cut is the last stable
// offset iterated to a fixed point: cutting at 8 reopens transactions whose
// markers lie beyond it, and so on down to 0.
func ExamplePlanInjection() {
	p, err := barrier.PlanInjection("../testdata/partitions/txn-0", barrier.InjectOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log end %d, last stable offset %d, cut %d (iterations %v)\n", p.LogEndOffset, p.LastStableOffset, p.Cut, p.CutIterations)
	for _, a := range p.Appended {
		fmt.Printf("append %s at offset %d\n", a.Kind, a.Offset)
	}
	// Output:
	// log end 19, last stable offset 8, cut 0 (iterations [8 2 0])
	// append MIRROR_PID_RESET at offset 0
}
