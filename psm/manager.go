package psm

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kseg/kseg/decode"
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
