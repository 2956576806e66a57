package psm

import (
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

// TestLogStartInsideATransactionIsNoAnomaly: after DeleteRecords the log
// start lies inside a segment, after the data of a transaction whose
// COMMIT lies above it, and the producer's next transaction goes on from
// its last sequence (transaction version 1). A replay from the log start
// meets a marker with no transaction it saw begin and then a sequence
// with no batch before it; neither is the log's doing, and Kafka's
// rebuild (origin REPLICATION) checks neither (issue 27, item 3). They
// used to be marker-without-txn and sequence-gap.
func TestLogStartInsideATransactionIsNoAnomaly(t *testing.T) {
	dirs, err := segtest.BrokerShaped(t.TempDir(), "deleterecords-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		pd, err := segment.OpenPartitionDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.LogStartOffset = segtest.DeleteRecordsLogStart
		o.FromSnapshot = SnapshotNone
		res, err := Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		_, checked, err := CheckSnapshots(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Result{res, checked} {
			for _, a := range r.Anomalies {
				if a.Kind != finding.SnapshotIgnored {
					t.Errorf("%s: %s at %d (producer %d): %s", dir, a.Kind, a.Offset, a.ProducerID, a.Message)
				}
			}
		}
	}
}
