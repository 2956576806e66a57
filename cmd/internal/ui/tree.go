package ui

import "github.com/spf13/cobra"

// WalkCommands calls fn on c and every command below it.
func WalkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		WalkCommands(sub, fn)
	}
}
