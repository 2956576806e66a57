package inputs

import (
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// RealPath returns path with its last element made the real name of what
// it names: a path ending in "." or ".." becomes the absolute path (with
// symbolic links resolved, unless its last element already names a
// partition); a symbolic link whose own name is not a
// partition directory's, the path it resolves to. Any other path, and any
// path that cannot be resolved (it does not exist yet: mirror's DST), is
// returned as given, so that messages quote the user's words.
func RealPath(path string) string {
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

// RealPaths applies RealPath to args[from:], in a new slice.
func RealPaths(args []string, from int) []string {
	out := append([]string(nil), args...)
	for i := from; i < len(out); i++ {
		out[i] = RealPath(out[i])
	}
	return out
}
