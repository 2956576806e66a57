package edit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

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
//
// On disk it is a header, one JSON object on the first line (the fields
// below, the plan under "plan"), written whole and atomically when the
// edit is prepared and again when it starts committing; then one record a
// line, appended (see journalRecord) as commit steps are done. An older
// kseg wrote the header alone, indented over many lines, and rewrote it
// whole after every step: such a journal is read the same way.
//
// It is never marshalled itself: encode and ReadJournal convert it to and
// from journalFile, the header as stored.
type Journal struct {
	Version   int
	Tool      string
	State     string
	Started   string
	Dir       string
	BackupDir string
	// BackupDirCreated: the run created the backup directory, so cleaning
	// up after a failure removes it again.
	BackupDirCreated bool
	Done             []string // commit steps done, in order
	// Plan is the job's plan (Job.Plan), which Kind.Decode reads back.
	Plan json.RawMessage
	// appended are the hashes of appended bytes the records give, by file
	// name (an append's NewSHA256, known once its step is done).
	appended map[string]string
	// path is the file the journal was read from (JournalName, or
	// LegacyJournalName for an edit an older kseg left); "" for a new one.
	path string
}

// journalFile is the journal's header as stored: the plan under "plan",
// whichever the tool. An older kseg kept a mirror's under "mirror" and a
// repair's under "repair"; those keys are still read.
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

// journalRecord is a line appended to the journal: a commit step done
// (the file's name), with, for an append, the SHA-256 of the bytes it
// appended (read back after their fsync), by which a rerun tells the
// finished append from a torn one.
type journalRecord struct {
	Done      string `json:"done"`
	NewSHA256 string `json:"newSha256,omitempty"`
}

// maxJournalBytes bounds a journal: kseg refuses to start an edit whose
// journal would be larger (see checkJournalSize), and a journal larger
// than that is not kseg's: it is refused unread.
const maxJournalBytes = 1 << 30

// maxRecordBytes bounds one appended record (a file name and a hash).
const maxRecordBytes = 4 << 10

// encode writes the journal: its header line, the plan written by plan
// (nil: j.Plan as it is), and no record.
func (j *Journal) encode(w io.Writer, plan func(io.Writer) error) error {
	f := journalFile{Version: j.Version, Tool: j.Tool, State: j.State, Started: j.Started, Dir: j.Dir, BackupDir: j.BackupDir,
		Created: j.BackupDirCreated, Done: j.Done}
	if f.Done == nil {
		f.Done = []string{}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	// The plan goes in as it is written (compact): re-indenting a
	// mirror's index contents of a megabyte or more cost more than the
	// step's fsyncs.
	b = append(b[:len(b)-1], `,"plan":`...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	if plan != nil {
		err = plan(w)
	} else {
		_, err = w.Write(j.Plan)
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "}\n")
	return err
}

// marshal is the journal as encode writes it, with j.Plan.
func (j *Journal) marshal() ([]byte, error) {
	var b bytes.Buffer
	err := j.encode(&b, nil)
	return b.Bytes(), err
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

// openJournal opens dir's journal read-only (a regular file), refusing,
// when capped, one larger than any kseg writes.
func openJournal(dir string, capped bool) (*os.File, string, int64, error) {
	path, err := findJournal(dir)
	if err != nil {
		return nil, "", 0, err
	}
	f, err := segment.OpenFile(path)
	if err != nil {
		return nil, "", 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", 0, err
	}
	if capped && fi.Size() > maxJournalBytes {
		f.Close()
		return nil, "", 0, Refuse(RefuseJournal, path, "%d bytes, more than the %d of any journal kseg writes: not kseg's; nothing was read or touched", fi.Size(), int64(maxJournalBytes))
	}
	return f, path, fi.Size(), nil
}

// ReadJournal reads dir's journal (under either name); a missing journal is
// os.ErrNotExist. It reads at most maxJournalBytes (a larger file is
// refused unread), and an error quotes at most a short prefix of a line
// that does not parse.
func ReadJournal(dir string) (*Journal, error) {
	f, path, size, err := openJournal(dir, true)
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	_, err = io.ReadFull(f, b)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The header is the first line, unless an older kseg wrote it
	// indented (then it is the whole file).
	header, records := b, []byte(nil)
	if i := bytes.IndexByte(b, '\n'); i >= 0 && json.Valid(b[:i]) {
		header, records = b[:i], b[i+1:]
	}
	var jf journalFile
	if err := json.Unmarshal(header, &jf); err != nil {
		return nil, fmt.Errorf("%s: unreadable journal: %w (it starts %s)", path, err, quotePrefix(header))
	}
	b = nil
	j := &Journal{Version: jf.Version, Tool: jf.Tool, State: jf.State, Started: jf.Started, Dir: jf.Dir, BackupDir: jf.BackupDir,
		BackupDirCreated: jf.Created, Done: jf.Done, path: path}
	n := 0
	for _, p := range []json.RawMessage{jf.Plan, jf.Mirror, jf.Repair} {
		if len(p) > 0 && string(p) != "null" {
			j.Plan = p
			n++
		}
	}
	if j.Version != journalVersion || n != 1 {
		return nil, fmt.Errorf("%s: journal version %d without a plan; this kseg writes version %d", path, j.Version, journalVersion)
	}
	if j.State != JournalPrepared && j.State != JournalCommitting {
		return nil, fmt.Errorf("%s: journal in unknown state %s", path, quotePrefix([]byte(j.State)))
	}
	if err := j.readRecords(path, records); err != nil {
		return nil, err
	}
	return j, nil
}

// readRecords adds the records after the header to j. A last line without
// its newline is a record a crash cut short: its step is taken as not
// done (every step is checked against the files anyway).
func (j *Journal) readRecords(path string, b []byte) error {
	for line := 1; len(b) > 0; line++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil // torn by a crash
		}
		rec := b[:i]
		b = b[i+1:]
		var r journalRecord
		if len(rec) > maxRecordBytes || json.Unmarshal(rec, &r) != nil || r.Done == "" {
			return Refuse(RefuseJournal, path, "record %d after the header is not one kseg writes (it starts %s); nothing was touched", line, quotePrefix(rec))
		}
		j.Done = append(j.Done, r.Done)
		if r.NewSHA256 != "" {
			if j.appended == nil {
				j.appended = map[string]string{}
			}
			j.appended[r.Done] = r.NewSHA256
		}
	}
	return nil
}

// quotePrefix quotes at most the first 64 bytes of b, for a message.
func quotePrefix(b []byte) string {
	const n = 64
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + fmt.Sprintf("… (%d bytes)", len(b))
}

// JournalTool is the tool whose journal dir holds, and the journal's
// path, read from the header's first bytes alone (a journal is read whole
// only by the tool that finishes or rolls it back); a missing journal is
// os.ErrNotExist.
func JournalTool(dir string) (tool, path string, err error) {
	f, path, _, err := openJournal(dir, false)
	if err != nil {
		return "", path, err
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 64<<10))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", path, fmt.Errorf("%s: unreadable journal", path)
	}
	// kseg writes "version" then "tool" first, at every version.
	for i := 0; i < 4 && dec.More(); i++ {
		k, err := dec.Token()
		if err != nil {
			break
		}
		v, err := dec.Token()
		if err != nil {
			break
		}
		if s, ok := v.(string); ok && k == "tool" {
			return s, path, nil
		}
	}
	return "", path, fmt.Errorf("%s: no tool in the journal's header", path)
}

// HasJournal reports whether dir holds the journal of an interrupted edit
// (under either name).
func HasJournal(dir string) bool {
	_, err := findJournal(dir)
	return err == nil
}
