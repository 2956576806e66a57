package psm

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// KIP-1279: a MIRROR_PID_RESET batch in the middle of a segment clears
// every producer at its offset; the pitfall (barrier.md §10 item 1) is to
// apply updates accumulated before the barrier after it. pid 5's batches
// before the barrier, in the same segment, must not come back.
func TestBarrierMidSegmentPreBarrierUpdatesNeverComeBack(t *testing.T) {
	l := newLog(t, 0)
	l.data(5, 3, 0, 2, false)
	l.data(5, 3, 2, 2, false)
	l.data(6, 0, 0, 1, false)
	src := "AbCdEfGhIjKlMnOpQrStUv"
	bar := l.barrier(&src)
	l.data(7, 0, 0, 1, false)
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	if producer(r, 5) != nil || producer(r, 6) != nil {
		t.Fatalf("pre-barrier producers survived the barrier: %+v", r.Producers)
	}
	mustProducer(t, r, 7)
	if len(r.Barriers) != 1 || r.Barriers[0].Offset != bar || r.Barriers[0].ProducersCleared != 2 ||
		r.Barriers[0].SourceClusterID == nil || *r.Barriers[0].SourceClusterID != src {
		t.Errorf("barriers %+v", r.Barriers)
	}
	for _, e := range r.SnapshotEntries() {
		if e.LastOffset >= 0 && e.LastOffset < bar {
			t.Errorf("snapshot entry from before the barrier: %+v", e)
		}
	}

	// The same through the Manager API, one batch at a time, as the
	// barrier package drives it.
	m := NewManager(DefaultOptions())
	applyAll(t, m, l.buf)
	if _, ok := m.Entry(5); ok {
		t.Error("Manager: pid 5 survived the barrier")
	}
	if m.ProducerCount() != 1 {
		t.Errorf("Manager: %d producers", m.ProducerCount())
	}
	// And through ApplyBatch, which decodes the control record itself.
	m = NewManager(DefaultOptions())
	for buf := l.buf; len(buf) > 0; {
		b, err := decode.ParseBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ApplyBatch(&b); err != nil {
			t.Fatal(err)
		}
		buf = buf[b.Size():]
	}
	st := m.State()
	if len(st.Producers) != 1 || st.Producers[0].ProducerID != 7 || len(st.Barriers) != 1 || st.Barriers[0].ProducersCleared != 2 {
		t.Errorf("ApplyBatch: %+v %+v", st.Producers, st.Barriers)
	}
}

// applyAll feeds every batch of buf to m with its decoded control record.
func applyAll(t testing.TB, m *Manager, buf []byte) {
	t.Helper()
	cr := newControlReader()
	for len(buf) > 0 {
		b, err := decode.ParseBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		var ctl *decode.Control
		if b.IsControl() && b.RecordCount > 0 {
			k, v, _, err := cr.first(&b)
			if err != nil {
				t.Fatal(err)
			}
			c, err := decode.ParseControl(k, v)
			if err != nil {
				t.Fatal(err)
			}
			ctl = &c
		}
		if err := m.Apply(&b, ctl); err != nil {
			t.Fatal(err)
		}
		buf = buf[b.Size():]
	}
}

// A producer id reused after a barrier (a failover: the new cluster hands
// out the same ids) is a new producer when barriers are honoured; with
// --ignore-barriers it is exactly the pid-collision a failover without a
// barrier produces.
func TestBarrierReusedProducerID(t *testing.T) {
	l := newLog(t, 0)
	l.data(5, 7, 0, 3, false)
	l.data(5, 7, 3, 3, false)
	bar := l.barrier(nil)
	reuse := l.data(5, 0, 0, 1, false)
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	e := mustProducer(t, r, 5)
	if e.ProducerEpoch != 0 || len(e.Batches) != 1 || e.Batches[0].LastOffset != reuse {
		t.Errorf("entry after the barrier %+v", e)
	}

	r = replayOne(t, l, func(o *Options) { o.IgnoreBarriers = true })
	a := anomalies(r, finding.PIDCollision)
	if len(a) != 1 || a[0].Offset != reuse || a[0].ProducerID != 5 || a[0].Severity() != finding.Error {
		t.Fatalf("ignoring barriers: %+v", r.Anomalies)
	}
	if len(r.Barriers) != 1 || r.Barriers[0].Offset != bar || r.Barriers[0].ProducersCleared != 0 || len(anomalies(r, finding.BarrierIgnored)) != 1 {
		t.Errorf("ignored barrier %+v", r.Barriers)
	}
	if len(mustProducer(t, r, 5).Batches) != 1 {
		t.Errorf("the epoch change still clears the history")
	}
}

// A chain A→B→C: B's barrier is mirrored into C, then C fails over and
// writes its own. Each clears what came before it, and only what came
// before it.
func TestBarrierChain(t *testing.T) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 1, false) // cluster A's producers
	l.data(2, 0, 0, 1, false)
	l.data(3, 0, 0, 1, false)
	b1 := l.barrier(nil)
	l.data(1, 0, 0, 2, false) // cluster B reuses 1
	l.data(4, 0, 0, 1, false)
	b2 := l.barrier(nil)
	l.data(1, 0, 0, 3, false) // cluster C reuses 1 again
	r := replayOne(t, l, nil)
	onlyAnomalies(t, r)
	if len(r.Barriers) != 2 || r.Barriers[0] != (Barrier{Offset: b1, ProducersCleared: 3}) || r.Barriers[1] != (Barrier{Offset: b2, ProducersCleared: 2}) {
		t.Errorf("barriers %+v", r.Barriers)
	}
	if len(r.Producers) != 1 || r.Producers[0].ProducerID != 1 || r.Producers[0].Batches[0].LastOffset != b2+3 {
		t.Errorf("producers %+v", r.Producers)
	}
	// The state between the barriers is B's alone.
	mid := replayOne(t, l, func(o *Options) { o.Upto = b2 })
	if len(mid.Producers) != 2 || producer(mid, 4) == nil || mustProducer(t, mid, 1).Batches[0].LastOffset != b1+2 {
		t.Errorf("between the barriers %+v", mid.Producers)
	}
	ign := replayOne(t, l, func(o *Options) { o.IgnoreBarriers = true })
	if len(anomalies(ign, finding.PIDCollision)) != 2 || len(ign.Producers) != 4 {
		t.Errorf("ignoring barriers: %d producers, %+v", len(ign.Producers), ign.Anomalies)
	}
}

// Pitfall 2: every replay path must honour the barrier. Replay from a
// snapshot taken before the barrier, across a segment boundary, clears it
// too; a snapshot after the barrier that still holds the old producers
// (what a recovery that ignores barriers writes) is stale.
func TestBarrierAcrossSegmentsAndStaleSnapshot(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	s0.data(5, 1, 0, 2, false)
	s0.data(6, 1, 0, 2, false)
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(5, 1, 2, 1, false)
	bar := s1.barrier(nil)
	s1.data(8, 0, 0, 1, false)
	p.segment(4, s1)
	s2 := s1.following()
	s2.data(9, 0, 0, 1, false)
	p.segment(s1.next, s2)

	// The roll snapshot at 4 (before the barrier) as the broker wrote it.
	before := p.rebuild(Options{Upto: 4, FromSnapshot: SnapshotNone, HighWatermark: -1, LogStartOffset: -1})
	p.snapshot(4, before.SnapshotEntries())
	r := p.rebuild(func() Options { o := DefaultOptions(); o.Upto = s1.next; return o }())
	if r.SnapshotLoaded != 4 {
		t.Fatalf("snapshot loaded %d", r.SnapshotLoaded)
	}
	if len(r.Producers) != 1 || r.Producers[0].ProducerID != 8 {
		t.Errorf("replay from the pre-barrier snapshot: %+v", r.Producers)
	}
	onlyAnomalies(t, r)

	// A stale snapshot at the next segment's base: it holds pid 5 and 6.
	stale := p.rebuild(Options{Upto: s1.next, FromSnapshot: SnapshotNone, HighWatermark: -1, LogStartOffset: -1, IgnoreBarriers: true})
	p.snapshot(s1.next, stale.SnapshotEntries())
	r = p.rebuild(DefaultOptions())
	if r.SnapshotLoaded != s1.next {
		t.Fatalf("loaded %d", r.SnapshotLoaded)
	}
	a := anomalies(r, finding.StaleSnapshot)
	if len(a) != 1 || a[0].Offset != s1.next || a[0].ProducerID != 5 || a[0].Severity() != finding.Error || !strings.Contains(a[0].Message, fmt.Sprint(bar)) {
		t.Fatalf("stale-snapshot anomalies %+v", r.Anomalies)
	}
	// The broker would load it and bring 5 and 6 back: kseg says so.
	if producer(r, 5) == nil || producer(r, 6) == nil {
		t.Errorf("loading the stale snapshot: %+v", r.Producers)
	}
	// Replaying from the log instead gives the right state, and still
	// flags the file.
	none := p.rebuild(func() Options { o := DefaultOptions(); o.FromSnapshot = SnapshotNone; return o }())
	if len(none.Producers) != 2 || producer(none, 5) != nil || len(anomalies(none, finding.StaleSnapshot)) != 1 {
		t.Errorf("from the log: producers %+v anomalies %+v", none.Producers, none.Anomalies)
	}
	checks, res, err := CheckSnapshots(p.open(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 || !checks[0].Match() || checks[1].Status != CheckMismatch {
		t.Errorf("checks %+v", checks)
	}
	if len(anomalies(res, finding.SnapshotMismatch)) != 1 {
		t.Errorf("check anomalies %+v", res.Anomalies)
	}

	// A snapshot rewritten from kseg's state is not stale.
	p.snapshot(s1.next, none.SnapshotEntries()[:1])
	ok := p.rebuild(DefaultOptions())
	if len(anomalies(ok, finding.StaleSnapshot)) != 0 {
		t.Errorf("rewritten snapshot flagged: %+v", ok.Anomalies)
	}
}

// Pitfall 8: a barrier written while a transaction is open. The barrier
// removes the producer but not the transaction, which stays in
// ProducerStateManager's ongoingTxns and pins firstUnstableOffset (the LSO)
// while the broker runs. At the next restart from a snapshot taken after
// the barrier, ProducerStateManager.loadFromSnapshot re-derives ongoingTxns
// from the entries' currentTxnFirstOffset only, and the producer is gone:
// the pin ends and read_committed consumers read the records as committed.
// kseg reports it as an error whose message says both.
func TestBarrierWithOpenTransaction(t *testing.T) {
	l := newLog(t, 0)
	f := l.data(5, 0, 0, 1, true)
	bar := l.barrier(nil)
	mk := l.marker(5, 0, false, 0) // the abort arrives too late: no entry to complete
	l.data(6, 0, 0, 1, false)
	r := replayOne(t, l, nil)
	if a := anomalies(r, finding.OpenTxnAtBarrier); len(a) != 1 || a[0].Offset != bar || a[0].ProducerID != 5 || a[0].Severity() != finding.Error ||
		!strings.Contains(a[0].Message, "only until the broker next restarts from a snapshot taken after the barrier") {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	if a := anomalies(r, finding.MarkerWithoutTxn); len(a) != 1 || a[0].Offset != mk {
		t.Errorf("late marker %+v", r.Anomalies)
	}
	if len(r.Ongoing) != 1 || r.Ongoing[0].FirstOffset != f || r.LastStableOffset != f {
		t.Errorf("ongoing %+v lso %d", r.Ongoing, r.LastStableOffset)
	}
	if len(r.Aborted) != 0 {
		t.Errorf("aborted %+v", r.Aborted)
	}
}

// A corrupt newest snapshot is skipped as loadFromSnapshot skips it; an
// older one is used. Snapshots at or below the log start and above the
// end are not loaded (truncateAndReload).
func TestSnapshotSelection(t *testing.T) {
	// Segments 0 (offsets 0-2), 3 (3-5) and an empty active segment 6:
	// removeStraySnapshots keeps snapshots at segment bases only (and the
	// largest other one).
	p := newPartition(t)
	l := newLog(t, 0)
	for i := int32(0); i < 6; i++ {
		if i == 3 {
			p.segment(0, l)
			ts := l.Ts
			l = newLog(t, 3)
			l.Ts = ts
		}
		l.data(1, 0, i, 1, false)
	}
	p.segment(3, l)
	p.segment(6, newLog(t, 6))
	state := func(upto int64) []segment.SnapshotEntry {
		return p.rebuild(Options{Upto: upto, FromSnapshot: SnapshotNone, HighWatermark: -1, LogStartOffset: -1}).SnapshotEntries()
	}
	p.snapshot(3, state(3))
	p.snapshot(6, state(6))
	p.snapshot(9, state(6)) // above the log end
	// Corrupt the one at 6.
	path6 := p.snapshot(6, state(6))
	raw := segment.EncodeProducerSnapshot(state(6))
	raw[len(raw)-1] ^= 0xff
	if err := writeFile(path6, raw); err != nil {
		t.Fatal(err)
	}
	r := p.rebuild(DefaultOptions())
	if r.SnapshotLoaded != 3 {
		t.Fatalf("loaded %d, want 3", r.SnapshotLoaded)
	}
	if a := anomalies(r, finding.SnapshotCorrupt); len(a) != 1 || a[0].Offset != 6 {
		t.Errorf("anomalies %+v", r.Anomalies)
	}
	if e := mustProducer(t, r, 1); e.LastSeq() != 5 || len(e.Batches) != 4 {
		t.Errorf("entry %+v", e)
	}
	// The log start moved past 3: nothing usable, replay from the start.
	o := DefaultOptions()
	o.LogStartOffset = 3
	r = p.rebuild(o)
	if r.SnapshotLoaded != -1 || r.ReplayedFrom != 3 {
		t.Errorf("log start 3: loaded %d from %d", r.SnapshotLoaded, r.ReplayedFrom)
	}
	// An explicit corrupt snapshot is an error.
	o = DefaultOptions()
	o.FromSnapshot = 6
	if _, err := Rebuild(p.open(), o); err == nil {
		t.Error("loading a corrupt snapshot explicitly must fail")
	}
	o.FromSnapshot = 4
	if _, err := Rebuild(p.open(), o); err == nil {
		t.Error("a missing snapshot must fail")
	}
}

// CompareSnapshot is order-insensitive and field-level.
func TestSnapshotCompare(t *testing.T) {
	a := []segment.SnapshotEntry{
		{ProducerID: 1, ProducerEpoch: 0, LastSequence: 4, LastOffset: 10, Timestamp: 5, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
		{ProducerID: 2, ProducerEpoch: 1, LastSequence: -1, LastOffset: -1, Timestamp: 6, CoordinatorEpoch: 3, CurrentTxnFirstOffset: -1},
	}
	b := []segment.SnapshotEntry{a[1], a[0]}
	if d := CompareSnapshot(a, b); len(d) != 0 {
		t.Errorf("reordered: %+v", d)
	}
	b[1].ProducerEpoch = 9
	b = append(b, segment.SnapshotEntry{ProducerID: 3})
	d := CompareSnapshot(a, b)
	want := []Difference{{ProducerID: 1, Field: FieldProducerEpoch, Rebuilt: 0, OnDisk: 9}, {ProducerID: 3, Field: FieldEntry, Rebuilt: 0, OnDisk: 1}}
	if len(d) != 2 || d[0] != want[0] || d[1] != want[1] {
		t.Errorf("differences %+v", d)
	}
}

// A snapshot inside the last segment (a clean-shutdown snapshot at the log
// end, or a stray one) is reached through the offset index, as
// LogSegment.translateOffset does; a wrong index is not trusted.
func TestSnapshotMidSegmentUsesIndex(t *testing.T) {
	p := newPartition(t)
	l := newLog(t, 0)
	var idx []byte
	for i := int32(0); i < 10; i++ {
		pos := int32(len(l.buf))
		base := l.data(int64(1+i%3), 0, i/3*2, 2, false)
		if i%2 == 1 {
			var err error
			if idx, err = segment.AppendOffsetIndexEntry(idx, 0, segment.IndexEntry{Offset: base + 1, Position: pos}); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.segment(0, l)
	idxPath := filepath.Join(p.dir, segment.FormatOffset(0)+".index")
	if err := writeFile(idxPath, idx); err != nil {
		t.Fatal(err)
	}
	none := func() Options { o := DefaultOptions(); o.FromSnapshot = SnapshotNone; return o }
	at := func(n int64) Options { o := none(); o.Upto = n; return o }
	want := p.rebuild(none()).SnapshotEntries()
	// 13 falls inside the batch 12-13: the snapshot holds the state before
	// it, and replay from 13 starts with that batch (translateOffset).
	p.snapshot(13, p.rebuild(at(13)).SnapshotEntries())
	pd := p.open()
	lf, err := segment.OpenLog(pd.Segments[0].Log)
	if err != nil {
		t.Fatal(err)
	}
	if pos := startPosition(lf, pd.Segments[0], 13, 0); pos == 0 {
		t.Error("the index was not used")
	}
	lf.Close()
	r := p.rebuild(DefaultOptions())
	if r.SnapshotLoaded != 13 {
		t.Fatalf("loaded %d", r.SnapshotLoaded)
	}
	if d := CompareSnapshot(r.SnapshotEntries(), want); len(d) != 0 {
		t.Errorf("from the snapshot via the index: %v", d)
	}
	// Garbage positions: the index is ignored, the result is the same.
	for i := 4; i+8 <= len(idx); i += 8 {
		idx[i+3] ^= 0x5a
	}
	if err := writeFile(idxPath, idx); err != nil {
		t.Fatal(err)
	}
	r = p.rebuild(DefaultOptions())
	if d := CompareSnapshot(r.SnapshotEntries(), want); len(d) != 0 || r.HasErrors() {
		t.Errorf("with a damaged index: %v %+v", d, r.Anomalies)
	}
}

// The LSO pin of a transaction left open at a barrier lasts only until the
// broker restarts from a snapshot taken after the barrier: the barrier
// removed the producer, so the snapshot has no entry for it, and
// ProducerStateManager.loadFromSnapshot re-derives ongoingTxns from the
// entries alone. Loaded from such a snapshot the state has no open
// transaction and the LSO is the high watermark — and kseg still reports
// open-txn-at-barrier, found by replaying the log before the snapshot, so
// the verdict is the same as with --from-snapshot none.
func TestOpenTxnAtBarrierPinEndsAtRestartFromSnapshot(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	f := s0.data(5, 0, 0, 1, true)
	bar := s0.barrier(nil)
	s0.data(6, 0, 0, 1, false)
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(6, 0, 1, 1, false)
	p.segment(s0.next, s1)
	none := p.rebuild(func() Options { o := DefaultOptions(); o.FromSnapshot = SnapshotNone; return o }())
	if len(none.Ongoing) != 1 || none.LastStableOffset != f || len(anomalies(none, finding.OpenTxnAtBarrier)) != 1 {
		t.Fatalf("from the log: ongoing %+v lso %d anomalies %+v", none.Ongoing, none.LastStableOffset, none.Anomalies)
	}
	p.snapshot(s0.next, p.state(s0.next, nil))
	r := p.rebuild(DefaultOptions())
	if r.SnapshotLoaded != s0.next || len(r.Ongoing) != 0 || r.LastStableOffset != r.HighWatermark || r.HighWatermark != s1.next {
		t.Fatalf("from the snapshot: loaded %d, ongoing %+v, lso %d, hw %d", r.SnapshotLoaded, r.Ongoing, r.LastStableOffset, r.HighWatermark)
	}
	a := anomalies(r, finding.OpenTxnAtBarrier)
	if len(a) != 1 || a[0].Offset != bar || a[0].ProducerID != 5 || a[0].Severity() != finding.Error || !strings.Contains(a[0].Message, "loaded here") {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	if len(anomalies(r, finding.StaleSnapshot)) != 0 {
		t.Errorf("the snapshot is the state through the barrier: %+v", r.Anomalies)
	}
}
