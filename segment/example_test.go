package segment_test

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// Open a partition directory, frame the batches of each segment as the
// broker's recovery reads them, and see where the valid bytes end. The
// fixture testdata/broken/torn-tail/events-0 holds only the first 40 bytes
// of its last batch, as a crash mid-write leaves it; recovery would
// truncate the segment to its 535 valid bytes.
func Example() {
	pd, err := segment.OpenPartitionDir("../testdata/broken/torn-tail/events-0")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range pd.Segments {
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			fmt.Println(err)
			return
		}
		sc := lf.Scanner(segment.ScanOptions{})
		batches := 0
		for sc.Next() {
			batches++ // sc.Batch() is the decode.Batch at sc.Pos()
		}
		if err := sc.Err(); err != nil { // I/O, not damage
			fmt.Println(err)
		}
		t := sc.Tail()
		fmt.Printf("%s: %d batches, %d valid bytes, then %s (%d bytes)\n",
			filepath.Base(s.Log), batches, t.ValidBytes, t.Kind, t.InvalidBytes())
		sc.Close()
		lf.Close()
	}
	// Output:
	// 00000000000000000000.log: 5 batches, 535 valid bytes, then torn-batch (40 bytes)
}

// Read a producer snapshot: the state a restarting broker loads before it
// replays the log after it.
func ExampleReadProducerSnapshot() {
	entries, err := segment.ReadProducerSnapshot("../testdata/partitions/txn-0/00000000000000000019.snapshot")
	if err != nil {
		fmt.Println(err) // a *decode.CorruptError, with Kafka's message in it
		return
	}
	for _, e := range entries {
		fmt.Printf("producer %d epoch %d lastSequence %d lastOffset %d currentTxnFirstOffset %d\n",
			e.ProducerID, e.ProducerEpoch, e.LastSequence, e.LastOffset, e.CurrentTxnFirstOffset)
	}
	// Output:
	// producer 2000 epoch 1 lastSequence 0 lastOffset 15 currentTxnFirstOffset -1
	// producer 2001 epoch 0 lastSequence 3 lastOffset 10 currentTxnFirstOffset -1
	// producer 2002 epoch 1 lastSequence 3 lastOffset 18 currentTxnFirstOffset 8
	// producer 2003 epoch 0 lastSequence 1 lastOffset 13 currentTxnFirstOffset -1
}

// Where broker recovery cuts a segment, and why: LogSegment.recover's
// rule, which dump reports, repair plans from and inject-barrier's
// --repair-tail takes. The torn-tail fixture's last batch is cut short.
func ExampleRecover() {
	r, err := segment.Recover("../testdata/broken/torn-tail/events-0/00000000000000000000.log", 0, segment.RecoverOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d batches kept, next offset %d, valid bytes %d of %d\n", r.Batches, r.NextOffset, r.ValidBytes, r.Size)
	if c := r.Cut; c != nil {
		fmt.Printf("cut: %s at position %d (%d bytes), damage %v\n", c.Kind, c.Position, c.Bytes, c.Kind.Damage())
	}
	// Output:
	// 5 batches kept, next offset 10, valid bytes 535 of 575
	// cut: torn-tail at position 535 (40 bytes), damage true
}
