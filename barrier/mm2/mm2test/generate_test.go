package mm2test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
)

// committed is the repository's testdata, seen from this package.
var committed = filepath.Join("..", "..", "..", "testdata")

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
	got := barriertest.SnapDir(t, filepath.Join(out, "mm2"))
	if d := barriertest.DiffSnaps(barriertest.SnapDir(t, filepath.Join(committed, "mm2")), got, false); len(d) > 0 {
		t.Errorf("the generated MM2 fixtures differ from the committed ones (go run ./testdata/gen): %s", strings.Join(d, ", "))
	}
	out2 := t.TempDir()
	if err := Generate(out2); err != nil {
		t.Fatal(err)
	}
	if d := barriertest.DiffSnaps(got, barriertest.SnapDir(t, filepath.Join(out2, "mm2")), false); len(d) > 0 {
		t.Errorf("a second run generates other MM2 fixtures: %s", strings.Join(d, ", "))
	}
	var total int64
	for _, f := range got {
		total += f.Size
	}
	if total > 256<<10 {
		t.Errorf("the MM2 fixtures total %d bytes; keep them small", total)
	}
}
