package psm

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Snapshot entry field names, as ProducerSnapshot.json names them.
const (
	FieldEntry                 = "entry" // the producer is on one side only
	FieldProducerEpoch         = "producerEpoch"
	FieldLastSequence          = "lastSequence"
	FieldLastOffset            = "lastOffset"
	FieldOffsetDelta           = "offsetDelta"
	FieldTimestamp             = "timestamp"
	FieldCoordinatorEpoch      = "coordinatorEpoch"
	FieldCurrentTxnFirstOffset = "currentTxnFirstOffset"
	FieldDuplicate             = "duplicate" // the on-disk file lists the producer twice
)

// Difference is one field that differs between a rebuilt state and a
// snapshot file. For FieldEntry, Rebuilt and OnDisk are 1 when the
// producer is present on that side and 0 when absent; for FieldDuplicate,
// OnDisk is how many times the file lists the producer.
type Difference struct {
	ProducerID int64
	Field      string
	Rebuilt    int64
	OnDisk     int64
}

func (d Difference) String() string {
	switch d.Field {
	case FieldEntry:
		if d.Rebuilt == 0 {
			return fmt.Sprintf("producer %d: only in the snapshot file (the rebuilt state has no entry)", d.ProducerID)
		}
		return fmt.Sprintf("producer %d: missing from the snapshot file (the rebuilt state has an entry)", d.ProducerID)
	case FieldDuplicate:
		return fmt.Sprintf("producer %d: listed %d times in the snapshot file (a load keeps the last)", d.ProducerID, d.OnDisk)
	}
	return fmt.Sprintf("producer %d: %s rebuilt %d, snapshot %d", d.ProducerID, d.Field, d.Rebuilt, d.OnDisk)
}

// CompareSnapshot compares two producer states entry by entry and field by
// field, ignoring order (Kafka writes snapshots in HashMap order). A
// producer listed twice in onDisk is reported, and compared by its last
// occurrence, which is the one loadFromSnapshot keeps. The result is
// sorted by producer id, then field. Both sides are walked in producer-id
// order through sorted indexes (4 bytes an entry), not copied into maps.
func CompareSnapshot(rebuilt, onDisk []segment.SnapshotEntry) []Difference {
	R, D := sortedByPID(rebuilt), sortedByPID(onDisk)
	var out []Difference
	i, j := 0, 0
	for i < len(R) || j < len(D) {
		switch {
		case j == len(D) || (i < len(R) && rebuilt[R[i]].ProducerID < onDisk[D[j]].ProducerID):
			out = append(out, Difference{ProducerID: rebuilt[R[i]].ProducerID, Field: FieldEntry, Rebuilt: 1, OnDisk: 0})
			i++
			continue
		case i == len(R) || onDisk[D[j]].ProducerID < rebuilt[R[i]].ProducerID:
			pid := onDisk[D[j]].ProducerID
			out = append(out, Difference{ProducerID: pid, Field: FieldEntry, Rebuilt: 0, OnDisk: 1})
			for j < len(D) && onDisk[D[j]].ProducerID == pid {
				j++
			}
			continue
		}
		// The same producer on both sides: the file's last occurrence.
		r := rebuilt[R[i]]
		k := j
		for k+1 < len(D) && onDisk[D[k+1]].ProducerID == r.ProducerID {
			k++
		}
		d := onDisk[D[k]]
		if n := int64(k - j + 1); n > 1 {
			out = append(out, Difference{ProducerID: r.ProducerID, Field: FieldDuplicate, Rebuilt: 1, OnDisk: n})
		}
		add := func(field string, a, b int64) {
			if a != b {
				out = append(out, Difference{ProducerID: r.ProducerID, Field: field, Rebuilt: a, OnDisk: b})
			}
		}
		add(FieldProducerEpoch, int64(r.ProducerEpoch), int64(d.ProducerEpoch))
		add(FieldLastSequence, int64(r.LastSequence), int64(d.LastSequence))
		add(FieldLastOffset, r.LastOffset, d.LastOffset)
		add(FieldOffsetDelta, int64(r.OffsetDelta), int64(d.OffsetDelta))
		add(FieldTimestamp, r.Timestamp, d.Timestamp)
		add(FieldCoordinatorEpoch, int64(r.CoordinatorEpoch), int64(d.CoordinatorEpoch))
		add(FieldCurrentTxnFirstOffset, normTxn(r.CurrentTxnFirstOffset), normTxn(d.CurrentTxnFirstOffset))
		i++
		if i == len(R) || rebuilt[R[i]].ProducerID != r.ProducerID {
			j = k + 1 // a producer the rebuilt side lists twice meets the file's entry again
		}
	}
	order := map[string]int{FieldEntry: 0, FieldDuplicate: 1, FieldProducerEpoch: 2, FieldLastSequence: 3, FieldLastOffset: 4,
		FieldOffsetDelta: 5, FieldTimestamp: 6, FieldCoordinatorEpoch: 7, FieldCurrentTxnFirstOffset: 8}
	slices.SortStableFunc(out, func(a, b Difference) int {
		return cmp.Or(cmp.Compare(a.ProducerID, b.ProducerID), cmp.Compare(order[a.Field], order[b.Field]))
	})
	return out
}

// sortedByPID is the indexes of es in producer-id order, equal ids in
// their order in es.
func sortedByPID(es []segment.SnapshotEntry) []int32 {
	idx := make([]int32, len(es))
	for i := range idx {
		idx[i] = int32(i)
	}
	if !slices.IsSortedFunc(es, func(a, b segment.SnapshotEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) }) {
		slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(es[a].ProducerID, es[b].ProducerID) })
	}
	return idx
}

// holdsExactly reports whether m's state is exactly onDisk's entries —
// CompareSnapshot of m.Snapshot() and the file would find no difference —
// without copying the state: every file entry is m's entry of that
// producer, field for field, and the file lists each of m's producers
// once.
func holdsExactly(m *Manager, onDisk *segment.SnapshotReader) bool {
	n := onDisk.Len()
	if n != len(m.producers) {
		return false
	}
	pids := make([]int64, 0, n)
	same := true
	err := onDisk.Each(func(d segment.SnapshotEntry) {
		e := m.producers[d.ProducerID]
		same = same && e != nil && sameEntry(SnapshotEntryOf(e), d)
		pids = append(pids, d.ProducerID)
	})
	if err != nil || !same {
		return false
	}
	// n entries, all of them m's: m's n producers unless one is listed
	// twice.
	slices.Sort(pids)
	for i := 1; i < n; i++ {
		if pids[i] == pids[i-1] {
			return false
		}
	}
	return true
}

// normTxn maps every "no transaction" value to -1, as readSnapshot does
// (currentTxnFirstOffset >= 0 ? value : empty).
func normTxn(v int64) int64 {
	if v < 0 {
		return -1
	}
	return v
}

// Snapshot check statuses.
const (
	CheckMatch    = "match"
	CheckMismatch = "mismatch"
	CheckCorrupt  = "corrupt"
	CheckSkipped  = "skipped"
)

// SnapshotCheck is the comparison of one snapshot file with the state
// rebuilt from the log up to its offset.
type SnapshotCheck struct {
	Offset      int64
	Path        string
	Status      string // CheckMatch, CheckMismatch, CheckCorrupt or CheckSkipped
	Reason      string // why it was skipped, or the corruption
	Rebuilt     int    // entries rebuilt
	OnDisk      int    // entries in the file
	Differences []Difference
}

// Match reports a MATCH.
func (c SnapshotCheck) Match() bool { return c.Status == CheckMatch }

// CheckSnapshots rebuilds the state from the log alone (never from a
// snapshot) and compares it, at each N.snapshot of the directory whose
// offset lies in (logStartOffset, logEnd], with that file. It replays the
// log once, capturing the state at every snapshot offset; the state at N
// is exactly what Rebuild with Upto N and FromSnapshot SnapshotNone gives.
// The returned Result is the state at the end (opts.Upto, or the log end)
// and carries a snapshot-mismatch or snapshot-corrupt anomaly per failing
// file.
func CheckSnapshots(dir *segment.PartitionDir, opts Options) ([]SnapshotCheck, *Result, error) {
	opts.FromSnapshot = SnapshotNone
	r := newRebuilder(dir, opts)
	checks, caps := snapshotCaptures(dir, opts.Upto, r.logStart)
	res, m, err := r.run(caps)
	if err != nil {
		return nil, nil, err
	}
	// What the default run says about the files a loading broker deletes,
	// and about a clean shutdown without a snapshot: the same here.
	diskEnd, err := r.logEnd()
	if err != nil {
		return nil, nil, err
	}
	if _, kept := r.snapshotCandidates(opts.Upto, diskEnd, m.Report); opts.CleanShutdown && kept == 0 && opts.Upto < 0 {
		if a, ok := CleanShutdownLoss(res); ok {
			m.Report(a)
		}
	}
	bs := newBrokerStates(dir, opts, r, caps, res.Barriers)
	if err := r.judgeChecks(checks, caps, bs, m, res); err != nil {
		return nil, nil, err
	}
	// A mismatching snapshot after a barrier is also stale, as the default
	// run (judgeStale) calls it.
	if !opts.IgnoreBarriers {
		files, bars := r.staleCandidates(m.barriers, res.LogEndOffset)
		for i, s := range files {
			for _, c := range checks {
				if c.Offset == s.Offset && c.Status == CheckMismatch {
					m.Report(staleAnomaly(s, bars[i], c.Differences))
				}
			}
		}
	}
	// The anomalies again, with the snapshot findings added.
	res.Anomalies = slices.Clone(m.anomalies)
	slices.SortStableFunc(res.Anomalies, func(a, b finding.Finding) int { return cmp.Compare(a.Offset, b.Offset) })
	return checks, res, nil
}

// snapshotCaptures are a check for every snapshot of dir and, for those
// in (logStart, upto] (upto -1: no bound), a capture of the replay's state
// at its offset. The file is read when the replay reaches its offset:
// equal to the state there (a healthy partition), it is a match and the
// state is not copied; otherwise the state is kept and the file judged
// by judgeChecks.
func snapshotCaptures(dir *segment.PartitionDir, upto, logStart int64) ([]SnapshotCheck, []*capture) {
	var caps []*capture
	checks := make([]SnapshotCheck, len(dir.Snapshots))
	for i, s := range dir.Snapshots {
		checks[i] = SnapshotCheck{Offset: s.Offset, Path: s.Path}
		if s.Offset <= logStart || (upto >= 0 && s.Offset > upto) {
			continue
		}
		c := &checks[i]
		caps = append(caps, &capture{offset: s.Offset, vouch: func(m *Manager) bool {
			onDisk, err := segment.OpenProducerSnapshot(c.Path)
			if err != nil {
				return false
			}
			defer onDisk.Close()
			if !holdsExactly(m, onDisk) {
				return false
			}
			c.OnDisk = onDisk.Len()
			return true
		}})
	}
	return checks, caps
}

// judgeChecks gives every check its status from the replay's captures
// (caps, in the checks' order): skipped, a match vouched for during the
// replay, corrupt, or bs's verdict on the file against the state at its
// offset. A corrupt or mismatching file is reported to m.
func (r *rebuilder) judgeChecks(checks []SnapshotCheck, caps []*capture, bs *brokerStates, m *Manager, res *Result) error {
	ci := 0
	for i := range checks {
		c := &checks[i]
		name := filepath.Base(c.Path)
		var cp *capture
		if ci < len(caps) && caps[ci].offset == c.Offset {
			cp = caps[ci]
			ci++
		}
		switch {
		case c.Offset <= r.logStart:
			c.Status, c.Reason = CheckSkipped, fmt.Sprintf("at or below the log start offset %d (the broker deletes it at load)", r.logStart)
			continue
		case cp == nil:
			c.Status, c.Reason = CheckSkipped, fmt.Sprintf("above the end offset %d", r.opts.Upto)
			continue
		case !cp.done:
			c.Status, c.Reason = CheckSkipped, fmt.Sprintf("above the log end offset %d (the broker deletes it at load)", res.LogEndOffset)
			continue
		case cp.vouched:
			// Equal to the state at its offset: what judge says of a
			// file CompareSnapshot finds no difference in.
			c.Status, c.Rebuilt = CheckMatch, cp.producers
			continue
		}
		onDisk, err := segment.ReadProducerSnapshot(c.Path)
		if err != nil {
			if _, ok := asCorrupt(err); !ok {
				return err
			}
			c.Status, c.Reason = CheckCorrupt, err.Error()
			if !r.corrupted[c.Path] {
				m.Report(anomaly(finding.SnapshotCorrupt, c.Offset, -1, fmt.Sprintf("%v; the broker would delete it at load", err)))
			}
			continue
		}
		c.OnDisk = len(onDisk)
		v, err := bs.judge(c.Offset, onDisk)
		if err != nil {
			return err
		}
		c.applyVerdict(v)
		if c.Match() {
			continue
		}
		d := c.Differences[0]
		m.Report(anomaly(finding.SnapshotMismatch, c.Offset, d.ProducerID,
			fmt.Sprintf("%s differs from the state rebuilt from the log (%d difference(s)); first: %s", name, len(c.Differences), d)))
	}
	return nil
}

func asCorrupt(err error) (any, bool) {
	ce, ok := decode.AsCorrupt(err)
	return ce, ok
}
