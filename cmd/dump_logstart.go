package cmd

import (
	"path/filepath"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// checkLogStart reports, after the last .log of a partition directory, a
// log-start-offset-checkpoint entry above that partition's log end: a
// broker deletes the whole log at load (psm.CheckLogStart), and
// replay-psm reports the same finding.
func (st *dumpState) checkLogStart(f dumpFile) error {
	dir := filepath.Dir(f.path)
	if st.lastLogs == nil {
		st.lastLogs = map[string]string{}
	}
	last, seen := st.lastLogs[dir]
	if !seen {
		if segment.IsPartitionDir(dir) {
			if pd, err := st.o.logDirs.OpenPartitionDir(dir); err == nil {
				for _, s := range pd.Segments {
					if s.Log != "" {
						last = filepath.Base(s.Log)
					}
				}
			}
		}
		st.lastLogs[dir] = last
	}
	if last == "" || last != filepath.Base(f.path) {
		return nil
	}
	pd, err := st.o.logDirs.OpenPartitionDir(dir)
	if err != nil {
		return err
	}
	a, err := psm.CheckLogStart(pd)
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
