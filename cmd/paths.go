package cmd

import (
	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/inputs"
)

// A partition directory's name is its identity: the broker parses
// <topic>-<partition> from it (UnifiedLog.parseTopicPartitionName), and so
// does every kseg command that reads a topic, names a partition, or refuses
// a directory that is not one. "." (an operator inside the partition
// directory), "..", "orders-0/." and a directory reached through a
// symbolic link have no such name as written; realPath gives each the
// directory's real name before any command sees it, so that
// "cd /var/lib/kafka/data/orders-0 && kseg inject-barrier ." is the same
// command as "kseg inject-barrier /var/lib/kafka/data/orders-0".

// pathArgsFrom is, for each command of the root, the index of its first
// positional argument that is a path (explain's first is OFFSET); every
// argument from there on is one. finishTree resolves them before the
// command runs.
var pathArgsFrom = map[string]int{
	"dump": 0, "explain": 1, "replay-psm": 0, "inject-barrier": 0, "verify-chain": 0,
	"mirror": 0, "repair": 0, "groups": 0, "txns": 0, "metadata": 0, "docs": 0,
	"check": 0, "digest": 0, "restore": 0, "status": 0, "verify-mm2": 0,
}

// resolvePathArgs makes the commands of pathArgsFrom resolve their path
// arguments before they run (finishTree).
func resolvePathArgs(c *cobra.Command) {
	from, ok := pathArgsFrom[c.Name()]
	if !ok || c.Parent() == nil || c.Parent().HasParent() || c.RunE == nil {
		return
	}
	run := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		return run(c, inputs.RealPaths(args, from))
	}
}
