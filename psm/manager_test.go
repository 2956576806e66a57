package psm

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// ProducerStateEntry.maybeUpdateProducerEpoch: any epoch change clears the
// batch metadata; a lower epoch is accepted under REPLICATION with a
// warning.
func TestPSMEpochBumpClearsHistory(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 2, false)
	l.data(1, 0, 2, 2, false)
	l.data(1, 0, 4, 1, false)
	bump := l.data(1, 1, 0, 3, false)
	r := replayOne(t, l, nil)
	e := mustProducer(t, r, 1)
	if e.ProducerEpoch != 1 || len(e.Batches) != 1 {
		t.Fatalf("after bump: epoch %d, %d batches, want epoch 1 with 1 batch", e.ProducerEpoch, len(e.Batches))
	}
	if b := e.Batches[0]; b.FirstSeq() != 0 || b.LastSeq != 2 || b.LastOffset != bump+2 || b.OffsetDelta != 2 {
		t.Errorf("batch %+v", b)
	}
	onlyAnomalies(t, r)

	// Going back to epoch 0 also clears, and is an epoch regression.
	back := l.data(1, 0, 5, 1, false)
	r = replayOne(t, l, nil)
	e = mustProducer(t, r, 1)
	if e.ProducerEpoch != 0 || len(e.Batches) != 1 || e.Batches[0].LastOffset != back {
		t.Fatalf("after regression: %+v", e)
	}
	if a := anomalies(r, finding.EpochRegression); len(a) != 1 || a[0].Offset != back || a[0].Severity() != finding.Warning {
		t.Errorf("epoch regression anomalies %+v", a)
	}
}

// ProducerStateEntry.addBatchMetadata keeps the newest 5, oldest first.
func TestPSMFiveBatchWindow(t *testing.T) {
	l := newLog(t, 100)
	var ts []int64
	for i := int32(0); i < 7; i++ {
		ts = append(ts, l.Ts)
		l.data(9, 2, i*3, 3, false)
	}
	r := replayOne(t, l, nil)
	e := mustProducer(t, r, 9)
	if len(e.Batches) != NumBatchesToRetain {
		t.Fatalf("%d batches retained, want 5", len(e.Batches))
	}
	for i, b := range e.Batches {
		n := int32(i + 2)
		want := BatchMetadata{LastSeq: n*3 + 2, LastOffset: 100 + int64(n)*3 + 2, OffsetDelta: 2, Timestamp: ts[n]}
		if b != want || b.FirstSeq() != n*3 {
			t.Errorf("batch %d = %+v (firstSeq %d), want %+v (firstSeq %d)", i, b, b.FirstSeq(), want, n*3)
		}
	}
	if e.LastTimestamp != ts[6] {
		t.Errorf("lastTimestamp %d, want %d", e.LastTimestamp, ts[6])
	}
	onlyAnomalies(t, r)
}

// DefaultRecordBatch.incrementSequence/decrementSequence wrap at MaxInt32.
func TestPSMSequenceWrapAround(t *testing.T) {
	l := newLog(t, 0)
	l.data(3, 0, math.MaxInt32-5, 3, false)      // MaxInt32-5 .. MaxInt32-3
	w := l.data(3, 0, math.MaxInt32-2, 5, false) // wraps: MaxInt32-2 .. 1
	l.data(3, 0, 2, 1, false)                    // continues at 2
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	e := mustProducer(t, r, 3)
	b := e.Batches[1]
	if b.LastOffset != w+4 || b.LastSeq != 1 || b.FirstSeq() != math.MaxInt32-2 {
		t.Errorf("wrapping batch %+v", b)
	}
	if e.LastSeq() != 2 {
		t.Errorf("lastSeq %d", e.LastSeq())
	}

	// lastSeq MaxInt32 followed by 0 is in sequence.
	l = newLog(t, 0)
	l.data(4, 0, math.MaxInt32, 1, false)
	l.data(4, 0, 0, 1, false)
	onlyAnomalies(t, replayOne(t, l, nil))
}

// appendEndTxnMarker: COMMIT/ABORT complete the open transaction; an
// abort becomes a .txnindex entry whose lastStableOffset is the first
// ongoing transaction of another producer (ProducerStateManager
// .lastStableOffset), else marker + 1.
func TestPSMMarkersAndLastStableOffset(t *testing.T) {
	l := newLog(t, 0)
	a0 := l.data(1, 0, 0, 2, true) // 0-1  p1 txn
	b0 := l.data(2, 5, 0, 1, true) // 2    p2 txn
	l.data(1, 0, 2, 1, true)       // 3    p1 continues
	mts := l.Ts
	m1 := l.marker(1, 0, false, 7) // 4    p1 ABORT
	l.data(3, 0, 0, 1, false)      // 5    idempotent, no txn
	m2 := l.marker(2, 5, true, 7)  // 6    p2 COMMIT
	c0 := l.data(1, 0, 3, 1, true) // 7    p1 new txn, still open
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r, finding.OpenTransaction)

	want := []AbortedTxn{{ProducerID: 1, FirstOffset: a0, LastOffset: m1, LastStableOffset: b0}}
	if !slices.Equal(r.Aborted, want) {
		t.Errorf("aborted %+v, want %+v", r.Aborted, want)
	}
	e1 := mustProducer(t, r, 1)
	if e1.CoordinatorEpoch != 7 || e1.CurrentTxnFirstOffset != c0 || e1.ProducerEpoch != 0 {
		t.Errorf("p1 %+v", e1)
	}
	// A marker at the same epoch keeps the batch metadata.
	if len(e1.Batches) != 3 {
		t.Errorf("p1 has %d batches, want 3 (a same-epoch marker keeps them)", len(e1.Batches))
	}
	e2 := mustProducer(t, r, 2)
	if e2.CurrentTxnFirstOffset != -1 || e2.LastTimestamp <= mts || len(e2.Batches) != 1 {
		t.Errorf("p2 %+v (marker timestamp must become lastTimestamp)", e2)
	}
	if len(r.Ongoing) != 1 || r.Ongoing[0] != (Txn{ProducerID: 1, FirstOffset: c0, LastOffset: -1}) {
		t.Errorf("ongoing %+v", r.Ongoing)
	}
	if r.FirstUndecidedOffset != c0 || r.LastStableOffset != c0 {
		t.Errorf("fuo %d lso %d, want %d", r.FirstUndecidedOffset, r.LastStableOffset, c0)
	}
	_ = m2

	// The LSO of a second abort with no other producer open is marker+1.
	l.marker(1, 0, false, 7) // 8
	r = replayOne(t, l, nil)
	if got := r.Aborted[1]; got.LastStableOffset != 9 || got.FirstOffset != c0 {
		t.Errorf("second abort %+v", got)
	}
	if r.LastStableOffset != r.LogEndOffset || r.FirstUndecidedOffset != -1 {
		t.Errorf("lso %d fuo %d leo %d", r.LastStableOffset, r.FirstUndecidedOffset, r.LogEndOffset)
	}
}

// A completed transaction whose marker is at or above the high watermark
// is still unreplicated and holds the LSO (removeUnreplicatedTransactions).
func TestPSMHighWatermarkHoldsLSO(t *testing.T) {
	l := newLog(t, 0)
	l.plain(3)                    // 0-2
	f := l.data(1, 0, 0, 1, true) // 3
	l.plain(1)                    // 4
	mk := l.marker(1, 0, true, 0) // 5
	l.plain(1)                    // 6
	r := replayOne(t, l, func(o *Options) { o.HighWatermark = mk })
	if r.HighWatermark != mk || r.LastStableOffset != f {
		t.Errorf("hw %d lso %d, want hw %d lso %d", r.HighWatermark, r.LastStableOffset, mk, f)
	}
	r = replayOne(t, l, func(o *Options) { o.HighWatermark = mk + 1 })
	if r.LastStableOffset != mk+1 {
		t.Errorf("lso %d with the marker replicated, want %d", r.LastStableOffset, mk+1)
	}
	r = replayOne(t, l, nil)
	if r.HighWatermark != 7 || r.LastStableOffset != 7 {
		t.Errorf("default hw %d lso %d, want the log end 7", r.HighWatermark, r.LastStableOffset)
	}
}

// KIP-890 (TV2): the marker carries epoch+1, which clears the batch
// metadata; the snapshot then stores lastSequence/lastOffset -1.
func TestPSMTV2MarkerBumpsEpoch(t *testing.T) {
	l := newLog(t, 0)
	l.data(7, 4, 0, 2, true)
	l.marker(7, 5, true, 1)
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	e := mustProducer(t, r, 7)
	if e.ProducerEpoch != 5 || len(e.Batches) != 0 {
		t.Fatalf("entry %+v", e)
	}
	se := SnapshotEntryOf(e)
	if se.LastSequence != -1 || se.LastOffset != -1 || se.OffsetDelta != 0 || se.CurrentTxnFirstOffset != -1 || se.CoordinatorEpoch != 1 {
		t.Errorf("snapshot entry %+v", se)
	}
	// The next transaction at the new epoch starts at sequence 0: no anomaly.
	l.data(7, 5, 0, 1, true)
	l.marker(7, 6, false, 1)
	onlyAnomalies(t, replayOne(t, l, nil))
}

// After a TV2 marker the entry has the new epoch and no batch metadata.
// ProducerAppendInfo.checkSequence then compares the next batch with
// currentEntry.lastSeq() = -1 (inSequence(-1, seq) holds only for 0), so a
// leader rejects any other first sequence at that epoch with
// OutOfOrderSequenceException; a replica accepts it. kseg reports it as a
// sequence-gap, from the log and from a snapshot entry without a batch.
func TestPSMSequenceAfterTV2MarkerMustRestartAtZero(t *testing.T) {
	l := newLog(t, 0)
	l.data(7, 4, 0, 2, true)
	l.marker(7, 5, true, 1) // TV2: epoch 4 -> 5, batches cleared
	bad := l.data(7, 5, 3, 1, true)
	check := func(r *Result, from string) {
		t.Helper()
		onlyAnomalies(t, r, finding.SequenceGap, finding.OpenTransaction)
		a := anomalies(r, finding.SequenceGap)
		if len(a) != 1 || a[0].Offset != bad || a[0].ProducerID != 7 || a[0].Severity() != finding.Warning ||
			!strings.Contains(a[0].Message, "sequence 3") || !strings.Contains(a[0].Message, "OutOfOrderSequenceException") {
			t.Errorf("%s: sequence-gap anomalies %+v", from, r.Anomalies)
		}
	}
	check(replayOne(t, l, nil), "from the log")

	// The same batch replayed after loading the snapshot a broker wrote
	// after the marker (lastSequence/lastOffset -1), at a segment roll.
	p := newPartition(t)
	s0 := newLog(t, 0)
	s0.data(7, 4, 0, 2, true)
	s0.marker(7, 5, true, 1)
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(7, 5, 3, 1, true)
	p.segment(s0.next, s1)
	o := DefaultOptions()
	o.FromSnapshot, o.Upto = SnapshotNone, s0.next
	snap := p.rebuild(o).SnapshotEntries()
	if len(snap) != 1 || snap[0].LastOffset != -1 || snap[0].ProducerEpoch != 5 {
		t.Fatalf("snapshot after the TV2 marker %+v", snap)
	}
	p.snapshot(s0.next, snap)
	r := p.rebuild(DefaultOptions())
	if r.SnapshotLoaded != bad {
		t.Fatalf("loaded %d, want %d", r.SnapshotLoaded, bad)
	}
	check(r, "from the snapshot")

	// Sequence 0 at the bumped epoch is what a TV2 producer sends: no anomaly.
	ok := newLog(t, 0)
	ok.data(7, 4, 0, 2, true)
	ok.marker(7, 5, true, 1)
	ok.data(7, 5, 0, 1, true)
	onlyAnomalies(t, replayOne(t, ok, nil), finding.OpenTransaction)
}

// checkCoordinatorEpoch: a lower coordinator epoch is accepted on a
// replica (KAFKA-9144) and reported; equal or higher is normal.
func TestPSMCoordinatorEpochs(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 1, true)
	l.marker(1, 0, true, 10)
	l.data(1, 0, 1, 1, true)
	l.marker(1, 0, true, 10) // equal: fine
	l.data(1, 0, 2, 1, true)
	low := l.marker(1, 0, true, 3)
	r := replayOne(t, l, nil)
	if a := anomalies(r, finding.CoordinatorEpochRegression); len(a) != 1 || a[0].Offset != low {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	if e := mustProducer(t, r, 1); e.CoordinatorEpoch != 3 {
		t.Errorf("coordinator epoch %d, want 3 (a replica takes the marker's)", e.CoordinatorEpoch)
	}
	onlyAnomalies(t, r, finding.CoordinatorEpochRegression)
}

// Expiry: producer.id.expiration.ms against the clock, checked every
// check interval; never an entry with an open transaction.
func TestPSMExpiry(t *testing.T) {
	const day = 86400000
	l := newLog(t, 0)
	l.data(1, 0, 0, 1, false)        // idempotent, will expire
	open := l.data(2, 0, 0, 1, true) // open transaction, never expires
	l.data(3, 0, 0, 1, false)
	l.Ts += day + 1
	l.data(3, 0, 1, 1, false) // keeps 3 alive and moves the clock by a day
	r := replayOne(t, l, nil)
	if producer(r, 1) != nil {
		t.Errorf("producer 1 should have expired")
	}
	if e := producer(r, 2); e == nil || e.CurrentTxnFirstOffset != open {
		t.Errorf("producer 2 with an open txn must not expire: %+v", e)
	}
	mustProducer(t, r, 3)

	// A producer id that comes back after expiring is a new producer: no
	// collision although its sequence restarts.
	l.data(1, 0, 0, 2, false)
	r = replayOne(t, l, nil)
	onlyAnomalies(t, r, finding.HangingTransaction)
	if e := mustProducer(t, r, 1); len(e.Batches) != 1 || e.CoordinatorEpoch != -1 {
		t.Errorf("returning producer %+v", e)
	}

	// Without the clock moving past the expiration, nothing expires.
	r = replayOne(t, l, func(o *Options) { o.ProducerIDExpirationMs = 10 * day })
	if a := anomalies(r, finding.PIDCollision); len(a) != 1 {
		t.Errorf("with a 10-day expiration the returning producer 1 collides: %+v", r.Anomalies)
	}

	// A fixed clock far in the future expires everything without a txn.
	r = replayOne(t, l, func(o *Options) { o.Clock = ClockAt(l.Ts + 10*day) })
	if len(r.Producers) != 1 || r.Producers[0].ProducerID != 2 {
		t.Errorf("fixed clock: producers %+v, want only 2", r.Producers)
	}
	// The check interval matters: with a check only every 2 days, the day
	// jump has not triggered a check yet.
	r = replayOne(t, l, func(o *Options) { o.ProducerIDExpirationCheckIntervalMs = 2 * day })
	if producer(r, 1) == nil || len(mustProducer(t, r, 1).Batches) != 2 {
		t.Errorf("no check ran: producer 1 keeps both batches")
	}
}

// KAFKA-10702: a marker without an open transaction completes nothing
// (no .txnindex entry) but creates or updates the entry.
func TestPSMEmptyTransaction(t *testing.T) {
	l := newLog(t, 0)
	mk := l.marker(5, 2, false, 4)
	r := replayOne(t, l, nil)
	if len(r.Aborted) != 0 || len(r.Ongoing) != 0 {
		t.Errorf("aborted %+v ongoing %+v", r.Aborted, r.Ongoing)
	}
	e := mustProducer(t, r, 5)
	if e.ProducerEpoch != 2 || e.CoordinatorEpoch != 4 || len(e.Batches) != 0 || e.LastTimestamp != 1_700_000_000_000 {
		t.Errorf("entry %+v", e)
	}
	if a := anomalies(r, finding.MarkerWithoutTxn); len(a) != 1 || a[0].Offset != mk || a[0].Severity() != finding.Info {
		t.Errorf("anomalies %+v", r.Anomalies)
	}
}

// An empty control batch (count 0) still stores an entry: empty(pid) for
// an unknown producer (ProducerStateManagerTest.testAppendEmptyControlBatch).
func TestPSMEmptyControlBatch(t *testing.T) {
	l := newLog(t, 0)
	l.emptyControl(8, 3)
	l.data(9, 1, 0, 1, true)
	l.emptyControl(9, 1) // keeps 9 as it is, txn still open
	r := replayOne(t, l, nil)
	e := mustProducer(t, r, 8)
	if e.ProducerEpoch != -1 || e.LastTimestamp != -1 || e.CoordinatorEpoch != -1 || len(e.Batches) != 0 {
		t.Errorf("empty entry %+v", e)
	}
	if e9 := mustProducer(t, r, 9); e9.CurrentTxnFirstOffset != 1 || len(e9.Batches) != 1 {
		t.Errorf("p9 %+v", e9)
	}
}

// Compaction keeps a producer's last batch as an empty header whose
// baseSequence and lastOffsetDelta still give lastSequence and lastOffset
// (UnifiedLogTest.testRebuildProducerIdMapWithCompactedData).
func TestPSMCompactedEmptyBatch(t *testing.T) {
	l := newLog(t, 0)
	l.data(6, 0, 0, 2, false)
	base := l.compactedEmpty(6, 0, 2, 3)
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	e := mustProducer(t, r, 6)
	if e.LastSeq() != 5 || e.LastDataOffset() != base+3 || e.LastOffsetDelta() != 3 {
		t.Errorf("entry %+v", e)
	}
	if r.LogEndOffset != base+4 {
		t.Errorf("log end %d", r.LogEndOffset)
	}
}

// Non-transactional data while the producer's transaction is open:
// InvalidTxnStateException in every origin (the load fails); kseg reports
// it and goes on.
func TestPSMNonTransactionalInOpenTxn(t *testing.T) {
	l := newLog(t, 0)
	f := l.data(1, 0, 0, 1, true)
	bad := l.data(1, 0, 1, 1, false)
	r := replayOne(t, l, nil)
	a := anomalies(r, finding.NonTxnInOpenTxn)
	if len(a) != 1 || a[0].Offset != bad || a[0].Severity() != finding.Error || !r.HasErrors() {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	if e := mustProducer(t, r, 1); e.CurrentTxnFirstOffset != f || len(e.Batches) != 2 {
		t.Errorf("entry %+v", e)
	}
}

// What a leader would reject, replayed as a replica accepts it.
func TestPSMSequenceAnomalies(t *testing.T) {
	l := newLog(t, 0)
	t0 := l.Ts
	l.data(1, 0, 0, 2, false)
	l.data(1, 0, 2, 2, false)
	next := l.Ts
	l.Ts = t0                        // a retry: the same batch, resent
	dup := l.data(1, 0, 0, 2, false) // same range as the first batch
	l.Ts = next
	gap := l.data(1, 0, 10, 1, false) // 4..9 missing
	col := l.data(1, 0, 0, 1, false)  // starts over
	r := replayOne(t, l, nil)
	check := func(kind finding.Kind, off int64, sev finding.Severity) {
		t.Helper()
		a := anomalies(r, kind)
		if len(a) != 1 || a[0].Offset != off || a[0].Severity() != sev || a[0].ProducerID != 1 || a[0].Message == "" {
			t.Errorf("%s: %+v", kind, a)
		}
	}
	check(finding.DuplicateSequence, dup, finding.Warning)
	check(finding.SequenceGap, gap, finding.Warning)
	check(finding.PIDCollision, col, finding.Error)

	// The same sequence range with another timestamp is not a retry but a
	// second producer with the same id: a collision.
	l = newLog(t, 0)
	l.data(3, 0, 0, 2, false)
	same := l.data(3, 0, 0, 2, false)
	r = replayOne(t, l, nil)
	if a := anomalies(r, finding.PIDCollision); len(a) != 1 || a[0].Offset != same || len(anomalies(r, finding.DuplicateSequence)) != 0 {
		t.Errorf("same range, new timestamp: %+v", r.Anomalies)
	}

	// A lower epoch starting over is a collision too.
	l = newLog(t, 0)
	l.data(2, 5, 0, 3, false)
	c := l.data(2, 0, 0, 1, false)
	r = replayOne(t, l, nil)
	if a := anomalies(r, finding.PIDCollision); len(a) != 1 || a[0].Offset != c {
		t.Errorf("lower-epoch restart: %+v", r.Anomalies)
	}
}

// A transaction open at the end: an open-transaction warning while
// younger than the timeout, a hanging-transaction error once older (two
// kinds, each with one severity).
func TestPSMHangingTransaction(t *testing.T) {
	l := newLog(t, 0)
	f := l.data(1, 0, 0, 1, true)
	l.data(2, 0, 0, 1, false)
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r, finding.OpenTransaction)
	if a := anomalies(r, finding.OpenTransaction); len(a) != 1 || a[0].Severity() != finding.Warning || a[0].Offset != f {
		t.Errorf("%+v", r.Anomalies)
	}
	l.Ts += 20 * 60 * 1000
	l.data(2, 0, 1, 1, false)
	r = replayOne(t, l, nil)
	onlyAnomalies(t, r, finding.HangingTransaction)
	if a := anomalies(r, finding.HangingTransaction); len(a) != 1 || a[0].Severity() != finding.Error {
		t.Errorf("%+v", r.Anomalies)
	}
	r = replayOne(t, l, func(o *Options) { o.TxnTimeoutMs = 60 * 60 * 1000 })
	onlyAnomalies(t, r, finding.OpenTransaction)
	if a := anomalies(r, finding.OpenTransaction); len(a) != 1 || a[0].Severity() != finding.Warning {
		t.Errorf("%+v", r.Anomalies)
	}
}

// --upto N: the state before N; a batch straddling N is excluded
// (LogSegment.translateOffset / truncateTo).
func TestPSMUpto(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 3, false) // 0-2
	l.data(2, 0, 0, 3, false) // 3-5
	r := replayOne(t, l, func(o *Options) { o.Upto = 4 })
	if producer(r, 2) != nil || producer(r, 1) == nil {
		t.Errorf("producers %+v", r.Producers)
	}
	if r.LogEndOffset != 4 || r.HighWatermark != 4 {
		t.Errorf("leo %d hw %d", r.LogEndOffset, r.HighWatermark)
	}
	r = replayOne(t, l, func(o *Options) { o.Upto = 100 })
	if r.LogEndOffset != 6 || len(r.Producers) != 2 {
		t.Errorf("leo %d producers %d", r.LogEndOffset, len(r.Producers))
	}
}

// Batches without a producer id and control batches other than markers
// and barriers never reach the producer state.
func TestPSMIgnoresBatchesWithoutProducerID(t *testing.T) {
	l := newLog(t, 0)
	l.plain(2)
	rec := decode.RecordSpec{Timestamp: l.Ts, Key: decode.AppendControlKey(nil, decode.ControlLeaderChange), Value: []byte{0, 0, 0, 0, 0, 1, 1, 1, 0}}
	l.append(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true}, []decode.RecordSpec{rec})
	r := replayOne(t, l, nil)
	if len(r.Producers) != 0 || len(r.Anomalies) != 0 || r.LogEndOffset != 3 {
		t.Errorf("%+v", r)
	}
}

// Manager round trip: Snapshot → EncodeProducerSnapshot → parse → Load →
// Snapshot encodes to the same bytes, and a load restores only the last
// batch, with the entry's lastTimestamp as its timestamp.
func TestPSMSnapshotRoundTrip(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 2, true)
	l.data(1, 0, 2, 2, true)
	l.marker(1, 0, true, 3)     // lastTimestamp from the marker
	l.data(2, 1, 0, 1, true)    // open
	l.marker(3, 1, false, 0)    // marker-only entry
	l.data(4, 0, 100, 5, false) // idempotent
	r := replayOne(t, l, nil)
	entries := r.SnapshotEntries()
	raw := segment.EncodeProducerSnapshot(entries)
	parsed, err := segment.ParseProducerSnapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(DefaultOptions())
	m.Load(parsed, r.LogEndOffset, NowFromClock)
	again := segment.EncodeProducerSnapshot(m.Snapshot())
	if !bytes.Equal(raw, again) {
		t.Fatalf("round trip differs:\n%x\n%x", raw, again)
	}
	e1, _ := m.Entry(1)
	if len(e1.Batches) != 1 || e1.Batches[0].Timestamp != e1.LastTimestamp || e1.Batches[0].FirstSeq() != 2 || e1.Batches[0].LastSeq != 3 {
		t.Errorf("loaded entry %+v", e1)
	}
	if e3, _ := m.Entry(3); len(e3.Batches) != 0 {
		t.Errorf("marker-only entry restored with batches: %+v", e3)
	}
	st := m.State()
	if len(st.Ongoing) != 1 || st.Ongoing[0].ProducerID != 2 {
		t.Errorf("ongoing not re-derived: %+v", st.Ongoing)
	}

	// What a load loses: the 5-batch window shrinks to one, so a retry of
	// an older batch is no longer recognised as a duplicate.
	l2 := newLog(t, 0)
	t0 := l2.Ts
	l2.data(1, 0, 0, 1, false)
	l2.data(1, 0, 1, 1, false)
	p := newPartition(t)
	p.segment(0, l2)
	l3 := newLog(t, 2)
	l3.Ts = t0
	l3.data(1, 0, 0, 1, false) // retry of the first batch
	p.segment(2, l3)
	full := replayOne(t, joinLogs(l2, l3), nil)
	if len(anomalies(full, finding.DuplicateSequence)) != 1 {
		t.Errorf("full replay: %+v", full.Anomalies)
	}
	opts := DefaultOptions()
	opts.Upto = 2
	opts.FromSnapshot = SnapshotNone
	at2 := p.rebuild(opts)
	p.snapshot(2, at2.SnapshotEntries())
	fromSnap := p.rebuild(DefaultOptions())
	if fromSnap.SnapshotLoaded != 2 || len(anomalies(fromSnap, finding.DuplicateSequence)) != 0 || len(anomalies(fromSnap, finding.PIDCollision)) != 1 {
		t.Errorf("from the snapshot: loaded %d, %+v", fromSnap.SnapshotLoaded, fromSnap.Anomalies)
	}
}

func joinLogs(ls ...*logBuilder) *logBuilder {
	out := &logBuilder{t: ls[0].t}
	for _, l := range ls {
		out.buf = append(out.buf, l.buf...)
	}
	return out
}

// The snapshot a broker wrote, re-encoded from kseg's rebuilt entries in
// the file's order, is the same file byte for byte.
func TestPSMSnapshotBytesRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	n := 0
	for _, dir := range realdata.SnapshotDirs(t, root) {
		pd := segtest.OpenDir(t, dir)
		ls, _, err := LogDirCheckpoints(pd)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range pd.Snapshots {
			n++
			if s.Offset <= max(ls, pd.Segments[0].BaseOffset) {
				// The broker deletes it at load (truncateAndReload): it
				// remembers producers of batches retention removed.
				continue
			}
			opts := DefaultOptions()
			opts.FromSnapshot = SnapshotNone
			opts.Upto = s.Offset
			r, err := Rebuild(pd, opts)
			if err != nil {
				t.Fatal(err)
			}
			disk, err := segment.ReadProducerSnapshot(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			byPID := map[int64]segment.SnapshotEntry{}
			for _, e := range r.SnapshotEntries() {
				byPID[e.ProducerID] = e
			}
			ordered := make([]segment.SnapshotEntry, 0, len(disk))
			for _, e := range disk {
				ordered = append(ordered, byPID[e.ProducerID])
			}
			want, _ := os.ReadFile(s.Path)
			if got := segment.EncodeProducerSnapshot(ordered); len(byPID) != len(disk) || !bytes.Equal(got, want) {
				t.Errorf("%s: re-encoded rebuilt state differs from the file", s.Path)
			}
		}
	}
	if want := snapshotsNextToLog(t, root); n != want {
		t.Errorf("%d snapshots seen, want %d (fixtures README)", n, want)
	}
}
