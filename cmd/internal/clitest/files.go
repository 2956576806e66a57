package clitest

import (
	"os"
	"testing"
)

// Mkdir creates dir and the directories above it (mode 0755), as a test
// sets up a log directory for a command to fill, and returns dir; a
// failure ends tb.
func Mkdir(tb testing.TB, dir string) string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}
