package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// samePlan reports how two plans of one mirror differ in what they do
// ("" when not): the file operations and everything the plan reports
// but how much of the destination was compared.
func samePlan(a, b *Plan) string {
	type does struct {
		DstLog                                 OffsetRange
		From, To, NewLogEndOffset, EndSnapshot int64
		AppendSegment                          int64
		Copied                                 Copied
		Barriers, SegmentsCreated              []int64
		SnapshotsCreated, SnapshotsDeleted     []int64
		Index, TimeIndex, TxnIndex             edit.IndexChange
		AbortedTxns                            []segment.AbortedTxn
		EpochEntriesRemoved, EpochEntriesAdded []segment.EpochEntry
		Ops                                    []edit.FileOp
		Warnings                               []string
		NothingToDo                            bool
		Reason                                 string
	}
	of := func(p *Plan) does {
		return does{p.DstLog, p.From, p.To, p.NewLogEndOffset, p.EndSnapshot, p.AppendSegment, p.Copied, p.Barriers, p.SegmentsCreated,
			p.SnapshotsCreated, p.SnapshotsDeleted, p.Index, p.TimeIndex, p.TxnIndex, p.AbortedTxns, p.EpochEntriesRemoved, p.EpochEntriesAdded,
			p.Ops, p.Warnings, p.NothingToDo, p.Reason}
	}
	da, db := of(a), of(b)
	if reflect.DeepEqual(da, db) {
		return ""
	}
	va, vb := reflect.ValueOf(da), reflect.ValueOf(db)
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return va.Type().Field(i).Name
		}
	}
	return "?"
}

// TestMirrorFromTailPlansAsFullCompare: for every prefix of the fixture
// (transactions, aborts, barriers; small segments and one big one) that a
// mirror left as the destination, the mirror of the rest planned from the
// destination's tail (its last batch compared, its end snapshot loaded)
// is exactly the plan of a full comparison (Options.FullCompare): the
// same file operations, byte for byte, and the same report, but for
// Compared. Before, every incremental mirror compared and replayed the
// whole destination.
func TestMirrorFromTailPlansAsFullCompare(t *testing.T) {
	for _, segBytes := range []int64{300, 1 << 20} {
		for upto := int64(1); upto <= 18; upto++ {
			src, dst := segmentedPair(t)
			o := mirrorOpts(upto)
			o.SegmentBytes = segBytes
			first := mustMirror(t, src, dst, o).Plan
			if segBytes == 300 && upto%2 == 0 && len(first.SnapshotsCreated) > 0 && first.EndSnapshot >= 0 {
				// An end snapshot a broker never wrote (an unclean
				// shutdown): the state is loaded from the last roll's
				// snapshot and the batches after it replayed.
				if err := os.Remove(filepath.Join(dst, segment.SegmentFileName(first.EndSnapshot, segment.SnapshotSuffix))); err != nil {
					t.Fatal(err)
				}
			}
			// To the end, and to an offset the destination already holds.
			o.Upto = -1
			if upto%3 == 0 {
				o.Upto = upto / 2
			}
			tail, full := tailAndFull(t, src, dst, o)
			if full.ComparedLastBatch || (tail.DstLog.End > 0 && !tail.ComparedLastBatch) {
				t.Fatalf("segments %d, prefix %d: compared the last batch: tail %v, full %v", segBytes, upto, tail.ComparedLastBatch, full.ComparedLastBatch)
			}
			if d := samePlan(tail, full); d != "" {
				t.Fatalf("segments %d, prefix %d: planned from the tail, %s differs from the full comparison's:\n%+v\n%+v", segBytes, upto, d, tail, full)
			}
			if !tail.NothingToDo {
				rep, err := Apply(tail, edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk")})
				if err != nil || !rep.Verification.OK() {
					t.Fatalf("segments %d, prefix %d: applying the plan from the tail: %v %+v", segBytes, upto, err, rep)
				}
			}
		}
	}
}

// TestMirrorFromTailFallsBack: whatever does not add up at the
// destination's tail leaves the plan to the full comparison, unchanged:
// no producer snapshot, a last segment without .index, a last batch the
// source does not hold (a divergence, reported as before).
func TestMirrorFromTailFallsBack(t *testing.T) {
	prefix := func(t *testing.T) (src, dst string, o Options) {
		src, dst = segmentedPair(t)
		o = mirrorOpts(9)
		o.SegmentBytes = 1 << 20
		mustMirror(t, src, dst, o)
		o.Upto = -1
		return src, dst, o
	}
	for _, tc := range []struct {
		what   string
		change func(t *testing.T, dst string)
	}{
		{"no producer snapshot", func(t *testing.T, dst string) {
			snaps, _ := filepath.Glob(filepath.Join(dst, "*"+segment.SnapshotSuffix))
			for _, s := range snaps {
				if err := os.Remove(s); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"no .index", func(t *testing.T, dst string) {
			if err := os.Remove(filepath.Join(dst, segment.SegmentFileName(0, segment.IndexSuffix))); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		src, dst, o := prefix(t)
		tc.change(t, dst)
		tail, full := tailAndFull(t, src, dst, o)
		if tail.ComparedLastBatch || tail.Compared != full.Compared || samePlan(tail, full) != "" {
			t.Errorf("%s: planned from the tail anyway (%v, compared %d, full %d)", tc.what, tail.ComparedLastBatch, tail.Compared, full.Compared)
		}
	}

	// The destination's own batch at its end: the full comparison finds
	// and reports the divergence.
	src, dst, o := prefix(t)
	so := segment.AppenderOptions{SegmentBytes: 1 << 20, IndexIntervalBytes: 100}
	barriertest.AppendLocal(t, dst, [][]byte{barriertest.DataBatch(t, 0, 1, 7007, 0, 0, false, 0)}, so)
	_, err := PlanMirror(src, dst, o)
	var de *DivergedError
	if !errors.As(err, &de) {
		t.Fatalf("a destination with a batch of its own at its end: %v, want a divergence", err)
	}
}

// tailAndFull plans the mirror of src into dst with o twice: from the
// destination's tail, and with FullCompare.
func tailAndFull(t *testing.T, src, dst string, o Options) (tail, full *Plan) {
	t.Helper()
	tail, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	o.FullCompare = true
	if full, err = PlanMirror(src, dst, o); err != nil {
		t.Fatal(err)
	}
	return tail, full
}
