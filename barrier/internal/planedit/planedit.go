// Package planedit holds the steps every write command of barrier
// (inject-barrier, mirror, repair) takes the same way before it plans.
package planedit

import (
	"cmp"

	"github.com/kseg/kseg/segment/edit"
)

// Start is a planner's first look at the partition directory dir of log
// directory logDir, before it reads a segment. A broker holding logDir
// (LogManager's .lock), or a probe directory (dir, or the log directory
// dir is to be created in) that is not writable, refuses the apply, not
// the plan (edit.Deferred): blocked is then returned for the planner to
// hand back with its plan, for a dry run to show; any other refusal is
// err. An interrupted edit of kind k whose journal is in dir is finished
// before anything else is planned: its journal's plan is returned as
// pending, marked by resume with how far it got (edit.Pending); dir ""
// (a directory still to be created) holds no journal. check replaces the
// read-only probe in tests (edit.CheckWritable).
func Start[P any](logDir, probe, dir string, k *edit.Kind, check func(dir string) (bool, string, error), resume func(P, *edit.Interrupted)) (pending P, blocked, err error) {
	var none P
	blocked = edit.CheckWritable(logDir, probe, check)
	if blocked != nil && !edit.Deferred(blocked) {
		return none, nil, blocked
	}
	if dir == "" {
		return none, blocked, nil
	}
	job, interrupted, err := edit.Pending(dir, k)
	if err != nil {
		return none, nil, cmp.Or(blocked, err)
	}
	if job == nil {
		return none, blocked, nil
	}
	pending = job.Plan().(P)
	resume(pending, interrupted)
	return pending, blocked, nil
}
