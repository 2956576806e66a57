package edit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// JournalName is the journal, kept in the partition directory while an edit
// is under way. A broker ignores unknown files in a partition directory
// (LogLoader only looks at its own suffixes); it is unknown *directories*
// in a log directory that stop it.
const JournalName = ".kseg-inject.journal"

// StagedSuffix names the temporary copy of a file's new content, renamed
// over the file at commit. Kafka's LogLoader matches files by suffix
// (.log, .index, .snapshot …), so it ignores these.
const StagedSuffix = ".kseg-new"

// BackupManifestName is the manifest written into the backup directory.
const BackupManifestName = "kseg-backup.json"

// Journal states. The journal is written before anything in the partition
// changes and removed after the last change, so its presence alone says an
// edit was interrupted:
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
	JournalPrepared   = "prepared"
	JournalCommitting = "committing"
	journalVersion    = 1
)

// Journal is the on-disk record of an edit under way. Every tool uses the
// same file, so that none starts while another is pending.
type Journal struct {
	Version   int    `json:"version"`
	Tool      string `json:"tool"`
	State     string `json:"state"`
	Started   string `json:"started"`
	Dir       string `json:"dir"`
	BackupDir string `json:"backupDir"`
	// BackupDirCreated: the run created the backup directory, so cleaning
	// up after a failure removes it again.
	BackupDirCreated bool     `json:"backupDirCreated,omitempty"`
	Done             []string `json:"done"` // commit steps done, in order
	// Plan is the job's plan (Job.Plan), which Kind.Decode reads back.
	Plan json.RawMessage `json:"-"`
}

// journalFile is the journal as stored: version 1 keeps the plan under a
// key per tool ("plan", "mirror", "repair").
type journalFile struct {
	Version   int             `json:"version"`
	Tool      string          `json:"tool"`
	State     string          `json:"state"`
	Started   string          `json:"started"`
	Dir       string          `json:"dir"`
	BackupDir string          `json:"backupDir"`
	Created   bool            `json:"backupDirCreated,omitempty"`
	Done      []string        `json:"done"`
	Plan      json.RawMessage `json:"plan,omitempty"`
	Mirror    json.RawMessage `json:"mirror,omitempty"`
	Repair    json.RawMessage `json:"repair,omitempty"`
}

// planKeys maps a tool to the key its plan is stored under.
var planKeys = map[string]string{"kseg mirror": "mirror", "kseg repair": "repair"}

func (j *Journal) marshal() ([]byte, error) {
	f := journalFile{Version: j.Version, Tool: j.Tool, State: j.State, Started: j.Started, Dir: j.Dir, BackupDir: j.BackupDir, Created: j.BackupDirCreated, Done: j.Done}
	switch planKeys[j.Tool] {
	case "mirror":
		f.Mirror = j.Plan
	case "repair":
		f.Repair = j.Plan
	default:
		f.Plan = j.Plan
	}
	return json.MarshalIndent(f, "", "  ")
}

func journalPath(dir string) string { return filepath.Join(dir, JournalName) }

// ReadJournal reads dir's journal; a missing journal is os.ErrNotExist.
func ReadJournal(dir string) (*Journal, error) {
	b, err := os.ReadFile(journalPath(dir))
	if err != nil {
		return nil, err
	}
	var f journalFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	j := &Journal{Version: f.Version, Tool: f.Tool, State: f.State, Started: f.Started, Dir: f.Dir, BackupDir: f.BackupDir, BackupDirCreated: f.Created, Done: f.Done}
	n := 0
	for _, p := range []json.RawMessage{f.Plan, f.Mirror, f.Repair} {
		if len(p) > 0 && string(p) != "null" {
			j.Plan = p
			n++
		}
	}
	if j.Version != journalVersion || n != 1 {
		return nil, fmt.Errorf("journal version %d without a plan; this kseg writes version %d", j.Version, journalVersion)
	}
	if j.State != JournalPrepared && j.State != JournalCommitting {
		return nil, fmt.Errorf("journal in unknown state %q", j.State)
	}
	return j, nil
}

// HasJournal reports whether dir holds the journal of an interrupted edit.
func HasJournal(dir string) bool {
	_, err := os.Lstat(journalPath(dir))
	return err == nil
}
