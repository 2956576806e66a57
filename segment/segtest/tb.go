package segtest

// Helpers for tests: a step that cannot go wrong in a healthy test ends it
// when it does.

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
)

// OpenLog opens the log at path for tb, closed when tb ends; a failure
// ends tb.
func OpenLog(tb testing.TB, path string) *segment.LogFile {
	tb.Helper()
	lf := testkit.Must(tb, segment.OpenLog, path)
	tb.Cleanup(func() { lf.Close() })
	return lf
}

// OpenLogDirPartition writes LogDir's bench-0 alone, of about size bytes,
// in a temporary directory of tb and opens it; a failure ends tb.
func OpenLogDirPartition(tb testing.TB, size int64, opts LargeOptions) *segment.PartitionDir {
	tb.Helper()
	ld := tb.TempDir()
	if err := LogDir(ld, 1, size, opts); err != nil {
		tb.Fatal(err)
	}
	return OpenDir(tb, filepath.Join(ld, "bench-0"))
}

// OpenDir opens the partition directory dir (segment.OpenPartitionDir),
// failing tb when it does not open.
func OpenDir(tb testing.TB, dir string) *segment.PartitionDir {
	tb.Helper()
	return testkit.Must(tb, segment.OpenPartitionDir, dir)
}
