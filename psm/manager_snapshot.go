// The state as a producer snapshot holds it: loaded from one
// (ProducerStateManager.loadFromSnapshot, with its expiry and log-start
// rules) and taken as one (takeSnapshot).

package psm

import (
	"cmp"
	"slices"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Load replaces the state with a snapshot's entries
// (ProducerStateManager.truncateAndReload → loadFromSnapshot): entries
// expired at now are skipped, each keeps at most its last batch, open
// transactions are re-derived into ongoingTxns, and lastMapOffset becomes
// snapshotOffset. With now == NowFromClock, now comes from the clock mode;
// for the log clock it is the newest timestamp in the snapshot, which also
// seeds the clock.
func (m *Manager) Load(entries []segment.SnapshotEntry, snapshotOffset int64, now int64) {
	_ = m.load(len(entries), func(fn func(segment.SnapshotEntry)) error {
		for _, e := range entries {
			fn(e)
		}
		return nil
	}, snapshotOffset, now)
}

// load is Load of n entries that each passes to its function in file
// order: a snapshot loads from its file (segment.SnapshotReader), never
// decoded into a slice whole. An error of each is returned as it is, the
// state then incomplete.
func (m *Manager) load(n int, each func(func(segment.SnapshotEntry)) error, snapshotOffset int64, now int64) error {
	for pid, e := range m.producers {
		m.removeEntry(pid, e)
	}
	if len(m.producers) == 0 && n > 0 {
		// The map at its final size at once, not grown (and copied) in
		// doublings.
		m.producers = make(map[int64]*Entry, n)
	}
	m.ongoing = m.ongoing[:0]
	m.unreplicated = m.unreplicated[:0]
	if now == NowFromClock {
		if m.opts.Clock.Kind == ClockLogTime {
			now = m.clock
			if err := each(func(se segment.SnapshotEntry) { now = max(now, se.Timestamp) }); err != nil {
				return err
			}
			if now >= 0 {
				m.clock = max(m.clock, now)
				m.lastCheck = m.clock
			}
		} else {
			now = m.fixedNow
		}
	}
	expired := 0
	err := each(func(se segment.SnapshotEntry) {
		if now >= 0 && m.isProducerExpired(now, se.CurrentTxnFirstOffset, se.Timestamp) {
			expired++
			return
		}
		e := m.producers[se.ProducerID]
		if e == nil {
			e = m.newEntry(se.ProducerID)
			m.producers[se.ProducerID] = e
		}
		e.ProducerEpoch = se.ProducerEpoch
		e.CoordinatorEpoch = se.CoordinatorEpoch
		e.LastTimestamp = se.Timestamp
		e.CurrentTxnFirstOffset = -1
		e.Batches = e.Batches[:0]
		if se.CurrentTxnFirstOffset >= 0 {
			e.CurrentTxnFirstOffset = se.CurrentTxnFirstOffset
			m.addOngoing(ongoingTxn{producerID: se.ProducerID, firstOffset: se.CurrentTxnFirstOffset, startTs: se.Timestamp})
		}
		// readSnapshot: one BatchMetadata, only when lastOffset >= 0
		// (KAFKA-9144); its timestamp is the entry's lastTimestamp.
		if se.LastOffset >= 0 {
			addBatchMetadata(e, BatchMetadata{LastSeq: se.LastSequence, LastOffset: se.LastOffset, OffsetDelta: se.OffsetDelta, Timestamp: se.Timestamp})
		}
	})
	if err != nil {
		return err
	}
	if expired > 0 {
		m.report(finding.ExpiredOnLoad, snapshotOffset, -1,
			"%d of the %d producers in the snapshot at %d had expired at load time (now %d, producer.id.expiration.ms %d) and were not loaded",
			expired, n, snapshotOffset, now, m.opts.ProducerIDExpirationMs)
	}
	m.mapEndOffset = snapshotOffset
	m.snapshotLoaded = snapshotOffset
	return nil
}

// reload replaces the state with what a snapshot of it holds, loaded
// back: LogLoader.recoverSegment takes a snapshot when it has recovered a
// segment (ProducerStateManager.takeSnapshot), and the next step loads it
// (truncateAndReload → loadFromSnapshot). What is left is one batch per
// producer, stamped with the entry's last timestamp (readSnapshot); the
// producers expired at now are skipped; the transactions completed above
// the high watermark are forgotten (unreplicatedTxns is cleared). The
// offsets, the aborted transactions and the findings stay, and so do the
// start times of the open transactions (the log still holds them).
func (m *Manager) reload() {
	loaded := m.snapshotLoaded
	starts := make(map[int64]int64, len(m.ongoing))
	for _, t := range m.ongoing {
		starts[t.firstOffset] = t.startTs
	}
	m.Load(m.Snapshot(), m.mapEndOffset, NowFromClock)
	for i := range m.ongoing {
		if ts, ok := starts[m.ongoing[i].firstOffset]; ok {
			m.ongoing[i].startTs = ts
		}
	}
	m.snapshotLoaded = loaded
}

// Snapshot returns the state as writeSnapshot stores it, sorted by
// producer id: lastSequence/lastOffset -1 and offsetDelta 0 without batch
// metadata, timestamp = lastTimestamp, currentTxnFirstOffset -1 for none.
func (m *Manager) Snapshot() []segment.SnapshotEntry {
	out := make([]segment.SnapshotEntry, 0, len(m.producers))
	for _, e := range m.producers {
		out = append(out, SnapshotEntryOf(e))
	}
	slices.SortFunc(out, func(a, b segment.SnapshotEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// SnapshotEntryOf converts an entry the way writeSnapshot does.
func SnapshotEntryOf(e *Entry) segment.SnapshotEntry {
	return segment.SnapshotEntry{
		ProducerID:            e.ProducerID,
		ProducerEpoch:         e.ProducerEpoch,
		LastSequence:          e.LastSeq(),
		LastOffset:            e.LastDataOffset(),
		OffsetDelta:           e.LastOffsetDelta(),
		Timestamp:             e.LastTimestamp,
		CoordinatorEpoch:      e.CoordinatorEpoch,
		CurrentTxnFirstOffset: e.CurrentTxnFirstOffset,
	}
}
