// Package writecmd is what kseg's write commands (inject-barrier, mirror,
// repair, restore) share around the edit engine (segment/edit): the flags
// every one of them has (Flags: --dry-run, --output, --backup-dir,
// --rollback), the run from plan to report (Run: plan, print, confirm,
// apply, verify, report), one mapping of results to exit codes (Exit), and
// one renderer of their plans and reports in text, table and JSON
// (Printer, fed by the plan and the edit engine's edit.Result).
//
// A fifth write command declares its plan-shaping flags and its Steps, and
// gives its words to the renderer as a Form; it needs nothing new here or
// in the edit engine.
package writecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/edit"
)

// Flags are the flags every write command has, embedded in its
// options.
type Flags struct {
	DryRun    bool
	Output    string
	backupDir string
	Rollback  bool
	// planFlags are the plan-shaping flags given (ValidatePlanFlags): a
	// resumed edit ignores them, and says so.
	planFlags []string
}

// AddWriteFlags registers the shared flags, in the command's words for
// --dry-run and --rollback.
func (w *Flags) AddWriteFlags(c *cobra.Command, dryRunUsage, rollbackUsage string) {
	f := c.Flags()
	f.BoolVar(&w.DryRun, "dry-run", false, dryRunUsage)
	ui.AddOutputFlag(c, &w.Output)
	f.StringVar(&w.backupDir, "backup-dir", "", backupDirUsage)
	f.BoolVar(&w.Rollback, "rollback", false, rollbackUsage)
}

// ValidateOutput checks --output.
func (w *Flags) ValidateOutput() error { return ui.ValidateOutput(w.Output) }

// ValidatePlanFlags notes which of names, the command's flags that shape a
// plan, were given, and checks that --rollback comes with none of them and
// without --dry-run.
func (w *Flags) ValidatePlanFlags(c *cobra.Command, names ...string) error {
	w.planFlags = changedFlags(c, names...)
	if w.Rollback && (w.DryRun || len(w.planFlags) > 0) {
		return ui.UsageErrorf("--rollback takes no other flag than --output and --backup-dir")
	}
	return nil
}

// ValidateOneDir ends the Validate of a write command on one directory
// (inject-barrier, repair, restore): the plan-shaping flags among
// planFlags noted and checked (ValidatePlanFlags), then exactly one
// argument, the directory dirNoun names.
func (w *Flags) ValidateOneDir(c *cobra.Command, args []string, dirNoun string, planFlags ...string) error {
	if err := w.ValidatePlanFlags(c, planFlags...); err != nil {
		return err
	}
	if len(args) != 1 {
		return ui.UsageErrorf("%s needs exactly one %s", c.Name(), dirNoun)
	}
	return nil
}

// CheckIndexInterval refuses a negative --index-interval-bytes, the
// topic's index.interval.bytes (LogConfig.indexInterval) by which
// inject-barrier, mirror and repair space the offset- and time-index
// entries they write.
func CheckIndexInterval(indexIntervalBytes int) error {
	if indexIntervalBytes < 0 {
		return ui.UsageErrorf("--index-interval-bytes must not be negative")
	}
	return nil
}

// Exit is the one mapping of a write command's errors to exit codes:
// a refusal exits ExitRefused; an option that cannot apply, ExitUsage; a
// damaged partition the command will not act on without being told
// (inject-barrier's corrupt tail without --repair-tail, a mirror's
// diverged, gapped or corrupt source), ExitFindings; anything else is an
// operational error.
func Exit(err error) error {
	var re *edit.RefusalError
	var oe *edit.OptionError
	var ct *barrier.CorruptTailError
	var de *mirror.DivergedError
	var ge *mirror.GapError
	var ce *mirror.CorruptSourceError
	switch {
	case errors.As(err, &re):
		return &ui.ExitCodeError{Code: ui.ExitRefused, Err: withHint(err, remedyHints[re.Remedy])}
	case errors.As(err, &oe):
		return &ui.ExitCodeError{Code: ui.ExitUsage, Err: fmt.Errorf("--%w", oe)}
	case errors.As(err, &ct):
		return &ui.ExitCodeError{Code: ui.ExitFindings, Err: withHint(err, " (rerun with --repair-tail to cut it as broker recovery would)")}
	case errors.As(err, &de):
		return &ui.ExitCodeError{Code: ui.ExitFindings, Err: withHint(err, " (rerun with --align to truncate it there first, as failback does)")}
	case errors.As(err, &ge), errors.As(err, &ce):
		return &ui.ExitCodeError{Code: ui.ExitFindings, Err: err}
	}
	return err
}

// remedyHints name the flag for each edit.Remedy: the domain packages
// name no flag, the CLI says which of its flags gets past a refusal.
var remedyHints = map[edit.Remedy]string{
	edit.RemedyBackupDir:    "; pass --backup-dir outside every Kafka log directory",
	edit.RemedyRollback:     " with --rollback",
	edit.RemedyTruncateMode: "; use --mode truncate",
	edit.RemedyForce:        "; --force does it anyway",
}

// defaultBackupRoot is where a write command makes its backup folder when
// --backup-dir is not given: $XDG_STATE_HOME/kseg/backups, else
// ~/.local/state/kseg/backups (the XDG base directory default), else the
// working directory. Never the working directory when a state directory
// is known: the natural place to run kseg is the log directory itself,
// where a backup folder would stop the broker (docs/failover.md). label
// names it for the plan ("~/..." under the home directory).
func defaultBackupRoot(s *ui.Streams) (root, label string) {
	if s.Env != nil {
		if d, ok := s.Env("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
			root = filepath.Join(d, "kseg", "backups")
			return root, root
		}
		if h, ok := s.Env("HOME"); ok && filepath.IsAbs(h) {
			return filepath.Join(h, ".local", "state", "kseg", "backups"), "~/.local/state/kseg/backups"
		}
	}
	if cwd, err := os.Getwd(); err == nil {
		return cwd, "the working directory"
	}
	return ".", "the working directory"
}

// hinted is a domain error with the CLI's words appended.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() + h.hint }
func (h *hinted) Unwrap() error { return h.err }

// withHint appends hint to err's message ("" leaves err as it is).
func withHint(err error, hint string) error {
	if hint == "" {
		return err
	}
	return &hinted{err: err, hint: hint}
}

// plan is a write command's plan as Run drives it: a pointer (nil: none
// was made) that states its edit.Facts.
type plan interface {
	comparable
	edit.Planned
}

// Steps is one run of a write command, as runWrite drives it.
type Steps[P plan, V interface {
	comparable
	edit.Verdict
}] struct {
	// Dir is the partition directory the command writes, as given.
	Dir   string
	Flags *Flags
	// Form is the command's words for the renderer; its What names one
	// edit in messages and its parts (the plan's edit.Facts and, from
	// Writes, the directory it writes; Dir when it does not say) are what
	// Run needs to know of a plan.
	Form *Form[P, V]

	// PlanLabel and planTotal are the plan's progress line (planTotal nil:
	// the total is not known beforehand).
	PlanLabel string
	PlanTotal func() int64
	// Plan plans, telling progress the bytes it reads (nil: no line). A
	// Plan together with an error is one that cannot be applied now (a
	// broker holds the directory, it is read-only: edit.Deferred): it is
	// shown, then the error.
	Plan func(progress func(int64)) (P, error)
	// Preflight makes the checks the apply makes before its first change
	// (backup directory, free space), changing nothing: what a dry run
	// refuses, the real run refuses too.
	Preflight func(P, edit.Options) error
	// DryRunExit is the exit of a dry run with something to do (nil: 0).
	DryRunExit func(P) error
	// Confirm, when set, may refuse an apply the operator has not
	// accepted (inject-barrier's cut of committed records without --yes).
	Confirm  func(P) error
	Apply    func(P, edit.Options) (*edit.Result[P, V], error)
	Rollback func(edit.Options) (*edit.Result[P, V], error)
}

// PlanParts are the facts of a plan runWrite acts on and every
// command's plan shows alike (Printer).
type PlanParts struct {
	edit.Facts
	// Dir is the directory the plan writes (where a journal is left when
	// an apply fails); createsDir, that the plan creates it.
	Dir        string
	CreatesDir bool
}

// PlannedOwnership is what the files an edit creates will be, when that
// is worth naming (edit.PlannedOwnership: kseg runs as root in a broker
// user's directory); nil for a resumed edit (its plan was made before).
func PlannedOwnership(resume *edit.Interrupted, dir, logDir string, createsDir bool) *edit.Ownership {
	if resume != nil || dir == "" {
		return nil
	}
	return edit.PlannedOwnership(dir, logDir, createsDir)
}

// Run runs a write command: a rollback, or a plan (printed), then,
// unless --dry-run or there is nothing to do, the apply and its report.
// Planning, applying and rolling back each draw a progress line on a
// terminal.
func Run[P plan, V interface {
	comparable
	edit.Verdict
}](ctx context.Context, s *ui.Streams, w Steps[P, V]) error {
	printer := NewPrinter(s, w.Flags.Output, w.Form)
	if w.Flags.Rollback {
		// How much a rollback copies back is in the journal it reads: the
		// line counts bytes, without a total.
		rep, err := ui.StepProgress(s, "rolling back", func() int64 { return 0 },
			func(progress func(int64)) (*edit.Result[P, V], error) {
				return w.Rollback(edit.Options{Progress: progress})
			})
		if err != nil {
			return Exit(err)
		}
		return printer.Report(rep)
	}
	total := w.PlanTotal
	if total == nil {
		total = func() int64 { return 0 }
	}
	p, blocked := ui.StepProgress(s, w.PlanLabel, total, w.Plan)
	var noPlan P
	if p == noPlan {
		return Exit(blocked)
	}
	parts := w.Form.parts(p)
	if parts.Dir == "" {
		parts.Dir = w.Dir
	}
	warnResumeIgnoresFlags(s, parts.Resume, w.Form.What, w.Dir, w.Flags.planFlags)
	if err := printer.Plan(p, w.Flags.DryRun); err != nil {
		return err
	}
	// The plan first, then why it cannot be applied now (a broker holds
	// the directory, it is read-only).
	if blocked != nil {
		return Exit(blocked)
	}
	if parts.Nothing {
		return nil
	}
	root := noteOwnerAndBackup(s, w.Flags, parts)
	if w.Flags.DryRun {
		if err := w.Preflight(p, edit.Options{BackupDir: w.Flags.backupDir, BackupRoot: root}); err != nil {
			return Exit(err)
		}
		if w.DryRunExit != nil {
			return w.DryRunExit(p)
		}
		return nil
	}
	if w.Confirm != nil {
		if err := w.Confirm(p); err != nil {
			return Exit(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep, err := ui.StepProgress(s, "applying", func() int64 { return edit.CopyBytes(parts.Ops) },
		func(progress func(int64)) (*edit.Result[P, V], error) {
			return w.Apply(p, edit.Options{BackupDir: w.Flags.backupDir, BackupRoot: root, Progress: progress})
		})
	if err != nil {
		noteApplyFailure(s, rep.Summary(), err, w.Form.What, parts.Dir)
		return Exit(err)
	}
	if err := printer.Report(rep); err != nil {
		return err
	}
	var none V
	if v := rep.Verification; v != none && !v.OK() {
		if !s.Quiet && edit.HasJournal(parts.Dir) {
			fmt.Fprintf(s.Err, "kseg: the %s's journal is kept: rerun with --rollback to undo it from the backup\n", w.Form.What)
		}
		return ui.FindingsExit()
	}
	return nil
}

// noteOwnerAndBackup says, after the plan, what the files the edit
// creates will be (when kseg changes that: root in a broker user's
// directory) and where the backup goes when --backup-dir is not given;
// it returns that default backup root.
func noteOwnerAndBackup(s *ui.Streams, f *Flags, parts PlanParts) string {
	root, rootLabel := defaultBackupRoot(s)
	if o := PlannedOwnership(parts.Resume, parts.Dir, filepath.Dir(parts.Dir), parts.CreatesDir); o != nil && f.Output != "json" {
		fmt.Fprintf(s.Out, "Ownership: files kseg creates will be uid %d gid %d, mode %04o", o.UID, o.GID, o.FileMode)
		if o.DirMode != 0 {
			fmt.Fprintf(s.Out, ", the partition directory mode %04o", o.DirMode)
		}
		fmt.Fprintln(s.Out, "; replaced files keep their owner and mode")
	}
	if f.backupDir == "" && parts.Resume == nil && f.Output == "text" {
		fmt.Fprintf(s.Out, "Backup: into a new folder in %s (the default; --backup-dir to choose)\n", rootLabel)
	}
	return root
}

// OwnerJSON is an edit.Ownership on the wire: modes in octal, as ls and
// chmod write them.
type OwnerJSON struct {
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	FileMode string `json:"fileMode"`
	DirMode  string `json:"dirMode,omitempty"`
}

func OwnerOf(o *edit.Ownership) *OwnerJSON {
	if o == nil {
		return nil
	}
	out := &OwnerJSON{UID: o.UID, GID: o.GID, FileMode: fmt.Sprintf("%04o", o.FileMode)}
	if o.DirMode != 0 {
		out.DirMode = fmt.Sprintf("%04o", o.DirMode)
	}
	return out
}
