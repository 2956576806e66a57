package scan

import (
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// checkLogStart reports, after the last .log of a partition directory,
// the segments whose offsets run into the next segment's
// (segment-overlap), and a log-start-offset-checkpoint entry above that
// partition's log end: a broker deletes the whole log at load
// (Options.PartitionCheck: kseg passes psm.CheckLogStart). replay-psm
// and repair report the same findings.
func (st *Run) checkLogStart(f File) error {
	dir := filepath.Dir(f.Path)
	if st.lastLogs == nil {
		st.lastLogs = map[string]string{}
	}
	last, seen := st.lastLogs[dir]
	listed := st.partDirs[dir]
	if !seen && listed != nil {
		for s := range listed.Logs() {
			last = filepath.Base(s.Log)
		}
		st.lastLogs[dir], seen = last, true
	}
	if !seen {
		if segment.IsPartitionDir(dir) {
			if pd, err := st.o.LogDirs.OpenPartitionDir(dir); err == nil {
				for s := range pd.Logs() {
					last = filepath.Base(s.Log)
				}
			}
		}
		st.lastLogs[dir] = last
	}
	if last == "" || last != filepath.Base(f.Path) {
		return nil
	}
	pd := listed
	if pd == nil {
		var err error
		if pd, err = st.o.LogDirs.OpenPartitionDir(dir); err != nil {
			return err
		}
	}
	// Segments whose offsets run into the next segment's: no one segment
	// shows it, so it is judged here, once the partition's logs are read.
	overlaps, err := segment.SegmentOverlaps(pd)
	if err != nil {
		return err
	}
	for _, o := range overlaps {
		f := o.Finding()
		st.report(fileFinding(f.Kind, o.Log, o.Position, o.Next, f.Message))
	}
	if st.o.PartitionCheck == nil {
		return nil
	}
	a, err := st.o.PartitionCheck(pd)
	if err != nil {
		// An unreadable checkpoint is dump's to report when it dumps the
		// file itself (checkpoint-corrupt).
		return nil
	}
	if a != nil {
		st.report(fileFinding(a.Kind, filepath.Join(segment.LogDirOf(dir), segment.LogStartOffsetCheckpointName), -1, -1,
			filepath.Base(dir)+": "+a.Message))
	}
	return nil
}
