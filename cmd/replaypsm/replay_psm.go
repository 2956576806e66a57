// Package replaypsm is kseg replay-psm: a partition's producer state
// rebuilt from its log as the broker's log recovery rebuilds it
// (ProducerStateManager), checked against its snapshots or written as one.
package replaypsm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// replayPSMOptions are the flags of `kseg replay-psm`.
type replayPSMOptions struct {
	fromSnapshot      string
	upto              int64
	ignoreBarriers    bool
	checkSnapshots    bool
	writeSnapshot     string
	force             bool
	highWatermark     int64
	logStartOffset    int64
	clock             string
	expirationMs      int64
	checkIntervalMs   int64
	txnTimeout        time.Duration
	noVerifyCRC       bool
	output            string
	jobs              int
	fromSnapshotSetBy bool // --from-snapshot was given explicitly

	// derived by Validate
	psm psm.Options
	// logDirs reads the log directory's checkpoints once for every
	// partition a log-directory replay opens (runReplayPSMLogDir).
	logDirs *segment.LogDirCache
}

func (o *replayPSMOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.fromSnapshot, "from-snapshot", "latest", "start from: latest (the newest usable snapshot, as a restarting broker), none (replay the whole log) or a snapshot OFFSET")
	f.Int64Var(&o.upto, "upto", -1, "rebuild the state before OFFSET (exclusive): what OFFSET.snapshot would hold; -1 = log end")
	f.BoolVar(&o.ignoreBarriers, "ignore-barriers", false, "counterfactual: replay as if no MIRROR_PID_RESET barrier had been written")
	f.BoolVar(&o.checkSnapshots, "check-snapshots", false, "compare every N.snapshot in DIR with the state rebuilt from the log up to N (never from that snapshot)")
	f.StringVar(&o.writeSnapshot, "write-snapshot", "", "write the rebuilt state as a Kafka producer snapshot at PATH (a directory: <end offset>.snapshot in it)")
	f.BoolVar(&o.force, "force", false, "with --write-snapshot: replace an existing file")
	f.Int64Var(&o.highWatermark, "high-watermark", -1, "high watermark for the LSO; -1 = what a broker starts with: this partition's replication-offset-checkpoint entry, else the log start offset")
	f.Int64Var(&o.logStartOffset, "log-start-offset", -1, "log start offset; -1 = this partition's log-start-offset-checkpoint entry, else the first segment's base")
	f.StringVar(&o.clock, "clock", "log", "\"now\" for producer expiry: log (highest batch timestamp replayed so far), now, or epoch milliseconds / RFC 3339")
	f.Int64Var(&o.expirationMs, "producer-id-expiration-ms", psm.DefaultProducerIDExpirationMs, "the broker's producer.id.expiration.ms")
	f.Int64Var(&o.checkIntervalMs, "producer-id-expiration-check-interval-ms", psm.DefaultProducerIDExpirationCheckIntervalMs, "the broker's producer.id.expiration.check.interval.ms (log clock)")
	f.DurationVar(&o.txnTimeout, "txn-timeout", 15*time.Minute, "a transaction open longer than this (log time) at the end of the log is hanging")
	f.BoolVar(&o.noVerifyCRC, "no-verify-crc", false, "skip the CRC-32C check of replayed batches")
	ui.AddOutputFlag(c, &o.output)
	ui.AddJobsFlag(c, &o.jobs, "partitions replayed (for a log directory)")
}

func (o *replayPSMOptions) Validate(c *cobra.Command, args []string) error {
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	p := psm.DefaultOptions()
	o.fromSnapshotSetBy = c.Flags().Changed("from-snapshot")
	switch strings.ToLower(o.fromSnapshot) {
	case "latest":
		p.FromSnapshot = psm.SnapshotLatest
	case "none":
		p.FromSnapshot = psm.SnapshotNone
	default:
		v, err := strconv.ParseInt(o.fromSnapshot, 10, 64)
		if err != nil || v < 0 {
			return ui.UsageErrorf("--from-snapshot must be latest, none or a snapshot offset, not %q", o.fromSnapshot)
		}
		p.FromSnapshot = v
	}
	if o.checkSnapshots && o.fromSnapshotSetBy && p.FromSnapshot != psm.SnapshotNone {
		return ui.UsageErrorf("--check-snapshots rebuilds from the log alone; it cannot be combined with --from-snapshot %s", o.fromSnapshot)
	}
	if o.upto < -1 {
		return ui.UsageErrorf("--upto must be an offset (or -1 for the log end)")
	}
	if o.highWatermark < -1 || o.logStartOffset < -1 {
		return ui.UsageErrorf("--high-watermark and --log-start-offset must be offsets (or -1)")
	}
	if o.jobs < 0 {
		return ui.UsageErrorf("--jobs must be 0 (one per CPU) or a positive number, not %d", o.jobs)
	}
	if o.expirationMs <= 0 || o.checkIntervalMs <= 0 {
		return ui.UsageErrorf("--producer-id-expiration-ms and --producer-id-expiration-check-interval-ms must be positive")
	}
	if o.txnTimeout <= 0 {
		return ui.UsageErrorf("--txn-timeout must be positive")
	}
	clock, err := psm.ParseClockMode(o.clock)
	if err != nil {
		return ui.UsageErrorf("--clock: %v", err)
	}
	if o.force && o.writeSnapshot == "" {
		return ui.UsageErrorf("--force only applies to --write-snapshot")
	}
	if len(args) != 1 {
		return ui.UsageErrorf("replay-psm needs exactly one partition directory")
	}
	p.Upto = o.upto
	p.IgnoreBarriers = o.ignoreBarriers
	p.VerifyCRC = !o.noVerifyCRC
	p.ProducerIDExpirationMs = o.expirationMs
	p.ProducerIDExpirationCheckIntervalMs = o.checkIntervalMs
	p.Clock = clock
	p.HighWatermark = o.highWatermark
	p.LogStartOffset = o.logStartOffset
	p.TxnTimeoutMs = o.txnTimeout.Milliseconds()
	o.psm = p
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &replayPSMOptions{}
	c := &cobra.Command{
		Use:   "replay-psm DIR",
		Short: "Rebuild a partition's producer state as the broker's log recovery does",
		Long: `Rebuild the producer state (ProducerStateManager) of a partition directory
offline, with the semantics of the broker's log load: load the newest usable
producer snapshot (or none), replay the log one batch at a time as a replica
does (no sequence is rejected; what a leader would reject is reported), and
compute ongoing and aborted transactions and the last stable offset.

KIP-1279 MIRROR_PID_RESET barriers clear every producer entry at their offset;
nothing from before a barrier survives it. Producer ids expire as the broker
expires them (producer.id.expiration.ms), driven by --clock: "log" uses the
highest batch timestamp replayed so far as the broker's wall clock and runs the
periodic expiry check every producer.id.expiration.check.interval.ms of it.

Only batch headers are read (plus the single record of a control batch); data
is never decompressed. Anomalies name the offset and the producer and say what
happened: sequence-gap, duplicate-sequence, epoch-regression,
coordinator-epoch-regression, pid-collision, non-transactional-in-open-txn,
marker-without-txn, hanging-transaction, open-transaction, stale-snapshot,
snapshot-corrupt, snapshot-mismatch, open-txn-at-barrier,
clean-shutdown-no-snapshot, log-start-above-log-end. See docs/psm.md.

The state is the one a broker starting now would hold: the high watermark is
the partition's replication-offset-checkpoint entry, or the log start offset
without one (Partition.createLog); with .kafka_cleanshutdown in the log
directory and no producer snapshot the broker skips the rebuild and holds no
producer state at all (reported as clean-shutdown-no-snapshot); without
.kafka_cleanshutdown it recovers the segments from the recovery point
(recovery-point-offset-checkpoint) as LogLoader does, each from the snapshot
the one before it wrote, and holds what the last one wrote: one batch per
producer, no transaction completed above the high watermark.

DIR may also be a log directory: every partition in it is replayed, --jobs
at a time, and a summary table (or, with -o json, one producerState object
per line) is printed in partition order.

--check-snapshots is the proof that the rebuild is Kafka's: every N.snapshot
whose offset lies within the log is compared, field by field, with the state
rebuilt from the log alone up to N; each prints MATCH or its differences. A
file that also holds producers the broker keeps below a moved log start, or
that a recovery wrote without expiring producers, is a MATCH with its reason.

Findings (exit 3) are anomalies of severity error and, with --check-snapshots,
any snapshot that does not match or does not parse. Warnings and notes alone
exit 0.
` + ui.ExitStatusHelp,
		Example: `  kseg replay-psm /var/lib/kafka/data/orders-0
  kseg replay-psm --check-snapshots /var/lib/kafka/data/orders-0
  kseg replay-psm --from-snapshot none --upto 11630 -o json testing-0 | jq .producers
  kseg replay-psm --ignore-barriers orders-0          # the state had no barrier been written
  kseg replay-psm --from-snapshot none --write-snapshot /tmp/00000000000000011655.snapshot testing-0
  kseg replay-psm --clock now orders-0                # which producers a broker started today would keep`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, runReplayPSM)
}

// replayPSMView is what the printers render.
type replayPSMView struct {
	Dir      string
	Result   *psm.Result
	Opts     psm.Options
	HWSource string // where the high watermark came from
	Checks   []psm.SnapshotCheck
	Checked  bool
	Written  string // path of a written snapshot
}

func runReplayPSM(ctx context.Context, s *ui.Streams, o *replayPSMOptions, args []string) error {
	dir := args[0]
	if err := inputs.Check(s, "replay-psm", dir, inputs.PartitionOrLogDir); err != nil {
		return err
	}
	if !segment.IsPartitionDir(dir) {
		if ld, err := segment.OpenLogDir(dir); err == nil && len(ld.Partitions) > 0 {
			return runReplayPSMLogDir(ctx, s, o, ld)
		}
	}
	// The progress line: bytes of the log replayed, moving within a
	// segment (psm reports every MiB). Created before anything writes to
	// s.Err, so that warnings are routed around it.
	prog := ui.NewLogProgress(s, "replaying", []string{dir}, false)
	defer prog.Done()
	if prog.Enabled() {
		o.psm.Progress = prog.Add
	}
	v, err := replayPartition(s, o, dir)
	if err != nil {
		return err
	}
	if o.upto > v.Result.LogEndOffset {
		// The state before an offset the log does not reach is a
		// question it cannot answer: a usage error, as explain's offset
		// past the end (README "Exit status").
		return ui.Unansweredf("--upto %d is past the log end %d of %s: the log does not reach it", o.upto, v.Result.LogEndOffset, dir)
	}
	if err := newReplayPSMPrinter(s, o).Print(v); err != nil {
		return err
	}
	if v.hasFindings() {
		return ui.FindingsExit()
	}
	return nil
}

// hasFindings: anomalies of severity error, or snapshots that do not match.
func (v *replayPSMView) hasFindings() bool {
	if v.Result.HasErrors() {
		return true
	}
	for _, c := range v.Checks {
		if c.Status == psm.CheckMismatch || c.Status == psm.CheckCorrupt {
			return true
		}
	}
	return false
}

// replayPartition rebuilds one partition directory's producer state (and
// checks or writes snapshots as asked).
func replayPartition(s *ui.Streams, o *replayPSMOptions, dir string) (*replayPSMView, error) {
	pd, err := o.logDirs.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	return replayPartitionDir(s, o, pd)
}

// replayPartitionDir is replayPartition of a directory already listed
// (kseg check lists each partition once for all its checks).
func replayPartitionDir(s *ui.Streams, o *replayPSMOptions, pd *segment.PartitionDir) (*replayPSMView, error) {
	dir := pd.Path
	if !inputs.HasLogSegment(pd) {
		return nil, ui.UsageErrorf("%s holds no .log segment: replay-psm takes a partition directory or a log directory", dir)
	}
	v := &replayPSMView{Dir: dir, HWSource: "--high-watermark"}
	opts := startOptions(s, o, pd, v)
	v.Opts = opts
	if o.writeSnapshot != "" {
		if fi, err := os.Stat(o.writeSnapshot); err == nil && !fi.IsDir() && !o.force {
			return nil, ui.Refusedf("%s exists; pass --force to replace it", o.writeSnapshot)
		}
	}
	var res *psm.Result
	var err error
	if o.checkSnapshots {
		v.Checked = true
		v.Checks, res, err = psm.CheckSnapshots(pd, opts)
	} else {
		res, err = psm.Rebuild(pd, opts)
	}
	if err != nil {
		switch {
		case errors.Is(err, psm.ErrSnapshotNotFound):
			return nil, ui.UsageErrorf("--from-snapshot: %v", err)
		case errors.Is(err, psm.ErrSnapshotUnusable):
			return nil, &ui.ExitCodeError{Code: ui.ExitFindings, Err: err}
		}
		return nil, err
	}
	if o.logStartOffset > res.LogEndOffset && o.upto < 0 {
		// Kafka keeps logStartOffset <= logEndOffset (a log start beyond
		// it deletes every segment at load: deleteSegmentsIfLogStartGreaterThanLogEnd);
		// a replay from there would silently show an empty state.
		return nil, ui.UsageErrorf("--log-start-offset %d is above the log end offset %d of %s", o.logStartOffset, res.LogEndOffset, dir)
	}
	if err := addDirFindings(pd, res); err != nil {
		return nil, err
	}
	v.Result, v.Opts = res, opts
	if o.writeSnapshot != "" {
		if v.Written, err = writeSnapshot(o.writeSnapshot, res, o.force); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// startOptions are the replay's options for pd as a broker starts the
// partition: the log start, high watermark and recovery point of the log
// directory's checkpoints (where no flag gives them) and its clean
// shutdown marker. v learns where the high watermark came from.
func startOptions(s *ui.Streams, o *replayPSMOptions, pd *segment.PartitionDir, v *replayPSMView) psm.Options {
	opts := o.psm
	ld, cerr := psm.ReadLogDirState(pd)
	if cerr != nil {
		// A warning, kept under -q (which silences progress and summaries).
		ui.WarnDiagnostics(s.Err, []string{fmt.Sprintf("%v (ignored: taking the partition as if it had no entry there)", cerr)})
	}
	if opts.LogStartOffset < 0 && ld.LogStartOffset >= 0 {
		opts.LogStartOffset = ld.LogStartOffset
	}
	if opts.HighWatermark < 0 {
		// What the broker starts the partition with (Partition.createLog).
		opts.HighWatermark, v.HWSource = ld.BrokerHighWatermark(), "replication-offset-checkpoint"
		if ld.HighWatermark < 0 {
			v.HWSource = "no replication-offset-checkpoint entry: a broker starts at the log start offset until its in-sync replicas catch up"
		}
	}
	opts.CleanShutdown = ld.CleanShutdown
	// Without .kafka_cleanshutdown the broker recovers the log from the
	// recovery point before it rebuilds the producer state.
	opts.Recover, opts.Unclean, opts.RecoveryPoint = true, !ld.CleanShutdown, ld.RecoveryPoint
	return opts
}

// addDirFindings adds to res what the directory holds beside the log: an
// interrupted edit's journal, and overlapping segments (the replay reads
// the segments in order and cannot tell which of two overlapping ones a
// fetch would read: dump's segment-overlap).
func addDirFindings(pd *segment.PartitionDir, res *psm.Result) error {
	if pf, ok := edit.PendingFinding(pd.Path); ok {
		res.Anomalies = append(res.Anomalies, pf)
	}
	overlaps, err := segment.SegmentOverlaps(pd)
	if err != nil {
		return err
	}
	for _, o := range overlaps {
		res.Anomalies = append(res.Anomalies, o.Finding())
	}
	return nil
}

// writeSnapshot writes res's producer state as a snapshot file at target
// (in a directory: named for the log end offset), never over an existing
// file without force, and returns its path.
func writeSnapshot(target string, res *psm.Result, force bool) (string, error) {
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		target = filepath.Join(target, segment.FormatOffset(res.LogEndOffset)+".snapshot")
	}
	if err := segment.WriteProducerSnapshotFile(target, res.SnapshotEntries(), force); err != nil {
		if errors.Is(err, segment.ErrTargetExists) {
			return "", ui.Refusedf("%s exists; pass --force to replace it", target)
		}
		return "", err
	}
	return target, nil
}

// replayPSMPrinter renders one replay (STYLE.md pattern 14: one printer
// per output, each in its own file).
type replayPSMPrinter interface {
	Print(v *replayPSMView) error
}

func newReplayPSMPrinter(s *ui.Streams, o *replayPSMOptions) replayPSMPrinter {
	if o.output == "json" {
		return &jsonReplayPSMPrinter{s: s}
	}
	return &textReplayPSMPrinter{s: s, table: o.output == "table" || s.OutTTY}
}
