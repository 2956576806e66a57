package psm

// Aborted returns the aborted transactions completed so far, in log order
// (what LogSegment.updateTxnIndex writes to .txnindex as each ABORT marker
// is appended). The slice is the manager's own: read it, do not change it.
// A caller appending batches one at a time (kseg mirror) takes the entries
// added by each marker from the end of it.
func (m *Manager) Aborted() []AbortedTxn { return m.aborted }

// Barriers returns the MIRROR_PID_RESET barriers met so far, in log
// order. The slice is the manager's own: read it, do not change it.
func (m *Manager) Barriers() []Barrier { return m.barriers }
