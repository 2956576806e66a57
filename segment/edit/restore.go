package edit

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kseg/kseg/segment"
)

// Undoing a completed edit from its backup (kseg restore BACKUP_DIR). The
// backup's manifest lists every file the edit changed, created, deleted or
// appended to, with its content before (a hash, and a copy in the backup)
// and, since the edit completed, after (manifestAfter). A restore is an
// edit of its own, run by the same engine under the same lock and journal
// (so that a crash in the middle of it is finished by a rerun or undone by
// a rollback, and the files it replaces are backed up in turn): every file
// still as the edit left it is put back as it was before; a file that
// changed since (a broker wrote to it, another edit) is refused, unless
// forced.

// RestoreKind is kseg restore's tool, as recorded in the journal and the
// backup manifest.
var RestoreKind = &Kind{Tool: "kseg restore", Noun: "restore", Decode: decodeRestore}

// Restore file states: what a file of the edit is now.
const (
	// RestoreAfter: the file is as the edit left it; it is restored.
	RestoreAfter = "after"
	// RestoreBefore: the file is already as it was before the edit.
	RestoreBefore = "before"
	// RestoreChanged: neither: it changed since the edit completed (or
	// the backup does not say what the edit left). Restored only when
	// forced.
	RestoreChanged = "changed"
)

// RestorePlan is what a restore does, planned without changing anything.
type RestorePlan struct {
	BackupDir string `json:"backupDir"`
	Dir       string `json:"dir"` // the partition directory the edit wrote
	LogDir    string `json:"logDir"`
	// Tool, Started and Completed are the edit's, from the manifest
	// (Completed "" when the backup does not record that it completed).
	Tool      string `json:"tool"`
	Started   string `json:"started"`
	Completed string `json:"completed,omitempty"`
	Force     bool   `json:"force"`
	// Files are every file of the edit, last first (the order they are
	// restored in), with what each is now.
	Files []RestoreFile `json:"files"`
	// RemoveDir: the edit created the partition directory; the restore
	// removes it once it has emptied it.
	RemoveDir   bool         `json:"removeDir"`
	NothingToDo bool         `json:"nothingToDo"`
	Reason      string       `json:"reason,omitempty"`
	Resume      *Interrupted `json:"resume,omitempty"`
	Ops         []FileOp     `json:"ops"`
	Warnings    []string     `json:"warnings"`
	Owner       *Ownership   `json:"owner,omitempty"`
	manifest    *manifest    `json:"-"`
	before      map[string]beforeState
}

// RestoreFile is a file of the edit a restore undoes.
type RestoreFile struct {
	Name string `json:"name"`
	// Edit is what the edit did to it.
	Edit  Action `json:"edit"`
	State string `json:"state"` // RestoreAfter, RestoreBefore or RestoreChanged
	// Size and SHA256 are the file before the edit (Size -1: it did not
	// exist; an append's SHA256 is the fingerprint of its last
	// FingerprintBytes bytes).
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
}

// beforeState is what a restored file must be: its size and hash before
// the edit (an append's: the fingerprint of the bytes before Size).
type beforeState struct {
	size        int64
	sha256      string
	fingerprint bool
}

// RestoreOptions select what PlanRestore plans.
type RestoreOptions struct {
	// Force restores the files that changed since the edit completed too
	// (the backup's copy over what is there now), and a backup that does
	// not record what the edit left.
	Force bool
}

// RestoreVerification is a restore's read-back: every restored file must
// be, byte for byte, what it was before the edit.
type RestoreVerification struct {
	Problems []string `json:"problems"`
}

// OK reports a clean read-back.
func (v *RestoreVerification) OK() bool { return len(v.Problems) == 0 }

// RestoreReport is what ApplyRestore (or RollbackRestore) did.
type RestoreReport = Result[*RestorePlan, *RestoreVerification]

// readManifest reads and checks the manifest of the backup folder
// backupDir (returned absolute, bd): it is untrusted input (anyone who can
// write the backup folder can write it), so every name must be a Kafka
// file of a partition directory and every size possible, or nothing is
// done.
func readManifest(backupDir string) (bd string, m *manifest, err error) {
	if bd, err = filepath.Abs(backupDir); err != nil {
		return "", nil, err
	}
	path := filepath.Join(bd, BackupManifestName)
	f, err := segment.OpenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("%s: not a kseg backup (no %s)", bd, BackupManifestName)
		}
		return "", nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return "", nil, err
	}
	bad := func(format string, args ...any) error {
		return Refuse(RefuseBadBackup, path, "%s; nothing was touched", fmt.Sprintf(format, args...))
	}
	if len(b) > maxManifestBytes {
		return "", nil, bad("larger than the %d bytes of any manifest kseg writes", maxManifestBytes)
	}
	m = &manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return "", nil, bad("unreadable: %v (it starts %s)", err, quotePrefix(b))
	}
	if m.Version != 1 || m.Tool == "" || !filepath.IsAbs(m.PartitionDir) || filepath.Clean(m.PartitionDir) != m.PartitionDir {
		return "", nil, bad("version %d, tool %s, partition directory %s: not a manifest kseg writes", m.Version, quotePrefix([]byte(m.Tool)), quotePrefix([]byte(m.PartitionDir)))
	}
	seen := map[string]bool{}
	for _, mf := range m.Files {
		if err := checkName(mf.Name); err != "" {
			return "", nil, bad("file %s: %s", quotePrefix([]byte(mf.Name)), err)
		}
		if seen[mf.Name] {
			return "", nil, bad("file %s named twice", mf.Name)
		}
		seen[mf.Name] = true
		okSize := func(n int64) bool { return n >= -1 && n <= maxJournalFileSize }
		switch {
		case mf.Action != OpCreate && mf.Action != OpReplace && mf.Action != OpDelete && mf.Action != OpAppend:
			return "", nil, bad("file %s: unknown action %s", mf.Name, quotePrefix([]byte(mf.Action)))
		case !okSize(mf.Size) || (mf.Action == OpCreate) != (mf.Size == -1):
			return "", nil, bad("file %s (%s): size %d", mf.Name, mf.Action, mf.Size)
		case mf.After != nil && (!okSize(mf.After.Size) || (mf.Action == OpDelete) != (mf.After.Size == -1)):
			return "", nil, bad("file %s (%s): size after %d", mf.Name, mf.Action, mf.After.Size)
		case mf.Action != OpCreate && mf.SHA256 == "":
			return "", nil, bad("file %s (%s): no hash of its content before", mf.Name, mf.Action)
		}
	}
	for _, d := range m.CreatedDirs {
		if d != m.PartitionDir {
			return "", nil, bad("created directory %s is not the partition directory", quotePrefix([]byte(d)))
		}
	}
	return bd, m, nil
}

// checkName says why name is not a file kseg may edit ("" when it is).
func checkName(name string) string {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") || filepath.Base(name) != name {
		return "not a plain file name of the partition directory"
	}
	if fi, ok := segment.ParseFileName(name); !ok || fi.Suffix != "" || !editable[fi.Kind] {
		return "not a file Kafka keeps in a partition directory"
	}
	return ""
}

// stateOf is what the manifest's file is now in dir: RestoreBefore,
// RestoreAfter or RestoreChanged.
func stateOf(dir string, mf manifestFile) (string, error) {
	path := filepath.Join(dir, mf.Name)
	st, err := os.Lstat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if exists && !st.Mode().IsRegular() {
		return RestoreChanged, nil
	}
	is := func(size int64, sha string, from int64) (bool, error) {
		if size < 0 {
			return !exists, nil
		}
		if !exists || st.Size() != size || sha == "" {
			return false, nil
		}
		h, err := hashRange(path, from, size-from)
		return h == sha, err
	}
	var before bool
	switch mf.Action {
	case OpCreate:
		before = !exists
	case OpAppend:
		if exists && st.Size() == mf.Size {
			fp, err := fingerprintOf(path, mf.Size)
			if err != nil {
				return "", err
			}
			before = fp == mf.SHA256
		}
	default:
		if before, err = is(mf.Size, mf.SHA256, 0); err != nil {
			return "", err
		}
	}
	if before {
		return RestoreBefore, nil
	}
	a := mf.After
	if a == nil || !exists && a.Size >= 0 {
		return RestoreChanged, nil
	}
	var after bool
	switch {
	case a.Size < 0:
		after = !exists
	case st.Size() != a.Size:
	case mf.Action == OpAppend:
		fp, err := fingerprintOf(path, mf.Size)
		if err != nil {
			return "", err
		}
		if fp == mf.SHA256 {
			if after, err = is(a.Size, a.SHA256, mf.Size); err != nil {
				return "", err
			}
		}
	case a.SHA256 != "":
		if after, err = is(a.Size, a.SHA256, 0); err != nil {
			return "", err
		}
	case a.Framing != "":
		after = framingOf(path) == a.Framing
	}
	if after {
		return RestoreAfter, nil
	}
	return RestoreChanged, nil
}

// PlanRestore reads the backup folder backupDir and plans undoing the
// completed edit its manifest describes. It changes nothing. A file that
// changed since the edit (not as the edit left it) is a refusal
// (RefuseChanged) unless o.Force; the plan is returned with it, to be
// shown. When the partition directory holds the journal of an interrupted
// restore, the plan is that journal's, with Resume set; another tool's
// journal is refused (an interrupted edit is finished or rolled back by
// its own command). A broker holding the log directory refuses the apply,
// not the plan (Deferred).
func PlanRestore(backupDir string, o RestoreOptions) (*RestorePlan, error) {
	bd, m, err := readManifest(backupDir)
	if err != nil {
		return nil, err
	}
	dir := m.PartitionDir
	logDir := segment.LogDirOf(dir)
	p := &RestorePlan{BackupDir: bd, Dir: dir, LogDir: logDir, Tool: m.Tool, Started: m.Created, Completed: m.Completed, Force: o.Force,
		Files: []RestoreFile{}, RemoveDir: slices.Contains(m.CreatedDirs, dir), Ops: []FileOp{}, Warnings: []string{}, manifest: m,
		before: map[string]beforeState{}}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if p.RemoveDir {
			p.NothingToDo, p.Reason = true, fmt.Sprintf("the partition directory the %s created is gone", m.Tool)
			return p, nil
		}
		return nil, err
	}
	jp, blocked, err := StartPlan[*RestorePlan](logDir, dir, dir, RestoreKind, nil)
	if err != nil {
		return nil, err
	}
	if jp != nil {
		return jp, blocked
	}
	if p.Completed == "" {
		// What a file is after an edit is recorded when it completed:
		// without that, whatever else the manifest says is not trusted.
		for i := range m.Files {
			m.Files[i].After = nil
		}
		p.Warnings = append(p.Warnings, "the backup does not record what the edit left (an older kseg wrote it, or the edit did not complete): whether the partition changed since cannot be told")
	}
	changed, lost, err := p.restoreOps()
	if err != nil {
		return nil, err
	}
	if len(p.Ops) == 0 && len(lost) == 0 {
		p.NothingToDo, p.Reason = true, "every file of the edit is as it was before it"
		if p.RemoveDir && dirEmpty(dir) {
			p.NothingToDo, p.Reason = false, "every file of the edit is as it was before it; the partition directory it created is left empty"
		}
	}
	p.Owner = PlannedOwnership(dir, logDir, false)
	switch {
	case len(lost) > 0:
		return p, cmp.Or(blocked, error(Refuse(RefuseChanged, dir, "%s: they cannot be restored; nothing was touched", strings.Join(lost, "; "))))
	case len(changed) > 0 && !o.Force:
		why := "changed since the edit completed"
		if p.Completed == "" {
			why = "not as before the edit, and the backup does not record what the edit left"
		}
		re := Refuse(RefuseChanged, dir, "%s %s: restoring the backup over %s would undo more than the edit", namesAre(changed), why, pronoun(changed))
		re.Remedy = RemedyForce
		return p, cmp.Or(blocked, error(re))
	}
	return p, blocked
}

// restoreOps plans putting back every file of the edit, last first:
// p.Files and p.Ops. changed are the files not as the edit left them,
// lost those that cannot be restored, with why.
func (p *RestorePlan) restoreOps() (changed, lost []string, err error) {
	m, dir := p.manifest, p.Dir
	ol := OpList{Dir: dir}
	for i := len(m.Files) - 1; i >= 0; i-- {
		mf := m.Files[i]
		st, err := stateOf(dir, mf)
		if err != nil {
			return nil, nil, err
		}
		p.Files = append(p.Files, RestoreFile{Name: mf.Name, Edit: mf.Action, State: st, Size: mf.Size, SHA256: mf.SHA256})
		if st == RestoreBefore {
			continue
		}
		if st == RestoreChanged {
			changed = append(changed, mf.Name)
		}
		op, why, err := restoreOp(dir, p.BackupDir, mf)
		if err != nil {
			return nil, nil, err
		}
		if why != "" {
			lost = append(lost, mf.Name+": "+why)
			continue
		}
		if op != nil {
			ol.Add(*op)
		}
		p.before[mf.Name] = beforeState{size: mf.Size, sha256: mf.SHA256, fingerprint: mf.Action == OpAppend}
	}
	p.Ops = ol.List
	if p.Ops == nil {
		p.Ops = []FileOp{}
	}
	return changed, lost, nil
}

// restoreOp is the operation that puts mf's file back as it was before
// the edit (nil: none needed); why says why it cannot (an append whose
// kept bytes changed: the backup holds no copy of them).
func restoreOp(dir, bd string, mf manifestFile) (op *FileOp, why string, err error) {
	path := filepath.Join(dir, mf.Name)
	cur, err := os.Lstat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	switch mf.Action {
	case OpCreate:
		if !exists {
			return nil, "", nil
		}
		return &FileOp{Name: mf.Name, Action: OpDelete, Why: "created by the edit", OldSize: cur.Size(), NewSize: -1}, "", nil
	case OpAppend:
		if !exists || cur.Size() < mf.Size {
			return nil, fmt.Sprintf("shorter than the %d bytes the edit appended to", mf.Size), nil
		}
		if fp, err := fingerprintOf(path, mf.Size); err != nil {
			return nil, "", err
		} else if fp != mf.SHA256 {
			return nil, fmt.Sprintf("its first %d bytes are not those the edit appended to", mf.Size), nil
		}
		// A copy of the kept bytes, renamed over the file: the file may
		// share its inode (a hard link), and a truncation in place would
		// not be undone by a rollback of the restore.
		return &FileOp{Name: mf.Name, Action: OpReplace, Why: fmt.Sprintf("the edit appended %d bytes: back to its first %d", cur.Size()-mf.Size, mf.Size),
			OldSize: cur.Size(), NewSize: mf.Size, KeepPrefix: mf.Size}, "", nil
	}
	// A file the edit replaced or deleted: its copy in the backup, whose
	// hash must be the one the manifest recorded.
	bk := filepath.Join(bd, mf.Name)
	sum, _, size, err := hashFile(bk, -1, nil, nil)
	if err != nil {
		return nil, fmt.Sprintf("its copy in the backup cannot be read: %v", err), nil
	}
	if size != mf.Size || sum != mf.SHA256 {
		return nil, "its copy in the backup is not the content the manifest records", nil
	}
	src := []SourceRange{{Path: bk, Pos: 0, Len: mf.Size}}
	note := "copied back from the backup"
	if !exists {
		return &FileOp{Name: mf.Name, Action: OpCreate, Why: note + " (the edit deleted it)", OldSize: -1, NewSize: mf.Size, Sources: src, Verbatim: true}, "", nil
	}
	return &FileOp{Name: mf.Name, Action: OpReplace, Why: note, OldSize: cur.Size(), NewSize: mf.Size, Sources: src, Verbatim: true}, "", nil
}

// dirEmpty reports whether dir holds nothing.
func dirEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

// restoreJob is a restore plan as the engine's job.
type restoreJob struct {
	JobParts
	p *RestorePlan
}

func restoreJobOf(p *RestorePlan) *restoreJob {
	return restoreJobOfKind(RestoreKind, p)
}

// restoreJobOfKind is p as a job of kind k (RestoreKind: a Kind's Decode
// names no Kind, or they would refer to each other).
func restoreJobOfKind(k *Kind, p *RestorePlan) *restoreJob {
	return &restoreJob{JobParts{Tool: k, PartitionDir: p.Dir, LogDirectory: p.LogDir, FileOps: p.Ops, Journaled: p,
		Manifest: map[string]any{"restoredFrom": p.BackupDir, "tool": p.Tool, "started": p.Started}}, p}
}

// Check reads every restored file back: it must be what it was before
// the edit.
func (j *restoreJob) Check() (Verdict, error) {
	v := &RestoreVerification{Problems: []string{}}
	for _, f := range j.p.Files {
		b, ok := j.p.before[f.Name]
		if !ok {
			continue
		}
		mf := manifestFile{Name: f.Name, Action: f.Edit, Size: b.size, SHA256: b.sha256}
		st, err := stateOf(j.p.Dir, mf)
		if err != nil {
			return nil, err
		}
		if st != RestoreBefore {
			v.Problems = append(v.Problems, fmt.Sprintf("%s is not what it was before the edit", f.Name))
		}
	}
	return v, nil
}

// Facts are what a restore plan states alike with every write command's.
func (p *RestorePlan) Facts() Facts {
	return Facts{Resume: p.Resume, Nothing: p.NothingToDo, Reason: p.Reason, Ops: p.Ops, Warnings: p.Warnings}
}

// Resumed records how far the interrupted restore got (StartPlan).
func (p *RestorePlan) Resumed(in *Interrupted) { p.Resume = in }

// MarshalJSON records the states a restore's read-back checks with the
// plan (a rerun rebuilds them from the journal).
func (p *RestorePlan) MarshalJSON() ([]byte, error) {
	type plain RestorePlan
	return json.Marshal(struct {
		*plain
		Before map[string]beforeJSON `json:"before"`
	}{(*plain)(p), beforeOf(p.before)})
}

type beforeJSON struct {
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	Fingerprint bool   `json:"fingerprint,omitempty"`
}

func beforeOf(m map[string]beforeState) map[string]beforeJSON {
	out := make(map[string]beforeJSON, len(m))
	for k, v := range m {
		out[k] = beforeJSON{Size: v.size, SHA256: v.sha256, Fingerprint: v.fingerprint}
	}
	return out
}

// decodeRestore rebuilds a restore from its journal. The copied bytes come
// from the backup the plan names: only its copies of the partition's own
// files may be read into the partition.
func decodeRestore(k *Kind, raw json.RawMessage, dir, logDir string) (Job, error) {
	var w struct {
		RestorePlan
		Before map[string]beforeJSON `json:"before"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("unreadable journal: %w", err)
	}
	p := &w.RestorePlan
	p.Dir, p.LogDir, p.Resume = dir, logDir, nil
	p.before = map[string]beforeState{}
	for name, b := range w.Before {
		p.before[name] = beforeState{size: b.Size, sha256: b.SHA256, fingerprint: b.Fingerprint}
	}
	jp := filepath.Join(dir, JournalName)
	if !filepath.IsAbs(p.BackupDir) || filepath.Clean(p.BackupDir) != p.BackupDir {
		return nil, Refuse(RefuseJournal, jp, "restore from %s: not a clean absolute path; nothing was touched", quotePrefix([]byte(p.BackupDir)))
	}
	for _, op := range p.Ops {
		if op.Action == OpAppend {
			return nil, Refuse(RefuseJournal, jp, "operation %s %q: a restore never appends; nothing was touched", op.Action, op.Name)
		}
		for _, r := range op.Sources {
			if r.Path != filepath.Join(p.BackupDir, op.Name) {
				return nil, Refuse(RefuseJournal, jp, "operation %s %q copies from %s, not its copy in the backup %s; nothing was touched", op.Action, op.Name, r.Path, p.BackupDir)
			}
		}
	}
	return restoreJobOfKind(k, p), nil
}

// PreflightRestore makes the checks ApplyRestore makes before its first
// change (Preflight), changing nothing.
func PreflightRestore(p *RestorePlan, o Options) error {
	if p.NothingToDo || p.Resume != nil || len(p.Ops) == 0 {
		return nil
	}
	return Preflight(restoreJobOf(p), o)
}

// ApplyRestore executes a restore plan (or finishes the interrupted
// restore a resume plan describes) with the engine's crash-safe steps:
// the files it puts back are themselves backed up first (Options), so
// that a restore can be undone too. A partition directory the edit created
// is removed once the restore leaves it empty.
func ApplyRestore(p *RestorePlan, o Options) (*RestoreReport, error) {
	r, err := Execute[*RestorePlan, *RestoreVerification](restoreJobOf(p), p, p.NothingToDo || len(p.Ops) == 0, p.Reason, p.Resume != nil, o)
	if err != nil || p.NothingToDo || !p.RemoveDir || (r.Verification != nil && !r.Verification.OK()) {
		return r, err
	}
	return r, removeEmptyDir(p.Dir, p.LogDir)
}

// removeEmptyDir removes dir, under its log directory's lock, if it is
// empty: a broker would load an empty <topic>-<partition> directory as an
// empty log.
func removeEmptyDir(dir, logDir string) error {
	a := &applier{dir: dir, logDir: logDir, rep: &Report{}}
	lk, err := a.lock()
	if err != nil {
		return err
	}
	defer lk.Close()
	if !dirEmpty(dir) {
		return nil
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	return syncDir(logDir)
}

// RollbackRestore undoes the interrupted restore of the edit backupDir's
// manifest describes (its journal is in that partition directory).
func RollbackRestore(backupDir string, o Options) (*RestoreReport, error) {
	_, m, err := readManifest(backupDir)
	if err != nil {
		return nil, err
	}
	return RollbackAs[*RestorePlan, *RestoreVerification](m.PartitionDir, o, RestoreKind)
}
