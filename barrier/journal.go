package barrier

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Journal states. The journal is written before anything in the partition
// changes and removed after the last change, so its presence alone says an
// injection was interrupted:
//
//	prepared    backups and staged files may be incomplete; every file of
//	            the partition is still as it was. A rerun re-verifies the
//	            files against the recorded hashes and carries on; a
//	            rollback removes the staged files.
//	committing  every backup and staged file is complete and fsynced; the
//	            renames and deletions are under way. A rerun finishes them
//	            (each file is checked against its old and new hash, so a
//	            step done before the crash is skipped); a rollback copies
//	            the backups back.
const (
	journalPrepared   = "prepared"
	journalCommitting = "committing"
	journalVersion    = 1
)

// journal is the on-disk record of an injection, a mirror or a repair under
// way. All use the same file, so that none starts while another is pending.
type journal struct {
	Version   int      `json:"version"`
	Tool      string   `json:"tool"`
	State     string   `json:"state"`
	Started   string   `json:"started"`
	Dir       string   `json:"dir"`
	BackupDir string   `json:"backupDir"`
	Done      []string `json:"done"` // commit steps done, in order
	// Plan is an injection's plan, Mirror a mirror's, Repair a repair's:
	// exactly one is set.
	Plan   *Plan       `json:"plan,omitempty"`
	Mirror *MirrorPlan `json:"mirror,omitempty"`
	Repair *RepairPlan `json:"repair,omitempty"`
}

// plans counts the plans a journal carries (exactly one is valid).
func (j *journal) plans() int {
	n := 0
	for _, set := range []bool{j.Plan != nil, j.Mirror != nil, j.Repair != nil} {
		if set {
			n++
		}
	}
	return n
}

func journalPath(dir string) string { return filepath.Join(dir, JournalName) }

// readJournal reads dir's journal; a missing journal is os.ErrNotExist.
func readJournal(dir string) (*journal, error) {
	b, err := os.ReadFile(journalPath(dir))
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	if j.Version != journalVersion || j.plans() != 1 {
		return nil, fmt.Errorf("journal version %d without a plan; this kseg writes version %d", j.Version, journalVersion)
	}
	if j.State != journalPrepared && j.State != journalCommitting {
		return nil, fmt.Errorf("journal in unknown state %q", j.State)
	}
	if j.Plan != nil {
		j.Plan.Resume = nil
	}
	if j.Mirror != nil {
		j.Mirror.Resume = nil
	}
	if j.Repair != nil {
		j.Repair.Resume = nil
	}
	return &j, nil
}

// HasJournal reports whether dir holds the journal of an interrupted
// injection, mirror or repair.
func HasJournal(dir string) bool {
	_, err := os.Lstat(journalPath(dir))
	return err == nil
}
