package brokertest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestGenerateReproducesTestdata regenerates the example log directories
// and fails unless the committed testdata/logdirs is reproduced byte for
// byte (regenerate with `go run ./testdata/gen`).
func TestGenerateReproducesTestdata(t *testing.T) {
	committed := filepath.Join("..", "..", "..", "testdata", "logdirs")
	tmp := t.TempDir()
	if err := Generate(tmp); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		got, _ := os.ReadFile(p)
		want, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil {
			t.Errorf("%s: generated but not committed (%v)", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the committed file; run go run ./testdata/gen", rel)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(committed, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(committed, p)
			if _, err := os.Stat(filepath.Join(tmp, rel)); err != nil {
				t.Errorf("%s: committed but no longer generated", rel)
			}
		}
		return nil
	})
	if seen == 0 {
		t.Fatal("nothing generated")
	}
}
