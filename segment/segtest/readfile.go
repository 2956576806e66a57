package segtest

import (
	"os"
	"testing"
)

// ReadFile is the content of path; a failure to read it ends tb.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
