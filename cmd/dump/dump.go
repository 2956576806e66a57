package dump

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/scan"
)

// Options are the flags of `kseg dump`: the engine's options
// (scan.Options, which the flags set) and how to render what it reads.
// `kseg kafka-dump-log` (cmd/kafkadumplog) binds Kafka's option names to
// them and runs the same dump (Run).
type Options struct {
	scan.Options

	PrintData    bool
	Output       string // text, table, json or kafka
	MaxBytesFlag int32  // --max-bytes as given; Kafka's default, 2147483647, is the whole file
	KeyFormat    string
	ValueFormat  string
	// SkipRecordMetadata: kafka output omits per-record metadata.
	SkipRecordMetadata bool
	Jobs               int
	Kafka              KafkaSpellings // kafka.go
	// Name is the command that runs the dump, for messages about its
	// inputs: "dump", or "kafka-dump-log" (which shares Run).
	Name string

	offsets string
	dec     decoderOptions // decoders.go
	// paths are what Validate found to read: PATH... and --files,
	// kafka-dump-log's spelling (KafkaSpellings.Paths).
	paths []string
	// quiet is -q: the text and table printers leave out their summary
	// lines (JSON keeps its summary records: they are data).
	quiet bool
}

func (o *Options) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.BoolVar(&o.Deep, "deep", false, "iterate records inside each batch (kafka-dump-log --deep-iteration)")
	f.BoolVar(&o.PrintData, "print-data", false, "also print record keys and values (implies --deep; kafka-dump-log --print-data-log)")
	f.StringVarP(&o.Output, "output", "o", "text", "output format: text|table|json|kafka")
	f.Int32Var(&o.MaxBytesFlag, "max-bytes", math.MaxInt32, "read at most this many bytes of each .log (KIP-824; 0 reads none); the default, kafka-dump-log's, reads everything")
	f.StringVar(&o.offsets, "offsets", "", "only batches and records within FROM:TO (inclusive; either side may be empty)")
	f.Int64Var(&o.ProducerID, "producer-id", -2, "only batches of this producerId")
	f.BoolVar(&o.ControlOnly, "control-only", false, "only control batches (transaction markers, KRaft records, barriers)")
	f.StringVar(&o.KeyFormat, "key-format", "auto", "how text output shows keys: auto|utf8|hex|base64")
	f.StringVar(&o.ValueFormat, "value-format", "auto", "how text output shows values: auto|utf8|hex|base64")
	f.BoolVar(&o.VerifyIndex, "verify-index", false, "check .index and .timeindex entries against the .log (linear time)")
	f.BoolVar(&o.IndexSanityCheck, "index-sanity-check", false, "run the broker's index sanity check on .index and .timeindex files")
	f.BoolVar(&o.SkipRecordMetadata, "skip-record-metadata", false, "kafka output: omit per-record metadata (kafka-dump-log --skip-record-metadata)")
	f.Int64Var(&o.MaxDecompressed, "max-decompressed-bytes", decode.DefaultMaxDecompressed, "refuse to decompress a batch beyond this many bytes (decompression-bomb guard)")
	f.BoolVar(&o.NoVerifyCRC, "no-verify-crc", false, "skip CRC verification (faster; isvalid is then not reported)")
	ui.AddJobsFlag(c, &o.Jobs, "partitions dumped")
	f.BoolVar(&o.NoResync, "no-resync", false, "stop reading a .log at the first batch that does not frame, as the broker and kafka-dump-log do, instead of searching for the next valid batch (--output kafka implies it)")
	// Batches of one segment are decoded on GOMAXPROCS workers; this
	// overrides it (1 = serial), for benchmarks and tests.
	f.IntVar(&o.DecodeWorkers, "decode-workers", 0, "batch decoding workers per segment (0 = GOMAXPROCS, 1 = serial)")
	_ = f.MarkHidden("decode-workers")
	f.Int64Var(&o.UnitPipelineBytes, "unit-pipeline-bytes", scan.BigUnitBytes, "in a log directory, partitions with this many bytes of segments use the batch pipeline")
	_ = f.MarkHidden("unit-pipeline-bytes")
	o.dec.addFlags(c, o)
	o.Kafka.addAliases(c, o)
}

// Validate checks the flags and that there is something to read: args
// (PATH...) and the paths of --files, which it keeps for Run.
func (o *Options) Validate(_ *cobra.Command, args []string) error {
	o.paths = append(args[:len(args):len(args)], o.Kafka.Paths()...)
	switch o.Output {
	case "text", "table", "json", "kafka":
	default:
		return ui.UsageErrorf("--output must be text, table, json or kafka, not %q", o.Output)
	}
	for _, f := range []string{o.KeyFormat, o.ValueFormat} {
		switch f {
		case "auto", "utf8", "hex", "base64":
		default:
			return ui.UsageErrorf("--key-format/--value-format must be auto, utf8, hex or base64, not %q", f)
		}
	}
	if o.MaxBytesFlag < 0 {
		return ui.UsageErrorf("--max-bytes must not be negative")
	}
	o.setMaxBytes(o.MaxBytesFlag)
	if o.Jobs < 0 || o.DecodeWorkers < 0 {
		return ui.UsageErrorf("--jobs must not be negative")
	}
	if o.MaxDecompressed <= 0 || o.MaxDecompressed > math.MaxInt32 {
		return ui.UsageErrorf("--max-decompressed-bytes must be between 1 and %d", math.MaxInt32)
	}
	if err := o.dec.validate(o); err != nil {
		return err
	}
	if o.PrintData {
		o.Deep = true
	}
	o.DumpLogSegments = o.Output == "kafka"
	o.PartitionCheck = psm.CheckLogStart
	o.FromOffset, o.ToOffset = math.MinInt64, math.MaxInt64
	if o.offsets != "" {
		// The form, said with every mistake: FROM:TO, inclusive, either
		// side may be empty, or one offset.
		const form = "want FROM:TO (inclusive; either side may be empty: --offsets 10:20, 10:, :20) or one offset (--offsets 15)"
		from, to, ok := strings.Cut(o.offsets, ":")
		if !ok {
			if f, t, dash := strings.Cut(o.offsets[min(1, len(o.offsets)):], "-"); dash && f != "" && t != "" {
				return ui.UsageErrorf("--offsets %q: a range is written FROM:TO, not FROM-TO: --offsets %s:%s", o.offsets, o.offsets[:1]+f, t)
			}
			from, to = o.offsets, o.offsets
		}
		var err error
		if from != "" {
			if o.FromOffset, err = strconv.ParseInt(from, 10, 64); err != nil {
				return ui.UsageErrorf("--offsets %q: FROM %q is not an offset; %s", o.offsets, from, form)
			}
		}
		if to != "" {
			if o.ToOffset, err = strconv.ParseInt(to, 10, 64); err != nil {
				return ui.UsageErrorf("--offsets %q: TO %q is not an offset; %s", o.offsets, to, form)
			}
		}
		if o.FromOffset > o.ToOffset {
			return ui.UsageErrorf("--offsets %q: FROM is after TO; %s", o.offsets, form)
		}
	}
	o.HasProducerFilter = o.ProducerID != -2
	if len(o.paths) == 0 {
		return ui.UsageErrorf("dump needs at least one PATH (a file, a partition directory or a log directory)")
	}
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &Options{}
	c := &cobra.Command{
		Use:   "dump PATH...",
		Short: "Decode every file of a Kafka partition: segments, indexes, snapshots, checkpoints",
		Long: `Decode Kafka log files byte-exact. PATH is a file, a partition directory, or a
log directory (every partition in it). Every batch format (v0, v1, v2), every
codec and every control record (transaction markers, KRaft records and the
KIP-1279 MIRROR_PID_RESET barrier) is decoded. CRC mismatches are reported and
the dump goes on; structural corruption (a corrupt length, bad magic, garbage)
is reported with its byte position, then dump searches for the next valid
batch and reads on from there, reporting the bytes it skipped (--no-resync
stops at the damage, as the broker's recovery does); a zero-filled
(preallocated) tail is a warning.

Output formats: text (readable, styled on a terminal), table, json (JSON
lines, see docs/json.md) and kafka (line-for-line kafka-dump-log output).
` + ui.ExitStatusHelp,
		Example: `  kseg dump testdata/partitions/orders-0
  kseg dump --deep --print-data testdata/partitions/orders-0/00000000000000000000.log
  kseg dump --output json --control-only /var/lib/kafka/data/orders-0 | jq .
  kseg dump --output kafka --deep 00000000000000000000.log    # as kafka-dump-log.sh prints it
  kseg dump --verify-index --index-sanity-check /var/lib/kafka/data/orders-0`,
		Args: cobra.ArbitraryArgs,
	}
	return ui.NewCommand(c, s, o, Run)
}

// Run dumps what Validate found to read (PATH... and --files); its
// arguments are those Validate was given.
func Run(ctx context.Context, s *ui.Streams, o *Options, _ []string) error {
	args := o.paths
	name := o.Name
	if name == "" {
		name = "dump"
	}
	if err := checkDumpInputs(s, o, name, args); err != nil {
		return err
	}
	o.quiet = s.Quiet
	// One cache of log directories' checkpoints and one budget of
	// decompressed bytes for every partition of the run: the cap is per
	// batch, and a renderer per core each at the cap would make memory
	// grow with the cores.
	o.LogDirs = segment.NewLogDirCache()
	o.Budget = scan.NewBudget(o.MaxDecompressed)
	files, unread, err := scan.Collect(args, o.DumpLogSegments, o.LogDirs)
	if err != nil {
		return err
	}
	// The partitions that could not be listed, said first (the dump goes
	// on without them) and counted in the exit.
	for _, err := range unread {
		fmt.Fprintf(s.Err, "kseg: %v (the dump goes on without it)\n", err)
	}
	err = runDumpFiles(ctx, s, o, files)
	if len(unread) > 0 && (err == nil || ui.ExitCode(err) == ui.ExitFindings) {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: unread[0], Silent: true}
	}
	return err
}

// runDumpFiles dumps the files scan.Collect found.
func runDumpFiles(ctx context.Context, s *ui.Streams, o *Options, files []scan.File) error {
	// The progress line (progress.go) must exist before the printer
	// captures s.Out: it routes output around the line.
	prog := newDumpProgress(s, files)
	defer prog.Done()
	// Several partitions: a pool of --jobs workers, one partition each,
	// output in order (jobs.go).
	// kafka-dump-log stops at the first exception (segment/scan/dumplog.go),
	// which a later partition dumped in parallel could not take back:
	// --output kafka dumps partitions one after the other.
	if units := scan.Units(files); len(units) > 1 && o.partitionJobs() > 1 && !o.DumpLogSegments {
		return runDumpUnits(ctx, s, o, files, units, prog)
	}
	st := newDumpRun(s, o, o.DecodeWorkers, prog)
	defer st.Close()
	ioErr, err := st.Files(ctx, files, 0)
	if err != nil {
		return kafkaStopped(st.Printer(), err)
	}
	if err := st.Printer().Close(); err != nil {
		return err
	}
	return dumpExit(ioErr, st.Errors())
}

// newDumpRun is the engine's run over o's files, rendered by the printer
// of --output on s (workers: scan.NewRun's), an unreadable file said on
// s.Err.
func newDumpRun(s *ui.Streams, o *Options, workers int, prog *dumpProgress) *scan.Run {
	st := scan.NewRun(newDumpPrinter(s, o), &o.Options, workers, s.Color())
	st.FileError = func(err error) { fmt.Fprintf(s.Err, "kseg: %v\n", err) }
	if prog.on() {
		st.Progress = prog
	}
	return st
}

// dumpExit is dump's exit: 1 after an I/O error, 3 after findings of
// severity error, else 0.
func dumpExit(ioErr error, errors int) error {
	if ioErr != nil {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: ioErr, Silent: true}
	}
	if errors > 0 {
		return ui.FindingsExit()
	}
	return nil
}

// setMaxBytes applies a --max-bytes value: Kafka's default
// (Integer.MAX_VALUE) reads the whole file, anything else cuts it there.
func (o *Options) setMaxBytes(v int32) {
	o.MaxBytes, o.MaxBytesLimit = 0, false
	if v != math.MaxInt32 {
		o.MaxBytes, o.MaxBytesLimit = int64(v), true
	}
}

// checkDumpInputs checks dump's PATHs. --output kafka takes any file name,
// as kafka-dump-log does (it says "Ignoring unknown file", or stops where
// Kafka stops: segment/scan/dumplog.go); a directory is checked for every
// output.
func checkDumpInputs(s *ui.Streams, o *Options, name string, args []string) error {
	if o.Output != "kafka" {
		return inputs.CheckAll(s, name, args, inputs.KafkaPath)
	}
	for _, a := range args {
		st, err := s.InputFS().Stat(a)
		switch {
		case err != nil:
		case st.IsDir():
			if err := inputs.Check(s, name, a, inputs.KafkaPath); err != nil {
				return err
			}
		case !st.Mode().IsRegular():
			// Kafka's tool would ignore a .lock by its name, or block
			// opening a FIFO named like a segment; kseg says what it is.
			return &fs.PathError{Op: "open", Path: a, Err: &segment.NotRegularError{Mode: st.Mode()}}
		}
	}
	return nil
}
