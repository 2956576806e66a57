package psm

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

// TestHangingVerdictIndependentOfSnapshot: the transaction txn-0 leaves
// open is judged by when it began, whether the replay loads the snapshot
// at the log end or reads the whole log (loading the snapshot used to date
// it from the producer's last batch: a warning instead of an error).
func TestHangingVerdictIndependentOfSnapshot(t *testing.T) {
	pd := segtest.OpenDir(t, filepath.Join("..", "testdata", "partitions", "txn-0"))
	if len(pd.Snapshots) == 0 {
		t.Fatal("txn-0 has no snapshot: the test would prove nothing")
	}
	verdict := func(from int64) (string, int64) {
		o := DefaultOptions()
		o.FromSnapshot = from
		res, err := Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Anomalies {
			if a.Kind == finding.HangingTransaction {
				return string(a.Severity()), res.SnapshotLoaded
			}
		}
		t.Fatalf("from %d: no hanging-transaction anomaly", from)
		return "", 0
	}
	full, _ := verdict(SnapshotNone)
	fromSnap, loaded := verdict(SnapshotLatest)
	if loaded < 0 {
		t.Fatal("no snapshot was loaded")
	}
	if full != fromSnap {
		t.Errorf("hanging-transaction is %s from the log start but %s from the snapshot at %d", full, fromSnap, loaded)
	}
}
