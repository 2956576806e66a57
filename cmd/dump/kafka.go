package dump

import (
	"strings"

	"github.com/spf13/cobra"
)

// kafka-dump-log's own command line (DumpLogSegments of Kafka 4.3, the
// Java port KAFKA-14579; formats.md §9.1), accepted by `kseg dump` as
// hidden aliases; `kseg kafka-dump-log` (cmd/kafkadumplog) takes it as is.

// KafkaSpellings holds the kafka-dump-log options that have no kseg
// flag of the same name, and what kseg kafka-dump-log derives from its
// own options for the places where DumpLogSegments throws
// (segment/scan/dumplog.go).
type KafkaSpellings struct {
	Files          []string
	MaxMessageSize int

	// What kseg kafka-dump-log derives from --max-bytes for the places
	// where DumpLogSegments throws is in the engine's options
	// (scan.Options.LogArgError, NegativeMaxBytes, RawMaxBytes).
}

// kafkaOnly are the kafka-dump-log options that have no kseg flag of
// the same name, in the words of dump's hidden aliases.
var kafkaOnly = map[string]string{
	"deep-iteration":    "kafka-dump-log spelling of --deep",
	"print-data-log":    "kafka-dump-log spelling of --print-data",
	"verify-index-only": "kafka-dump-log spelling of --verify-index",
	"files":             "kafka-dump-log spelling: comma-separated files, added to PATH...",
	"max-message-size":  "kafka-dump-log option; accepted and unused (kseg reads each indexed batch header directly)",
}

// addAliases registers kafka-dump-log's spellings on dump as hidden
// aliases of dump's flags, so that `kseg dump -o kafka` takes a
// kafka-dump-log command line unchanged.
func (k *KafkaSpellings) addAliases(c *cobra.Command, o *Options) {
	o.AddKafkaOnlyFlags(c, kafkaOnly)
	for n := range kafkaOnly {
		_ = c.Flags().MarkHidden(n)
	}
}

// AddKafkaOnlyFlags adds to c the kafka-dump-log options that have no
// kseg flag of the same name (kafkaOnly), bound to dump's options with
// their DumpLogSegmentsOptions defaults, each with its usage[name]:
// dump's hidden aliases and kseg kafka-dump-log's own options are one
// binding.
func (o *Options) AddKafkaOnlyFlags(c *cobra.Command, usage map[string]string) {
	f, k := c.Flags(), &o.Kafka
	f.BoolVar(&o.Deep, "deep-iteration", false, usage["deep-iteration"])
	f.BoolVar(&o.PrintData, "print-data-log", false, usage["print-data-log"])
	f.BoolVar(&o.VerifyIndex, "verify-index-only", false, usage["verify-index-only"])
	f.StringArrayVar(&k.Files, "files", nil, usage["files"])
	f.IntVar(&k.MaxMessageSize, "max-message-size", 5*1024*1024, usage["max-message-size"])
}

// Paths splits --files as kafka-dump-log does (String.split(",")), each
// occurrence of the flag in turn.
func (k *KafkaSpellings) Paths() []string {
	var out []string
	for _, f := range k.Files {
		out = append(out, javaSplitComma(f)...)
	}
	return out
}

// javaSplitComma is Java's s.split(","): no trimming, and trailing empty
// strings dropped ("a,b," is a and b; "," is nothing), but a string
// without a comma is itself, even when empty.
func javaSplitComma(s string) []string {
	parts := strings.Split(s, ",")
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// optionalArgFlags are the kafka-dump-log options whose argument is
// optional (jopt withOptionalArg): bare, they mean StringDecoder.
var optionalArgFlags = []string{"--key-decoder-class", "--value-decoder-class"}

// JoinOptionalArgs gives the optional-argument options jopt's reading:
// "--key-decoder-class X" takes X as its argument when X does not look like
// an option (OptionalArgumentOptionSpec.detectOptionArgument). pflag takes
// an optional argument only as --flag=X (NoOptDefVal), so the pair is
// joined before parsing.
func JoinOptionalArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, a)
		for _, f := range optionalArgFlags {
			if a == f && i+1 < len(args) && !looksLikeOption(args[i+1]) {
				out[len(out)-1] = a + "=" + args[i+1]
				i++
			}
		}
	}
	return out
}

// looksLikeOption is jopt's OptionParser.looksLikeAnOption: "-x" or "--x".
func looksLikeOption(a string) bool { return len(a) > 1 && a[0] == '-' }
