package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// dumpOptions are the flags of `kseg dump`.
type dumpOptions struct {
	deep         bool
	printData    bool
	output       string
	maxBytes     int64 // the scan limit: 0 = the whole file (see maxBytesLimit)
	maxBytesFlag int32 // --max-bytes as given; Kafka's default, 2147483647, is the whole file
	// maxBytesLimit: --max-bytes is set below Kafka's default, so a .log is
	// cut there (0 reads nothing) and, as in kafka-dump-log, the trailing
	// "Found N invalid bytes" line is not printed.
	maxBytesLimit    bool
	offsets          string
	producerID       int64
	controlOnly      bool
	keyFormat        string
	valueFormat      string
	verifyIndex      bool
	indexSanityCheck bool
	skipRecordMeta   bool
	maxDecompressed  int64
	noVerifyCRC      bool
	jobs             int
	decodeWorkers    int
	unitPipeline     int64 // dump_jobs.go
	noResync         bool
	dec              decoderOptions // dump_decoders.go
	kafka            kafkaSpellings // kafka_dump_log.go

	// derived by Validate
	fromOffset, toOffset int64
	hasProducerFilter    bool
	// quiet is -q: the text and table printers leave out their summary
	// lines (JSON keeps its summary records: they are data).
	quiet bool
	// name is the command that runs the dump, for messages about its
	// inputs: "dump", or "kafka-dump-log" (which shares runDump).
	name string
	// logDirs reads each log directory's checkpoints once per run, for
	// every partition the dump opens (set by runDump).
	logDirs *segment.LogDirCache
	// budget bounds the decompressed bytes every renderer of the run
	// holds together (set by runDump): the cap is per batch, and a
	// renderer per core each at the cap would make memory grow with the
	// cores.
	budget *decode.Budget
}

func (o *dumpOptions) AddFlags(c *cobra.Command) {
	f := c.Flags()
	f.BoolVar(&o.deep, "deep", false, "iterate records inside each batch (kafka-dump-log --deep-iteration)")
	f.BoolVar(&o.printData, "print-data", false, "also print record keys and values (implies --deep; kafka-dump-log --print-data-log)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text|table|json|kafka")
	f.Int32Var(&o.maxBytesFlag, "max-bytes", math.MaxInt32, "read at most this many bytes of each .log (KIP-824; 0 reads none); the default, kafka-dump-log's, reads everything")
	f.StringVar(&o.offsets, "offsets", "", "only batches and records within FROM:TO (inclusive; either side may be empty)")
	f.Int64Var(&o.producerID, "producer-id", -2, "only batches of this producerId")
	f.BoolVar(&o.controlOnly, "control-only", false, "only control batches (transaction markers, KRaft records, barriers)")
	f.StringVar(&o.keyFormat, "key-format", "auto", "how text output shows keys: auto|utf8|hex|base64")
	f.StringVar(&o.valueFormat, "value-format", "auto", "how text output shows values: auto|utf8|hex|base64")
	f.BoolVar(&o.verifyIndex, "verify-index", false, "check .index and .timeindex entries against the .log (linear time)")
	f.BoolVar(&o.indexSanityCheck, "index-sanity-check", false, "run the broker's index sanity check on .index and .timeindex files")
	f.BoolVar(&o.skipRecordMeta, "skip-record-metadata", false, "kafka output: omit per-record metadata (kafka-dump-log --skip-record-metadata)")
	f.Int64Var(&o.maxDecompressed, "max-decompressed-bytes", decode.DefaultMaxDecompressed, "refuse to decompress a batch beyond this many bytes (decompression-bomb guard)")
	f.BoolVar(&o.noVerifyCRC, "no-verify-crc", false, "skip CRC verification (faster; isvalid is then not reported)")
	ui.AddJobsFlag(c, &o.jobs, "partitions dumped")
	f.BoolVar(&o.noResync, "no-resync", false, "stop reading a .log at the first batch that does not frame, as the broker and kafka-dump-log do, instead of searching for the next valid batch (--output kafka implies it)")
	// Batches of one segment are decoded on GOMAXPROCS workers; this
	// overrides it (1 = serial), for benchmarks and tests.
	f.IntVar(&o.decodeWorkers, "decode-workers", 0, "batch decoding workers per segment (0 = GOMAXPROCS, 1 = serial)")
	_ = f.MarkHidden("decode-workers")
	f.Int64Var(&o.unitPipeline, "unit-pipeline-bytes", bigUnitBytes, "in a log directory, partitions with this many bytes of segments use the batch pipeline")
	_ = f.MarkHidden("unit-pipeline-bytes")
	o.dec.addFlags(c)
	o.kafka.addAliases(c, o)
}

func (o *dumpOptions) Validate(args []string) error {
	switch o.output {
	case "text", "table", "json", "kafka":
	default:
		return ui.UsageErrorf("--output must be text, table, json or kafka, not %q", o.output)
	}
	for _, f := range []string{o.keyFormat, o.valueFormat} {
		switch f {
		case "auto", "utf8", "hex", "base64":
		default:
			return ui.UsageErrorf("--key-format/--value-format must be auto, utf8, hex or base64, not %q", f)
		}
	}
	if o.maxBytesFlag < 0 {
		return ui.UsageErrorf("--max-bytes must not be negative")
	}
	o.setMaxBytes(o.maxBytesFlag)
	if o.jobs < 0 || o.decodeWorkers < 0 {
		return ui.UsageErrorf("--jobs must not be negative")
	}
	if o.maxDecompressed <= 0 || o.maxDecompressed > math.MaxInt32 {
		return ui.UsageErrorf("--max-decompressed-bytes must be between 1 and %d", math.MaxInt32)
	}
	if err := o.dec.validate(o); err != nil {
		return err
	}
	if o.printData {
		o.deep = true
	}
	o.fromOffset, o.toOffset = math.MinInt64, math.MaxInt64
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
			if o.fromOffset, err = strconv.ParseInt(from, 10, 64); err != nil {
				return ui.UsageErrorf("--offsets %q: FROM %q is not an offset; %s", o.offsets, from, form)
			}
		}
		if to != "" {
			if o.toOffset, err = strconv.ParseInt(to, 10, 64); err != nil {
				return ui.UsageErrorf("--offsets %q: TO %q is not an offset; %s", o.offsets, to, form)
			}
		}
		if o.fromOffset > o.toOffset {
			return ui.UsageErrorf("--offsets %q: FROM is after TO; %s", o.offsets, form)
		}
	}
	o.hasProducerFilter = o.producerID != -2
	if len(args) == 0 {
		return ui.UsageErrorf("dump needs at least one PATH (a file, a partition directory or a log directory)")
	}
	return nil
}

func newDumpCmd(s *ui.Streams) *cobra.Command {
	o := &dumpOptions{}
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
		RunE: func(c *cobra.Command, args []string) error {
			args = append(args, o.kafka.paths()...)
			if err := o.Validate(args); err != nil {
				return err
			}
			return runDump(c.Context(), s, o, args)
		},
	}
	o.AddFlags(c)
	return c
}

// dumpFile is one file to dump, with what its name says.
type dumpFile struct {
	path string
	info segment.FileInfo
	// named: the path was given as such (not found by expanding a
	// directory); missing: it does not exist (kept only for --output
	// kafka, which reports it where kafka-dump-log does).
	named, missing bool
	// entries and selected: how many entries the file holds and how many
	// of them dump's filters selected (dump_select.go), set for EndFile.
	entries, selected int
}

// collectDumpFiles expands PATH arguments into files in a stable order:
// per partition, segment files by base offset (.log, .index, .timeindex,
// .txnindex), then producer snapshots, then the metadata files.
//
// kafka keeps a file that does not exist in the list (marked missing), as
// kafka-dump-log reaches it in turn.
//
// A partition directory of a log directory that cannot be listed does not
// stop the dump: it is in unread, which runDump reports, and the others
// are dumped.
func collectDumpFiles(args []string, kafka bool, logDirs *segment.LogDirCache) (out []dumpFile, unread []error, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			if kafka && errors.Is(err, fs.ErrNotExist) {
				fi, _ := segment.ParseFileName(filepath.Base(a))
				out = append(out, dumpFile{path: a, info: fi, named: true, missing: true})
				continue
			}
			return nil, nil, err
		}
		if !st.IsDir() {
			fi, _ := segment.ParseFileName(filepath.Base(a))
			out = append(out, dumpFile{path: a, info: fi, named: true})
			continue
		}
		if segment.IsPartitionDir(a) {
			files, err := partitionFiles(a, logDirs)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, files...)
			continue
		}
		ld, err := segment.OpenLogDir(a)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range ld.Files {
			fi, _ := segment.ParseFileName(filepath.Base(f.Path))
			if fi.Kind == segment.KindLock {
				continue
			}
			out = append(out, dumpFile{path: f.Path, info: fi})
		}
		for _, p := range ld.Partitions {
			files, err := partitionFiles(p, logDirs)
			if err != nil {
				unread = append(unread, err)
				continue
			}
			out = append(out, files...)
		}
	}
	return out, unread, nil
}

func partitionFiles(dir string, logDirs *segment.LogDirCache) ([]dumpFile, error) {
	pd, err := logDirs.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	return partitionFilesOf(pd), nil
}

// partitionFilesOf is partitionFiles of a directory already listed.
func partitionFilesOf(pd *segment.PartitionDir) []dumpFile {
	var out []dumpFile
	add := func(p string) {
		if p == "" {
			return
		}
		fi, _ := segment.ParseFileName(filepath.Base(p))
		out = append(out, dumpFile{path: p, info: fi})
	}
	for _, sg := range pd.Segments {
		add(sg.Log)
		add(sg.Index)
		add(sg.TimeIndex)
		add(sg.TxnIndex)
	}
	for _, sn := range pd.Snapshots {
		add(sn.Path)
	}
	for _, ms := range pd.MetadataSnapshots {
		add(ms.Path)
	}
	add(pd.LeaderEpochCheckpoint)
	add(pd.PartitionMetadata)
	rest := append(append([]string(nil), pd.Transient...), pd.Other...)
	sort.Strings(rest)
	for _, p := range rest {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			add(p)
		}
	}
	return out
}

// dumpState is what one run of dump accumulates across files.
type dumpState struct {
	o        *dumpOptions
	p        dumpPrinter
	errors   int // findings of severity error
	warnings int

	// render renders batches on the dump goroutine (serial path), with
	// serialJob; pipe, when set, renders them on workers
	// (dump_pipeline.go).
	render    *batchRenderer
	serialJob batchJob
	pipe      jobRunner

	// sel: the batches the filters selected, per partition directory;
	// fileEntries and fileSelected count the entries of the file being
	// dumped (dump_select.go).
	sel                       selectedBatches
	fileEntries, fileSelected int

	// lastLogs caches, per partition directory, its last .log
	// (dump_logstart.go); partDirs holds directories the caller has
	// listed already (kseg check), by path.
	lastLogs map[string]string
	partDirs map[string]*segment.PartitionDir

	// later holds the files still to be dumped by this dumpFiles call,
	// and verified the time-index problems found, ahead of their turn, in
	// the walk that verified the sibling .index (dump_files.go): both
	// indexes of a segment checked in one pass over its log.
	later    map[string]string // cleaned path → the path as given
	verified map[string]*stashedVerify

	// observe, when set, sees every batch of every .log this state reads
	// (kseg check feeds its other checks from dump's walk:
	// check_onewalk.go).
	observe batchObserver

	// The progress line (dump_progress.go): the file being dumped, and the
	// position in it at which to tell the line again.
	prog     *dumpProgress
	progFile int
	progNext int64
}

func runDump(ctx context.Context, s *ui.Streams, o *dumpOptions, args []string) error {
	name := o.name
	if name == "" {
		name = "dump"
	}
	if err := checkDumpInputs(s, o, name, args); err != nil {
		return err
	}
	o.quiet = s.Quiet
	o.logDirs = segment.NewLogDirCache()
	o.budget = decode.NewBudget(max(o.maxDecompressed, decompressBudget))
	files, unread, err := collectDumpFiles(args, o.output == "kafka", o.logDirs)
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

// runDumpFiles dumps the files collectDumpFiles found.
func runDumpFiles(ctx context.Context, s *ui.Streams, o *dumpOptions, files []dumpFile) error {
	// The progress line (dump_progress.go) must exist before the printer
	// captures s.Out: it routes output around the line.
	prog := newDumpProgress(s, files)
	defer prog.Done()
	// Several partitions: a pool of --jobs workers, one partition each,
	// output in order (dump_jobs.go).
	// kafka-dump-log stops at the first exception (dump_kafka_stop.go),
	// which a later partition dumped in parallel could not take back:
	// --output kafka dumps partitions one after the other.
	if units := dumpUnits(files); len(units) > 1 && o.partitionJobs() > 1 && o.output != "kafka" {
		return runDumpUnits(ctx, s, o, files, units, prog)
	}
	st := newDumpState(s, o, o.decodeWorkers)
	defer st.close()
	ioErr, err := st.dumpFiles(ctx, s.Err, files, 0, prog)
	if err != nil {
		return kafkaStopped(st.p, err)
	}
	if err := st.p.Close(); err != nil {
		return err
	}
	return dumpExit(ioErr, st.errors)
}

// dumpFiles dumps files (files[0] is number base of the run, for the
// progress line). An I/O error on one file is reported on errw and does
// not hide the others; the last one is returned as ioErr. err is the
// context's error when the dump was cancelled.
func (st *dumpState) dumpFiles(ctx context.Context, errw io.Writer, files []dumpFile, base int, prog *dumpProgress) (ioErr, err error) {
	if st.o.verifyIndex {
		st.later = make(map[string]string, len(files))
		for _, f := range files {
			st.later[filepath.Clean(f.path)] = f.path
		}
	}
	for i, f := range files {
		delete(st.later, filepath.Clean(f.path))
		if err := ctx.Err(); err != nil {
			return ioErr, err
		}
		st.prog, st.progFile = prog, base+i
		st.progNext = prog.scanned(base+i, 0)
		err := st.dumpOne(f)
		prog.fileDone(base + i)
		if isKafkaStop(err) {
			return ioErr, err
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) || !isFinding(err) {
				fmt.Fprintf(errw, "kseg: %v\n", err)
				ioErr = err
				continue
			}
		}
	}
	return ioErr, nil
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

func isFinding(err error) bool {
	_, ok := decode.AsCorrupt(err)
	return ok
}

// fileFinding is dump's finding of kind k in file, at byte pos (-1 when
// not tied to a byte), in the batch at baseOffset (-1 when not tied to a
// batch; the finding's Offset).
func fileFinding(k finding.Kind, file string, pos, baseOffset int64, msg string) finding.Finding {
	f := finding.New(k, msg)
	f.File, f.Position, f.Offset = file, pos, baseOffset
	return f
}

func (st *dumpState) count(f finding.Finding) {
	switch f.Severity() {
	case finding.Error:
		st.errors++
	case finding.Warning:
		st.warnings++
	}
}

func (st *dumpState) report(f finding.Finding) {
	st.count(f)
	st.p.Finding(f)
}

// reportIndexProblem reports an index-mismatch or timeindex-mismatch
// finding with the failed check, for a printer that summarizes them
// (indexProblemPrinter); the others render the finding.
func (st *dumpState) reportIndexProblem(f finding.Finding, pr *segment.IndexProblem) {
	ip, ok := st.p.(indexProblemPrinter)
	if !ok {
		st.report(f)
		return
	}
	st.count(f)
	ip.IndexProblem(f, pr)
}

// reportCorrupt turns a CorruptError into a finding of the given kind.
func (st *dumpState) reportCorrupt(kind finding.Kind, ce *decode.CorruptError) {
	st.report(fileFinding(kind, ce.Path, ce.Pos, ce.BaseOffset, ce.Error()))
}

func (st *dumpState) dumpOne(f dumpFile) error {
	st.fileEntries, st.fileSelected = 0, 0
	if st.o.output == "kafka" {
		// Dumping <file>, then kafka-dump-log's dispatch on the name
		// (dump_kafka_stop.go).
		if handled, err := st.kafkaDispatch(f); handled {
			return err
		}
	} else {
		st.p.BeginFile(f)
	}
	var err error
	switch f.info.Kind {
	case segment.KindLog, segment.KindMetadataSnapshot, segment.KindBootstrapCheckpoint:
		if f.info.Transient() {
			st.p.Unknown(f, "transient file ("+f.info.Suffix+"), the broker removes or renames it at the next load")
			break
		}
		err = st.dumpLog(f)
		if err == nil && f.info.Kind == segment.KindLog {
			err = st.checkLogStart(f)
		}
	case segment.KindIndex:
		err = st.dumpOffsetIndex(f)
	case segment.KindTimeIndex:
		err = st.dumpTimeIndex(f)
	case segment.KindTxnIndex:
		err = st.dumpTxnIndex(f)
	case segment.KindProducerSnapshot:
		err = st.dumpSnapshot(f)
	case segment.KindLeaderEpochCheckpoint:
		err = st.dumpLeaderEpochs(f)
	case segment.KindPartitionMetadata:
		err = st.dumpPartitionMetadata(f)
	case segment.KindRecoveryPointCheckpoint, segment.KindLogStartOffsetCheckpoint,
		segment.KindReplicationOffsetCheckpoint, segment.KindCleanerOffsetCheckpoint:
		err = st.dumpOffsetCheckpoint(f)
	case segment.KindMetaProperties, segment.KindCleanShutdown, segment.KindQuorumState:
		err = st.dumpTextFile(f)
	default:
		st.p.Unknown(f, "not a Kafka file kseg decodes")
		if base := filepath.Base(f.path); edit.IsJournal(base) && !strings.HasSuffix(base, segment.TempSuffix) {
			if pf, ok := edit.PendingFinding(filepath.Dir(f.path)); ok {
				st.report(pf)
			}
		}
	}
	if ce, ok := decode.AsCorrupt(err); ok {
		st.reportCorrupt(finding.CorruptFile, ce.At(f.path, 0))
		err = nil
	}
	f.entries, f.selected = st.fileEntries, st.fileSelected
	st.p.EndFile(f)
	return err
}

// filtered reports whether --offsets, --producer-id or --control-only hide
// some records.
func (o *dumpOptions) filtered() bool {
	return o.fromOffset != math.MinInt64 || o.toOffset != math.MaxInt64 || o.hasProducerFilter || o.controlOnly
}

// batchSelected applies --offsets, --producer-id and --control-only.
func (o *dumpOptions) batchSelected(b *decode.Batch) bool {
	if b.LastOffset() < o.fromOffset || b.BaseOffset > o.toOffset {
		return false
	}
	if o.hasProducerFilter && b.ProducerID != o.producerID {
		return false
	}
	if o.controlOnly && !b.IsControl() {
		return false
	}
	return true
}

// logSummary is the end-of-file summary of a .log.
type logSummary struct {
	Batches, Records int64
	FirstOffset      int64
	LastOffset       int64
	CRCErrors        int64
	Tail             segment.Tail
	BytesScanned     int64
	Codecs           map[string]int64
	SelectedBatches  int64
	// SelFirst and SelLast: the offsets of the first and last selected
	// batches (-1 before one is).
	SelFirst, SelLast    int64
	NonConsecutive       int64
	ControlByType        map[string]int64
	MaxBytesLimitApplied bool

	// codecs counts batches by attribute bits until foldCodecs puts them
	// in Codecs (a map update per batch was 1 % of a batch-level dump).
	codecs [decode.AttrCompressionMask + 1]int64
}

// batchView is a batch as printers see it.
type batchView struct {
	File     string
	Position int64
	Batch    *decode.Batch
	CRCValid *bool // nil when not verified
}

// recordView is a record as printers see it, with its control record
// decoded when the batch is a control batch.
type recordView struct {
	Record  *decode.Record
	Control *decode.Control // nil for data records
	// ControlErr is set when a control batch's record does not decode.
	ControlErr error
	// Internal is a data record of one of Kafka's internal topics,
	// decoded (dump_decoders.go); InternalErr when it does not decode.
	Internal    *schema.Decoded
	InternalErr error
	// MM2 is a data record of a MirrorMaker 2 topic (MM2Topic), decoded
	// (dump_mm2.go); MM2Err when it does not decode.
	MM2      *mm2.Record
	MM2Topic string
	MM2Err   error
}

func (st *dumpState) dumpLog(f dumpFile) (err error) {
	lf, err := segment.OpenLog(f.path)
	if err != nil {
		return err
	}
	defer lf.Close()
	o := st.o
	// Large segments are mapped (no copy out of the page cache); a mapped
	// file that shrinks under the dump faults, which SetPanicOnFault turns
	// into an error for this file instead of a crash (workers do the same).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if err = faultError(e, f.path); err == nil {
				panic(e)
			}
			if st.pipe != nil {
				st.pipe.drain(nil, nil, err) // throw away the jobs in flight
			}
		}
	}()
	sum := logSummary{FirstOffset: -1, LastOffset: -1, SelFirst: -1, SelLast: -1, Codecs: map[string]int64{}, ControlByType: map[string]int64{},
		MaxBytesLimitApplied: o.maxBytesLimit}
	st.p.LogStart(f)
	if err := st.kafkaSlice(f, lf); err != nil {
		return err
	}
	if o.maxBytesLimit && o.maxBytes == 0 {
		// --max-bytes 0: FileRecords.slice(0, 0) holds no batch.
		st.p.LogEnd(f, &sum)
		return nil
	}
	lc, tail, err := st.scanBatches(f, lf, &sum)
	if err != nil {
		return err
	}
	sum.foldCodecs()
	sum.Tail = tail
	sum.BytesScanned = sum.Tail.End
	// A batch cut by --max-bytes is where the reader was told to stop, not
	// a torn write (kafka-dump-log likewise stays silent then).
	if cut := sum.Tail.End < lf.Size; !cut || (sum.Tail.Kind != segment.TailTornBatch && sum.Tail.Kind != segment.TailTornHeader) {
		st.reportTail(f, sum.Tail)
	}
	lc.summarise(&sum)
	st.p.LogEnd(f, &sum)
	return nil
}

// scanBatches renders every batch of the log in file order and counts it
// in sum, scanning on past structural damage (dump_resync.go) as far as
// the output allows; it returns the check of the whole log and the tail
// where the last scan stopped.
func (st *dumpState) scanBatches(f dumpFile, lf *segment.LogFile, sum *logSummary) (*logCheck, segment.Tail, error) {
	o := st.o
	lastRecordOffset := int64(-1)
	// Batches are rendered by batchRenderer, here or in groups on workers
	// (dump_pipeline.go), and committed to the summary in file order.
	pipe := st.pipe
	var j *batchJob
	// flush emits every batch handed to the workers so far, so that a
	// finding made on this goroutine follows them in the output.
	flush := func() error {
		if pipe == nil {
			return nil
		}
		var err error
		if j != nil {
			err = pipe.submit(j, sum, &lastRecordOffset)
			j = nil
		}
		return pipe.drain(sum, &lastRecordOffset, err)
	}
	// One scanner run per stretch of valid batches: after structural
	// damage, lc.resync finds where the next one starts (dump_resync.go).
	lc := newLogCheck(f, o)
	var sc *segment.Scanner
	for start, run := int64(0), 0; ; run++ {
		sc = lf.Scanner(segment.ScanOptions{Start: start, Limit: o.maxBytes, Mmap: true})
		defer sc.Close()
		for sc.Next() {
			b := sc.Batch()
			if st.observe != nil {
				st.observe.batch(f, run, sc.Pos(), b)
			}
			if fds := lc.check(sc.Pos(), b); len(fds) > 0 {
				if err := flush(); err != nil {
					return nil, segment.Tail{}, err
				}
				for _, fd := range fds {
					st.report(fd)
				}
			}
			if end := sc.Pos() + b.Size(); end >= st.progNext {
				st.progNext = st.prog.scanned(st.progFile, end)
			}
			sum.count(b)
			if o.filtered() && o.batchSelected(b) {
				sum.countSelected(b)
				st.noteBatch(f.path, b)
			}
			if pipe == nil {
				j = &st.serialJob
				if err := st.renderSerial(j, f, sc.Pos(), b, sum, &lastRecordOffset); err != nil {
					return nil, segment.Tail{}, err
				}
				continue
			}
			if j == nil {
				j = pipe.job()
				j.file = f.path
			}
			j.add(sc.Pos(), b, o.batchSelected(b), sc.Window())
			if j.full() {
				err := pipe.submit(j, sum, &lastRecordOffset)
				if j = nil; err != nil {
					return nil, segment.Tail{}, pipe.drain(sum, &lastRecordOffset, err)
				}
			}
		}
		if err := flush(); err != nil {
			return nil, segment.Tail{}, err
		}
		if err := sc.Err(); err != nil {
			return nil, segment.Tail{}, err
		}
		if st.observe != nil {
			st.observe.runEnd(f, run, sc.Tail())
		}
		if o.output == "kafka" {
			// What FileLogInputStream does where kseg's scan stopped.
			next, ok, err := st.kafkaTail(f, lc, lf, sc.Tail(), sum, &lastRecordOffset)
			if err != nil {
				return nil, segment.Tail{}, err
			}
			if !ok {
				break
			}
			start = next
			continue
		}
		next, ok := st.resync(lc, lf, sc.Tail())
		if !ok {
			break
		}
		start = next
	}
	return lc, sc.Tail(), nil
}

// batchObserver sees the batches of each .log dump reads, on the dump
// goroutine, in file order, before anything else is done with them; b is
// valid only during the call. run counts the scanner's runs: 0 up to the
// first structural damage, one more after each resync. runEnd says where
// a run stopped.
type batchObserver interface {
	batch(f dumpFile, run int, pos int64, b *decode.Batch)
	runEnd(f dumpFile, run int, t segment.Tail)
}

// setMaxBytes applies a --max-bytes value: Kafka's default
// (Integer.MAX_VALUE) reads the whole file, anything else cuts it there.
func (o *dumpOptions) setMaxBytes(v int32) {
	o.maxBytes, o.maxBytesLimit = 0, false
	if v != math.MaxInt32 {
		o.maxBytes, o.maxBytesLimit = int64(v), true
	}
}

// checkDumpInputs checks dump's PATHs. --output kafka takes any file name,
// as kafka-dump-log does (it says "Ignoring unknown file", or stops where
// Kafka stops: dump_kafka_stop.go); a directory is checked for every
// output.
func checkDumpInputs(s *ui.Streams, o *dumpOptions, name string, args []string) error {
	if o.output != "kafka" {
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

// count adds batch b to the summary.
func (sum *logSummary) count(b *decode.Batch) {
	sum.Batches++
	if sum.FirstOffset < 0 {
		sum.FirstOffset = b.BaseOffset
	}
	sum.LastOffset = b.LastOffset()
	sum.codecs[b.Compression()]++
}

// countSelected counts b among the batches the filters selected.
func (sum *logSummary) countSelected(b *decode.Batch) {
	if sum.SelFirst < 0 {
		sum.SelFirst = b.BaseOffset
	}
	sum.SelLast = b.LastOffset()
}

// foldCodecs moves the per-codec counts into Codecs, before a printer
// reads the summary.
func (sum *logSummary) foldCodecs() {
	for c, n := range sum.codecs {
		if n > 0 {
			sum.Codecs[decode.Compression(c).String()] += n
		}
	}
	sum.codecs = [len(sum.codecs)]int64{}
}

// renderSerial renders batch b at pos with job j on the dump goroutine and
// commits it; an operational error stops the file.
func (st *dumpState) renderSerial(j *batchJob, f dumpFile, pos int64, b *decode.Batch, sum *logSummary, lastRecord *int64) error {
	j.reset()
	j.file = f.path
	j.add(pos, b, st.o.batchSelected(b), nil)
	st.render.render(j)
	st.commit(j, sum, lastRecord)
	return j.err
}

// reportTail turns the scan's tail into findings: a zero-filled tail is a
// warning (preallocation), anything else after validBytes an error.
func (st *dumpState) reportTail(f dumpFile, t segment.Tail) {
	switch t.Kind {
	case segment.TailClean:
	case segment.TailZeroFilled:
		st.report(fileFinding(finding.ZeroTail, f.path, t.ValidBytes, -1,
			fmt.Sprintf("%s: %d zero bytes after position %d (preallocated segment; the broker truncates them on recovery)",
				filepath.Base(f.path), t.InvalidBytes(), t.ValidBytes)))
	case segment.TailTornHeader, segment.TailTornBatch:
		st.report(fileFinding(finding.TornTail, f.path, t.ValidBytes, t.Err.BaseOffset,
			fmt.Sprintf("%s (%d invalid bytes at the end; validBytes %d)", t.Err.Error(), t.InvalidBytes(), t.ValidBytes)))
	case segment.TailCorrupt:
		st.report(fileFinding(finding.CorruptBatch, f.path, t.Err.Pos, t.Err.BaseOffset,
			fmt.Sprintf("%s (scan stopped; validBytes %d, %d bytes not read)", t.Err.Error(), t.ValidBytes, t.InvalidBytes())))
	}
}
