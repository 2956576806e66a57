package cluster

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/kseg/kseg/psm"
)

// PartitionLog is what the disk says about a data partition: its offsets
// and, from psm's rebuild, its last stable offset and producer state.
type PartitionLog struct {
	Dir              string
	Replicas         int
	LogStartOffset   int64
	LogEndOffset     int64
	HighWatermark    int64
	LastStableOffset int64
	// Result is psm's rebuild (nil when it failed: Err says why).
	Result *psm.Result
	Err    error
}

// unreadLog adds pl's partition to unread when its log could not be read
// for an I/O reason (a file that cannot be opened: the operating system's
// *fs.PathError), not already there: the view is incomplete, which its
// command's exit says; a log that does not decode is a finding instead.
func unreadLog(unread []Unreadable, tp TopicPartition, pl *PartitionLog, logDir string) []Unreadable {
	var pe *fs.PathError
	if pl.Err == nil || !errors.As(pl.Err, &pe) || slices.ContainsFunc(unread, func(u Unreadable) bool { return u.Dir == pl.Dir }) {
		return unread
	}
	return append(unread, Unreadable{tp, pl.Dir, logDir, pl.Err})
}

// rebuildPartitions rebuilds the producer state of every partition in tps
// that the inventory holds (its most complete replica), jobs at a time,
// with the log directory's checkpoints for the log start and high
// watermark, as kseg replay-psm does. Unlike replay-psm, which gives the
// state of a broker starting on these files, it is a running cluster's
// view: without a high-watermark entry the high watermark stays the log
// end (a leader's in-sync replicas have caught up; Partition.createLog's
// start at the log start lasts only until then), and .kafka_cleanshutdown
// is not taken into account (the log's transactions are shown, not the
// empty state of rebuildProducerState's short-cut).
func rebuildPartitions(inv *Inventory, tps []TopicPartition, jobs int, base psm.Options) map[TopicPartition]*PartitionLog {
	type unit struct {
		tp TopicPartition
		r  Replica
		n  int
	}
	var units []unit
	m := make(map[TopicPartition]*PartitionLog, len(tps))
	for _, tp := range tps {
		if rs := inv.Partitions[tp]; len(rs) > 0 {
			units = append(units, unit{tp, rs[0], len(rs)})
		} else if u, ok := inv.unreadable(tp); ok {
			// There, but not readable: the log's offsets are unknown.
			m[tp] = &PartitionLog{Dir: u.Dir, Replicas: 1, Err: u.Err}
		}
	}
	out := make([]*PartitionLog, len(units))
	parallel(len(units), jobs, func(i int) {
		u := units[i]
		pl := &PartitionLog{Dir: u.r.Dir, Replicas: u.n}
		out[i] = pl
		pd, err := inv.openPartitionDir(u.r.Dir)
		if err != nil {
			pl.Err = err
			return
		}
		opts := base
		ls, hw, _ := psm.LogDirCheckpoints(pd)
		if opts.LogStartOffset < 0 && ls >= 0 {
			opts.LogStartOffset = ls
		}
		if opts.HighWatermark < 0 && hw >= 0 {
			opts.HighWatermark = hw
		}
		res, err := psm.Rebuild(pd, opts)
		if err != nil {
			pl.Err = err
			return
		}
		pl.Result = res
		pl.LogStartOffset, pl.LogEndOffset = res.LogStartOffset, res.LogEndOffset
		pl.HighWatermark, pl.LastStableOffset = res.HighWatermark, res.LastStableOffset
	})
	for i, u := range units {
		m[u.tp] = out[i]
	}
	return m
}
