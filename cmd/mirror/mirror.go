// Package mirror is kseg mirror: a partition copied batch by batch, bytes
// unchanged, into a stopped destination, as a follower fetches it; planned
// first (against the destination, or a digest of it), applied through the
// edit engine's journal (segment/edit).
package mirror

import (
	"context"

	"github.com/spf13/cobra"

	barriermirror "github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// mirrorOptions are the flags of `kseg mirror`.
type mirrorOptions struct {
	upto               int64
	segmentBytes       int64
	indexIntervalBytes int
	align              bool
	fullCompare        bool
	writecmd.Flags

	// derived by Validate
	mirror barriermirror.Options
}

func (o *mirrorOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.Int64Var(&o.upto, "upto", -1, "copy the batches below this offset only (exclusive; a batch is copied whole or not at all; default: to the source's log end)")
	f.Int64Var(&o.segmentBytes, "segment-bytes", segment.DefaultSegmentBytes, "the destination topic's segment.bytes: roll a new segment when the active one would grow beyond it")
	f.IntVar(&o.indexIntervalBytes, "index-interval-bytes", segment.DefaultIndexIntervalBytes, "the destination topic's index.interval.bytes, for the offset- and time-index entries of the copied batches")
	f.BoolVar(&o.align, "align", false, "first truncate DST where it stops being a prefix of SRC (what failback does before mirroring back), instead of refusing")
	f.BoolVar(&o.fullCompare, "full-compare", false, "compare every batch of DST with SRC and replay DST's producer state from its start, instead of comparing its last batch and loading its latest producer snapshot")
	o.AddWriteFlags(c, "print the plan and change nothing",
		"undo an interrupted mirror (its journal is in DST) from its backup, instead of finishing it")
}

func (o *mirrorOptions) Validate(c *cobra.Command, args []string) error {
	if err := o.ValidateOutput(); err != nil {
		return err
	}
	fl := c.Flags()
	if err := o.ValidatePlanFlags(c, "upto", "segment-bytes", "index-interval-bytes", "align", "full-compare"); err != nil {
		return err
	}
	if o.Rollback {
		if len(args) != 1 && len(args) != 2 {
			return ui.UsageErrorf("mirror --rollback needs the destination partition directory (DST, or SRC DST)")
		}
		return nil
	}
	if len(args) != 2 {
		return ui.UsageErrorf("mirror needs a source and a destination partition directory")
	}
	if fl.Changed("upto") && o.upto < 0 {
		return ui.UsageErrorf("--upto must not be negative")
	}
	if o.segmentBytes < 100 {
		return ui.UsageErrorf("--segment-bytes must be at least 100")
	}
	if err := writecmd.CheckIndexInterval(o.indexIntervalBytes); err != nil {
		return err
	}
	o.mirror = barriermirror.DefaultOptions()
	o.mirror.Upto, o.mirror.SegmentBytes, o.mirror.IndexIntervalBytes, o.mirror.Align = o.upto, o.segmentBytes, o.indexIntervalBytes, o.align
	o.mirror.FullCompare = o.fullCompare
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
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
` + ui.ExitStatusHelp + `  (mirror: 0 also when there was nothing to copy; 3 for a DST that diverged
  from SRC without --align, a DST ending below SRC's log start, a corrupt SRC
  batch in the range, or a failed verification)
`,
		Example: `  kseg mirror --dry-run /data/a/orders-0 /data/b/orders-0
  kseg mirror --backup-dir /srv/backups/b /data/a/orders-0 /data/b/orders-0
  kseg mirror --upto 5000 --segment-bytes 104857600 /data/a/orders-0 /data/b/orders-0
  kseg mirror --align /data/b/orders-0 /data/a/orders-0     # failback: A mirrors B back
  kseg mirror --rollback /data/b/orders-0                    # undo an interrupted run`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runMirror)
}

func runMirror(ctx context.Context, s *ui.Streams, o *mirrorOptions, args []string) error {
	if !o.Rollback && len(args) == 2 && chainnode.IsDigest(args[1]) {
		return runMirrorDigest(ctx, s, o, args[0], args[1])
	}
	if err := inputs.CheckMirror(s, args, o.Rollback); err != nil {
		return err
	}
	dst := args[len(args)-1]
	return writecmd.Run(ctx, s, writecmd.Steps[*barriermirror.Plan, *barriermirror.Verification]{
		Dir: dst, Flags: &o.Flags, Form: mirrorForm,
		// The plan reads the source, and the destination beside it, once.
		PlanLabel: "planning",
		PlanTotal: func() int64 { return ui.LogBytes(args[0], dst) },
		Plan: func(progress func(int64)) (*barriermirror.Plan, error) {
			opts := o.mirror
			opts.Progress = progress
			p, err := barriermirror.PlanMirror(args[0], dst, opts)
			if err == nil && p.Resume == nil && opts.Upto > p.SrcLog.End {
				// Batches up to an offset the source does not reach: a
				// usage error, as every offset past a log's end.
				return nil, ui.Unansweredf("--upto %d is past the log end %d of %s: the source does not reach it", opts.Upto, p.SrcLog.End, args[0])
			}
			return p, err
		},
		Preflight: barriermirror.Preflight,
		Apply:     barriermirror.Apply,
		Rollback:  func(eo edit.Options) (*barriermirror.Report, error) { return barriermirror.Rollback(dst, eo) },
	})
}

// runMirrorDigest is `kseg mirror --dry-run SRC DIGEST`: the plan against
// a digest of the destination (kseg digest), made where SRC is, without
// the destination's disk: what would be copied.
func runMirrorDigest(ctx context.Context, s *ui.Streams, o *mirrorOptions, src, dst string) error {
	if !o.DryRun {
		return ui.UsageErrorf("%s is a digest: a mirror writes the destination's files, so it runs on the destination's disk; --dry-run plans against a digest", dst)
	}
	if err := inputs.Check(s, "mirror", src, inputs.Partition); err != nil {
		return err
	}
	nodes, done, err := chainnode.Open(s, []string{dst})
	defer done()
	if err != nil {
		return err
	}
	opts := o.mirror
	p, err := ui.StepProgress(s, "planning", func() int64 { return ui.LogBytes(src) }, func(progress func(int64)) (*barriermirror.DigestPlan, error) {
		opts.Progress = progress
		return barriermirror.PlanFromDigest(src, nodes[0], opts)
	})
	if err != nil {
		return writecmd.Exit(err)
	}
	ui.WarnDiagnostics(s.Err, p.Warnings)
	if o.Output == "json" {
		return ui.JSONLine(s.Out, mirrorDigestPlanJSON{PlanJSON: mirrorPlanWire(&p.Plan, true), Destination: chainnode.DigestOf(p.Digest)})
	}
	printMirrorDigestPlan(writecmd.NewText(s, o.Output), p)
	return nil
}
