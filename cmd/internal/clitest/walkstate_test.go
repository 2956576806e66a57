package clitest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWalkStateSeesChanges: what a command that must change nothing is
// held to sees a file's content changed under its old mtime, a mode, a
// removal, and a write through a symlinked segment (the WalkState the
// old clitest had followed links; e663eab's stopped at the link).
func TestWalkStateSeesChanges(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	mt := time.Unix(1700000000, 0)
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	file, target := filepath.Join(dir, "a.index"), filepath.Join(other, "00000000000000000000.log")
	write(file, "abc")
	write(target, "abc")
	if err := os.Symlink(target, filepath.Join(dir, "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func()
		want   string
	}{
		{func() { write(file, "abd") }, "a.index: content changed"},
		{func() { write(target, "abd") }, "00000000000000000000.log: content changed"},
		{func() { os.Chmod(file, 0o600) }, "a.index: mode -rw-r--r-- -> -rw-------"},
	} {
		before := WalkState(t, dir)
		c.change()
		os.Chtimes(dir, mt, mt)
		if diffs := DiffState(before, WalkState(t, dir)); !slices.Contains(diffs, c.want) {
			t.Errorf("%v, want %q among them", diffs, c.want)
		}
	}
}
