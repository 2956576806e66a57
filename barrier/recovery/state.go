// The producer state at the new log end, as the broker rebuilds it at load
// (LogLoader.recoverLog, ProducerStateManager.truncateAndReload), and the
// files that hold it: the producer snapshots (above the end, corrupt, at
// the end, stray) and leader-epoch-checkpoint.

package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/plural"
)

// replay rebuilds the producer state at the new log end over the log as
// the repair leaves it.
func (rp *planner) replay(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (*psm.Result, error) {
	view, o := rp.replayView(kept, scans, firstExamined, end, logStart)
	// LogLoader.recoverSegment replays each examined segment whole, from
	// its base offset whatever the log start (DeleteRecords moves it
	// inside a segment), and the .txnindex LogSegment.recover writes holds
	// every transaction aborted in it; the state is reloaded from the
	// snapshot each recovered segment leaves. The segment limits end the
	// log where the repair cuts it.
	o.Upto = -1
	o.Recover, o.Unclean, o.RecoveryPoint = true, true, firstExamined
	return psm.Rebuild(&view, o)
}

// replayView is the partition as the repair leaves it, and the options
// that replay it to the new log end.
func (rp *planner) replayView(kept []segment.SegmentFiles, scans []*segRepair, firstExamined, end, logStart int64) (segment.PartitionDir, psm.Options) {
	view := *rp.pd
	view.Segments = nil
	for _, s := range rp.pd.Segments {
		if s.Log == "" || slices.ContainsFunc(kept, func(k segment.SegmentFiles) bool { return k.BaseOffset == s.BaseOffset }) {
			view.Segments = append(view.Segments, s)
		}
	}
	view.Snapshots = nil
	for _, s := range rp.pd.Snapshots {
		if s.Offset <= firstExamined && s.Offset <= end {
			view.Snapshots = append(view.Snapshots, s)
		}
	}
	o := psm.DefaultOptions()
	o.Upto = end
	o.LogStartOffset = logStart
	o.VerifyCRC = false // the scan checked every CRC of the kept batches
	o.SegmentLimits = map[int64]int64{}
	for _, sr := range scans {
		if sr.cut != nil {
			o.SegmentLimits[sr.files.BaseOffset] = sr.valid
		}
	}
	return view, o
}

// planSnapshots deletes the snapshots above the new end and the corrupt
// ones, newest first.
func (rp *planner) planSnapshots() error {
	p := rp.p
	for i := len(rp.pd.Snapshots) - 1; i >= 0; i-- {
		s := rp.pd.Snapshots[i]
		if s.Offset > p.NewLogEndOffset {
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			rp.find(finding.SnapshotAboveLogEnd, s.Path, -1, "%s lies above the new log end %d (truncateAndReload deletes it)", filepath.Base(s.Path), p.NewLogEndOffset)
			if err := rp.ops.Delete(s.Path, fmt.Sprintf("producer snapshot above the new log end %d", p.NewLogEndOffset)); err != nil {
				return err
			}
			continue
		}
		if _, err := segment.ReadProducerSnapshot(s.Path); err != nil {
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				return err
			}
			rp.find(finding.SnapshotCorrupt, s.Path, ce.Pos, "%v; the broker deletes it when it tries to load it", err)
			if s.Offset == p.NewLogEndOffset {
				continue // rewritten at the end
			}
			p.SnapshotsDeleted = append(p.SnapshotsDeleted, s.Offset)
			if err := rp.ops.Delete(s.Path, "corrupt producer snapshot (loadFromSnapshot deletes it)"); err != nil {
				return err
			}
		}
	}
	slices.Sort(p.SnapshotsDeleted)
	return nil
}

// planEpochs drops the leader-epoch-checkpoint entries at or above the new
// log end (LeaderEpochFileCache.truncateFromEnd at load). An entry that
// starts exactly at the log end of a log the repair does not shorten is
// kept: it is what a leader elected on an idle partition writes
// (LeaderEpochFileCache.assign at the log end offset), the broker's own
// state rather than damage, and the broker re-assigns it after dropping
// it at load anyway.
func (rp *planner) planEpochs() error {
	p := rp.p
	if rp.pd.LeaderEpochCheckpoint == "" {
		return nil
	}
	entries, err := segment.ReadLeaderEpochCheckpoint(rp.pd.LeaderEpochCheckpoint)
	if err != nil {
		if _, ok := decode.AsCorrupt(err); ok {
			rp.warnf("%s does not parse (%v); it is left as it is", segment.LeaderEpochCheckpointName, err)
			return nil
		}
		return err
	}
	var keep []segment.EpochEntry
	// A repair that cuts the log (a torn tail included, which the old log
	// end does not count) leaves the log end where the broker's load
	// truncates the leader epochs: LeaderEpochFileCache.truncateFromEnd
	// drops every entry starting at or above it.
	shortened := p.NewLogEndOffset < p.LogEndOffset || p.Removed.Bytes > 0
	for _, e := range entries {
		if e.StartOffset > p.NewLogEndOffset || (shortened && e.StartOffset == p.NewLogEndOffset) {
			p.EpochEntriesRemoved = append(p.EpochEntriesRemoved, e)
			continue
		}
		keep = append(keep, e)
	}
	if len(p.EpochEntriesRemoved) == 0 {
		return nil
	}
	rp.find(finding.LeaderEpochAboveLogEnd, segment.LeaderEpochCheckpointName, -1,
		"%d leader epoch entries start at or above the new log end %d", len(p.EpochEntriesRemoved), p.NewLogEndOffset)
	_, err = rp.ops.Write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(keep),
		fmt.Sprintf("leader epochs starting at or above the new log end %d dropped", p.NewLogEndOffset))
	return err
}

// brokersOwn reports whether onDisk, the snapshot at the new log end, is
// a state the broker held there though it differs from the rebuilt one:
// psm decides, as replay-psm --check-snapshots does (producers kept below
// a log start moved by DeleteRecords, producers a recovery never
// expired). Such a snapshot is kept.
func (rp *planner) brokersOwn(onDisk []segment.SnapshotEntry) (bool, error) {
	if rp.checkEnd == nil {
		return false, nil
	}
	c, err := rp.checkEnd(onDisk)
	return err == nil && c.Match(), err
}

// planEndSnapshot writes the producer snapshot at the new log end when the
// repair changed the log or the snapshots, or when the one there is not
// the rebuilt state. An equal snapshot (in any entry order) is kept.
func (rp *planner) planEndSnapshot(res *psm.Result) error {
	p := rp.p
	end := p.NewLogEndOffset
	entries := res.SnapshotEntries()
	name := segment.SegmentFileName(end, segment.SnapshotSuffix)
	path := filepath.Join(rp.dir, name)
	onDisk, err := segment.ReadProducerSnapshot(path)
	exists := err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		if _, ok := decode.AsCorrupt(err); !ok {
			return err
		}
		exists = true // corrupt: reported by planSnapshots, replaced here
		onDisk = nil
		err = nil
	}
	changed := rp.changesState()
	switch {
	case exists && onDisk != nil && end <= p.LogStartOffset && !changed:
		// replay-psm's verdict on the same file: the broker deletes it at
		// load (ProducerStateManager.truncateAndReload drops snapshots at
		// or below the log start) and writes its own; nothing to repair.
		rp.find(finding.SnapshotIgnored, path, -1, "%s is at or below the log start offset %d; the broker deletes it at load (truncateAndReload) and writes its own", name, p.LogStartOffset)
		return nil
	case exists && onDisk != nil && len(psm.CompareSnapshot(entries, onDisk)) == 0:
		return nil
	case exists && onDisk != nil:
		if own, err := rp.brokersOwn(onDisk); err != nil || own {
			return err
		}
		d := psm.CompareSnapshot(entries, onDisk)
		rp.find(finding.SnapshotMismatch, path, -1, "%s differs from the producer state rebuilt from the log (%d difference(s); first: %s)", name, len(d), d[0])
	case !exists && !changed:
		a, lost := psm.CleanShutdownLoss(res)
		if !lost || !psm.SkipsRebuild(rp.pd, rp.cleanShutdown) {
			return nil // the broker rebuilds it from the log at load
		}
		// The broker would start with no producer state: the snapshot
		// makes it load the log's instead.
		rp.find(a.Kind, path, -1, "%s", a.Message)
	}
	if end <= p.LogStartOffset {
		// truncateAndReload deletes a snapshot at or below the log start
		// (planStraySnapshots deletes one there): the broker rebuilds
		// from the log start, where the log ends.
		return nil
	}
	p.SnapshotOffset = end
	p.Producers = len(entries)
	why := fmt.Sprintf("producer state at the new log end %d, rebuilt as the broker does (%s)", end, plural.N(len(entries), "producer"))
	_, err = rp.ops.Write(name, segment.EncodeProducerSnapshot(entries), why)
	return err
}

// changesState reports whether the plan so far changes what the producer
// state is rebuilt from (a cut, a deleted segment or snapshot, a
// .txnindex): rebuilt .index/.timeindex files do not, and a repair that
// only creates or rebuilds them leaves the snapshots to the broker.
func (rp *planner) changesState() bool {
	return slices.ContainsFunc(rp.ops.List, func(op edit.FileOp) bool {
		return !strings.HasSuffix(op.Name, segment.IndexSuffix) && !strings.HasSuffix(op.Name, segment.TimeIndexSuffix)
	})
}

// planStraySnapshots deletes, when the repair changes the log or what its
// producer state is rebuilt from (changesState), the producer snapshots a
// broker deletes at its next load of the repaired partition
// (segment.SnapshotsDeletedAtLoad): the stray ones beside the snapshot
// written at the new log end (removeStraySnapshots keeps only the newest),
// and those at or below the log start (truncateAndReload), so that the
// repair leaves the directory as the broker leaves it. kept are the
// segments that remain. A repair with nothing else to do, or that only
// creates or rebuilds indexes, leaves them to the broker (replay-psm notes
// them as snapshot-ignored).
func (rp *planner) planStraySnapshots(kept []segment.SegmentFiles) error {
	p := rp.p
	if !rp.changesState() {
		return nil
	}
	var offsets []int64
	for _, s := range rp.pd.Snapshots {
		if !slices.Contains(p.SnapshotsDeleted, s.Offset) && s.Offset != p.SnapshotOffset {
			offsets = append(offsets, s.Offset)
		}
	}
	if p.SnapshotOffset >= 0 {
		offsets = append(offsets, p.SnapshotOffset)
		slices.Sort(offsets)
	}
	bases := make([]int64, len(kept))
	for i, s := range kept {
		bases[i] = s.BaseOffset
	}
	for _, d := range segment.SnapshotsDeletedAtLoad(offsets, bases, p.LogStartOffset, p.NewLogEndOffset) {
		name := segment.SegmentFileName(d.Offset, segment.SnapshotSuffix)
		rp.find(finding.SnapshotIgnored, filepath.Join(rp.dir, name), -1, "%s %s", name, d.Why)
		p.SnapshotsDeleted = append(p.SnapshotsDeleted, d.Offset)
		if err := rp.ops.Delete(filepath.Join(rp.dir, name), "producer snapshot that "+d.Why); err != nil {
			return err
		}
	}
	slices.Sort(p.SnapshotsDeleted)
	return nil
}
