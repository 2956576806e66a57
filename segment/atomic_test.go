package segment

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, LeaderEpochCheckpointName)
	if err := WriteFileAtomic(p, []byte("0\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "0\n0\n" {
		t.Fatalf("content %q %v", b, err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm()&^0o022 != 0o644&^0o022 {
		t.Errorf("mode %v %v", st.Mode(), err)
	}
	// Replaces an existing, longer file completely.
	if err := WriteFileAtomic(p, []byte("0\n1\n0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "0\n1\n0 0\n" {
		t.Errorf("after replace %q", b)
	}
	if _, err := os.Stat(p + TempSuffix); !os.IsNotExist(err) {
		t.Errorf("temp file left behind: %v", err)
	}
}

func TestWriteFileAtomicTempExists(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, PartitionMetadataName)
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Someone else's temp file (a live broker mid-write, or a crash):
	// refuse, and leave both files alone.
	if err := os.WriteFile(p+TempSuffix, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(p, []byte("new"), 0o644)
	if !errors.Is(err, ErrTempExists) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("target changed to %q", b)
	}
	if b, _ := os.ReadFile(p + TempSuffix); string(b) != "theirs" {
		t.Errorf("temp changed to %q", b)
	}
}

func TestWriteFileAtomicNoClobber(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := writeFileAtomic(p, []byte("a"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(p, []byte("b"), 0o644, false); !errors.Is(err, ErrTargetExists) {
		t.Errorf("second write: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "a" {
		t.Errorf("content %q", b)
	}
	// The race-free commit path: the target appears after the up-front
	// check but before the link.
	if err := os.WriteFile(p+"2"+TempSuffix, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := linkNoClobber(p+"2"+TempSuffix, p); !errors.Is(err, ErrTargetExists) {
		t.Errorf("linkNoClobber over existing: %v", err)
	}
	if err := linkNoClobber(p+"2"+TempSuffix, p+"2"); err != nil {
		t.Errorf("linkNoClobber: %v", err)
	}
	if _, err := os.Stat(p + "2" + TempSuffix); !os.IsNotExist(err) {
		t.Errorf("temp not removed after link: %v", err)
	}
	// A dangling symlink counts as existing.
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "link")); err == nil {
		if err := writeFileAtomic(filepath.Join(dir, "link"), nil, 0o644, false); !errors.Is(err, ErrTargetExists) {
			t.Errorf("dangling symlink: %v", err)
		}
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "dir", "f")
	if err := WriteFileAtomic(p, []byte("x"), 0o644); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}
