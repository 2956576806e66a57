package ui

import (
	"context"

	"github.com/spf13/cobra"
)

// Options are a command's options (STYLE pattern 2): the flags they add
// to the command, and the check of those flags and the arguments made
// before anything is read.
type Options interface {
	AddFlags(c *cobra.Command)
	Validate(c *cobra.Command, args []string) error
}

// NewCommand finishes a command the way every command is built: its RunE
// validates the options and the arguments (a usage error, exit 2, before
// anything is read), stops when the context is already done (a signal
// while the flags were parsed), and then runs; the options add their
// flags to c.
func NewCommand[O Options](c *cobra.Command, s *Streams, o O, run func(ctx context.Context, s *Streams, o O, args []string) error) *cobra.Command {
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := o.Validate(c, args); err != nil {
			return err
		}
		ctx := c.Context()
		if err := ctx.Err(); err != nil {
			return err
		}
		return run(ctx, s, o, args)
	}
	o.AddFlags(c)
	return c
}

// AddOutputFlag adds -o/--output: text (the default: stable lines when
// piped, a table on a terminal), table or json, the formats of every
// command but dump and check.
func AddOutputFlag(c *cobra.Command, p *string) {
	c.Flags().StringVarP(p, "output", "o", "text", "output format: text|table|json")
}

// ValidateOutput checks an --output AddOutputFlag added.
func ValidateOutput(o string) error {
	switch o {
	case "text", "table", "json":
		return nil
	}
	return UsageErrorf("--output must be text, table or json, not %q", o)
}
