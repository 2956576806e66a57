package barrier

import (
	"cmp"
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// InjectionVerification is the read-back check of an injected partition.
type InjectionVerification struct {
	BarrierOffset int64
	// BarrierFound: a batch starts at BarrierOffset and Is a barrier.
	BarrierFound bool
	// BarrierProblems are ValidateBatch's findings on it.
	BarrierProblems []Problem
	// ProducersCleared is how many producers the barrier removed in a
	// replay; ProducersAfter and OngoingAfter are the producers and open
	// transactions left at the log end (the barrier is the last batch, so
	// both must be 0).
	ProducersCleared int
	ProducersAfter   int
	OngoingAfter     int
	// ReplayFrom is the snapshot offset the replay started from (-1: the
	// log start).
	ReplayFrom int64
	// Anomalies are replay anomalies at or after the barrier's segment
	// that say the barrier is unsafe (an open transaction at it).
	Anomalies []string
	// IndexProblems are kafka-dump-log --verify-index findings for the
	// segment holding the barrier.
	IndexProblems []string
}

// OK reports a clean verification.
func (v *InjectionVerification) OK() bool {
	return v.BarrierFound && len(v.BarrierProblems) == 0 && v.ProducersAfter == 0 && v.OngoingAfter == 0 &&
		len(v.Anomalies) == 0 && len(v.IndexProblems) == 0
}

// VerifyInjection reads an injected partition back: the batch at barrierOffset must
// be a well-formed barrier, a producer-state replay through it must leave
// no producer and no open transaction, and the indexes of its segment must
// agree with its log.
func VerifyInjection(dir string, barrierOffset int64) (*InjectionVerification, error) {
	v := &InjectionVerification{BarrierOffset: barrierOffset, ReplayFrom: -1, BarrierProblems: []Problem{}, Anomalies: []string{}, IndexProblems: []string{}}
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	var seg *segment.SegmentFiles
	for s := range pd.Logs() {
		if s.BaseOffset <= barrierOffset {
			seg = &s
		}
	}
	if seg == nil {
		return v, nil
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return nil, err
	}
	sc := lf.Scanner(segment.ScanOptions{})
	for sc.Next() {
		b := sc.Batch()
		if b.BaseOffset == barrierOffset {
			v.BarrierFound = Is(b)
			v.BarrierProblems = append(v.BarrierProblems, ValidateBatch(append([]byte(nil), b.Raw...))...)
			break
		}
	}
	err = cmp.Or(sc.Err(), lf.Close())
	if err != nil {
		return nil, err
	}
	if v.IndexProblems, err = segment.VerifySegmentIndexes(*seg); err != nil {
		return nil, err
	}
	v.IndexProblems = nonNil(v.IndexProblems)

	r, from, err := readBackReplay(pd, pd.Snapshots, seg.BaseOffset, barrierOffset, -1, nil)
	if err != nil {
		return nil, err
	}
	v.ReplayFrom = from
	for _, b := range r.Barriers {
		if b.Offset == barrierOffset {
			v.ProducersCleared = b.ProducersCleared
		}
	}
	v.ProducersAfter = len(r.Producers)
	v.OngoingAfter = len(r.Ongoing)
	for _, a := range r.Anomalies {
		if a.Kind == finding.OpenTxnAtBarrier && a.Offset >= seg.BaseOffset {
			v.Anomalies = append(v.Anomalies, a.Message)
		}
	}
	return v, nil
}

// readBackReplay is the producer-state replay the read-back check runs
// through the barrier at barrierOffset, in the segment based at segBase:
// from the newest of snaps at or below the barrier in that segment (and
// above the log start, which psm, like truncateAndReload, never loads),
// else from the log start; from the log start too when that snapshot
// cannot be used. It returns the replay and the snapshot it started from
// (-1: the log start).
//
// upto and appended let the planner run it before the write, on the log
// the write will leave: the log up to upto, then the planned batches
// (psm.Options.Append), with the snapshots that stay. The plan's
// ProducersCleared is then what the read-back will say, producer expiry
// at the barrier's timestamp included.
func readBackReplay(pd *segment.PartitionDir, snaps []segment.SnapshotFile, segBase, barrierOffset, upto int64, appended []*decode.Batch) (*psm.Result, int64, error) {
	o := psm.DefaultOptions()
	o.LogStartOffset = logStartOf(pd)
	o.Upto = upto
	o.Append = appended
	logStart := max(o.LogStartOffset, pd.Segments[0].BaseOffset)
	o.FromSnapshot = psm.SnapshotNone
	from := int64(-1)
	for _, s := range snaps {
		if s.Offset <= barrierOffset && s.Offset >= segBase && s.Offset > logStart {
			o.FromSnapshot, from = s.Offset, s.Offset
		}
	}
	r, err := psm.Rebuild(pd, o)
	if err != nil && o.FromSnapshot != psm.SnapshotNone {
		// An unusable snapshot: replay the whole log instead.
		o.FromSnapshot, from = psm.SnapshotNone, -1
		r, err = psm.Rebuild(pd, o)
	}
	if err != nil {
		return nil, -1, fmt.Errorf("replaying producer state: %w", err)
	}
	return r, from, nil
}

// logStartOf is the partition's log-start-offset-checkpoint entry; -1
// when there is none or it cannot be read (the log then starts at its
// first segment).
func logStartOf(pd *segment.PartitionDir) int64 {
	ls, _ := segment.CheckpointOffset(pd, segment.LogStartOffsetCheckpointName)
	return ls
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
