package psm

import "github.com/kseg/kseg/segment/finding"

// Aborted returns the aborted transactions completed so far, in log order
// (what LogSegment.updateTxnIndex writes to .txnindex as each ABORT marker
// is appended). The slice is the manager's own: read it, do not change it.
// A caller appending batches one at a time (kseg mirror) takes the entries
// added by each marker from the end of it.
func (m *Manager) Aborted() []AbortedTxn { return m.aborted }

// Barriers returns the MIRROR_PID_RESET barriers met so far, in log
// order. The slice is the manager's own: read it, do not change it.
func (m *Manager) Barriers() []Barrier { return m.barriers }

// Clone is a copy of the manager that replays on independently: its
// producers, transactions, clock and options, as they are now. kseg
// mirror takes one at the destination's end, to replay the batches it
// appends when it reads them back.
func (m *Manager) Clone() *Manager {
	c := *m
	c.producers = make(map[int64]*Entry, len(m.producers))
	for pid, e := range m.producers {
		ce := *e
		ce.Batches = append([]BatchMetadata(nil), e.Batches...)
		c.producers[pid] = &ce
	}
	c.ongoing = append([]ongoingTxn(nil), m.ongoing...)
	c.unreplicated = append([]completedTxn(nil), m.unreplicated...)
	c.aborted = append([]AbortedTxn(nil), m.aborted...)
	c.barriers = append([]Barrier(nil), m.barriers...)
	c.anomalies = append([]finding.Finding(nil), m.anomalies...)
	c.free = nil
	c.ctl = nil // made again when first needed
	return &c
}
