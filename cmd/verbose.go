package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// summarising are the commands whose text and table printers summarise:
// addVerboseFlags gives them -v/--verbose and finishTree puts outputHelp in
// their help, before EXIT STATUS.
//
// -v has one meaning in kseg: --verbose. It is a flag of each summarising
// command (shown in its help), and a hidden persistent flag of the root, so
// that "kseg -v replay-psm DIR" means what "kseg replay-psm -v DIR" means
// (cobra hands a flag written before the subcommand to the subcommand's
// flag set). Given to any other command — dump, explain and
// kafka-dump-log print every batch anyway; version, docs, help and
// completion have no list to summarise — or to kseg alone, it is a usage
// error (checkVerbose), before or after the subcommand alike: a CI step
// written "kseg -v replay-psm DIR" must not print the version and exit 0,
// as cobra's default -v shorthand for --version made it do. The version is
// --version (or kseg version), with no shorthand.
var summarising = map[string]bool{
	"inject-barrier": true, "mirror": true, "repair": true, "verify-chain": true,
	"replay-psm": true, "groups": true, "txns": true, "metadata": true,
	"status": true, "verify-mm2": true,
}

// verboseUsage is -v/--verbose's help line.
const verboseUsage = "text and table list every item instead of the first and last few of a long list (json always does)"

// addVerboseFlags adds -v/--verbose to the summarising commands under root
// and, hidden, to the root as a persistent flag; the root's
// PersistentPreRunE checks it (checkVerbose) and copies it to
// Streams.verbose.
func addVerboseFlags(root *cobra.Command, verbose *bool) {
	root.PersistentFlags().BoolVarP(verbose, "verbose", "v", false, verboseUsage)
	_ = root.PersistentFlags().MarkHidden("verbose")
	for _, c := range root.Commands() {
		if summarising[c.Name()] {
			c.Flags().BoolVarP(verbose, "verbose", "v", false, verboseUsage)
		}
	}
}

// checkVerbose refuses -v/--verbose on a command that does not summarise.
func checkVerbose(c *cobra.Command) error {
	f := c.Flags().Lookup("verbose")
	if f == nil || !f.Changed || c.LocalNonPersistentFlags().Lookup("verbose") != nil {
		// Not given, or a flag of the command itself: a summarising
		// command's (addVerboseFlags), or one a command defines with its
		// own meaning (check: list the expected findings too).
		return nil
	}
	if !c.HasParent() {
		return ui.UsageErrorf("-v is --verbose, a flag of %s; the version is kseg --version", summarisingList(c))
	}
	return ui.UsageErrorf("-v/--verbose is not a flag of %s: it is a flag of %s (the version is kseg --version)",
		c.CommandPath(), summarisingList(c))
}

// summarisingList names the commands of c's tree that have a -v/--verbose
// of their own, sorted: the summarising ones, and check.
func summarisingList(c *cobra.Command) string {
	var names []string
	for _, sub := range c.Root().Commands() {
		if sub.LocalNonPersistentFlags().Lookup("verbose") != nil {
			names = append(names, sub.Name())
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// outputHelp is the OUTPUT section of their help.
var outputHelp = fmt.Sprintf(`OUTPUT
  Text and table summarise what can grow without bound: a list longer than
  %d items shows its first %d and last %d, with a line "… K more … (N in all;
  --verbose lists them) …" between them, and a finding kind reported more
  than %d times shows its first %d findings and "… and K more KIND findings".
  -v/--verbose prints every item; json always does.

`, ui.ListWhole, ui.ListHead, ui.ListTail, ui.KindWhole, ui.KindHead)
