package barrier

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// TestInjectLeavesWhatTheBrokerLoads: an injection leaves the directory
// as a broker leaves it after loading it (issue 27, item 4, and Kafka's
// loader judged every output so): the snapshot at the old log end is a
// stray beside the new one, which removeStraySnapshots deletes, so the
// injection deletes it; and the cut segment's indexes are what
// LogSegment.recover writes (the time index's close entry, written at the
// broker's last shutdown, goes: recovery writes none).
func TestInjectLeavesWhatTheBrokerLoads(t *testing.T) {
	src := filepath.Join("..", "testdata", "partitions", "orders-0")
	dir := barriertest.Staged(t, src)
	o := planOpts()
	o.IndexIntervalBytes = segtest.IndexIntervals["orders-0"]
	p := mustPlan(t, dir, o)
	mustApply(t, p)
	if snaps, want := barriertest.SnapshotOffsets(t, dir), []int64{26, 53, p.NewLogEndOffset}; !slices.Equal(snaps, want) {
		t.Errorf("snapshots after the injection %v, want %v (the old log end's is a stray the broker deletes)", snaps, want)
	}
	pd := segtest.OpenDir(t, dir)
	last := pd.Segments[len(pd.Segments)-1]
	index, timeIndex, err := segment.RebuildIndexes(last.Log, last.BaseOffset, o.IndexIntervalBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{last.Index, index}, {last.TimeIndex, timeIndex}} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s: %x, recovery writes %x", filepath.Base(f.path), got, f.want)
		}
	}
}
