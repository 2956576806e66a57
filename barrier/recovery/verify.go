// The read-back of a committed repair.

package recovery

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// Verification is the read-back check of a repair.
type Verification struct {
	// Replan lists what a new plan would still do ("" entries: none).
	Replan []string
	// IndexProblems are kafka-dump-log --verify-index findings for the
	// examined segments.
	IndexProblems []string
	// SnapshotProblems are snapshots from the first examined segment on
	// that do not MATCH the state rebuilt from the log (replay-psm
	// --check-snapshots).
	SnapshotProblems []string
}

// OK reports a clean verification.
func (v *Verification) OK() bool {
	return len(v.Replan) == 0 && len(v.IndexProblems) == 0 && len(v.SnapshotProblems) == 0
}

// Verify reads a repaired partition back: a new plan must have
// nothing to do, the examined segments' indexes must verify against their
// logs, and every producer snapshot from the first examined segment on
// must match the state rebuilt from the log.
func Verify(p *Plan) (*Verification, error) {
	v := &Verification{Replan: []string{}, IndexProblems: []string{}, SnapshotProblems: []string{}}
	again, err := planRepair(p.Dir, p.Options, true)
	if err != nil {
		return nil, err
	}
	for _, op := range again.Ops {
		v.Replan = append(v.Replan, fmt.Sprintf("%s %s: %s", op.Action, op.Name, op.Why))
	}
	pd, err := segment.OpenPartitionDir(p.Dir)
	if err != nil {
		return nil, err
	}
	for s := range pd.Logs() {
		if !slices.ContainsFunc(p.Segments, func(r Segment) bool { return r.BaseOffset == s.BaseOffset }) {
			continue
		}
		probs, err := segment.VerifySegmentIndexes(s)
		if err != nil {
			return nil, err
		}
		v.IndexProblems = append(v.IndexProblems, probs...)
	}
	o := psm.DefaultOptions()
	o.VerifyCRC = false
	logStart, _, err := psm.LogDirCheckpoints(pd)
	if err == nil {
		o.LogStartOffset = logStart
	}
	checks, _, err := psm.CheckSnapshots(pd, o)
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		if c.Offset < p.FirstExamined || c.Status == psm.CheckSkipped || c.Match() {
			continue
		}
		msg := fmt.Sprintf("%s: %s", filepath.Base(c.Path), c.Status)
		if len(c.Differences) > 0 {
			msg += ": " + c.Differences[0].String()
		} else if c.Reason != "" {
			msg += ": " + c.Reason
		}
		v.SnapshotProblems = append(v.SnapshotProblems, msg)
	}
	return v, nil
}
