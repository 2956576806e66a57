// Package kafkadumplog is `kseg kafka-dump-log`: kafka-dump-log.sh's own
// command line (DumpLogSegments of Kafka 4.3, the Java port KAFKA-14579;
// formats.md §9.1), its help, its exit codes, over kseg dump's run
// (cmd/dump) in kafka-dump-log's output format (segment/dumplog).
package kafkadumplog

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/cmd/dump"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/version"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/scan"
)

// kafkaMaxBytes is kseg kafka-dump-log's --max-bytes: jopt keeps each
// occurrence's text and converts it (Integer.valueOf) only when the tool
// asks for the value.
type kafkaMaxBytes struct{ raw []string }

func (m *kafkaMaxBytes) String() string {
	if len(m.raw) == 0 {
		return strconv.Itoa(math.MaxInt32)
	}
	return m.raw[len(m.raw)-1]
}
func (m *kafkaMaxBytes) Set(s string) error { m.raw = append(m.raw, s); return nil }
func (m *kafkaMaxBytes) Type() string       { return "size" }

// apply sets o as DumpLogSegmentsOptions.maxBytes() and FileRecords.slice
// would read --max-bytes, leaving the exceptions for dump to raise where
// Kafka raises them.
func (m *kafkaMaxBytes) apply(o *dump.Options) {
	o.MaxBytesFlag = math.MaxInt32
	switch {
	case len(m.raw) == 0:
	case len(m.raw) > 1:
		o.LogArgError = "Found multiple arguments for option max-bytes, but you asked for only one"
	default:
		v, err := strconv.ParseInt(m.raw[0], 10, 32)
		switch {
		case err != nil:
			o.LogArgError = "Cannot parse argument '" + m.raw[0] + "' of option max-bytes"
		case v < 0:
			o.NegativeMaxBytes, o.RawMaxBytes = true, v
		default:
			o.MaxBytesFlag = int32(v)
		}
	}
}

// NewCmd is `kseg kafka-dump-log`: kafka-dump-log.sh's command
// line, options and output, for scripts that call it.
func NewCmd(s *ui.Streams) *cobra.Command {
	ko := &options{o: dump.Options{Name: "kafka-dump-log"}}
	c := &cobra.Command{
		// Hidden: it keeps Kafka's conventions (exit 1 for a bad option,
		// exit 0 after findings) rather than kseg's, so it stays out of
		// the command list; docs/kafka-dump-log.md documents it.
		Hidden: true,
		Use:    "kafka-dump-log --files FILE[,FILE...] [options]",
		Short:  "kafka-dump-log.sh's command line and output (Kafka 4.3's DumpLogSegments)",
		Long: `Takes exactly kafka-dump-log.sh's options (Kafka 4.3, the Java DumpLogSegments)
and prints what it prints: the same as kseg dump --output kafka, with Kafka's
option names. kseg kafka-dump-log --help prints Kafka's own usage (on stderr,
exit 1, as Kafka). See docs/kafka-dump-log.md for each option.

EXIT STATUS
  0  the files were dumped (as in Kafka, a CRC mismatch or an index
     mismatch is reported in the output and is not a failure), or
     --version
  1  where Kafka stops with an exception (a record size below 14, records
     that do not decode under --deep-iteration, a failed
     --index-sanity-check, a bad --max-bytes, a file that does not exist
     or whose name has no dot), an I/O error, a missing --files, a bad
     option, or --help (Kafka exits 1 for all of these)
`,
		Example: `  kseg kafka-dump-log --files 00000000000000000000.log
  kseg kafka-dump-log --deep-iteration --print-data-log --files 00000000000000000000.log
  kseg kafka-dump-log --cluster-metadata-decoder --files __cluster_metadata-0/00000000000000000000.log
  kseg kafka-dump-log --offsets-decoder --files __consumer_offsets-7/00000000000000000000.log`,
		// Kafka's options are parsed here, as jopt parses them: --help
		// is Kafka's (stderr, exit 1), and no argument at all means
		// --help.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE:               func(c *cobra.Command, args []string) error { return ko.run(c, s, args) },
	}
	ko.AddFlags(c)
	return c
}

// options are kafka-dump-log's options: dump's, bound to Kafka's names,
// and jopt's own (--max-bytes as jopt converts it, --help, --version).
type options struct {
	o             dump.Options
	maxBytes      kafkaMaxBytes
	help, version bool
}

// AddFlags adds DumpLogSegmentsOptions' options to c, as jopt declares
// them.
func (ko *options) AddFlags(c *cobra.Command) {
	o := &ko.o
	f := c.Flags()
	o.AddKafkaOnlyFlags(c, map[string]string{
		"files":             "REQUIRED: The comma separated list of data and index log files to be dumped.",
		"deep-iteration":    "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.",
		"print-data-log":    "If set, printing the messages content when dumping data logs. Automatically set if any decoder option is specified.",
		"verify-index-only": "If set, just verify the index log without printing its content.",
		"max-message-size":  "Size of largest message.",
	})
	f.BoolVar(&o.IndexSanityCheck, "index-sanity-check", false, "If set, just checks the index sanity without printing its content. This is the same check that is executed on broker startup to determine if an index needs rebuilding or not.")
	f.Var(&ko.maxBytes, "max-bytes", "Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
	f.BoolVar(&o.SkipRecordMetadata, "skip-record-metadata", false, "Skip metadata when printing records. This flag also skips control records.")
	f.BoolVar(&ko.help, "help", false, "Print usage information.")
	f.BoolVar(&ko.version, "version", false, "Display kseg's version (Kafka's tool: the Kafka version).")
	o.AddDecoderFlags(c)
	_ = f.MarkHidden("no-decode-internal")
}

// run parses Kafka's command line as jopt parses it and dumps the files
// as DumpLogSegments does: --help is Kafka's (stderr, exit 1), and no
// argument at all means --help.
func (ko *options) run(c *cobra.Command, s *ui.Streams, args []string) error {
	o, k := &ko.o, &ko.o.Kafka
	f := c.Flags()
	if err := f.Parse(dump.JoinOptionalArgs(args)); err != nil {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: err}
	}
	if f.Changed("verbose") {
		// kseg's -v (root.go's hidden persistent flag) reaches
		// this flag set before or after the subcommand alike;
		// DumpLogSegments has no such option (jopt: an
		// unrecognised option, exit 1).
		return &ui.ExitCodeError{Code: ui.ExitError, Err: errors.New("-v/--verbose is not an option of kafka-dump-log (Kafka's DumpLogSegments has none)")}
	}
	// CommandLineUtils.maybePrintHelpOrVersion, then checkArgs.
	if len(args) == 0 || ko.help {
		fmt.Fprintf(s.Err, "%s\n%s", kafkaDumpLogDescription, kafkaDumpLogHelp(f))
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	}
	if ko.version {
		fmt.Fprintln(s.Out, version.String())
		return nil
	}
	if !f.Changed("files") {
		fmt.Fprintf(s.Err, "Missing required argument \"[files]\"\n%s", kafkaDumpLogHelp(f))
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	}
	if len(k.Files) > 1 {
		// options.valueOf(filesOpt) on a repeated option.
		fmt.Fprintln(s.Err, "Found multiple arguments for option files, but you asked for only one")
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	}
	files := k.Paths()
	ko.maxBytes.apply(o)
	o.Output = "kafka"
	o.KeyFormat, o.ValueFormat = "utf8", "utf8"
	o.ProducerID = -2
	o.MaxDecompressed = decode.DefaultMaxDecompressed
	o.NoResync = true
	o.Jobs = 1
	if len(files) == 0 {
		return nil // --files ",": nothing to dump
	}
	// No PATH: the files are --files' (Validate reads them).
	if err := o.Validate(c, nil); err != nil {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: err}
	}
	err := dump.Run(c.Context(), s, o, nil)
	switch {
	case scan.IsStop(err):
		// mainNoExit: the message is printed; exit 1.
		return &ui.ExitCodeError{Code: ui.ExitError, Silent: true}
	case ui.ExitCode(err) == ui.ExitFindings:
		// Kafka exits 0 after printing isvalid: false or index
		// mismatches; only failures (exit 1) remain failures.
		return nil
	}
	return err
}

// kafkaDumpLogDescription is the message CommandLineUtils prints above
// the usage for --help.
const kafkaDumpLogDescription = "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment."

// kafkaDumpLogOptions are DumpLogSegmentsOptions' options as jopt's help
// shows them: argument display and description (with its default).
var kafkaDumpLogOptions = []struct{ name, arg, desc string }{
	{"cluster-metadata-decoder", "", "If set, log data will be parsed as cluster metadata records."},
	{"deep-iteration", "", "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled."},
	{"files", " <String: file1, file2, ...>", "REQUIRED: The comma separated list of data and index log files to be dumped."},
	{"help", "", "Print usage information."},
	{"index-sanity-check", "", "If set, just checks the index sanity without printing its content. This is the same check that is executed on broker startup to determine if an index needs rebuilding or not."},
	{"key-decoder-class", " [String]", "If set, used to deserialize the keys. This class should implement org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs directory. (default: org.apache.kafka.tools.api.StringDecoder)"},
	{"max-bytes", " <Integer: size>", "Limit the amount of total batches read in bytes avoiding reading the whole .log file(s). (default: 2147483647)"},
	{"max-message-size", " <Integer: size>", "Size of largest message. (default: 5242880)"},
	{"offsets-decoder", "", "If set, log data will be parsed as offset data from the __consumer_offsets topic."},
	{"print-data-log", "", "If set, printing the messages content when dumping data logs. Automatically set if any decoder option is specified."},
	{"remote-log-metadata-decoder", "", "If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) metadata records. Instead, the value-decoder-class option can be used if a custom RLMM implementation is configured."},
	{"share-group-state-decoder", "", "If set, log data will be parsed as share group state data from the __share_group_state topic."},
	{"skip-record-metadata", "", "Skip metadata when printing records. This flag also skips control records."},
	{"transaction-log-decoder", "", "If set, log data will be parsed as transaction metadata from the __transaction_state topic."},
	{"value-decoder-class", " [String]", "If set, used to deserialize the messages. This class should implement org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs directory. (default: org.apache.kafka.tools.api.StringDecoder)"},
	{"verify-index-only", "", "If set, just verify the index log without printing its content."},
	{"version", "", "Display Kafka version."},
}

// kafkaDumpLogHelp is the usage parser.printHelpOn prints: jopt-simple's
// BuiltinHelpFormatter (80 columns, 2 between them), options sorted by
// name, each column as wide as its widest cell (the options' at most
// 39), descriptions wrapped with a two-space indent, every cell padded
// with spaces. kseg breaks lines after spaces and hyphens, as Java's line
// BreakIterator does for this text. fs must have every option listed.
func kafkaDumpLogHelp(fs *pflag.FlagSet) string {
	const overall, sep = 80, 2
	type row struct{ opt, desc string }
	rows := []row{{"Option", "Description"}, {"------", "-----------"}}
	for _, o := range kafkaDumpLogOptions {
		if fs.Lookup(o.name) == nil {
			panic("kafka-dump-log has no --" + o.name)
		}
		rows = append(rows, row{"--" + o.name + o.arg, o.desc})
	}
	widths := func(rs []row) (int, int) {
		var wo, wd int
		for _, r := range rs {
			wo, wd = max(wo, len(r.opt)), max(wd, len(r.desc))
		}
		wo = min((overall-sep)/2, wo)
		return wo, min(overall-wo-sep, wd)
	}
	ow, dw := widths(rows)
	var fitted []row
	for _, r := range rows {
		opts, descs := joptPieces(r.opt, ow), joptPieces(r.desc, dw)
		for i := 0; i < len(opts) || i < len(descs); i++ {
			var f row
			if i < len(opts) {
				f.opt = opts[i]
			}
			if i < len(descs) {
				f.desc = descs[i]
			}
			fitted = append(fitted, f)
		}
	}
	ow, dw = widths(fitted)
	var b strings.Builder
	for _, r := range fitted {
		b.WriteString(r.opt + strings.Repeat(" ", max(0, ow-len(r.opt))) + strings.Repeat(" ", sep))
		b.WriteString(r.desc + strings.Repeat(" ", max(0, dw-len(r.desc))) + "\n")
	}
	return b.String()
}

// joptPieces is jopt's Columns.piecesOf for one line of text: words added
// while they fit, then a new piece indented by two spaces.
func joptPieces(s string, width int) []string {
	var pieces []string
	piece := ""
	for _, w := range lineWords(strings.TrimSpace(s)) {
		if len(piece)+len(w) > width {
			pieces = append(pieces, strings.TrimRight(piece, " "))
			piece = "  " + w
			continue
		}
		piece += w
	}
	if piece != "" {
		pieces = append(pieces, piece)
	}
	return pieces
}

// lineWords cuts s where a line may break: after a run of spaces, and
// after a hyphen inside a word.
func lineWords(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ' && (i+1 == len(s) || s[i+1] != ' '):
			out = append(out, s[start:i+1])
			start = i + 1
		case s[i] == '-' && i > start && i+1 < len(s) && isWordByte(s[i-1]) && isWordByte(s[i+1]):
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
