package edit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// JournalName is the journal, kept in the partition directory while an edit
// is under way, whichever tool's. A broker ignores unknown files in a
// partition directory (LogLoader only looks at its own suffixes); it is
// unknown *directories* in a log directory that stop it.
const JournalName = ".kseg-edit.journal"

// LegacyJournalName is the journal as kseg named it before it was every
// tool's (when inject-barrier alone wrote one). An edit an older kseg left
// pending under it is still finished or rolled back, under that name.
const LegacyJournalName = ".kseg-inject.journal"

// IsJournal reports whether name (a base name) is an edit's journal, or the
// temporary file a journal is written through, under either name.
func IsJournal(name string) bool {
	for _, n := range []string{JournalName, LegacyJournalName} {
		if name == n || name == n+segment.TempSuffix {
			return true
		}
	}
	return false
}

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
	// path is the file the journal was read from (JournalName, or
	// LegacyJournalName for an edit an older kseg left); "" for a new one.
	path string
}

// journalFile is the journal as stored: the plan under "plan", whichever
// the tool. An older kseg kept a mirror's under "mirror" and a repair's
// under "repair"; those keys are still read.
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

func (j *Journal) marshal() ([]byte, error) {
	f := journalFile{Version: j.Version, Tool: j.Tool, State: j.State, Started: j.Started, Dir: j.Dir, BackupDir: j.BackupDir,
		Created: j.BackupDirCreated, Done: j.Done}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil || len(j.Plan) == 0 {
		return b, err
	}
	// The plan goes in as it is (compact, as json.Marshal made it or the
	// journal held it): re-indenting it at every commit step, a mirror's
	// index contents of a megabyte or more, cost more than the step's
	// fsyncs.
	b = append(b[:len(b)-len("\n}")], ",\n  \"plan\": "...)
	b = append(b, j.Plan...)
	return append(b, "\n}"...), nil
}

// Path is the journal's file in dir: the one it was read from, else
// JournalName.
func (j *Journal) Path(dir string) string {
	if j != nil && j.path != "" {
		return j.path
	}
	return filepath.Join(dir, JournalName)
}

// findJournal is the path of dir's journal: JournalName, or an older
// kseg's LegacyJournalName; a missing journal is os.ErrNotExist.
func findJournal(dir string) (string, error) {
	var first error
	for _, name := range []string{JournalName, LegacyJournalName} {
		p := filepath.Join(dir, name)
		_, err := os.Lstat(p)
		if err == nil {
			return p, nil
		}
		if first == nil {
			first = err
		}
	}
	return "", first
}

// ReadJournal reads dir's journal (under either name); a missing journal is
// os.ErrNotExist.
func ReadJournal(dir string) (*Journal, error) {
	path, err := findJournal(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f journalFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: unreadable journal: %w", path, err)
	}
	j := &Journal{Version: f.Version, Tool: f.Tool, State: f.State, Started: f.Started, Dir: f.Dir, BackupDir: f.BackupDir,
		BackupDirCreated: f.Created, Done: f.Done, path: path}
	n := 0
	for _, p := range []json.RawMessage{f.Plan, f.Mirror, f.Repair} {
		if len(p) > 0 && string(p) != "null" {
			j.Plan = p
			n++
		}
	}
	if j.Version != journalVersion || n != 1 {
		return nil, fmt.Errorf("%s: journal version %d without a plan; this kseg writes version %d", path, j.Version, journalVersion)
	}
	if j.State != JournalPrepared && j.State != JournalCommitting {
		return nil, fmt.Errorf("%s: journal in unknown state %q", path, j.State)
	}
	return j, nil
}

// HasJournal reports whether dir holds the journal of an interrupted edit
// (under either name).
func HasJournal(dir string) bool {
	_, err := findJournal(dir)
	return err == nil
}
