package psm_test

import (
	"fmt"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// Rebuild a partition's producer state from its log alone, as a broker
// does after an unclean shutdown without a usable snapshot, and read off
// the last stable offset, the open transaction that holds it and the
// aborted transactions recovery writes to the .txnindex.
func Example() {
	pd, err := segment.OpenPartitionDir("../testdata/partitions/txn-0")
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := psm.DefaultOptions()
	opts.FromSnapshot = psm.SnapshotNone // psm.SnapshotLatest: as a restarting broker
	r, err := psm.Rebuild(pd, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log [%d, %d), last stable offset %d\n", r.LogStartOffset, r.LogEndOffset, r.LastStableOffset)
	for _, t := range r.Ongoing {
		fmt.Printf("open: producer %d from offset %d\n", t.ProducerID, t.FirstOffset)
	}
	for _, a := range r.Aborted {
		fmt.Printf("aborted: producer %d, offsets %d..%d\n", a.ProducerID, a.FirstOffset, a.LastOffset)
	}
	// Output:
	// log [0, 19), last stable offset 8
	// open: producer 2002 from offset 8
	// aborted: producer 2001, offsets 2..11
	// aborted: producer 2003, offsets 12..14
}

// Replay through KIP-1279 MIRROR_PID_RESET barriers: each empties the
// producer map at its offset, in log order.
func Example_barriers() {
	pd, err := segment.OpenPartitionDir("../testdata/partitions/control-0")
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := psm.DefaultOptions()
	opts.FromSnapshot = psm.SnapshotNone
	r, err := psm.Rebuild(pd, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range r.Barriers {
		src := "none"
		if b.SourceClusterID != nil {
			src = *b.SourceClusterID
		}
		fmt.Printf("barrier at %d cleared %d producers (sourceClusterId %s)\n", b.Offset, b.ProducersCleared, src)
	}
	fmt.Printf("%d producers at the log end\n", len(r.Producers))
	// Output:
	// barrier at 11 cleared 2 producers (sourceClusterId none)
	// barrier at 12 cleared 0 producers (sourceClusterId bhKx9kzDTW6IYAX6MriLZQ)
	// 0 producers at the log end
}
