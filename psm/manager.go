package psm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// ErrControlRecordRequired is returned by Apply for a control batch that
// has records when no decoded control record is given.
var ErrControlRecordRequired = errors.New("psm: control batch with records needs its decoded control record")

// ongoingTxn is a TxnMetadata in ongoingTxns, with the timestamp of its
// first batch for hanging-transaction detection.
type ongoingTxn struct {
	producerID  int64
	firstOffset int64
	startTs     int64
}

// completedTxn is a TxnMetadata moved to unreplicatedTxns by completeTxn.
type completedTxn struct {
	producerID              int64
	firstOffset, lastOffset int64
}

// Manager is the engine: ProducerStateManager driven one batch at a time
// with AppendOrigin.REPLICATION, as LogSegment.recover drives it. It never
// rejects a batch; what Kafka would warn about, reject from a client, or
// fail the load on is recorded as an anomaly (a finding.Finding) and
// replay goes on.
type Manager struct {
	opts Options

	producers    map[int64]*Entry
	ongoing      []ongoingTxn   // ongoingTxns, sorted by first offset
	unreplicated []completedTxn // unreplicatedTxns (only kept when a high watermark is given)
	aborted      []AbortedTxn
	barriers     []Barrier
	anomalies    []finding.Finding

	mapEndOffset   int64 // lastMapOffset
	logStartOffset int64
	snapshotLoaded int64
	batches        int64

	clock     int64 // log clock; -1 until a timestamp is seen
	lastCheck int64 // log clock of the last periodic expiry check
	fixedNow  int64 // now for ClockWall / ClockFixed

	free []*Entry // removed entries, reused to keep replay allocation-free

	// historyCut are producers whose batches before the replay's start
	// were not replayed (the log start lies inside a segment): until their
	// first data batch, what only their history could explain is not an
	// anomaly (Kafka's rebuild, origin REPLICATION, checks nothing).
	historyCut map[int64]bool

	ctl     *controlReader // decodes control records (ApplyBatch, Rebuild)
	control decode.Control
}

// NewManager returns an empty manager (ProducerStateManager's constructor
// state: no producers, lastMapOffset 0). Start opts from DefaultOptions:
// of the zero Options, HighWatermark 0 would pin the LSO at 0. Upto and
// FromSnapshot only matter to Rebuild.
func NewManager(opts Options) *Manager {
	if opts.ProducerIDExpirationMs <= 0 {
		opts.ProducerIDExpirationMs = DefaultProducerIDExpirationMs
	}
	if opts.ProducerIDExpirationCheckIntervalMs <= 0 {
		opts.ProducerIDExpirationCheckIntervalMs = DefaultProducerIDExpirationCheckIntervalMs
	}
	if opts.TxnTimeoutMs <= 0 {
		opts.TxnTimeoutMs = DefaultTxnTimeoutMs
	}
	m := &Manager{opts: opts, producers: map[int64]*Entry{}, snapshotLoaded: -1, clock: -1, lastCheck: -1}
	switch opts.Clock.Kind {
	case ClockWall:
		m.fixedNow = time.Now().UnixMilli()
	case ClockFixed:
		m.fixedNow = opts.Clock.FixedMs
	}
	if opts.LogStartOffset > 0 {
		m.logStartOffset = opts.LogStartOffset
	}
	return m
}

// SetLogStartOffset sets the log start offset used for the LSO.
func (m *Manager) SetLogStartOffset(o int64) { m.logStartOffset = o }

// MapEndOffset is lastMapOffset: the state reflects offsets below it.
func (m *Manager) MapEndOffset() int64 { return m.mapEndOffset }

// SetMapEndOffset sets lastMapOffset, as rebuildProducerState does at the
// end of a rebuild (the log end, or the truncation point).
func (m *Manager) SetMapEndOffset(o int64) { m.mapEndOffset = o }

// Now is the "now" expiry uses: the log clock, or the fixed time.
func (m *Manager) Now() int64 {
	if m.opts.Clock.Kind == ClockLogTime {
		return m.clock
	}
	return m.fixedNow
}

func (m *Manager) report(kind finding.Kind, offset, pid int64, format string, args ...any) {
	m.anomalies = append(m.anomalies, anomaly(kind, offset, pid, fmt.Sprintf(format, args...)))
}

// Report records an anomaly found outside Apply (Rebuild uses it for
// snapshot and log-file findings).
func (m *Manager) Report(a finding.Finding) { m.anomalies = append(m.anomalies, a) }

func (m *Manager) newEntry(pid int64) *Entry {
	var e *Entry
	if n := len(m.free); n > 0 {
		e = m.free[n-1]
		m.free = m.free[:n-1]
		b := e.Batches[:0]
		*e = Entry{Batches: b}
	} else {
		// No batch metadata yet: addBatchMetadata sizes it as it grows
		// (a producer known from one batch keeps 24 bytes, not five
		// slots).
		e = &Entry{}
	}
	// ProducerStateEntry.empty(pid)
	e.ProducerID = pid
	e.ProducerEpoch = decode.NoProducerEpoch
	e.CoordinatorEpoch = -1
	e.LastTimestamp = decode.NoTimestamp
	e.CurrentTxnFirstOffset = -1
	return e
}

func (m *Manager) removeEntry(pid int64, e *Entry) {
	delete(m.producers, pid)
	m.free = append(m.free, e)
}

// maybeUpdateProducerEpoch is ProducerStateEntry.maybeUpdateProducerEpoch:
// any change of epoch, up or down, drops the batch metadata.
func maybeUpdateProducerEpoch(e *Entry, epoch int16) {
	if e.ProducerEpoch != epoch {
		e.Batches = e.Batches[:0]
		e.ProducerEpoch = epoch
	}
}

// addBatchMetadata is ProducerStateEntry.addBatchMetadata: a 5-deep FIFO.
// Its slice grows to 1, 2, 4 and 5 slots, no more (append would go to 8).
func addBatchMetadata(e *Entry, b BatchMetadata) {
	switch n := len(e.Batches); {
	case n == NumBatchesToRetain:
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:NumBatchesToRetain-1]
	case n == cap(e.Batches):
		grown := make([]BatchMetadata, n, min(max(2*n, 1), NumBatchesToRetain))
		copy(grown, e.Batches)
		e.Batches = grown
	}
	e.Batches = append(e.Batches, b)
}

// Apply applies one batch in log order. control is the decoded first
// record of a control batch (nil for data batches and for empty control
// batches). A marker's timestamp is taken from the batch's maxTimestamp,
// which equals the single control record's timestamp in every batch Kafka
// writes; ApplyWithTimestamp takes it explicitly.
func (m *Manager) Apply(b *decode.Batch, control *decode.Control) error {
	return m.ApplyWithTimestamp(b, control, b.MaxTimestamp)
}

// ApplyWithTimestamp is Apply with the control record's timestamp
// (Record.timestamp(), which for LogAppendTime batches is maxTimestamp).
func (m *Manager) ApplyWithTimestamp(b *decode.Batch, control *decode.Control, controlTs int64) error {
	if b.IsControl() && control == nil && b.RecordCount > 0 {
		return ErrControlRecordRequired
	}
	m.batches++
	// LogSegment.recover: producer state only for magic >= 2.
	if b.IsLegacy() {
		m.mapEndOffset = b.NextOffset()
		return nil
	}
	m.advanceClock(b.MaxTimestamp)
	switch {
	case b.IsControl() && control != nil && control.Type == decode.ControlMirrorPidReset && !b.HasProducerID():
		// KIP-1279: ProducerStateManager.expireMirroredProducers() on a
		// COORDINATOR or REPLICATION append and on every rebuild. Only a
		// batch without a producer id is a barrier (barrier.md §4.3): one
		// that carries a producer id goes to applyControl, where it is the
		// invalid control record it is to every broker.
		m.applyBarrier(b, control)
	case !b.HasProducerID():
		// UnifiedLog/LogSegment: only batches with a producer id reach the
		// PSM (KRaft control records, offset commits, legacy clients).
	case b.IsControl():
		m.applyControl(b, control, controlTs)
	default:
		m.applyData(b)
	}
	m.mapEndOffset = b.NextOffset()
	return nil
}

// advanceClock moves the log clock and runs the periodic
// removeExpiredProducers task (UnifiedLog schedules it every
// producer.id.expiration.check.interval.ms) whenever the log clock has
// advanced by the interval since the last run.
func (m *Manager) advanceClock(ts int64) {
	if m.opts.Clock.Kind != ClockLogTime || ts < 0 {
		return
	}
	if m.clock < 0 {
		m.clock, m.lastCheck = ts, ts
		return
	}
	if ts > m.clock {
		m.clock = ts
	}
	if m.clock-m.lastCheck >= m.opts.ProducerIDExpirationCheckIntervalMs {
		m.RemoveExpiredProducers(m.clock)
		m.lastCheck = m.clock
	}
}

// isProducerExpired is ProducerStateManager.isProducerExpired: never an
// entry with an open transaction.
func (m *Manager) isProducerExpired(now int64, currentTxnFirstOffset, lastTimestamp int64) bool {
	return currentTxnFirstOffset < 0 && now-lastTimestamp >= m.opts.ProducerIDExpirationMs
}

// RemoveExpiredProducers is ProducerStateManager.removeExpiredProducers;
// it returns how many entries it removed.
func (m *Manager) RemoveExpiredProducers(now int64) int {
	n := 0
	for pid, e := range m.producers {
		if m.isProducerExpired(now, e.CurrentTxnFirstOffset, e.LastTimestamp) {
			m.removeEntry(pid, e)
			n++
		}
	}
	return n
}

// applyBarrier clears every producer entry (KIP-1279). ongoingTxns and
// unreplicatedTxns are left alone, as the prototype's
// expireMirroredProducers does; an open transaction at a barrier is
// reported (barrier.md §5, pitfall 8) because nothing can complete it.
func (m *Manager) applyBarrier(b *decode.Batch, c *decode.Control) {
	bar := Barrier{Offset: b.BaseOffset, SourceClusterID: c.SourceClusterID}
	if m.opts.IgnoreBarriers {
		m.barriers = append(m.barriers, bar)
		m.report(finding.BarrierIgnored, b.BaseOffset, -1,
			"MIRROR_PID_RESET barrier ignored (--ignore-barriers): %d producer entries kept", len(m.producers))
		return
	}
	bar.ProducersCleared = len(m.producers)
	for pid, e := range m.producers {
		m.removeEntry(pid, e)
	}
	m.barriers = append(m.barriers, bar)
	if len(m.ongoing) > 0 {
		t := m.ongoing[0]
		m.report(finding.OpenTxnAtBarrier, b.BaseOffset, t.producerID,
			"MIRROR_PID_RESET barrier written while %d transaction(s) were open (oldest: producer %d from offset %d); the barrier removes their producers, so no marker can complete them: they pin the last stable offset only until the broker next restarts from a snapshot taken after the barrier, which no longer lists them, and from then on read_committed consumers read their records as committed",
			len(m.ongoing), t.producerID, t.firstOffset)
	}
}

// applyControl is ProducerAppendInfo.append for a control batch with a
// producer id, then appendEndTxnMarker, then PSM.update,
// lastStableOffset, the .txnindex append and completeTxn, in
// LogSegment.updateProducerState's order.
func (m *Manager) applyControl(b *decode.Batch, c *decode.Control, ts int64) {
	pid := b.ProducerID
	e := m.producers[pid]
	if c == nil {
		// Empty control batch (the cleaner removed the marker): append is a
		// no-op, but PSM.update still stores the (possibly new, empty) entry
		// (KAFKA-7467; ProducerStateManagerTest.testAppendEmptyControlBatch).
		if e == nil {
			m.producers[pid] = m.newEntry(pid)
		}
		return
	}
	if c.Type != decode.ControlAbort && c.Type != decode.ControlCommit {
		// EndTransactionMarker.deserialize: IllegalArgumentException, which
		// fails the broker's log load. A MIRROR_PID_RESET record lands here
		// when its batch carries a producer id: upstream Kafka maps type 7
		// to UNKNOWN and the prototype parses it as a marker too, so it is
		// no barrier (barrier.md §4.3: producerId -1).
		what := ""
		if c.Type == decode.ControlMirrorPidReset {
			what = " (a MIRROR_PID_RESET barrier has producer id -1; this one is not applied as a barrier)"
		}
		m.report(finding.InvalidControl, b.BaseOffset, pid,
			"control batch of producer %d carries a %s record (type %d), not a transaction marker%s; the broker's log load fails on it (IllegalArgumentException); batch skipped",
			pid, c.Type, int16(c.Type), what)
		return
	}
	if e == nil {
		e = m.newEntry(pid)
		m.producers[pid] = e
	}
	// checkProducerEpoch (REPLICATION: warn and accept).
	if b.ProducerEpoch < e.ProducerEpoch {
		m.report(finding.EpochRegression, b.BaseOffset, pid,
			"%s marker of producer %d has epoch %d, lower than its current epoch %d; a replica accepts it and the epoch goes back",
			c.Type, pid, b.ProducerEpoch, e.ProducerEpoch)
	}
	// checkCoordinatorEpoch (REPLICATION: info and accept).
	if e.CoordinatorEpoch > c.CoordinatorEpoch {
		m.report(finding.CoordinatorEpochRegression, b.BaseOffset, pid,
			"%s marker of producer %d has coordinator epoch %d, lower than the %d already seen; a coordinator that was fenced wrote it (a replica accepts it)",
			c.Type, pid, c.CoordinatorEpoch, e.CoordinatorEpoch)
	}
	first := e.CurrentTxnFirstOffset
	if first < 0 && !m.historyCut[pid] {
		// KAFKA-10702: an empty transaction completes nothing.
		m.report(finding.MarkerWithoutTxn, b.BaseOffset, pid,
			"%s marker of producer %d with no open transaction (an empty transaction, or its data was lost or cleared)", c.Type, pid)
	}
	// updateForMarker
	maybeUpdateProducerEpoch(e, b.ProducerEpoch)
	e.CoordinatorEpoch = c.CoordinatorEpoch
	e.CurrentTxnFirstOffset = -1
	e.LastTimestamp = ts
	if first < 0 {
		return
	}
	last := b.BaseOffset
	lso := m.lastStableOffset(pid, last)
	if c.Type == decode.ControlAbort {
		m.aborted = append(m.aborted, AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: last, LastStableOffset: lso})
	}
	m.completeTxn(pid, first, last)
}

// lastStableOffset is ProducerStateManager.lastStableOffset(completedTxn):
// the first ongoing transaction of another producer, else marker + 1.
func (m *Manager) lastStableOffset(pid, markerOffset int64) int64 {
	for _, t := range m.ongoing {
		if t.producerID != pid {
			return t.firstOffset
		}
	}
	return markerOffset + 1
}

// completeTxn is ProducerStateManager.completeTxn.
func (m *Manager) completeTxn(pid, first, last int64) {
	i, ok := slices.BinarySearchFunc(m.ongoing, first, func(t ongoingTxn, off int64) int { return cmp.Compare(t.firstOffset, off) })
	if !ok {
		m.report(finding.UnknownTxnCompletion, last, pid,
			"marker at %d completes a transaction of producer %d from offset %d that was never started; the broker fails the load (IllegalArgumentException)", last, pid, first)
		return
	}
	m.ongoing = slices.Delete(m.ongoing, i, i+1)
	if m.opts.HighWatermark >= 0 && last >= m.opts.HighWatermark {
		m.unreplicated = append(m.unreplicated, completedTxn{producerID: pid, firstOffset: first, lastOffset: last})
	}
}

// applyData is ProducerAppendInfo.appendDataBatch under REPLICATION: no
// sequence check, epoch regression accepted; the anomalies are what a
// leader would have rejected or what only a second producer explains.
func (m *Manager) applyData(b *decode.Batch) {
	pid := b.ProducerID
	e := m.producers[pid]
	if e == nil {
		e = m.newEntry(pid)
		m.producers[pid] = e
	} else if !m.historyCut[pid] {
		m.checkSequence(e, b)
	}
	delete(m.historyCut, pid)
	lastSeq := b.LastSequence()
	delta := b.LastOffsetDelta
	// ProducerStateEntry.addBatch
	maybeUpdateProducerEpoch(e, b.ProducerEpoch)
	addBatchMetadata(e, BatchMetadata{LastSeq: lastSeq, LastOffset: b.LastOffset(), OffsetDelta: delta, Timestamp: b.MaxTimestamp})
	e.LastTimestamp = b.MaxTimestamp
	txn := b.IsTransactional()
	switch {
	case e.CurrentTxnFirstOffset >= 0 && !txn:
		m.report(finding.NonTxnInOpenTxn, b.BaseOffset, pid,
			"non-transactional batch of producer %d while its transaction from offset %d is open; the broker fails the log load on it (InvalidTxnStateException)",
			pid, e.CurrentTxnFirstOffset)
	case e.CurrentTxnFirstOffset < 0 && txn:
		e.CurrentTxnFirstOffset = b.BaseOffset
		m.addOngoing(ongoingTxn{producerID: pid, firstOffset: b.BaseOffset, startTs: b.MaxTimestamp})
	}
}

func (m *Manager) addOngoing(t ongoingTxn) {
	n := len(m.ongoing)
	if n == 0 || m.ongoing[n-1].firstOffset < t.firstOffset {
		m.ongoing = append(m.ongoing, t)
		return
	}
	i, ok := slices.BinarySearchFunc(m.ongoing, t.firstOffset, func(o ongoingTxn, off int64) int { return cmp.Compare(o.firstOffset, off) })
	if ok {
		m.ongoing[i] = t // TreeMap.put replaces
		return
	}
	m.ongoing = slices.Insert(m.ongoing, i, t)
}

// checkSequence classifies what ProducerAppendInfo.checkProducerEpoch and
// checkSequence would say on a leader (CLIENT origin) about a batch a
// replica accepts anyway. e is the entry before the batch.
func (m *Manager) checkSequence(e *Entry, b *decode.Batch) {
	if e.ProducerEpoch == decode.NoProducerEpoch || b.BaseSequence == decode.NoSequence {
		return // unknown producer (KIP-360) or a batch without sequences
	}
	pid, base := b.ProducerID, b.BaseSequence
	hasLast := len(e.Batches) > 0
	last := e.LastSeq()
	restarted := base == 0 || (hasLast && base <= last)
	switch {
	case b.ProducerEpoch < e.ProducerEpoch:
		if restarted {
			m.report(finding.PIDCollision, b.BaseOffset, pid,
				"producer id %d starts over at sequence %d with epoch %d, below its epoch %d, with no MIRROR_PID_RESET barrier in between: two producers share this id (what a failover without a barrier produces)",
				pid, base, b.ProducerEpoch, e.ProducerEpoch)
			return
		}
		m.report(finding.EpochRegression, b.BaseOffset, pid,
			"batch of producer %d has epoch %d, lower than its current epoch %d; a leader rejects it (InvalidProducerEpochException), a replica accepts it",
			pid, b.ProducerEpoch, e.ProducerEpoch)
	case b.ProducerEpoch > e.ProducerEpoch:
		if base != 0 {
			m.report(finding.SequenceGap, b.BaseOffset, pid,
				"producer %d moves to epoch %d at sequence %d; a new epoch starts at sequence 0", pid, b.ProducerEpoch, base)
		}
	case !hasLast:
		// Same epoch but no batch metadata: a transaction version 2 marker
		// bumped the epoch (KIP-890), or a snapshot entry without a batch
		// was loaded. ProducerAppendInfo.checkSequence then takes the last
		// sequence as -1 (currentEntry.lastSeq() of an empty entry) and a
		// leader accepts only sequence 0 (OutOfOrderSequenceException).
		if base != 0 {
			m.report(finding.SequenceGap, b.BaseOffset, pid,
				"producer %d has no batch metadata at epoch %d (a transaction version 2 marker bumped the epoch, or a snapshot entry without a batch was loaded) and resumes at sequence %d; a leader accepts only sequence 0 there (OutOfOrderSequenceException), a replica accepts it",
				pid, b.ProducerEpoch, base)
		}
	case base == decode.IncrementSequence(last, 1):
	case isRetry(e, b):
		m.report(finding.DuplicateSequence, b.BaseOffset, pid,
			"batch of producer %d repeats sequences %d..%d already in the log (a retry appended twice; a leader returns the earlier append instead)",
			pid, base, b.LastSequence())
	case restarted && !(last == math.MaxInt32 && base == 0):
		m.report(finding.PIDCollision, b.BaseOffset, pid,
			"producer id %d starts over at sequence %d after sequence %d at the same epoch %d, with no MIRROR_PID_RESET barrier in between: two producers share this id (what a failover without a barrier produces)",
			pid, base, last, b.ProducerEpoch)
	default:
		m.report(finding.SequenceGap, b.BaseOffset, pid,
			"producer %d jumps from sequence %d to %d (batches missing: deleted, compacted away, or never replicated)",
			pid, last, base)
	}
}

// isRetry reports a batch that ProducerStateEntry.findDuplicateBatch
// matches (same epoch, same first and last sequence as a retained batch)
// and that is the same batch sent again. A producer resends a batch as it
// built it, so under CreateTime its maxTimestamp is the retained one's; a
// different timestamp means another producer reusing the id and sequence
// numbers (a collision), which Kafka's range-only check cannot tell apart.
// Under LogAppendTime the broker stamps each append, so the ranges decide.
func isRetry(e *Entry, b *decode.Batch) bool {
	if b.ProducerEpoch != e.ProducerEpoch {
		return false
	}
	ls := b.LastSequence()
	for _, bm := range e.Batches {
		if bm.FirstSeq() == b.BaseSequence && bm.LastSeq == ls {
			return b.TimestampType() == decode.LogAppendTime || bm.Timestamp == b.MaxTimestamp
		}
	}
	return false
}

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

// Producers returns deep copies of the entries, sorted by producer id.
func (m *Manager) Producers() []Entry { return m.producerList(true) }

// producerList is the entries sorted by producer id; without deep, their
// Batches are the manager's own (for a final state, when the manager
// applies no more batches: a million producers' batch metadata is not
// copied).
func (m *Manager) producerList(deep bool) []Entry {
	out := make([]Entry, 0, len(m.producers))
	for _, e := range m.producers {
		c := *e
		if deep {
			c.Batches = slices.Clone(e.Batches)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// Entry returns a copy of one producer's entry.
func (m *Manager) Entry(pid int64) (Entry, bool) {
	e, ok := m.producers[pid]
	if !ok {
		return Entry{}, false
	}
	c := *e
	c.Batches = slices.Clone(e.Batches)
	return c, true
}

// ProducerCount is the number of producer entries.
func (m *Manager) ProducerCount() int { return len(m.producers) }

// State returns the current state as a Result (Partition is left empty).
// The log end offset is lastMapOffset; the high watermark is
// Options.HighWatermark (the log end when -1) within [log start, log end];
// the LSO follows
// UnifiedLog.maybeIncrementFirstUnstableOffset and fetchLastStableOffset:
// the first unstable offset (oldest ongoing or unreplicated transaction,
// never below the log start) if it is below the high watermark, else the
// high watermark.
func (m *Manager) State() *Result { return m.state(true) }

// state is State; without deep, the producers' batch metadata is shared
// with the manager (producerList).
func (m *Manager) state(deep bool) *Result {
	leo := m.mapEndOffset
	hw := m.opts.HighWatermark
	if hw < 0 {
		hw = leo
	}
	// UnifiedLog.updateHighWatermark clamps to [logStartOffset,
	// logEndOffset]; a log start above the log end (which the broker never
	// keeps: it deletes the log) must not put the high watermark past the
	// end.
	hw = min(max(hw, m.logStartOffset), leo)
	r := &Result{
		LogStartOffset:       m.logStartOffset,
		LogEndOffset:         leo,
		HighWatermark:        hw,
		FirstUndecidedOffset: -1,
		SnapshotLoaded:       m.snapshotLoaded,
		Producers:            m.producerList(deep),
		Aborted:              slices.Clone(m.aborted),
		Barriers:             slices.Clone(m.barriers),
		Anomalies:            slices.Clone(m.anomalies),
		BatchesReplayed:      m.batches,
		Clock:                m.Now(),
	}
	fuo := int64(-1)
	for _, t := range m.ongoing {
		r.Ongoing = append(r.Ongoing, Txn{ProducerID: t.producerID, FirstOffset: t.firstOffset, LastOffset: -1})
	}
	if len(m.ongoing) > 0 {
		r.FirstUndecidedOffset = m.ongoing[0].firstOffset
		fuo = m.ongoing[0].firstOffset
	}
	// removeUnreplicatedTransactions(hw): keep only markers at or above hw.
	for _, t := range m.unreplicated {
		if t.lastOffset >= hw && (fuo < 0 || t.firstOffset < fuo) {
			fuo = t.firstOffset
		}
	}
	if fuo >= 0 && fuo < m.logStartOffset {
		fuo = m.logStartOffset
	}
	r.LastStableOffset = hw
	if fuo >= 0 && fuo < hw {
		r.LastStableOffset = fuo
	}
	return r
}

// ReportHangingTransactions adds an anomaly for every transaction still
// open: a hanging-transaction error when it has been open longer than
// TxnTimeoutMs of the clock (the coordinator should have aborted it), an
// open-transaction warning otherwise (it may still be in progress on a
// live broker).
func (m *Manager) ReportHangingTransactions() {
	now := m.Now()
	for _, t := range m.ongoing {
		age := int64(-1)
		if now >= 0 && t.startTs >= 0 {
			age = now - t.startTs
		}
		if age > m.opts.TxnTimeoutMs {
			m.report(finding.HangingTransaction, t.firstOffset, t.producerID,
				"transaction of producer %d from offset %d is still open at the end of the log after %s of log time (longer than the %s transaction timeout): it is hanging, and the last stable offset cannot pass %d",
				t.producerID, t.firstOffset, time.Duration(age)*time.Millisecond, time.Duration(m.opts.TxnTimeoutMs)*time.Millisecond, t.firstOffset)
			continue
		}
		m.report(finding.OpenTransaction, t.firstOffset, t.producerID,
			"transaction of producer %d from offset %d is still open at the end of the log (not older than the %s transaction timeout: it may still be in progress)",
			t.producerID, t.firstOffset, time.Duration(m.opts.TxnTimeoutMs)*time.Millisecond)
	}
}
