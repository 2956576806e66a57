package cmd

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/decode"
)

// kafka-dump-log's own command line (DumpLogSegments of Kafka 4.3, the
// Java port KAFKA-14579; formats.md §9.1), accepted by `kseg dump` as
// hidden aliases and taken as is by `kseg kafka-dump-log`.

// kafkaSpellings holds the kafka-dump-log options that have no kseg
// flag of the same name.
type kafkaSpellings struct {
	files          []string
	maxMessageSize int
}

// addKafkaSpellings registers kafka-dump-log's spellings on dump as hidden
// aliases of dump's flags, so that `kseg dump -o kafka` takes a
// kafka-dump-log command line unchanged.
func (k *kafkaSpellings) addAliases(c *cobra.Command, o *dumpOptions) {
	f := c.Flags()
	f.BoolVar(&o.deep, "deep-iteration", false, "kafka-dump-log spelling of --deep")
	f.BoolVar(&o.printData, "print-data-log", false, "kafka-dump-log spelling of --print-data")
	f.BoolVar(&o.verifyIndex, "verify-index-only", false, "kafka-dump-log spelling of --verify-index")
	f.StringArrayVar(&k.files, "files", nil, "kafka-dump-log spelling: comma-separated files, added to PATH...")
	f.IntVar(&k.maxMessageSize, "max-message-size", 5*1024*1024, "kafka-dump-log option; accepted and unused (kseg reads each indexed batch header directly)")
	for _, n := range []string{"deep-iteration", "print-data-log", "verify-index-only", "files", "max-message-size"} {
		_ = f.MarkHidden(n)
	}
}

// paths splits --files as kafka-dump-log does: on ",", without trimming.
func (k *kafkaSpellings) paths() []string {
	var out []string
	for _, f := range k.files {
		out = append(out, strings.Split(f, ",")...)
	}
	return out
}

// kafkaDumpsFile reports whether kafka-dump-log dumps a file rather than
// printing "Ignoring unknown file": DumpLogSegments dispatches on the name
// from its last "." (.log, .checkpoint, .index, .timeindex, .snapshot,
// .txnindex), so partition.metadata, meta.properties,
// leader-epoch-checkpoint (no dot at all), quorum-state and renamed files
// (.deleted, .cleaned, .swap) are ignored.
func kafkaDumpsFile(path string) bool {
	name := filepath.Base(path)
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return false
	}
	switch name[i:] {
	case ".log", ".checkpoint", ".index", ".timeindex", ".snapshot", ".txnindex":
		return true
	}
	return false
}

// newKafkaDumpLogCmd is `kseg kafka-dump-log`: kafka-dump-log.sh's command
// line, options and output, for scripts that call it.
func newKafkaDumpLogCmd(s *Streams, g *globalOptions) *cobra.Command {
	o := &dumpOptions{name: "kafka-dump-log"}
	k := &kafkaSpellings{}
	var maxBytes int64
	c := &cobra.Command{
		// Hidden: it keeps Kafka's conventions (exit 1 for a bad option,
		// exit 0 after findings) rather than kseg's, so it stays out of
		// the command list; docs/kafka-dump-log.md documents it.
		Hidden: true,
		Use:    "kafka-dump-log --files FILE[,FILE...] [options]",
		Short:  "kafka-dump-log.sh's command line and output (Kafka 4.3's DumpLogSegments)",
		Long: `Takes exactly kafka-dump-log.sh's options (Kafka 4.3, the Java DumpLogSegments)
and prints what it prints: the same as kseg dump --output kafka, with Kafka's
option names. See docs/kafka-dump-log.md for each option.

EXIT STATUS
  0  the files were dumped (as in Kafka, a CRC mismatch or an index
     mismatch is reported in the output and is not a failure)
  1  an I/O error, a missing --files, or a bad option (Kafka exits 1 too)
`,
		Example: `  kseg kafka-dump-log --files 00000000000000000000.log
  kseg kafka-dump-log --deep-iteration --print-data-log --files 00000000000000000000.log
  kseg kafka-dump-log --cluster-metadata-decoder --files __cluster_metadata-0/00000000000000000000.log
  kseg kafka-dump-log --offsets-decoder --files __consumer_offsets-7/00000000000000000000.log`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			files := k.paths()
			if len(files) == 0 {
				// CommandLineUtils.checkRequiredArgs: the message, then
				// the usage, on stderr; exit 1.
				fmt.Fprintf(s.Err, "Missing required argument \"[files]\"\n%s", c.UsageString())
				return &exitError{code: ExitError, silent: true}
			}
			// --max-bytes: Kafka slices the file to N bytes; its default
			// (Integer.MAX_VALUE) is kseg's "whole file", and it prints
			// "Found N invalid bytes" only at the default.
			if maxBytes < 0 {
				return &exitError{code: ExitError, err: fmt.Errorf("--max-bytes %d: must not be negative", maxBytes)}
			}
			if maxBytes != math.MaxInt32 {
				o.maxBytes = maxBytes
			}
			o.output = "kafka"
			o.keyFormat, o.valueFormat = "utf8", "utf8"
			o.producerID = -2
			o.maxDecompressed = decode.DefaultMaxDecompressed
			o.noResync = true
			o.jobs = 1
			if err := o.Validate(files); err != nil {
				return &exitError{code: ExitError, err: err}
			}
			err := runDump(c.Context(), s, g, o, files)
			// Kafka exits 0 after printing isvalid: false or index
			// mismatches; only failures (exit 1) remain failures.
			if exitCode(err) == ExitFindings {
				return nil
			}
			return err
		},
	}
	f := c.Flags()
	f.StringArrayVar(&k.files, "files", nil, "REQUIRED: the data and index log files to be dumped, comma-separated")
	f.BoolVar(&o.deep, "deep-iteration", false, "if set, uses deep instead of shallow iteration; implied by --print-data-log")
	f.BoolVar(&o.printData, "print-data-log", false, "if set, printing the messages content when dumping data logs; set automatically by any decoder option")
	f.BoolVar(&o.verifyIndex, "verify-index-only", false, "if set, just verify the index log without printing its content")
	f.BoolVar(&o.indexSanityCheck, "index-sanity-check", false, "if set, just checks the index sanity without printing its content")
	f.IntVar(&k.maxMessageSize, "max-message-size", 5*1024*1024, "size of the largest message (accepted; kseg needs no bound)")
	f.Int64Var(&maxBytes, "max-bytes", math.MaxInt32, "limit the amount of total batches read in bytes, avoiding reading the whole .log file(s)")
	f.BoolVar(&o.skipRecordMeta, "skip-record-metadata", false, "skip metadata when printing records; this flag also skips control records")
	o.dec.addFlags(c)
	_ = f.MarkHidden("no-decode-internal")
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitError, err: err}
	})
	return c
}
