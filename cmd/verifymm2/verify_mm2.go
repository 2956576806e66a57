// Package verifymm2 is kseg verify-mm2: a MirrorMaker 2 replica checked
// against its source by content, record by record, and MM2's offset
// translation (offset syncs, checkpoints) against both logs.
package verifymm2

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier/mm2"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
)

// verifyMM2Options are the flags of `kseg verify-mm2`.
type verifyMM2Options struct {
	isolation       string
	allowDuplicates bool
	offsetSyncs     string
	checkpoints     string
	window          int
	output          string

	// derived by Validate
	opts mm2.Options
}

func (o *verifyMM2Options) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.isolation, "isolation-level", "read_uncommitted", "isolation.level of MM2's source consumer (consumer. or source.consumer.isolation.level): read_uncommitted (its default: records of aborted and open transactions are copied) or read_committed (what exactly.once.support requires)")
	f.BoolVar(&o.allowDuplicates, "allow-duplicates", false, "report source records copied more than once as duplicate-records-allowed (info): MM2 without exactly.once.support delivers at least once")
	f.StringVar(&o.offsetSyncs, "offset-syncs", "", "a partition directory of MM2's offset-syncs topic (mm2-offset-syncs.<cluster>.internal-0): check that each sync for SOURCE pairs records of the same content")
	f.StringVar(&o.checkpoints, "checkpoints", "", "a partition directory of MM2's checkpoints topic (<source>.checkpoints.internal-0): check each checkpoint for TARGET against the exact translation")
	f.IntVar(&o.window, "window", mm2.DefaultWindow, "source records kept to recognise duplicates and reorders (72 bytes each): a record copied again further back than this is reported as foreign")
	ui.AddOutputFlag(c, &o.output)
}

// Validate checks the flags and fills opts.
func (o *verifyMM2Options) Validate(_ *cobra.Command, args []string) error {
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	switch o.isolation {
	case "read_uncommitted":
		o.opts.Isolation = mm2.ReadUncommitted
	case "read_committed":
		o.opts.Isolation = mm2.ReadCommitted
	default:
		return ui.UsageErrorf("--isolation-level must be read_uncommitted or read_committed, not %q", o.isolation)
	}
	if o.window < 64 {
		return ui.UsageErrorf("--window must be at least 64 records, not %d", o.window)
	}
	if chainnode.SameDir(args[0], args[1]) {
		return ui.UsageErrorf("%s and %s are the same directory: a partition is not its own replica", args[0], args[1])
	}
	o.opts.AllowDuplicates, o.opts.Window = o.allowDuplicates, o.window
	o.opts.OffsetSyncs, o.opts.Checkpoints = o.offsetSyncs, o.checkpoints
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &verifyMM2Options{}
	c := &cobra.Command{
		Use:   "verify-mm2 SOURCE TARGET",
		Short: "Verify a MirrorMaker 2 replica against its source by content, and MM2's offset translation",
		Long: `Compare TARGET, a partition MirrorMaker 2 replicates SOURCE into (A.orders-0
from orders-0 under the default replication policy, orders-0 under the identity
policy), record by record. MM2 keeps neither offsets nor bytes: its producer
re-writes every record it reads, at least once. kseg compares what MM2 copies
of each record — key, value, headers, timestamp — in order, streaming both logs
once (memory is bounded by --window, whatever their size), and reports with
source and target offsets:

  missing-records       source records with no copy, though later ones have one
                        (a pause across a retention purge, a skipped range)
  below-target-start    source records before the first one copied (info)
  not-yet-mirrored      source records after the last one copied: lag (info)
  duplicate-records     source records copied more than once, in runs (a task
                        restart without exactly-once; --allow-duplicates: info)
  foreign-records       target records that copy no source record
  source-reset          such records before the copy of the source's offset 0:
                        the source topic was deleted and re-created
  reordered             copies out of source order
  timestamp-mismatch    a copy whose timestamp is not its source's

What MM2 does not copy is not reported: control batches (never returned by a
consumer), records of aborted transactions and those at and after the last
stable offset under --isolation-level read_committed (MM2's default,
read_uncommitted, copies them), the target's own aborted transactions
(exactly-once mode). A compacted source or target is recognised by its offset
holes (compacted-upstream, compacted-downstream: info); a target of
LogAppendTime batches has its broker's timestamps (timestamps-replaced).

With --offset-syncs, every offset sync for SOURCE must pair two records of the
same content. With --checkpoints, every checkpoint for TARGET must name a
downstream offset at or below the exact translation of its upstream offset (a
consumer failing over there would otherwise skip records), and says how many
records behind it is; a checkpoint for a partition no offset sync names was
never mirrored.

Nothing is ever modified. docs/mm2.md explains each check.
` + ui.ExitStatusHelp + `  (verify-mm2: 0 the replica is consistent; 3 an error was found)
`,
		Example: `  kseg verify-mm2 /data/a/orders-0 /data/b/A.orders-0
  kseg verify-mm2 --offset-syncs /data/a/mm2-offset-syncs.B.internal-0 \
      --checkpoints /data/b/A.checkpoints.internal-0 /data/a/orders-0 /data/b/A.orders-0
  kseg verify-mm2 --isolation-level read_committed --output json /data/a/orders-0 /data/b/A.orders-0`,
		Args: cobra.ExactArgs(2),
	}
	return ui.NewCommand(c, s, o, runVerifyMM2)
}

// runVerifyMM2 verifies args[1], the replica, against args[0], its source.
func runVerifyMM2(ctx context.Context, s *ui.Streams, o *verifyMM2Options, args []string) error {
	source, target := args[0], args[1]
	paths := []string{source, target}
	for _, p := range []string{o.offsetSyncs, o.checkpoints} {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if err := inputs.CheckAll(s, "verify-mm2", paths, inputs.Partition); err != nil {
		return err
	}
	if err := checkSamePartitionNumber(source, target); err != nil {
		return err
	}
	total := func() int64 { return ui.LogBytes(source) + ui.LogBytes(target) }
	rep, err := ui.StepProgress(s, "comparing", total, func(progress func(int64)) (*mm2.Report, error) {
		opts := o.opts
		opts.Progress = progress
		return mm2.Verify(source, target, opts)
	})
	if err != nil {
		var ne *mm2.NameError
		if errors.As(err, &ne) {
			return ui.UsageErrorf("%v", ne)
		}
		return err
	}
	if err := newMM2Printer(s, o.output).Print(rep); err != nil {
		return err
	}
	if !rep.OK() {
		return ui.FindingsExit()
	}
	return nil
}

// checkSamePartitionNumber refuses two partitions MM2 cannot have paired:
// MirrorSourceTask.convertRecord sends each record to the partition of
// the number it was read from.
func checkSamePartitionNumber(source, target string) error {
	ns, okS := segment.ParsePartitionDir(filepath.Base(filepath.Clean(source)))
	nt, okT := segment.ParsePartitionDir(filepath.Base(filepath.Clean(target)))
	if okS && okT && ns.Partition != nt.Partition {
		return ui.Refusedf("refused (partition): %s is partition %d but %s is partition %d: MM2 copies each record to the partition of its source's number",
			source, ns.Partition, target, nt.Partition)
	}
	return nil
}

// mm2Printer renders a verify-mm2 report.
type mm2Printer interface {
	Print(r *mm2.Report) error
}

func newMM2Printer(s *ui.Streams, output string) mm2Printer {
	switch output {
	case "json":
		return &mm2JSONPrinter{w: s.Out}
	case "table":
		return &mm2TablePrinter{s: s}
	}
	return &mm2TextPrinter{w: s.Out, st: s.Styles(), ls: s.Lister()}
}

// mm2Summary says the verdict in one line.
func mm2Summary(r *mm2.Report) string {
	if r.OK() {
		return fmt.Sprintf("consistent: %d of %s copied, %s", r.Matched, ui.Plural(int(r.Source.Records), "source record"), copiesText(r.Copies))
	}
	return fmt.Sprintf("NOT consistent: %s", ui.Plural(int(r.Errors()), "error"))
}
