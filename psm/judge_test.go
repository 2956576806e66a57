package psm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// state is the state rebuilt from the log at upto, with opts changed by mod.
func (p *partition) state(upto int64, mod func(*Options)) []segment.SnapshotEntry {
	p.t.Helper()
	o := DefaultOptions()
	o.FromSnapshot, o.Upto = SnapshotNone, upto
	if mod != nil {
		mod(&o)
	}
	return p.rebuild(o).SnapshotEntries()
}

// checkAt runs CheckSnapshots and returns the check of the snapshot at off.
func (p *partition) checkAt(opts Options, off int64) (SnapshotCheck, *Result) {
	p.t.Helper()
	checks, res, err := CheckSnapshots(p.open(), opts)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, c := range checks {
		if c.Offset == off {
			return c, res
		}
	}
	p.t.Fatalf("no check at %d: %+v", off, checks)
	return SnapshotCheck{}, nil
}

// DeleteRecords (Kafka Streams purging a repartition topic) moves the log
// start offset inside a segment. Since KAFKA-7190 (Kafka 2.5, KIP-360) the
// broker keeps producer state when that happens:
// ProducerStateManager.onLogStartOffsetIncremented (truncateHead before
// 2.5, which evicted them) drops only unreplicated transactions, so a
// snapshot the running broker writes later still lists producers whose
// batches now lie below the log start. A rebuild from the log start
// forgets them; the file is the broker's own state and MATCHes, with the
// reason. A file whose below-log-start entry differs from what the log
// says is still a MISMATCH.
func TestSnapshotAfterDeleteRecordsKeepsProducersBelowLogStart(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	s0.data(1, 0, 0, 2, false) // 0-1: producer 1, below the log start afterwards
	s0.data(2, 0, 0, 1, false) // 2: producer 2 as well
	s0.data(3, 0, 0, 1, false) // 3
	s0.data(3, 0, 1, 1, false) // 4
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(3, 0, 2, 1, false)
	p.segment(s0.next, s1)
	const logStart = 3 // DeleteRecords up to offset 3
	held := p.state(s0.next, nil)
	if len(held) != 3 {
		t.Fatalf("state from the first batch %+v", held)
	}
	p.snapshot(s0.next, held)

	o := DefaultOptions()
	o.LogStartOffset = logStart
	c, res := p.checkAt(o, s0.next)
	if !c.Match() || !strings.Contains(c.Reason, "below the log start offset 3") || !strings.Contains(c.Reason, "onLogStartOffsetIncremented") {
		t.Fatalf("check %+v", c)
	}
	if c.Rebuilt != 1 || c.OnDisk != 3 || res.HasErrors() {
		t.Errorf("rebuilt %d, in the file %d; anomalies %+v", c.Rebuilt, c.OnDisk, res.Anomalies)
	}
	// The default run loads the file and keeps the producers, as the broker.
	r := p.rebuild(o)
	if r.SnapshotLoaded != s0.next || len(r.Producers) != 3 || r.HasErrors() {
		t.Errorf("default run: loaded %d, producers %+v, anomalies %+v", r.SnapshotLoaded, r.Producers, r.Anomalies)
	}
	// CheckSnapshotAt (what repair asks) gives the same verdict.
	one, err := CheckSnapshotAt(p.open(), o, s0.next, held)
	if err != nil || !one.Match() || one.Reason != c.Reason {
		t.Errorf("CheckSnapshotAt: %+v %v", one, err)
	}

	// Producer 1's entry with a sequence the log never had: not the
	// broker's state.
	bad := append([]segment.SnapshotEntry(nil), held...)
	for i := range bad {
		if bad[i].ProducerID == 1 {
			bad[i].LastSequence = 7
		}
	}
	p.snapshot(s0.next, bad)
	if c, res := p.checkAt(o, s0.next); c.Status != CheckMismatch || len(anomalies(res, finding.SnapshotMismatch)) != 1 {
		t.Errorf("a wrong entry below the log start: %+v", c)
	}
}

// Log recovery writes snapshots right after rebuilding the state:
// LogLoader.recoverSegment and the end of UnifiedLog.rebuildProducerState
// call takeSnapshot after loadProducersFromRecords, and nothing in that
// path runs removeExpiredProducers (the periodic task starts with the
// log). Such a snapshot lists producers kseg's rebuild, which expires them
// as the running broker's check does, has already dropped. A file that
// differs only by such producers, each exactly as the log left it, MATCHes
// with the reason; a file missing a producer kseg keeps, or with an extra
// one the log never wrote, does not.
func TestRecoverySnapshotWithUnexpiredProducersMatches(t *testing.T) {
	p := newPartition(t)
	s0 := newLog(t, 0)
	s0.data(1, 0, 0, 1, false) // producer 1 at T
	s0.Ts += 2 * DefaultProducerIDExpirationMs
	s0.data(2, 0, 0, 1, false) // producer 2 two days later: 1 expires first
	p.segment(0, s0)
	s1 := s0.following()
	s1.data(2, 0, 1, 1, false)
	p.segment(s0.next, s1)

	expired := p.state(s0.next, nil)
	if len(expired) != 1 || expired[0].ProducerID != 2 {
		t.Fatalf("rebuilt with expiry %+v", expired)
	}
	recovered := p.state(s0.next, func(o *Options) { o.ProducerIDExpirationMs = 1 << 62 })
	if len(recovered) != 2 {
		t.Fatalf("rebuilt without expiry %+v", recovered)
	}
	p.snapshot(s0.next, recovered)
	c, res := p.checkAt(DefaultOptions(), s0.next)
	if !c.Match() || !strings.Contains(c.Reason, "expired") || !strings.Contains(c.Reason, "loadProducersFromRecords") || res.HasErrors() {
		t.Fatalf("recovery snapshot: %+v, anomalies %+v", c, res.Anomalies)
	}
	if one, err := CheckSnapshotAt(p.open(), DefaultOptions(), s0.next, recovered); err != nil || !one.Match() {
		t.Errorf("CheckSnapshotAt: %+v %v", one, err)
	}

	// Missing the producer kseg keeps: no expiry explains that.
	p.snapshot(s0.next, recovered[:1])
	if c, _ := p.checkAt(DefaultOptions(), s0.next); c.Status != CheckMismatch {
		t.Errorf("without producer 2: %+v", c)
	}
	// Producer 1 with a timestamp the log does not have.
	wrong := append([]segment.SnapshotEntry(nil), recovered...)
	wrong[0].Timestamp++
	p.snapshot(s0.next, wrong)
	if c, _ := p.checkAt(DefaultOptions(), s0.next); c.Status != CheckMismatch {
		t.Errorf("producer 1 changed: %+v", c)
	}
}

// A stale snapshot is one whose state differs from a replay through the
// last barrier before it, field by field. The old check looked only at
// entries whose last batch or open transaction preceded the barrier, and
// missed the two cases below; each is now a stale-snapshot error in the
// default run (which loads the file, as a restarting broker would), not
// only under --check-snapshots.
func TestStaleSnapshotComparedExactly(t *testing.T) {
	build := func(t *testing.T, before func(l *logBuilder), after func(l *logBuilder)) (*partition, int64, int64) {
		p := newPartition(t)
		s0 := newLog(t, 0)
		before(s0)
		bar := s0.barrier(nil)
		after(s0)
		p.segment(0, s0)
		s1 := s0.following()
		s1.data(9, 0, 0, 1, false)
		p.segment(s0.next, s1)
		return p, bar, s0.next
	}
	assertStale := func(t *testing.T, p *partition, bar, at int64, pid int64) {
		t.Helper()
		r := p.rebuild(DefaultOptions())
		if r.SnapshotLoaded != at {
			t.Fatalf("loaded %d, want %d", r.SnapshotLoaded, at)
		}
		a := anomalies(r, finding.StaleSnapshot)
		if len(a) != 1 || a[0].Offset != at || a[0].ProducerID != pid || a[0].Severity() != finding.Error ||
			!strings.Contains(a[0].Message, "barrier at "+i64s(bar)) || !strings.Contains(a[0].Message, segment.CleanShutdownName) {
			t.Fatalf("default run: anomalies %+v", r.Anomalies)
		}
		c, res := p.checkAt(DefaultOptions(), at)
		if c.Status != CheckMismatch || len(anomalies(res, finding.StaleSnapshot)) != 1 || len(anomalies(res, finding.SnapshotMismatch)) != 1 {
			t.Errorf("--check-snapshots: %+v, anomalies %+v", c, res.Anomalies)
		}
		none := p.rebuild(func() Options { o := DefaultOptions(); o.FromSnapshot = SnapshotNone; return o }())
		if len(anomalies(none, finding.StaleSnapshot)) != 1 {
			t.Errorf("--from-snapshot none: anomalies %+v", none.Anomalies)
		}
	}

	// KIP-890 (transaction version 2): the COMMIT marker carries epoch+1;
	// ProducerAppendInfo.appendEndTxnMarker applies it through
	// ProducerStateEntry.maybeUpdateProducerEpoch, which clears the entry's
	// batch metadata on an epoch change, so ProducerStateManager.writeSnapshot
	// stores it with lastSequence and lastOffset -1 and no open transaction —
	// nothing that "precedes the barrier". A recovery that ignored the
	// barrier (pitfall 2) wrote it anyway.
	t.Run("tv2-entry-without-batches", func(t *testing.T) {
		p, bar, at := build(t, func(l *logBuilder) {
			l.data(7, 4, 0, 2, true)
			l.marker(7, 5, true, 3)
		}, func(l *logBuilder) { l.data(8, 0, 0, 1, false) })
		stale := p.state(at, func(o *Options) { o.IgnoreBarriers = true })
		var e7 *segment.SnapshotEntry
		for i := range stale {
			if stale[i].ProducerID == 7 {
				e7 = &stale[i]
			}
		}
		if e7 == nil || e7.LastOffset != -1 || e7.CurrentTxnFirstOffset != -1 || e7.ProducerEpoch != 5 {
			t.Fatalf("the stale file's TV2 entry %+v", stale)
		}
		p.snapshot(at, stale)
		assertStale(t, p, bar, at, 7)
	})

	// The prototype applies a chunk's accumulated updates after the loop
	// (barrier.md §10, pitfall 1): producer id 5, reused by the new cluster
	// after the barrier, keeps the coordinator epoch of the old cluster's
	// marker. Every field a snapshot stores for its last batch is the new
	// producer's; only coordinatorEpoch is inherited — and it fences the
	// new coordinator's markers (ProducerAppendInfo.checkCoordinatorEpoch
	// throws TransactionCoordinatorFencedException on a leader).
	t.Run("inherited-coordinator-epoch", func(t *testing.T) {
		p, bar, at := build(t, func(l *logBuilder) {
			l.data(5, 2, 0, 1, true)
			l.marker(5, 2, true, 9)
		}, func(l *logBuilder) { l.data(5, 0, 0, 1, false) })
		state := p.state(at, nil)
		if len(state) != 1 || state[0].ProducerID != 5 || state[0].CoordinatorEpoch != -1 || state[0].LastOffset < bar {
			t.Fatalf("the state through the barrier %+v", state)
		}
		deferred := append([]segment.SnapshotEntry(nil), state...)
		deferred[0].CoordinatorEpoch = 9
		p.snapshot(at, deferred)
		assertStale(t, p, bar, at, 5)
		// Rewritten with the state through the barrier, it is not stale.
		p.snapshot(at, state)
		if r := p.rebuild(DefaultOptions()); len(anomalies(r, finding.StaleSnapshot)) != 0 {
			t.Errorf("the correct file is flagged: %+v", r.Anomalies)
		}
	})
}

func i64s(v int64) string { return strconv.FormatInt(v, 10) }

// Retention deleted whole segments: the log start moves to the next
// segment's base and, as with DeleteRecords, the running broker keeps the
// producers whose batches went with them (onLogStartOffsetIncremented), so
// a later snapshot lists producers kseg cannot replay at all. A file whose
// extra producers all lie wholly below the first segment on disk, with no
// open transaction, MATCHes with that reason; nothing on disk can say
// otherwise. After a barrier on disk such an entry precedes the barrier and
// is stale.
func TestSnapshotListsProducersOfDeletedSegments(t *testing.T) {
	build := func(t *testing.T, withBarrier bool) (*partition, int64) {
		p := newPartition(t)
		s0 := newLog(t, 0)
		s0.data(1, 0, 0, 2, false) // 0-1: producer 1, its segment deleted below
		s0.data(2, 0, 0, 1, false) // 2
		p.segment(0, s0)
		s1 := s0.following()
		if withBarrier {
			s1.barrier(nil)
		}
		s1.data(2, 0, 1, 1, false)
		p.segment(s0.next, s1)
		s2 := s1.following()
		s2.data(2, 0, 2, 1, false)
		p.segment(s1.next, s2)
		// The state through any barrier, plus producer 1 as the broker
		// kept it.
		file := p.state(s1.next, nil)
		if withBarrier {
			for _, e := range p.state(s1.next, func(o *Options) { o.IgnoreBarriers = true }) {
				if e.ProducerID == 1 {
					file = append(file, e)
				}
			}
		}
		if len(file) != 2 {
			t.Fatalf("the file %+v", file)
		}
		p.snapshot(s1.next, file)
		if err := os.Remove(filepath.Join(p.dir, segment.SegmentFileName(0, segment.LogSuffix))); err != nil {
			t.Fatal(err)
		}
		return p, s1.next
	}
	p, at := build(t, false)
	c, res := p.checkAt(DefaultOptions(), at)
	if !c.Match() || !strings.Contains(c.Reason, "deleted by retention") || res.HasErrors() {
		t.Fatalf("check %+v, anomalies %+v", c, res.Anomalies)
	}
	if r := p.rebuild(DefaultOptions()); r.SnapshotLoaded != at || r.HasErrors() || len(r.Producers) != 2 {
		t.Errorf("default run: loaded %d, producers %+v, anomalies %+v", r.SnapshotLoaded, r.Producers, r.Anomalies)
	}

	p, at = build(t, true)
	c, res = p.checkAt(DefaultOptions(), at)
	if c.Status != CheckMismatch || len(anomalies(res, finding.StaleSnapshot)) != 1 {
		t.Errorf("after a barrier: check %+v, anomalies %+v", c, res.Anomalies)
	}
	if r := p.rebuild(DefaultOptions()); len(anomalies(r, finding.StaleSnapshot)) != 1 {
		t.Errorf("after a barrier, default run: %+v", r.Anomalies)
	}
}
