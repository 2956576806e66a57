// Package cmd assembles kseg's command tree: each command is a package
// below it (cmd/<command>: its options, run function, printers and tests,
// sharing cmd/internal's output toolkit), and this package adds them under
// the root, with the global flags (--color, -q, -v), the behaviour every
// command shares (usage errors exit 2, help ends with EXIT STATUS, path
// arguments name their real directory, flag values complete) and the
// mapping of an error to the exit code (Main, Run). The commands are the
// only code that prints or decides exit codes; the domain packages
// (decode, segment, psm, barrier) never do.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/check"
	"github.com/kseg/kseg/cmd/completion"
	"github.com/kseg/kseg/cmd/digest"
	"github.com/kseg/kseg/cmd/docs"
	"github.com/kseg/kseg/cmd/dump"
	"github.com/kseg/kseg/cmd/explain"
	"github.com/kseg/kseg/cmd/groups"
	"github.com/kseg/kseg/cmd/injectbarrier"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/kafkadumplog"
	"github.com/kseg/kseg/cmd/metadata"
	"github.com/kseg/kseg/cmd/mirror"
	"github.com/kseg/kseg/cmd/repair"
	"github.com/kseg/kseg/cmd/replaypsm"
	"github.com/kseg/kseg/cmd/restore"
	"github.com/kseg/kseg/cmd/status"
	"github.com/kseg/kseg/cmd/txns"
	"github.com/kseg/kseg/cmd/verifychain"
	"github.com/kseg/kseg/cmd/verifymm2"
	"github.com/kseg/kseg/cmd/version"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	color   string
	quiet   bool
	verbose bool
}

// Main runs kseg with the process's arguments and streams and returns the
// exit code.
func Main() int {
	return Run(context.Background(), os.Args[1:], ui.NewStdStreams())
}

// Run executes the command tree in-process; tests call it directly.
func Run(ctx context.Context, args []string, s *ui.Streams) int {
	return runRoot(ctx, NewRootCmd(s), dump.JoinOptionalArgs(args), s)
}

// runRoot executes root with args and maps the outcome to an exit code,
// printing the error (and, for usage errors, where to find help).
func runRoot(ctx context.Context, root *cobra.Command, args []string, s *ui.Streams) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if s.Format != nil {
		if ferr := s.Format.Flush(); err == nil {
			err = ferr
		}
	}
	if err == nil {
		return ui.ExitOK
	}
	err = classifyError(cmd, err)
	var ee *ui.ExitCodeError
	if !errors.As(err, &ee) || !ee.Silent {
		fmt.Fprintln(s.Err, "kseg: "+ui.EscMessage(err.Error()))
	}
	code := ui.ExitCode(err)
	if code == ui.ExitUsage && cmd != nil && (ee == nil || !ee.NoHelp) {
		fmt.Fprintf(s.Err, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// classifyError gives the errors cobra raises itself an exit code. Unknown
// flags, bad flag values, wrong argument counts and unknown commands are
// already exitErrors (SetFlagErrorFunc and the Args wrapping done by
// finishTree); what is left are the required-flag and flag-group checks,
// which cobra runs after PreRunE with no hook. They are recognised by
// running the same check again on the command that failed, not by matching
// message text.
func classifyError(cmd *cobra.Command, err error) error {
	var ee *ui.ExitCodeError
	if errors.As(err, &ee) || cmd == nil {
		return err
	}
	for _, check := range []func() error{cmd.ValidateRequiredFlags, cmd.ValidateFlagGroups} {
		if again := check(); again != nil && again.Error() == err.Error() {
			return &ui.ExitCodeError{Code: ui.ExitUsage, Err: err}
		}
	}
	return err
}

// NewRootCmd builds the whole command tree around s.
func NewRootCmd(s *ui.Streams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "kseg",
		Short: "Inspect, verify and repair Kafka partition directories offline",
		Long: `kseg opens Apache Kafka partition directories offline and tells the truth about
them: every file decoded byte-exact, producer state rebuilt as the broker's log
recovery does, and failover repairs (KIP-1279 MIRROR_PID_RESET barriers) done
safely.

Every command reads flags the same way: --output picks text, table or json
(dump adds kafka); --color auto colours only a terminal and honours NO_COLOR,
CLICOLOR=0 and CLICOLOR_FORCE; -q/--quiet silences the progress line and
the text and table summaries, and leaves errors and "kseg: warning:" lines
on stderr (JSON keeps its summary records, which are data). Data goes to
stdout, diagnostics and the progress line (shown only on a terminal, for
work over about a second) to stderr. Plans and reports (every command but
dump, explain and kafka-dump-log, which print every batch) summarise long
lists in text and table: the first and last few items, and how many are
left out; their -v/--verbose lists every item, and json always does.
` + ui.ExitStatusHelp,
		Example: `  kseg dump testdata/partitions/orders-0
  kseg dump --output json --deep /var/lib/kafka/data/orders-0 | jq .
  kseg explain 5 testdata/partitions/txn-0
  kseg replay-psm --check-snapshots /var/lib/kafka/data/orders-0
  kseg help dump`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			switch g.color {
			case "auto", "always", "never":
			default:
				return ui.UsageErrorf("--color must be auto, always or never, not %q", g.color)
			}
			if err := checkVerbose(c); err != nil {
				return err
			}
			s.ResolveColor(g.color)
			s.Verbose, s.Quiet = g.verbose, g.quiet
			return ui.ApplyOutputFlags(c, s)
		},
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	root.PersistentFlags().StringVar(&g.color, "color", "auto", "colour output: auto|always|never (auto honours TTY, NO_COLOR, CLICOLOR, CLICOLOR_FORCE)")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "no progress line and no summaries; errors and warnings still go to stderr")
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.HiddenDefaultCmd = false
	root.Version = version.String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(
		dump.NewCmd(s),
		kafkadumplog.NewCmd(s),
		explain.NewCmd(s),
		version.NewCmd(s),
		docs.NewCmd(s),
		replaypsm.NewCmd(s),
		injectbarrier.NewCmd(s),
		verifychain.NewCmd(s),
		verifymm2.NewCmd(s),
		digest.NewCmd(s),
		mirror.NewCmd(s),
		repair.NewCmd(s),
		restore.NewCmd(s),
		groups.NewCmd(s),
		txns.NewCmd(s),
		metadata.NewCmd(s),
		status.NewCmd(s),
		check.NewCmd(s, SnapshotCheck),
	)
	addVerboseFlags(root, &g.verbose)
	finishTree(root)
	return root
}

// usageArgs wraps a cobra positional-args validator so that its failure
// exits with the usage code. finishTree applies it to every command, so a
// command need not (but may) wrap its own Args.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		err := v(c, args)
		var ee *ui.ExitCodeError
		if err == nil || errors.As(err, &ee) {
			return err
		}
		return &ui.ExitCodeError{Code: ui.ExitUsage, Err: argsError(c, args, err)}
	}
}

// finishTree makes the whole command tree behave alike, whoever wrote each
// command: cobra's help and completion commands are created now (cobra
// would otherwise add them lazily at Execute, out of reach), every
// positional-args check exits 2, a command group given an unknown
// subcommand exits 2 instead of printing help and exiting 0, every help
// text ends with EXIT STATUS, and generated docs carry no date stamp.
func finishTree(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			finishHelpCmd(c)
		case "completion":
			completion.Finish(c)
		}
	}
	ui.WalkCommands(root, func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		ui.AddWideChoice(c)
		ui.AddFormatFlags(c)
		completion.FlagValues(c)
		if c.HasSubCommands() && !c.Runnable() {
			// A group ("kseg", "kseg completion") run with an argument that
			// names no subcommand: cobra's legacyArgs reports this only for
			// the root, and only when Args is nil; a non-runnable group
			// prints help and exits 0. Make groups runnable: help without
			// arguments, a usage error otherwise.
			c.Args = unknownSubcommand
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = cobra.NoFileCompletions
			}
		}
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
		resolvePathArgs(c)
		if !strings.Contains(c.Long, "EXIT STATUS") {
			long := c.Long
			if long == "" {
				long = c.Short + "."
			}
			c.Long = strings.TrimRight(long, "\n") + "\n" + ui.ExitStatusHelp
		}
		if i := strings.Index(c.Long, "EXIT STATUS"); i >= 2 && c.Long[i-2] != '\n' {
			c.Long = c.Long[:i] + "\n" + c.Long[i:] // a blank line before the heading
		}
		if summarising[c.Name()] && !strings.Contains(c.Long, "\nOUTPUT\n") {
			i := strings.Index(c.Long, "EXIT STATUS")
			c.Long = c.Long[:i] + outputHelp + c.Long[i:]
		}
	})
}

// unknownSubcommand is the Args check of a command group: any argument is
// an unknown command, reported with cobra's wording and suggestions.
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if !c.DisableSuggestions {
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2
		}
		if sug := c.SuggestionsFor(args[0]); len(sug) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(sug, "\n\t")
		}
	}
	return &ui.ExitCodeError{Code: ui.ExitUsage, Err: errors.New(msg)}
}

// finishHelpCmd makes "kseg help NOSUCH" a usage error; cobra's own help
// command prints "Unknown help topic" and exits 0.
func finishHelpCmd(h *cobra.Command) {
	run := h.Run
	h.Run = nil
	h.Example = "  kseg help dump\n  kseg help completion bash"
	h.RunE = func(c *cobra.Command, args []string) error {
		target, rest, err := c.Root().Find(args)
		if err == nil && target != nil && len(args) > 0 && len(rest) > 0 && target.HasSubCommands() {
			err = unknownSubcommand(target, rest)
		}
		if err != nil {
			return &ui.ExitCodeError{Code: ui.ExitUsage, Err: fmt.Errorf("unknown help topic %q: %w", strings.Join(args, " "), err)}
		}
		run(c, args)
		return nil
	}
}
