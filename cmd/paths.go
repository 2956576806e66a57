package cmd

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/segment"
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

// realPath returns path with its last element made the real name of what
// it names: a path ending in "." or ".." becomes the absolute path (with
// symbolic links resolved, unless its last element already names a
// partition); a symbolic link whose own name is not a
// partition directory's, the path it resolves to. Any other path, and any
// path that cannot be resolved (it does not exist yet: mirror's DST), is
// returned as given, so that messages quote the user's words.
func realPath(path string) string {
	if path == "" {
		return path
	}
	clean := filepath.Clean(path)
	switch filepath.Base(clean) {
	case ".", "..":
		abs, err := filepath.Abs(clean)
		if err != nil {
			return path
		}
		// The working directory as the shell reached it ($PWD, which
		// os.Getwd prefers) when that is a partition's name; else where
		// its symbolic links lead.
		if real, err := filepath.EvalSymlinks(abs); err == nil && !isPartitionName(abs) {
			return real
		}
		return abs
	}
	if last := filepath.Base(path); last == "." || last == ".." {
		return clean // "orders-0/." is orders-0
	}
	if real, err := filepath.EvalSymlinks(clean); err == nil && filepath.Base(real) != filepath.Base(clean) && !isPartitionName(clean) && isPartitionName(real) {
		return real
	}
	return path
}

// isPartitionName: the last element of path is <topic>-<partition> (live,
// -delete, -future or -stray alike).
func isPartitionName(path string) bool {
	_, ok := segment.ParsePartitionDir(filepath.Base(path))
	return ok
}

// realPaths applies realPath to args[from:], in a new slice.
func realPaths(args []string, from int) []string {
	out := append([]string(nil), args...)
	for i := from; i < len(out); i++ {
		out[i] = realPath(out[i])
	}
	return out
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
		return run(c, realPaths(args, from))
	}
}
