package writecmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// Pieces shared by the three commands that change a partition in place
// through the edit engine's journal (segment/edit): inject-barrier, mirror
// and repair.

// backupDirUsage is the help of their --backup-dir.
const backupDirUsage = "where the backup of every changed or deleted file goes (default: a new kseg-backup-<partition>-<time> folder under $XDG_STATE_HOME/kseg/backups, else ~/.local/state/kseg/backups; never inside a Kafka log directory or partition)"

// changedFlags are the flags among names that were given, as "--name": the
// ones that shape a plan, which a resumed operation ignores.
func changedFlags(c *cobra.Command, names ...string) []string {
	fl := c.Flags()
	var out []string
	for _, name := range names {
		if fl.Changed(name) {
			out = append(out, "--"+name)
		}
	}
	return out
}

// warnResumeIgnoresFlags says that a pending operation (what: "injection",
// "mirror", "repair") in dir is finished with the options it was planned
// with, when plan-shaping flags were given.
func warnResumeIgnoresFlags(s *ui.Streams, resume *edit.Interrupted, what, dir string, planFlags []string) {
	if resume != nil && len(planFlags) > 0 && !s.Quiet {
		fmt.Fprintf(s.Err, "kseg: an interrupted %s is pending in %s; it is finished with the options it was planned with (ignoring %v)\n",
			what, dir, planFlags)
	}
}

// noteApplyFailure tells, after a failed apply, where the backup so far is
// and, when the journal is left behind, how to finish or undo the operation.
func noteApplyFailure(s *ui.Streams, rep *edit.Outcome, err error, what, dir string) {
	if s.Quiet {
		return
	}
	// Name the backup only if it exists: a run that failed before its
	// backup began, or cleaned up after itself, has none.
	if rep != nil && rep.BackupDir != "" {
		if _, serr := os.Stat(rep.BackupDir); serr == nil {
			fmt.Fprintf(s.Err, "kseg: backup so far: %s\n", rep.BackupDir)
		}
	}
	if !errors.Is(err, edit.ErrRefused) && edit.HasJournal(dir) {
		fmt.Fprintf(s.Err, "kseg: the %s was interrupted; rerun the command to finish it, or add --rollback to undo it\n", what)
	}
}

// ---- text ----

func OffsetsList(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// resume is the plan's line about an interrupted operation (what:
// "injection", "mirror", "repair") found through its journal.
func (t *Text) resume(what string, r *edit.Interrupted) {
	if r == nil {
		return
	}
	st := t.St
	t.Pf("%s an interrupted %s (journal state %s, started %s, backup %s); applying finishes it with the plan recorded then, --rollback undoes it\n",
		st.Paint(st.Warn, "Resume:"), what, r.State, r.Started, r.BackupDir)
}

// IndexChanges is the plan's line of index entries kept, removed and
// added.
func (t *Text) IndexChanges(index, timeIndex, txnIndex edit.IndexChange) {
	t.Pf("  index entries: .index %d kept, %d removed, %d added; .timeindex %d kept, %d removed, %d added; .txnindex %d kept, %d removed, %d added\n",
		index.Kept, index.Removed, index.Added, timeIndex.Kept, timeIndex.Removed, timeIndex.Added,
		txnIndex.Kept, txnIndex.Removed, txnIndex.Added)
}

// AbortedTxns lists the .txnindex entries a plan adds (summarised).
func (t *Text) AbortedTxns(txns []segment.AbortedTxn) {
	t.Ls.Lines(len(txns), ".txnindex entries", func(i int) {
		a := txns[i]
		t.Pf("  .txnindex += producerId %d firstOffset %d lastOffset %d lastStableOffset %d\n", a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset)
	}, func(more string) { t.Pf("  %s\n", more) })
}

// EpochChanges is the plan's leader-epoch-checkpoint line, when it
// changes the checkpoint (summarised).
func (t *Text) EpochChanges(removed, added []segment.EpochEntry) {
	if len(removed) == 0 && len(added) == 0 {
		return
	}
	var parts []string
	for _, e := range removed {
		parts = append(parts, fmt.Sprintf("remove epoch %d from %d", e.Epoch, e.StartOffset))
	}
	for _, e := range added {
		parts = append(parts, fmt.Sprintf("add epoch %d from %d", e.Epoch, e.StartOffset))
	}
	t.Pf("  leader-epoch-checkpoint: %s\n", t.Ls.Join(parts, "; "))
}

// filesTail is the end of a plan, after its "Files:" title and warnings:
// the file operations as aligned columns (summarised), or with --output
// table as a table, and the dry-run note.
func (t *Text) filesTail(ops []edit.FileOp, dryRun bool) {
	st, ls, pf := t.St, t.Ls, t.Pf
	size := func(op edit.FileOp) string {
		switch op.Action {
		case edit.OpDelete:
			return fmt.Sprintf("%d bytes", op.OldSize)
		case edit.OpCreate:
			return fmt.Sprintf("%d bytes", op.NewSize)
		}
		return fmt.Sprintf("%d -> %d bytes", op.OldSize, op.NewSize)
	}
	if t.Tbl != nil {
		rows := make([][]string, len(ops))
		for i, op := range ops {
			rows[i] = []string{string(op.Action), op.Name, size(op), op.Why}
		}
		t.Tbl.Render(ls, []string{"action", "file", "size", "why"}, rows, "files")
	} else {
		ls.Lines(len(ops), "files", func(i int) {
			op := ops[i]
			pf("  %-7s %-32s %-18s %s\n", op.Action, op.Name, size(op), st.Paint(st.Dim, op.Why))
		}, func(more string) { pf("  %s\n", more) })
	}
	if dryRun {
		pf("%s nothing was changed; run without --dry-run to apply\n", st.Paint(st.Info, "Dry run:"))
	}
}

// reportHead is the start of a report on an applied operation: whether it
// resumed an interrupted one, and the backup.
func (t *Text) reportHead(what string, r *edit.Outcome) {
	st, pf := t.St, t.Pf
	if r.Resumed {
		pf("%s an interrupted %s (journal state %s)\n", st.Paint(st.OK, "Resumed:"), what, r.ResumedFrom)
	}
	if r.BackupDir != "" {
		pf("%s %s\n", st.Paint(st.Title, "Backup:"), r.BackupDir)
	}
}

// Problems prints each problem on its own indented line, each list
// summarised.
func (t *Text) Problems(problems ...[]string) {
	for _, list := range problems {
		t.Ls.Lines(len(list), "problems", func(i int) { t.Pf("  %s\n", list[i]) }, func(more string) { t.Pf("  %s\n", more) })
	}
}

// ---- json ----

// ResultJSON starts the line each of the three prints after applying
// or rolling back ("result", "mirror-result").
type ResultJSON struct {
	Type        string `json:"type"`
	Dir         string `json:"dir"`
	Applied     bool   `json:"applied"`
	Resumed     bool   `json:"resumed"`
	ResumedFrom string `json:"resumedFrom,omitempty"`
	RolledBack  bool   `json:"rolledBack"`
	BackupDir   string `json:"backupDir,omitempty"`
}

func Result(typ string, r *edit.Outcome) ResultJSON {
	return ResultJSON{Type: typ, Dir: r.Dir, Applied: !r.RolledBack, Resumed: r.Resumed, ResumedFrom: r.ResumedFrom,
		RolledBack: r.RolledBack, BackupDir: r.BackupDir}
}

func ResumeOf(r *edit.Interrupted) *ResumeJSON {
	if r == nil {
		return nil
	}
	return &ResumeJSON{State: r.State, Started: r.Started, BackupDir: r.BackupDir}
}

func FilesOf(ops []edit.FileOp) []FileJSON {
	out := []FileJSON{}
	for _, op := range ops {
		out = append(out, FileJSON{Name: op.Name, Action: string(op.Action), OldSize: op.OldSize, NewSize: op.NewSize, Why: op.Why})
	}
	return out
}

// RemovedJSON is what a cut removes (edit.Removed), in inject-barrier's
// plan line and mirror's --align truncation.
type RemovedJSON struct {
	RemovedBatches   int64   `json:"removedBatches"`
	RemovedRecords   int64   `json:"removedRecords"`
	RemovedBytes     int64   `json:"removedBytes"`
	RemovedOffsets   int64   `json:"removedOffsets"`
	RemovedProducers []int64 `json:"removedProducers"`
}

func RemovedOf(r edit.Removed) RemovedJSON {
	return RemovedJSON{RemovedBatches: r.Batches, RemovedRecords: r.Records, RemovedBytes: r.Bytes, RemovedOffsets: r.Offsets,
		RemovedProducers: ui.NonNil(r.Producers)}
}

func EpochsOf(entries []segment.EpochEntry) []EpochJSON {
	out := []EpochJSON{}
	for _, e := range entries {
		out = append(out, EpochJSON{LeaderEpoch: e.Epoch, StartOffset: e.StartOffset})
	}
	return out
}

func AbortedOf(txns []segment.AbortedTxn) []AbortedTxnJSON {
	out := []AbortedTxnJSON{}
	for _, t := range txns {
		out = append(out, AbortedTxnJSON{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset,
			LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset})
	}
	return out
}

// PlanHeadJSON starts every plan line: its type, and what the files the
// edit creates will be, when kseg changes that (root in a broker user's
// directory).
type PlanHeadJSON struct {
	Type  string     `json:"type"`
	Owner *OwnerJSON `json:"owner,omitempty"`
}

// PlanHead is the head of a plan line of type typ, for the edit of dir in
// logDir (resume: the interrupted edit it finishes).
func PlanHead(typ string, resume *edit.Interrupted, dir, logDir string, createsDir bool) PlanHeadJSON {
	return PlanHeadJSON{Type: typ, Owner: OwnerOf(PlannedOwnership(resume, dir, logDir, createsDir))}
}

// IndexChangesJSON are a plan's index entries kept, removed and added,
// the .txnindex entries it adds and the leader epochs it removes, in
// inject-barrier's and mirror's plan lines.
type IndexChangesJSON struct {
	Index               IndexJSON        `json:"index"`
	TimeIndex           IndexJSON        `json:"timeIndex"`
	TxnIndex            IndexJSON        `json:"txnIndex"`
	AbortedTxns         []AbortedTxnJSON `json:"abortedTxns"`
	EpochEntriesRemoved []EpochJSON      `json:"epochEntriesRemoved"`
}

// IndexChangesOf is IndexChangesJSON of a plan's changes.
func IndexChangesOf(index, timeIndex, txnIndex edit.IndexChange, aborted []segment.AbortedTxn, epochsRemoved []segment.EpochEntry) IndexChangesJSON {
	return IndexChangesJSON{Index: IndexJSON(index), TimeIndex: IndexJSON(timeIndex), TxnIndex: IndexJSON(txnIndex),
		AbortedTxns: AbortedOf(aborted), EpochEntriesRemoved: EpochsOf(epochsRemoved)}
}

// PlanFilesJSON ends every plan line: its file operations and warnings.
type PlanFilesJSON struct {
	Files    []FileJSON `json:"files"`
	Warnings []string   `json:"warnings"`
}

// PlanFilesOf is PlanFilesJSON of a plan.
func PlanFilesOf(p edit.Planned) PlanFilesJSON {
	f := p.Facts()
	return PlanFilesJSON{Files: FilesOf(f.Ops), Warnings: ui.NonNil(f.Warnings)}
}

type IndexJSON struct {
	Kept    int `json:"kept"`
	Removed int `json:"removed"`
	Added   int `json:"added"`
}

type EpochJSON struct {
	LeaderEpoch int32 `json:"leaderEpoch"`
	StartOffset int64 `json:"startOffset"`
}

type AbortedTxnJSON struct {
	ProducerID       int64 `json:"producerId"`
	FirstOffset      int64 `json:"firstOffset"`
	LastOffset       int64 `json:"lastOffset"`
	LastStableOffset int64 `json:"lastStableOffset"`
}

type FileJSON struct {
	Name    string `json:"name"`
	Action  string `json:"action"`
	OldSize int64  `json:"oldSize"`
	NewSize int64  `json:"newSize"`
	Why     string `json:"why"`
}

type ResumeJSON struct {
	State     string `json:"state"`
	Started   string `json:"started"`
	BackupDir string `json:"backupDir"`
}
