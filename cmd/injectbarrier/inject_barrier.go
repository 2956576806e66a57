// Package injectbarrier is kseg inject-barrier: a KIP-1279
// MIRROR_PID_RESET barrier written into a stopped mirror partition, planned
// first, applied through the edit engine's journal (segment/edit).
package injectbarrier

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// injectBarrierOptions are the flags of `kseg inject-barrier`.
type injectBarrierOptions struct {
	writecmd.Flags
	mode               string
	repairTail         bool
	timestamp          int64
	leaderEpoch        int32
	bumpLeaderEpoch    int32
	sourceClusterID    string
	coordinatorEpoch   int32
	noSnapshot         bool
	force              bool
	indexIntervalBytes int
	yes                bool

	// derived by Validate
	inject barrier.InjectOptions
}

func (o *injectBarrierOptions) AddFlags(c *cobra.Command) {
	o.AddWriteFlags(c, "print the plan and change nothing",
		"undo an interrupted injection (its journal is in DIR) from its backup, instead of finishing it")
	f := c.Flags()
	f.StringVar(&o.mode, "mode", "truncate", "truncate: cut the log at its last stable offset, then the barrier (KIP-1279 design 1); abort: an ABORT marker for every open transaction, then the barrier (design 2)")
	f.BoolVar(&o.repairTail, "repair-tail", false, "first cut a torn or corrupt tail, or a batch that fails its CRC, where broker recovery would")
	f.Int64Var(&o.timestamp, "timestamp", 0, "timestamp of the new batches in epoch milliseconds (default: now)")
	f.Int32Var(&o.leaderEpoch, "leader-epoch", -1, "partitionLeaderEpoch of the new batches (default: the latest epoch in leader-epoch-checkpoint, else the last batch's)")
	f.Int32Var(&o.bumpLeaderEpoch, "bump-leader-epoch", -1, "record leader epoch N from the first new batch in leader-epoch-checkpoint and write the new batches in it; N must be above every recorded epoch")
	f.StringVar(&o.sourceClusterID, "source-cluster-id", "", "write the MirrorPidResetRecord variant that carries this source cluster id")
	f.Int32Var(&o.coordinatorEpoch, "coordinator-epoch", -1, "--mode abort: coordinatorEpoch of the ABORT markers (default: each producer's last, else 0)")
	f.BoolVar(&o.noSnapshot, "no-snapshot", false, "do not write the empty producer snapshot at the new log end")
	f.BoolVar(&o.force, "force", false, "add a barrier even when the log already ends with one, and write a --timestamp before 2010 or more than a day ahead of the clock")
	f.IntVar(&o.indexIntervalBytes, "index-interval-bytes", segment.DefaultIndexIntervalBytes, "the topic's index.interval.bytes, for the offset-index entries of the new batches")
	f.BoolVar(&o.yes, "yes", false, "accept a cut that removes committed records (asked on a terminal; needed otherwise)")
}

func (o *injectBarrierOptions) Validate(c *cobra.Command, args []string) error {
	if err := o.ValidateOutput(); err != nil {
		return err
	}
	in := barrier.InjectOptions{
		RepairTail:         o.repairTail,
		Timestamp:          o.timestamp,
		NoSnapshot:         o.noSnapshot,
		Force:              o.force,
		IndexIntervalBytes: o.indexIntervalBytes,
	}
	switch o.mode {
	case "truncate":
		in.Mode = barrier.ModeTruncate
	case "abort":
		in.Mode = barrier.ModeAbort
	default:
		return ui.UsageErrorf("--mode must be truncate or abort, not %q", o.mode)
	}
	fl := c.Flags()
	if o.timestamp < 0 {
		return ui.UsageErrorf("--timestamp must be epoch milliseconds")
	}
	if fl.Changed("leader-epoch") {
		if o.leaderEpoch < 0 {
			return ui.UsageErrorf("--leader-epoch must not be negative")
		}
		in.LeaderEpoch = &o.leaderEpoch
	}
	if fl.Changed("bump-leader-epoch") {
		if o.bumpLeaderEpoch < 0 {
			return ui.UsageErrorf("--bump-leader-epoch must not be negative")
		}
		in.BumpLeaderEpoch = &o.bumpLeaderEpoch
	}
	if in.LeaderEpoch != nil && in.BumpLeaderEpoch != nil {
		return ui.UsageErrorf("--leader-epoch and --bump-leader-epoch exclude each other")
	}
	if fl.Changed("coordinator-epoch") {
		if o.coordinatorEpoch < 0 {
			return ui.UsageErrorf("--coordinator-epoch must not be negative")
		}
		if in.Mode != barrier.ModeAbort {
			return ui.UsageErrorf("--coordinator-epoch only applies to --mode abort")
		}
		in.CoordinatorEpoch = &o.coordinatorEpoch
	}
	if fl.Changed("source-cluster-id") {
		in.SourceClusterID = &o.sourceClusterID
	}
	if err := writecmd.CheckIndexInterval(o.indexIntervalBytes); err != nil {
		return err
	}
	o.inject = in
	return o.ValidateOneDir(c, args, "partition directory", "mode", "repair-tail", "timestamp", "leader-epoch", "bump-leader-epoch",
		"source-cluster-id", "coordinator-epoch", "no-snapshot", "force", "index-interval-bytes")
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &injectBarrierOptions{}
	c := &cobra.Command{
		Use:   "inject-barrier DIR",
		Short: "Write a KIP-1279 MIRROR_PID_RESET barrier into a stopped mirror partition",
		Long: `Simulate the STOPPING step of KIP-1279 cluster mirroring offline: make a
destination partition safe for its own producers by writing a MIRROR_PID_RESET
barrier, the control batch that makes every replay of the log forget all
producer state (so a new producer that gets a mirrored producer id is not
fenced, rejected, or silently deduplicated). The broker must be stopped.

DIR is a partition directory. kseg first plans, changing nothing:

  - scan every segment, checking every CRC; a torn or corrupt tail is refused
    unless --repair-tail cuts it where the broker's recovery would;
  - rebuild the producer state;
  - --mode truncate (default; KIP-1279 design 1): find the cut, the last
    stable offset iterated to a fixed point (cutting can remove the marker of
    a transaction that started before the cut, reopening it); list what goes:
    batches, bytes, segments, transactions, index entries, snapshots, leader
    epochs;
  - --mode abort (design 2): an ABORT marker for every open transaction, with
    the .txnindex entries a broker would write, then the barrier.

When the fixed point moves the cut below transactions committed under the
first last stable offset, records a read_committed consumer may have read are
lost: the plan names each such transaction and its records, and the run asks
on a terminal and needs --yes elsewhere (--mode abort keeps them).

--dry-run prints that plan, then whatever the real run would refuse (a
broker holding the directory, --backup-dir, free space) with exit 4. Otherwise kseg takes the log directory's lock (as
a broker would), backs up every file that changes or goes (O_EXCL copies,
fsynced, hash-checked), writes new contents to temp files that are fsynced
and renamed, and keeps a journal (DIR/.kseg-edit.journal) so that rerunning
the command on an interrupted directory finishes the injection with exactly
the bytes an uninterrupted run writes (--rollback undoes it instead). The
result is read back: the barrier must be well-formed, a replay must leave no
producer and no open transaction after it, and the indexes must agree with
the log.

Refused, with nothing touched: a broker holds the log directory (an fcntl
lock on .lock), DIR is not a partition, the data before the cut is in a
legacy (v0/v1) format, the file system is read-only, or a transaction would
stay open at the barrier, or committed records would go without --yes. A log that already ends with a barrier at its last
stable offset is left alone (--force adds another).
` + ui.ExitStatusHelp + `  (inject-barrier: 0 also when there was nothing to do; 3 for a corrupt
  tail without --repair-tail, or a failed verification after writing)
`,
		Example: `  kseg inject-barrier --dry-run /var/lib/kafka/data/orders-0
  kseg inject-barrier --backup-dir /srv/backups/orders-0 /var/lib/kafka/data/orders-0
  kseg inject-barrier --mode abort --bump-leader-epoch 15 /var/lib/kafka/data/orders-0
  kseg inject-barrier --dry-run --output json /var/lib/kafka/data/orders-0 | jq .cut
  kseg inject-barrier --rollback /var/lib/kafka/data/orders-0    # undo an interrupted run`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runInjectBarrier)
}

// confirmCommittedLoss asks, on a terminal, before a cut that removes
// committed records (the LSO fixed point reopened transactions committed
// below the first last stable offset), and refuses without --yes
// elsewhere: a script must say it accepts the loss. A resumed injection
// was accepted when it began.
func confirmCommittedLoss(s *ui.Streams, yes bool, p *barrier.InjectionPlan) error {
	txns, n := p.ReopenedCommitted()
	if len(txns) == 0 || yes || p.Resume != nil {
		return nil
	}
	if s.InTTY && s.ErrTTY {
		fmt.Fprintf(s.Err, "kseg: the cut removes %d committed records of %d transactions committed below the last stable offset %d (--mode abort keeps them). Remove them? [y/N] ",
			n, len(txns), p.LastStableOffset)
		line, _ := bufio.NewReader(s.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			return nil
		}
	}
	return edit.Refuse(barrier.RefuseCommittedData, p.Dir, "the cut removes %d committed records of %d transactions committed below the last stable offset %d; rerun with --yes to accept that, or with --mode abort to keep them",
		n, len(txns), p.LastStableOffset)
}

func runInjectBarrier(ctx context.Context, s *ui.Streams, o *injectBarrierOptions, args []string) error {
	dir := args[0]
	if err := inputs.Check(s, "inject-barrier", dir, inputs.Partition); err != nil {
		return err
	}
	return writecmd.Run(ctx, s, writecmd.Steps[*barrier.InjectionPlan, *barrier.InjectionVerification]{
		Dir: dir, Flags: &o.Flags, Form: injectForm,
		// The plan's first pass reads every .log segment whole.
		PlanLabel: "planning",
		PlanTotal: func() int64 { return ui.LogBytes(dir) },
		Plan: func(progress func(int64)) (*barrier.InjectionPlan, error) {
			opts := o.inject
			opts.Progress = progress
			return barrier.PlanInjection(dir, opts)
		},
		Preflight: barrier.PreflightInjection,
		Confirm:   func(p *barrier.InjectionPlan) error { return confirmCommittedLoss(s, o.yes, p) },
		Apply:     barrier.ApplyInjection,
		Rollback: func(eo edit.Options) (*barrier.InjectionReport, error) {
			return barrier.RollbackInjection(dir, eo)
		},
	})
}
