// Package cmd is kseg's command tree: it parses flags, calls the domain
// packages (decode, segment, psm, barrier) and renders their results. It is
// the only package that prints or decides exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	color string
	quiet bool
}

// Main runs kseg with the process's arguments and streams and returns the
// exit code.
func Main() int {
	return Run(context.Background(), os.Args[1:], NewStdStreams())
}

// Run executes the command tree in-process; tests call it directly.
func Run(ctx context.Context, args []string, s *Streams) int {
	root := NewRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || !ee.silent {
			fmt.Fprintln(s.Err, "kseg: "+err.Error())
		}
		if !errors.As(err, &ee) && isUsageError(err) {
			return ExitUsage
		}
	}
	return exitCode(err)
}

// isUsageError recognises cobra's own argument and command errors, which it
// returns as plain errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// NewRootCmd builds the whole command tree around s.
func NewRootCmd(s *Streams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "kseg",
		Short: "Inspect, verify and repair Kafka partition directories offline",
		Long: `kseg opens Apache Kafka partition directories offline and tells the truth about
them: every file decoded byte-exact, producer state rebuilt as the broker's log
recovery does, and failover repairs (KIP-1279 MIRROR_PID_RESET barriers) done
safely.` + exitStatusHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			switch g.color {
			case "auto", "always", "never":
			default:
				return usageErrorf("--color must be auto, always or never, not %q", g.color)
			}
			s.resolveColor(g.color)
			return nil
		},
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	root.PersistentFlags().StringVar(&g.color, "color", "auto", "colour output: auto|always|never (auto honours TTY, NO_COLOR, CLICOLOR, CLICOLOR_FORCE)")
	root.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print nothing but data and errors (no progress, no summaries on stderr)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: err}
	})
	root.CompletionOptions.HiddenDefaultCmd = false
	root.AddCommand(
		newDumpCmd(s, g),
		newExplainCmd(s, g),
		newVersionCmd(s, g),
		newReplayPSMCmd(s, g),
		newInjectBarrierCmd(s, g),
	)
	return root
}

// usageArgs wraps a cobra positional-args validator so that its failure
// exits with the usage code.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := v(c, args); err != nil {
			return &exitError{code: ExitUsage, err: err}
		}
		return nil
	}
}
