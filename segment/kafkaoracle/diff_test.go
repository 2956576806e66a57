package kafkaoracle

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestDiffReadsBothSides: replay-psm's object and the driver's line read
// into the fields Diff compares (Judged, under the same JSON names on both
// sides), so that agreeing sides diff to nothing and each disagreement is
// one line naming the field, kseg's value first.
func TestDiffReadsBothSides(t *testing.T) {
	const judged = `"logStartOffset":1,"logEndOffset":9,"highWatermark":8,"lastStableOffset":4,"firstUndecidedOffset":4,` +
		`"producers":[{"producerId":7,"producerEpoch":2,"lastSequence":3,"lastOffset":8,"offsetDelta":0,"lastTimestamp":5,"coordinatorEpoch":-1,"currentTxnFirstOffset":4}],` +
		`"ongoingTransactions":[{"producerId":7,"firstOffset":4}]`
	s, err := ParseState([]byte(`{` + judged + `,"clock":5}`))
	if err != nil {
		t.Fatal(err)
	}
	var l Load
	if err := json.Unmarshal([]byte(`{"dir":"d",`+judged+`,"recoveryPoint":9,"mapEndOffset":9,"producerIdsAfterExpiryCheck":[7]}`), &l); err != nil {
		t.Fatal(err)
	}
	if s.LogEndOffset != 9 || s.HighWatermark != 8 || *s.Clock != 5 || l.LastStableOffset != 4 || l.RecoveryPoint != 9 ||
		len(s.Producers) != 1 || len(l.Kept()) != 1 || len(l.OngoingTransactions) != 1 {
		t.Fatalf("read %+v and %+v", s, l)
	}
	if d := Diff(s, &l); len(d) != 0 {
		t.Fatalf("agreeing sides differ: %q", d)
	}
	l.HighWatermark = 9
	l.OngoingTransactions[0].FirstOffset = 5
	want := []string{"highWatermark: kseg 8, Kafka 9", "ongoing transactions: kseg [{7 4}], Kafka [{7 5}]"}
	if d := Diff(s, &l); !slices.Equal(d, want) {
		t.Fatalf("Diff = %q, want %q", d, want)
	}
}
