package segment_test

import (
	"testing"

	"github.com/kseg/kseg/segment"
)

// openLog opens the log at path for tb, closed when tb ends.
func openLog(tb testing.TB, path string) *segment.LogFile {
	tb.Helper()
	lf, err := segment.OpenLog(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { lf.Close() })
	return lf
}
