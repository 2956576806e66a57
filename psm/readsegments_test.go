package psm

import (
	"reflect"
	"testing"
)

// TestReadSegmentsReplaysAsMapped: a replay reading its segments
// (Options.ReadSegments, as a mirror's read-back replays) finds exactly
// what a mapped one finds, aborted transactions and producers included,
// with and without CRC checks.
func TestReadSegmentsReplaysAsMapped(t *testing.T) {
	pd := largePartition(t, 3<<20, 11)
	if len(pd.Segments) < 2 {
		t.Fatalf("want several segments, have %d", len(pd.Segments))
	}
	for _, crc := range []bool{false, true} {
		o := DefaultOptions()
		o.FromSnapshot, o.VerifyCRC = SnapshotNone, crc
		mapped, err := Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		o.ReadSegments = true
		read, err := Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(mapped.Aborted) == 0 {
			t.Fatal("the partition has no aborted transaction to compare")
		}
		if !reflect.DeepEqual(mapped, read) {
			t.Errorf("VerifyCRC=%v: a read replay differs from a mapped one", crc)
		}
	}
}
