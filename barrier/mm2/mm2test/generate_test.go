package mm2test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// committed is the repository's testdata, seen from this package.
var committed = filepath.Join("..", "..", "..", "testdata")

func tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGenerateReproducesCommitted: go run ./testdata/gen writes
// testdata/mm2 byte for byte as committed, twice the same, and small.
func TestGenerateReproducesCommitted(t *testing.T) {
	if _, err := os.Stat(filepath.Join(committed, "mm2")); err != nil {
		t.Fatalf("committed fixtures missing: %v (run go run ./testdata/gen from the repository root)", err)
	}
	out := t.TempDir()
	if err := Generate(out); err != nil {
		t.Fatal(err)
	}
	got := tree(t, filepath.Join(out, "mm2"))
	want := tree(t, filepath.Join(committed, "mm2"))
	compare(t, got, want)
	out2 := t.TempDir()
	if err := Generate(out2); err != nil {
		t.Fatal(err)
	}
	compare(t, tree(t, filepath.Join(out2, "mm2")), got)
	var total int
	for _, b := range got {
		total += len(b)
	}
	if total > 256<<10 {
		t.Errorf("the MM2 fixtures total %d bytes; keep them small", total)
	}
}

func compare(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		g, okG := got[n]
		w, okW := want[n]
		switch {
		case !okG:
			t.Errorf("%s: committed but not generated", n)
		case !okW:
			t.Errorf("%s: generated but not committed (go run ./testdata/gen)", n)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %d bytes generated differ from the %d committed (go run ./testdata/gen)", n, len(g), len(w))
		}
	}
}
