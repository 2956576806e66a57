package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// mirrorOptions are the flags of `kseg mirror`.
type mirrorOptions struct {
	upto               int64
	segmentBytes       int64
	indexIntervalBytes int
	align              bool
	dryRun             bool
	backupDir          string
	output             string
	rollback           bool

	// derived by Validate
	mirror mirror.Options
	// planFlags are the flags that shape a plan; a resumed mirror ignores
	// them.
	planFlags []string
}

func (o *mirrorOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.Int64Var(&o.upto, "upto", -1, "copy the batches below this offset only (exclusive; a batch is copied whole or not at all; default: to the source's log end)")
	f.Int64Var(&o.segmentBytes, "segment-bytes", segment.DefaultSegmentBytes, "the destination topic's segment.bytes: roll a new segment when the active one would grow beyond it")
	f.IntVar(&o.indexIntervalBytes, "index-interval-bytes", segment.DefaultIndexIntervalBytes, "the destination topic's index.interval.bytes, for the offset- and time-index entries of the copied batches")
	f.BoolVar(&o.align, "align", false, "first truncate DST where it stops being a prefix of SRC (what failback does before mirroring back), instead of refusing")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and change nothing")
	f.StringVar(&o.backupDir, "backup-dir", "", backupDirUsage)
	f.StringVarP(&o.output, "output", "o", "text", "output format: text|table|json")
	f.BoolVar(&o.rollback, "rollback", false, "undo an interrupted mirror (its journal is in DST) from its backup, instead of finishing it")
}

func (o *mirrorOptions) Validate(c *cobra.Command, args []string) error {
	switch o.output {
	case "text", "table", "json":
	default:
		return usageErrorf("--output must be text, table or json, not %q", o.output)
	}
	fl := c.Flags()
	o.planFlags = changedFlags(c, "upto", "segment-bytes", "index-interval-bytes", "align")
	if o.rollback {
		if o.dryRun || len(o.planFlags) > 0 {
			return usageErrorf("--rollback takes no other flag than --output and --backup-dir")
		}
		if len(args) != 1 && len(args) != 2 {
			return usageErrorf("mirror --rollback needs the destination partition directory (DST, or SRC DST)")
		}
		return nil
	}
	if len(args) != 2 {
		return usageErrorf("mirror needs a source and a destination partition directory")
	}
	if fl.Changed("upto") && o.upto < 0 {
		return usageErrorf("--upto must not be negative")
	}
	if o.segmentBytes < 100 {
		return usageErrorf("--segment-bytes must be at least 100")
	}
	if o.indexIntervalBytes < 0 {
		return usageErrorf("--index-interval-bytes must not be negative")
	}
	o.mirror = mirror.DefaultOptions()
	o.mirror.Upto, o.mirror.SegmentBytes, o.mirror.IndexIntervalBytes, o.mirror.Align = o.upto, o.segmentBytes, o.indexIntervalBytes, o.align
	return nil
}

func newMirrorCmd(s *Streams, g *globalOptions) *cobra.Command {
	o := &mirrorOptions{}
	c := &cobra.Command{
		Use:   "mirror SRC DST",
		Short: "Copy a partition's batches into a mirror partition offline, as a KIP-1279 mirror fetcher does",
		Long: `Mirror the partition directory SRC into DST offline, as KIP-1279's mirror
fetcher does on a destination cluster: every batch of SRC from DST's log end
on (up to --upto) is appended to DST exactly as it is — offsets, producer ids,
epochs, timestamps, CRCs, barriers — while DST's own files are kept as its
broker would keep them: segments rolled at --segment-bytes (and by segment.ms
and index capacity), .index/.timeindex entries every --index-interval-bytes,
the .txnindex entries of the copied ABORT markers (computed by a producer-state
replay: Kafka rebuilds the transaction index locally), leader-epoch-checkpoint
entries for new partitionLeaderEpochs, and a producer snapshot at every roll.
A DST that does not exist is created with SRC's partition.metadata (a mirror
keeps its source's topic id). Use it to build and extend mirror topologies
for kseg verify-chain.

DST must be a prefix of SRC below its own end. A DST that holds its own data
there (it failed over and took writes, as in failback) is refused with exit 3
and nothing changed, unless --align, which first truncates DST at the first
offset it does not share with SRC (LocalLog.truncateTo: later segments,
snapshots, index entries and leader epochs above the cut go).

Writing uses inject-barrier's discipline: the broker must be stopped (the log
directory's .lock is checked, then held), every file that changes or goes is
backed up first (--backup-dir, never inside the log directory), new contents
are staged, fsynced and renamed under a journal (DST/.kseg-edit.journal,
shared with inject-barrier so neither starts while the other is pending), and
the result is read back: the copied batches must be SRC's byte for byte and
the indexes must agree with the log. Rerun the command on an interrupted DST
to finish it, or add --rollback to undo it. --dry-run prints the plan.
` + exitStatusHelp + `  (mirror: 0 also when there was nothing to copy; 3 for a DST that diverged
  from SRC without --align, a DST ending below SRC's log start, a corrupt SRC
  batch in the range, or a failed verification)
`,
		Example: `  kseg mirror --dry-run /data/a/orders-0 /data/b/orders-0
  kseg mirror --backup-dir /srv/backups/b /data/a/orders-0 /data/b/orders-0
  kseg mirror --upto 5000 --segment-bytes 104857600 /data/a/orders-0 /data/b/orders-0
  kseg mirror --align /data/b/orders-0 /data/a/orders-0     # failback: A mirrors B back
  kseg mirror --rollback /data/b/orders-0                    # undo an interrupted run`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Validate(c, args); err != nil {
				return err
			}
			return runMirror(c.Context(), s, g, o, args)
		},
	}
	o.AddFlags(c)
	return c
}

// mirrorExit maps the barrier package's typed errors to exit codes.
func mirrorExit(err error) error {
	var de *mirror.DivergedError
	var ge *mirror.GapError
	var ce *mirror.CorruptSourceError
	switch {
	case errors.As(err, &de), errors.As(err, &ge), errors.As(err, &ce):
		return &exitError{code: ExitFindings, err: err}
	}
	return injectExit(err)
}

func runMirror(ctx context.Context, s *Streams, g *globalOptions, o *mirrorOptions, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkMirrorInputs(s, args, o.rollback); err != nil {
		return err
	}
	pr := newMirrorPrinter(s, o.output)
	if o.rollback {
		rep, err := mirror.Rollback(args[len(args)-1], edit.Options{})
		if err != nil {
			return mirrorExit(err)
		}
		return pr.Report(rep)
	}
	p, blocked := mirror.PlanMirror(args[0], args[1], o.mirror)
	if p == nil {
		return mirrorExit(blocked)
	}
	warnResumeIgnoresFlags(s, g, p.Resume, "mirror", args[1], o.planFlags)
	if err := pr.Plan(p, o.dryRun); err != nil {
		return err
	}
	// The plan first, then why it cannot be applied now (a broker holds
	// the directory, it is read-only), or what the real run would refuse.
	if blocked != nil {
		return mirrorExit(blocked)
	}
	if o.dryRun {
		return mirrorExit(mirror.Preflight(p, edit.Options{BackupDir: o.backupDir}))
	}
	if p.NothingToDo {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep, err := mirror.Apply(p, edit.Options{BackupDir: o.backupDir})
	if err != nil {
		noteApplyFailure(s, g, rep.Summary(), err, "mirror", p.Dir)
		return mirrorExit(err)
	}
	if err := pr.Report(rep); err != nil {
		return err
	}
	if v := rep.Verification; v != nil && !v.OK() {
		return findingsExit()
	}
	return nil
}
