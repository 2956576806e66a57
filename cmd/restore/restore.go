// Package restore is kseg restore: an edit undone from its backup directory
// (what inject-barrier, mirror or repair changed, put back as it was), through
// the same journaled edit the write commands apply.
package restore

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment/edit"
)

// restoreOptions are the flags of `kseg restore`.
type restoreOptions struct {
	writecmd.Flags
	force bool
}

func (o *restoreOptions) AddFlags(c *cobra.Command) {
	o.AddWriteFlags(c, "print the plan (what each file of the edit is now) and change nothing",
		"undo an interrupted restore (its journal is in the partition directory BACKUP_DIR's manifest names) from the restore's own backup")
	c.Flags().BoolVar(&o.force, "force", false, "restore files that changed since the edit completed too, and a backup that does not record what the edit left")
}

func (o *restoreOptions) Validate(c *cobra.Command, args []string) error {
	if err := o.ValidateOutput(); err != nil {
		return err
	}
	return o.ValidateOneDir(c, args, "backup folder (the one a write command printed: Backup: DIR)", "force")
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &restoreOptions{}
	c := &cobra.Command{
		Use:   "restore BACKUP_DIR",
		Short: "Undo a completed inject-barrier, mirror or repair exactly, from its backup",
		Long: `Undo a write that completed (inject-barrier, mirror, repair, or a restore),
exactly, from the backup folder it printed (Backup: DIR). The broker must be
stopped.

The backup's kseg-backup.json lists every file the write changed, created,
deleted or appended to, with its content before (a copy in the backup, or for
an append its size and a fingerprint) and, since the write completed, what it
left. kseg first plans, changing nothing: each file is either as the write
left it (restored), already as before (left alone), or changed since (a
broker or another edit wrote to it). A changed file is refused, naming it,
unless --force: restoring over it would undo more than the write.

The restore is itself a crash-safe edit, as the write was: under the log
directory's lock, the files it replaces are backed up first (--backup-dir),
new contents are staged and renamed, a journal lets a rerun finish it or
--rollback undo it, and the result is read back (every restored file must be
byte for byte what it was before the write). A partition directory the write
created (a mirror into a new directory) is removed once empty. A second run
has nothing to do.

--rollback undoes an interrupted write's own journal instead: use the
write command's --rollback for that (kseg restore is for a write that
completed).
` + ui.ExitStatusHelp + `  (restore: 0 when restored or nothing to do; 3 for a failed read-back; 4 for
  a file changed since the write, without --force)
`,
		Example: `  kseg restore --dry-run ~/.local/state/kseg/backups/kseg-backup-orders-0-20260102T150405.000Z
  kseg restore /srv/kseg-backups/orders-0
  kseg restore --force /srv/kseg-backups/orders-0     # also over files changed since`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runRestore)
}

func runRestore(ctx context.Context, s *ui.Streams, o *restoreOptions, args []string) error {
	bd := args[0]
	return writecmd.Run(ctx, s, writecmd.Steps[*edit.RestorePlan, *edit.RestoreVerification]{
		Dir: bd, Flags: &o.Flags, Form: restoreForm,
		PlanLabel: "reading",
		Plan: func(func(int64)) (*edit.RestorePlan, error) {
			return edit.PlanRestore(bd, edit.RestoreOptions{Force: o.force})
		},
		Preflight: edit.PreflightRestore,
		Apply:     edit.ApplyRestore,
		Rollback:  func(eo edit.Options) (*edit.RestoreReport, error) { return edit.RollbackRestore(bd, eo) },
	})
}

// restoreForm is restore's words for the write commands' one renderer
// (writecmd.Printer).
var restoreForm = &writecmd.Form[*edit.RestorePlan, *edit.RestoreVerification]{
	What: "restore",
	// The directory a restore writes is the partition's, not the backup's.
	Writes: func(p *edit.RestorePlan) (string, bool) { return p.Dir, false },
	Head: func(p *edit.RestorePlan) (string, string) {
		return "Restore", fmt.Sprintf("%s from %s", p.Dir, p.BackupDir)
	},
	Found:    restoreFound,
	Changes:  restoreFiles,
	PlanJSON: restorePlanWire,
	Undone: func(r *edit.RestoreReport) string {
		return fmt.Sprintf("the interrupted restore in %s is undone (journal state was %s); the partition is as the edit left it", r.Dir, r.ResumedFrom)
	},
	Done: func(t *writecmd.Text, r *edit.RestoreReport) {
		t.Pf("%s %s is as it was before the %s\n", t.St.Paint(t.St.OK, "Done:"), r.Dir, r.Plan.Tool)
	},
	Verified: func(*edit.RestoreVerification) string {
		return "every restored file is byte for byte what it was before the edit"
	},
	Failed: func(t *writecmd.Text, v *edit.RestoreVerification) {
		t.Problems(v.Problems)
	},
	ResultJSON: restoreResultWire,
}

// restoreFound is the edit the backup undoes.
func restoreFound(t *writecmd.Text, p *edit.RestorePlan) {
	done := p.Completed
	if done == "" {
		done = "not recorded"
	}
	t.Pf("  undoes       the %s started %s (completed: %s)\n", p.Tool, p.Started, done)
}

// restoreFiles is every file of the edit and what it is now.
func restoreFiles(t *writecmd.Text, p *edit.RestorePlan) {
	st := t.St
	states := map[string]string{edit.RestoreAfter: "as the edit left it", edit.RestoreBefore: "already as before", edit.RestoreChanged: "changed since"}
	if t.Tbl != nil {
		rows := make([][]string, len(p.Files))
		for i, f := range p.Files {
			rows[i] = []string{f.Name, string(f.Edit), states[f.State]}
		}
		t.Tbl.Render(t.Ls, []string{"file", "the edit", "now"}, rows, "files of the edit")
	} else {
		t.Ls.Lines(len(p.Files), "files of the edit", func(i int) {
			f := p.Files[i]
			now := states[f.State]
			if f.State == edit.RestoreChanged {
				now = st.Paint(st.Err, now)
			}
			t.Pf("  %-32s %-8s %s\n", f.Name, f.Edit, now)
		}, func(more string) { t.Pf("  %s\n", more) })
	}
	if p.RemoveDir {
		t.Pf("  the edit created %s: removed once empty\n", p.Dir)
	}
}

// JSON lines: one "restore-plan" line, then one "restore-result" line
// when something was applied or rolled back.

type restoreFileJSON struct {
	Name  string `json:"name"`
	Edit  string `json:"edit"`
	State string `json:"state"`
}

type restorePlanJSON struct {
	writecmd.PlanHeadJSON                      // "restore-plan"
	Dir                   string               `json:"dir"`
	BackupDir             string               `json:"backupDir"`
	Tool                  string               `json:"tool"`
	Started               string               `json:"started"`
	Completed             string               `json:"completed"`
	Force                 bool                 `json:"force"`
	DryRun                bool                 `json:"dryRun"`
	NothingToDo           bool                 `json:"nothingToDo"`
	Reason                string               `json:"reason,omitempty"`
	Resume                *writecmd.ResumeJSON `json:"resume,omitempty"`
	RemoveDir             bool                 `json:"removeDir"`
	States                []restoreFileJSON    `json:"states"`
	writecmd.PlanFilesJSON
}

type restoreResultJSON struct {
	writecmd.ResultJSON
	Steps        int `json:"steps"`
	Verification *struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	} `json:"verification,omitempty"`
}

// restorePlanWire is a plan's JSON line.
func restorePlanWire(p *edit.RestorePlan, dryRun bool) any {
	out := restorePlanJSON{PlanHeadJSON: writecmd.PlanHead("restore-plan", p.Resume, p.Dir, p.LogDir, false), Dir: p.Dir, BackupDir: p.BackupDir, Tool: p.Tool, Started: p.Started, Completed: p.Completed,
		Force: p.Force, DryRun: dryRun, NothingToDo: p.NothingToDo, Reason: p.Reason, Resume: writecmd.ResumeOf(p.Resume), RemoveDir: p.RemoveDir,
		States: []restoreFileJSON{}, PlanFilesJSON: writecmd.PlanFilesOf(p)}
	for _, f := range p.Files {
		out.States = append(out.States, restoreFileJSON{Name: f.Name, Edit: string(f.Edit), State: f.State})
	}
	return out
}

// restoreResultWire is a report's JSON line.
func restoreResultWire(r *edit.RestoreReport) any {
	out := restoreResultJSON{ResultJSON: writecmd.Result("restore-result", &r.Outcome), Steps: len(r.Steps)}
	if v := r.Verification; v != nil {
		out.Verification = &struct {
			OK       bool     `json:"ok"`
			Problems []string `json:"problems"`
		}{v.OK(), ui.NonNil(v.Problems)}
	}
	return out
}
