package psm

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// TestReadSegmentsReplaysAsMapped: a replay reading its segments
// (Options.ReadSegments, as a mirror's read-back replays) finds exactly
// what a mapped one finds, aborted transactions and producers included,
// with and without CRC checks.
func TestReadSegmentsReplaysAsMapped(t *testing.T) {
	dir := t.TempDir()
	if err := segtest.LogDir(dir, 1, 3<<20, segtest.LargeOptions{Seed: 11}); err != nil {
		t.Fatal(err)
	}
	pd, err := segment.OpenPartitionDir(filepath.Join(dir, "bench-0"))
	if err != nil {
		t.Fatal(err)
	}
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
