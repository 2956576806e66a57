package replaypsm

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
)

// manyProducersView is a replay result of n producers, one batch each.
func manyProducersView(n int) *replayPSMView {
	r := &psm.Result{Partition: "many-0", SnapshotLoaded: -1, FirstUndecidedOffset: -1, Clock: -1}
	r.Producers = make([]psm.Entry, n)
	for i := range r.Producers {
		r.Producers[i] = psm.Entry{ProducerID: int64(1_000_000 + i), ProducerEpoch: 1, CoordinatorEpoch: -1, LastTimestamp: 1_700_000_000_000,
			CurrentTxnFirstOffset: -1, Batches: []psm.BatchMetadata{{LastSeq: 3, OffsetDelta: 3, LastOffset: int64(4*i + 3), Timestamp: 1_700_000_000_000}}}
	}
	r.LogEndOffset = int64(4 * n)
	return &replayPSMView{Dir: "many-0", Result: r, Opts: psm.DefaultOptions()}
}

// TestReplayPSMTextFormatsShownRowsOnly: the text printer formats the
// producer rows it shows (15 without --verbose), not every producer's
// (issue 29: a million rows formatted to print 15). Counted in
// allocations: 10,000 producers cost what 100 do.
func TestReplayPSMTextFormatsShownRowsOnly(t *testing.T) {
	allocs := func(n int) float64 {
		v := manyProducersView(n)
		s, _, _ := ui.TestStreams()
		s.Out = io.Discard
		return testing.AllocsPerRun(3, func() {
			if err := (&textReplayPSMPrinter{s: s}).Print(v); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(10_000)
	t.Logf("%.0f allocations with 100 producers, %.0f with 10,000", small, large)
	if large > small+20 {
		t.Errorf("printing 10,000 producers allocates %.0f times, 100 producers %.0f: rows not shown are formatted", large, small)
	}
}

// maxWrite records the largest single write.
type maxWrite struct {
	n, max int
	all    []byte
}

func (w *maxWrite) Write(p []byte) (int, error) {
	w.n++
	w.max = max(w.max, len(p))
	w.all = append(w.all, p...)
	return len(p), nil
}

// TestReplayPSMJSONStreams: the JSON printer writes its one object as it
// grows, in pieces of about 256 KiB, not held whole (a million producers
// are 285 MB of JSON; the printer held all of it, twice over as it grew),
// and the pieces make the same object.
func TestReplayPSMJSONStreams(t *testing.T) {
	const n = 20_000
	v := manyProducersView(n)
	s, _, _ := ui.TestStreams()
	w := &maxWrite{}
	s.Out = w
	if err := (&jsonReplayPSMPrinter{s: s}).Print(v); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Type      string `json:"type"`
		Producers []struct {
			ProducerID int64 `json:"producerId"`
			Batches    []struct {
				FirstSequence int32 `json:"firstSequence"`
			} `json:"batches"`
		} `json:"producers"`
	}
	if err := json.Unmarshal(w.all, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Type != "producerState" || len(obj.Producers) != n || obj.Producers[n-1].ProducerID != 1_000_000+n-1 || obj.Producers[0].Batches[0].FirstSequence != 0 {
		t.Fatalf("the object read back: %s, %d producers", obj.Type, len(obj.Producers))
	}
	if w.max > 512<<10 || w.n < 2 {
		t.Errorf("%d writes, the largest %d bytes of %d: the object is held whole", w.n, w.max, len(w.all))
	}
}
