package segtest_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest"
)

// committed is the repository's testdata directory.
var committed = filepath.Join("..", "..", "testdata")

// tree reads every regular file under root/sub, keyed by path relative to root.
func tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, sub := range []string{"partitions", "broken"} {
		err := filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = b
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func compareTrees(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: %s is missing", what, p)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %s differs (%d bytes, want %d)", what, p, len(g), len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s is not expected", what, p)
		}
	}
}

// TestGenerateReproducesCommitted regenerates every fixture into a temporary
// directory and requires the committed testdata/partitions and
// testdata/broken to be byte for byte what the generator writes (run
// `go run ./testdata/gen` after changing the generator).
func TestGenerateReproducesCommitted(t *testing.T) {
	if _, err := os.Stat(filepath.Join(committed, "partitions")); err != nil {
		t.Fatalf("committed fixtures missing: %v (run go run ./testdata/gen from the repository root)", err)
	}
	out := t.TempDir()
	if err := segtest.Generate(out); err != nil {
		t.Fatal(err)
	}
	got := tree(t, out)
	compareTrees(t, "regenerated vs committed", got, tree(t, committed))

	// A second run into another directory gives the same bytes: nothing
	// depends on the clock, map order or the output path.
	out2 := t.TempDir()
	if err := segtest.Generate(out2); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "second run vs first", tree(t, out2), got)

	var total int
	for _, b := range got {
		total += len(b)
	}
	if total > 1<<20 {
		t.Errorf("fixtures total %d bytes; keep them well under 2 MB", total)
	}
	for _, name := range segtest.PartitionNames {
		if _, err := os.Stat(filepath.Join(out, "partitions", name)); err != nil {
			t.Errorf("partition %s not generated: %v", name, err)
		}
	}
	for _, name := range segtest.BrokenNames {
		if _, err := os.Stat(filepath.Join(out, "broken", name, segtest.BrokenPartition)); err != nil {
			t.Errorf("broken sibling %s not generated: %v", name, err)
		}
	}
}

// TestGenerateReplacesOnlyItsOwnDirectories: Generate clears partitions/
// and broken/ but leaves the rest of the output directory alone.
func TestGenerateReplacesOnlyItsOwnDirectories(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(out, "golden", "keep.txt")
	stale := filepath.Join(out, "partitions", "stale-0", "00000000000000000000.log")
	for _, p := range []string{keep, stale} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		testkit.WriteFile(t, p, []byte("x"))
	}
	if err := segtest.Generate(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("Generate removed %s: %v", keep, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("Generate left the stale %s", stale)
	}
}
