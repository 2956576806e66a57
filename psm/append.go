// One batch applied to the producer state, as ProducerAppendInfo.append and
// ProducerStateManager.update apply it: a data batch's sequence and epoch
// checks and its transaction, a transaction marker completing one, and a
// MIRROR_PID_RESET barrier clearing every producer.

package psm

import (
	"cmp"
	"math"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

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
