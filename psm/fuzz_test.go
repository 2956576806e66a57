package psm

import (
	"bytes"
	"cmp"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// FuzzReplay replays an arbitrary byte string as a log, batch by batch in
// log order as LogSegment.recover does, and checks invariants no input may
// break:
//   - no panic, and every error is a *decode.CorruptError inside its batch;
//   - at most five retained batches per producer (NUM_BATCHES_TO_RETAIN);
//   - right after a MIRROR_PID_RESET barrier no producer entry is left
//     (KIP-1279; the prototypes' pitfall was entries coming back);
//   - LSO ≤ high watermark ≤ log end, and the first undecided offset is the
//     oldest ongoing transaction's;
//   - a snapshot of the state round-trips through Kafka's file format and
//     loads back into the same entries;
//   - replay is deterministic.
func FuzzReplay(f *testing.F) {
	for _, seed := range replaySeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		st1, snap := replayBytes(t, log, false)
		st2, _ := replayBytes(t, log, false)
		if !reflect.DeepEqual(st1, st2) {
			t.Fatalf("replay is not deterministic")
		}
		// A log whose offsets run below its start (a corrupt baseOffset) has
		// no meaningful high watermark; State clamps it to the log start.
		if st1.LogEndOffset >= st1.LogStartOffset && (st1.HighWatermark > st1.LogEndOffset || st1.LastStableOffset > st1.HighWatermark) {
			t.Fatalf("LSO %d, HW %d, LEO %d out of order", st1.LastStableOffset, st1.HighWatermark, st1.LogEndOffset)
		}
		if len(st1.Ongoing) > 0 && st1.FirstUndecidedOffset != st1.Ongoing[0].FirstOffset {
			t.Fatalf("first undecided offset %d, oldest ongoing %d", st1.FirstUndecidedOffset, st1.Ongoing[0].FirstOffset)
		}
		if !slices.IsSortedFunc(st1.Ongoing, func(a, b Txn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) }) {
			t.Fatalf("ongoing transactions not sorted: %+v", st1.Ongoing)
		}
		for _, e := range st1.Producers {
			if len(e.Batches) > 5 {
				t.Fatalf("producer %d retains %d batches", e.ProducerID, len(e.Batches))
			}
		}
		// Snapshot round trip: encode, parse, load into a fresh manager
		// with a clock that expires nothing, snapshot again.
		enc := segment.EncodeProducerSnapshot(snap)
		back, err := segment.ParseProducerSnapshot(enc)
		if err != nil {
			t.Fatalf("own snapshot does not parse: %v", err)
		}
		m := NewManager(DefaultOptions())
		m.Load(back, st1.LogEndOffset, math.MinInt64/2)
		again := m.Snapshot()
		// ProducerStateManager.readSnapshot restores batch metadata only when
		// lastOffset >= 0: an entry whose last batch carried a negative
		// offset (only a corrupt log has one) loads without it.
		want := slices.Clone(snap)
		for i := range want {
			if want[i].LastOffset < 0 {
				want[i].LastSequence, want[i].LastOffset, want[i].OffsetDelta = -1, -1, 0
			}
			// Likewise currentTxnFirstOffset is present only when >= 0.
			if want[i].CurrentTxnFirstOffset < 0 {
				want[i].CurrentTxnFirstOffset = -1
			}
		}
		if !sameEntries(want, again) {
			t.Fatalf("snapshot does not survive a load:\n%+v\n%+v", snap, again)
		}
		// Honouring barriers never leaves more producers than ignoring them.
		ign, _ := replayBytes(t, log, true)
		if len(st1.Barriers) == 0 && len(ign.Producers) != len(st1.Producers) {
			t.Fatalf("no barrier, yet IgnoreBarriers changes the producers: %d vs %d", len(ign.Producers), len(st1.Producers))
		}
	})
}

func sameEntries(a, b []segment.SnapshotEntry) bool {
	// Compare, not subtraction: producer ids span the whole int64 range.
	byID := func(x, y segment.SnapshotEntry) int { return cmp.Compare(x.ProducerID, y.ProducerID) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, byID)
	slices.SortFunc(b, byID)
	return slices.Equal(a, b)
}

// replayBytes frames log with the segment scanner and applies each batch.
func replayBytes(t *testing.T, log []byte, ignoreBarriers bool) (*Result, []segment.SnapshotEntry) {
	opts := DefaultOptions()
	opts.IgnoreBarriers = ignoreBarriers
	m := NewManager(opts)
	sc := segment.NewScanner(bytes.NewReader(log), int64(len(log)), segment.ScanOptions{Path: "fuzz.log"})
	for sc.Next() {
		b := sc.Batch()
		isBarrier := false
		if b.IsControl() && b.RecordCount > 0 && !ignoreBarriers {
			var d decode.Decoder
			_ = d.Records(b, func(r *decode.Record) error {
				if _, typ, err := decode.ParseControlKey(r.Key); err == nil && typ == decode.ControlMirrorPidReset {
					isBarrier = true
				}
				return errStop
			})
		}
		if err := m.ApplyBatch(b); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				t.Fatalf("ApplyBatch error is not a CorruptError: %v", err)
			}
			if ce.Pos < 0 || ce.Pos > b.Size() {
				t.Fatalf("error position %d outside the %d-byte batch: %v", ce.Pos, b.Size(), err)
			}
		}
		if isBarrier && m.ProducerCount() != 0 {
			t.Fatalf("%d producers survive the barrier at offset %d", m.ProducerCount(), b.BaseOffset)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m.State(), m.Snapshot()
}

type stopErr struct{}

func (stopErr) Error() string { return "stop" }

var errStop error = stopErr{}

// replaySeeds are whole logs: the generated transactional, control and
// compacted partitions, real broker logs when ../shared is present, and a
// small log built here with a barrier between two producers reusing an id.
func replaySeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, p := range []string{
		"../testdata/partitions/txn-0/00000000000000000000.log",
		"../testdata/partitions/txn-0/00000000000000000011.log",
		"../testdata/partitions/control-0/00000000000000000000.log",
		"../testdata/partitions/compacted-0/00000000000000000000.log",
		"../../shared/fixtures/real/Danielowo2000__BigDataTechnologies-Version-2/kafka_data/_confluent-ksql-default__command_topic-0/00000000000000000000.log",
	} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil && len(b) < 1<<20 {
			seeds = append(seeds, b)
		}
	}
	var log []byte
	add := func(s decode.BatchSpec, recs ...decode.RecordSpec) {
		var err error
		if log, err = decode.AppendBatch(log, s, recs); err != nil {
			f.Fatal(err)
		}
	}
	rec := func(d int32) decode.RecordSpec {
		return decode.RecordSpec{OffsetDelta: d, Timestamp: 1700000000000 + int64(d), Value: []byte("v")}
	}
	add(decode.BatchSpec{BaseOffset: 0, ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}, rec(0), rec(1))
	add(decode.BatchSpec{BaseOffset: 2, ProducerID: 5, ProducerEpoch: 0, BaseSequence: -1, Transactional: true, Control: true},
		decode.RecordSpec{Timestamp: 1700000000002, Key: decode.AppendControlKey(nil, decode.ControlCommit), Value: decode.AppendEndTxnMarkerValue(nil, 3)})
	add(decode.BatchSpec{BaseOffset: 3, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true},
		decode.RecordSpec{Timestamp: 1700000000003, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)})
	add(decode.BatchSpec{BaseOffset: 4, ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0}, rec(0))
	return append(seeds, log)
}
