// Package decodetest is what the tests of decode's subpackages (mm2,
// schema) share to read the real broker fixtures (../shared/fixtures/real
// beside the repository): the files a test wants from them, and every
// record of a segment, as a consumer of the log sees it.
package decodetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// RealFiles walks the real fixtures (../shared/fixtures/real beside the
// repository, found from the test's package directory whatever its depth)
// and files each file under the key class gives it; class returns false
// for a file the test does not want. It skips t when the fixtures are
// absent, so that a bare clone passes.
func RealFiles[K comparable](t testing.TB, class func(path string) (K, bool)) map[K][]string {
	t.Helper()
	root := testkit.RealRootOrSkip(t)
	out := map[K][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if k, ok := class(p); ok {
			out[k] = append(out[k], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// EachRecord calls fn with every record of every data batch (control
// batches left out) of the segment (or KRaft snapshot) at path, in order,
// up to the first bytes that are not a batch (a torn or preallocated
// tail). The record's slices are valid only during the call. The file is
// read whole: the fixtures are small, and decode sits below the segment
// package that frames larger files.
func EachRecord(t testing.TB, path string, fn func(r *decode.Record)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dec decode.Decoder
	for pos := 0; pos < len(raw); {
		b, err := decode.ParseBatch(raw[pos:])
		if err != nil {
			return
		}
		pos += int(b.Size())
		if b.IsControl() {
			continue
		}
		if err := dec.Records(&b, func(r *decode.Record) error {
			fn(r)
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}
