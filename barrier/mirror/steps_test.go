package mirror

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMirrorInStepsIsOneMirror: a copy made in two runs holds the bytes
// one run writes, whatever offset the first run stops at. The second run
// appends to the first run's active segment, whose time index ends with
// the entry the first run's close appended (the max timestamp so far);
// LogSegment.recover writes no such entry, so Kafka's recovery rewrote
// the .timeindex of every two-step copy whose first run ended between
// two offset-index entries (issue 27: the oracle sweep).
func TestMirrorInStepsIsOneMirror(t *testing.T) {
	batches := mirrorBatches(t)
	src := writeFixtureSeg(t, batches, 400)
	one := filepath.Join(t.TempDir(), "logs", "mirror-0")
	os.MkdirAll(filepath.Dir(one), 0o755)
	mustMirror(t, src, one, mirrorOpts(-1))
	want := kafkaFileSet(t, one)
	for upto := int64(1); upto < 18; upto++ {
		two := filepath.Join(t.TempDir(), "logs", "mirror-0")
		os.MkdirAll(filepath.Dir(two), 0o755)
		mustMirror(t, src, two, mirrorOpts(upto))
		mustMirror(t, src, two, mirrorOpts(-1))
		got := kafkaFileSet(t, two)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("first run up to %d: %s differs from one run's", upto, k)
			}
		}
		if len(got) != len(want) {
			t.Errorf("first run up to %d: %d files, one run writes %d", upto, len(got), len(want))
		}
	}
}
