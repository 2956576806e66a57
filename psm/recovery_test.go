package psm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// uncleanLog is two segments: producer 1 writes three batches, producer
// 2 a transaction whose COMMIT lies in the second segment, above the high
// watermark the test gives.
func uncleanLog(t *testing.T) (p *partition, commit int64) {
	l := newLog(t, 0)
	l.data(1, 0, 0, 1, false)
	l.data(2, 0, 0, 2, true)
	l.data(1, 0, 1, 1, false)
	l.data(1, 0, 2, 1, false)
	n := l.following()
	n.data(1, 0, 3, 1, false)
	commit = n.marker(2, 0, true, 4)
	p = newPartition(t)
	p.segment(0, l)
	p.segment(l.next, n)
	// Their .index files (empty: less than index.interval.bytes each);
	// without one a broker recovers the segment whatever the recovery
	// point (LogLoader.loadSegmentFiles).
	for _, base := range []int64{0, l.next} {
		if err := os.WriteFile(filepath.Join(p.dir, segment.FormatOffset(base)+".index"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p, commit
}

// TestUncleanStartIsTheRecoveredState: after an unclean shutdown a broker
// recovers the log from the recovery point, each segment from the
// snapshot the one before it wrote, and then loads the snapshot the last
// one wrote (LogLoader.recoverSegment, rebuildProducerState →
// truncateAndReload): one batch per producer, stamped with the entry's
// last timestamp (a marker's, for producer 2), and no transaction
// completed above the high watermark is remembered, so the last stable
// offset is the high watermark (issue 27, item 1). kseg kept its replayed
// state instead: up to five batches per producer, and a last stable offset
// held at producer 2's transaction.
func TestUncleanStartIsTheRecoveredState(t *testing.T) {
	p, commit := uncleanLog(t)
	o := DefaultOptions()
	o.Clock = ClockAt(1_700_000_100_000)
	o.HighWatermark = commit // the COMMIT is not yet replicated
	clean := p.rebuild(o)
	if e := mustProducer(t, clean, 1); len(e.Batches) != 4 {
		t.Fatalf("clean start: producer 1 holds %d batches, want 4 (the rebuild keeps up to 5)", len(e.Batches))
	}
	if clean.LastStableOffset != 1 {
		t.Fatalf("clean start: last stable offset %d, want 1 (producer 2's transaction, completed above the high watermark)", clean.LastStableOffset)
	}
	o.Recover, o.Unclean = true, true
	r := p.rebuild(o)
	for _, pid := range []int64{1, 2} {
		e := mustProducer(t, r, pid)
		if len(e.Batches) != 1 || e.Batches[0].Timestamp != e.LastTimestamp {
			t.Errorf("unclean start: producer %d holds %+v (last timestamp %d), want one batch stamped with the last timestamp", pid, e.Batches, e.LastTimestamp)
		}
	}
	if r.LastStableOffset != commit {
		t.Errorf("unclean start: last stable offset %d, want the high watermark %d", r.LastStableOffset, commit)
	}
	if r.Recovery == nil || r.Recovery.RecoveryPoint != 0 || !slices.Equal(r.Recovery.Segments, []int64{0, 5}) || r.Recovery.TruncatedAt != -1 {
		t.Errorf("recovery %+v, want both segments from recovery point 0", r.Recovery)
	}
}

// TestUncleanStartCutsWhereRecoveryCuts: a batch that fails its CRC in a
// segment the broker recovers ends the log there, and the segments after
// it are deleted (LogSegment.recover, LogLoader.recoverLog): the state is
// the one before it. Below the recovery point nothing is checked.
func TestUncleanStartCutsWhereRecoveryCuts(t *testing.T) {
	p, _ := uncleanLog(t)
	log0 := filepath.Join(p.dir, segment.FormatOffset(0)+".log")
	b, err := os.ReadFile(log0)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff // the last batch of segment 0 (producer 1, seq 2, offset 4)
	if err := os.WriteFile(log0, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Clock = ClockAt(1_700_000_100_000)
	o.Recover, o.Unclean = true, true
	r := p.rebuild(o)
	if r.LogEndOffset != 4 || r.Recovery == nil || r.Recovery.TruncatedAt != 4 || !slices.Equal(r.Recovery.Segments, []int64{0}) {
		t.Errorf("log end %d, recovery %+v: want the log cut at 4", r.LogEndOffset, r.Recovery)
	}
	if e := mustProducer(t, r, 1); e.LastSeq() != 1 || len(anomalies(r, finding.CRCMismatch)) != 1 {
		t.Errorf("producer 1 %+v, anomalies %v", e, r.Anomalies)
	}
	o.RecoveryPoint = 5 // segment 0 is flushed: not recovered, not checked
	r = p.rebuild(o)
	if r.LogEndOffset != 7 || r.Recovery == nil || !slices.Equal(r.Recovery.Segments, []int64{5}) {
		t.Errorf("recovery point 5: log end %d, recovery %+v", r.LogEndOffset, r.Recovery)
	}
}
