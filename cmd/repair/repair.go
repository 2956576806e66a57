// Package repair is kseg repair: a stopped partition recovered offline as a
// broker's log recovery would (barrier/recovery), planned first, applied
// through the edit engine's journal (segment/edit).
package repair

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// repairOptions are the flags of `kseg repair`.
type repairOptions struct {
	writecmd.Flags
	all                bool
	indexIntervalBytes int

	// derived by Validate
	repair recovery.Options
}

func (o *repairOptions) AddFlags(c *cobra.Command) {
	o.AddWriteFlags(c, "print the plan and change nothing (exit 3 when it found damage)",
		"undo an interrupted repair (its journal is in DIR) from its backup, instead of finishing it")
	f := c.Flags()
	f.BoolVar(&o.all, "all", false, "examine every segment, not only those from the recovery point (recovery-point-offset-checkpoint) on")
	f.IntVar(&o.indexIntervalBytes, "index-interval-bytes", segment.DefaultIndexIntervalBytes, "the topic's index.interval.bytes, for the .index and .timeindex entries of rebuilt indexes")
}

func (o *repairOptions) Validate(c *cobra.Command, args []string) error {
	if err := o.ValidateOutput(); err != nil {
		return err
	}
	if err := writecmd.CheckIndexInterval(o.indexIntervalBytes); err != nil {
		return err
	}
	o.repair = recovery.Options{All: o.all, IndexIntervalBytes: o.indexIntervalBytes}
	return o.ValidateOneDir(c, args, "partition directory", "all", "index-interval-bytes")
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &repairOptions{}
	c := &cobra.Command{
		Use:   "repair DIR",
		Short: "Recover an unclean partition offline, as the broker's log recovery would",
		Long: `Do offline, planned and explicitly, what a broker's log recovery does to a
partition after an unclean shutdown (LogLoader.recoverLog, LogSegment.recover).
The broker must be stopped.

DIR is a partition directory. kseg first plans, changing nothing:

  - examine every segment from the one holding the recovery point
    (recovery-point-offset-checkpoint in the log directory; every segment
    when there is none, or with --all), and below it any segment whose
    .index is missing or whose .txnindex fails its sanity check;
  - find each examined segment's first invalid byte: a batch that does not
    frame (a torn write, a zero-filled preallocated tail, a corrupt length
    or magic), fails its CRC (batch.ensureValid), goes back in offsets, or a
    transaction marker whose record does not parse (cut after it);
  - cut the segment there, and delete every later segment (recovery cannot
    reach them);
  - rebuild .index and .timeindex from the kept batches with the broker's
    rules (--index-interval-bytes), unless the existing ones verify against
    them, and .txnindex from the aborted transactions the producer-state
    replay completes in the segment;
  - delete producer snapshots above the new log end (and corrupt ones), drop
    leader-epoch-checkpoint entries at or above it, and write the producer
    snapshot at the new log end, rebuilt as the broker rebuilds it.

--dry-run prints that plan. Otherwise kseg takes the log directory's lock (as
a broker would), backs up every file that changes or goes (O_EXCL copies,
fsynced, hash-checked), writes new contents to temp files that are fsynced
and renamed, and keeps a journal (DIR/.kseg-edit.journal) so that rerunning
the command on an interrupted directory finishes the repair with exactly the
bytes an uninterrupted run writes (--rollback undoes it instead). The result
is read back: a new plan must have nothing to do, the indexes must verify
against the logs (dump --verify-index) and the snapshots must match the state
rebuilt from the log (replay-psm --check-snapshots). A second run is a no-op.

Refused, with nothing touched: a broker holds the log directory (an fcntl
lock on .lock), DIR is not a partition, the file system is read-only, a batch
does not fit its segment's relative offsets (the broker splits such a
segment), or the log start offset lies above the repaired log end.
` + ui.ExitStatusHelp + `  (repair: 0 when there was nothing to repair or the repair succeeded; with
  --dry-run, 3 when the plan found damage; 3 also for a failed verification
  after writing)
`,
		Example: `  kseg repair --dry-run /var/lib/kafka/data/orders-0
  kseg repair --backup-dir /srv/backups/orders-0 /var/lib/kafka/data/orders-0
  kseg repair --all --index-interval-bytes 4096 /var/lib/kafka/data/orders-0
  kseg repair --dry-run --output json /var/lib/kafka/data/orders-0 | jq .findings
  kseg repair --rollback /var/lib/kafka/data/orders-0    # undo an interrupted run`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runRepair)
}

func runRepair(ctx context.Context, s *ui.Streams, o *repairOptions, args []string) error {
	dir := args[0]
	if err := inputs.Check(s, "repair", dir, inputs.Partition); err != nil {
		return err
	}
	return writecmd.Run(ctx, s, writecmd.Steps[*recovery.Plan, *recovery.Verification]{
		Dir: dir, Flags: &o.Flags, Form: repairForm,
		// Which segments are examined is known only as the plan goes: the
		// line counts bytes, without a total.
		PlanLabel: "examining",
		Plan: func(progress func(int64)) (*recovery.Plan, error) {
			opts := o.repair
			opts.Progress = progress
			return recovery.PlanRepair(dir, opts)
		},
		DryRunExit: func(p *recovery.Plan) error {
			if p.Damage {
				return ui.FindingsExit()
			}
			return nil
		},
		Preflight: recovery.Preflight,
		Apply:     recovery.Apply,
		Rollback:  func(eo edit.Options) (*recovery.Report, error) { return recovery.Rollback(dir, eo) },
	})
}
