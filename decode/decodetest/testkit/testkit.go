// Package testkit holds steps tests of every floor repeat: a hex literal
// of wire bytes, a file's content or its first bytes (a fuzz seed), where
// the shared real fixtures are, the peak of the heap while a test runs
// (heap.go). A step that cannot go wrong in a healthy test ends it when it
// does. It imports nothing from kseg, so decode's own internal tests, the
// lowest floor, can use it as well as segment's and cmd's.
package testkit

import (
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RealRoot is the shared real-broker fixtures, ../shared/fixtures/real
// beside the repository, as a path relative to the test's package
// directory whatever its depth (found from the first directory up that
// holds go.mod).
func RealRoot() string {
	up := "."
	for range 8 {
		if _, err := os.Stat(filepath.Join(up, "go.mod")); err == nil {
			break
		}
		up = filepath.Join(up, "..")
	}
	return filepath.Join(up, "..", "shared", "fixtures", "real")
}

// RealRootOrSkip is RealRoot; it skips tb, naming the repository-relative
// path, when the tree is absent, so a bare clone passes.
func RealRootOrSkip(tb testing.TB) string {
	tb.Helper()
	root := RealRoot()
	if _, err := os.Stat(root); err != nil {
		tb.Skip("../shared/fixtures/real (beside the repository) is not present: skipping the real-broker tests")
	}
	return root
}

// Must is f(a); an error from f ends tb: the open, read or decode a test
// takes for granted.
func Must[A, T any](tb testing.TB, f func(A) (T, error), a A) T {
	tb.Helper()
	v, err := f(a)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// MustHex decodes s, hex digits with optional spaces between them (the
// byte groups a spec's worked example shows); bad hex ends tb.
func MustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	return Must(tb, hex.DecodeString, strings.ReplaceAll(s, " ", ""))
}

// ReadFile is the content of path; a failure to read it ends tb.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	return Must(tb, os.ReadFile, path)
}

// WriteFile writes b to path (mode 0644); a failure ends tb.
func WriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReadHead is at most the first n bytes of the file at path: all of a
// shorter file.
func ReadHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	got, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:got], nil
}
