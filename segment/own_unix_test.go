//go:build unix

package segment

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileAtomicOwnsLikeTheBroker is issue 28's item 2 for the files
// written outside the edit engine (replay-psm --write-snapshot): run as
// root under umask 077, a snapshot written into a broker user's partition
// directory was root's, mode 0600. A new file takes the directory's owner
// and group and its mode whatever the umask; a replaced file keeps its
// owner, group and mode. The ownership half needs root.
func TestWriteFileAtomicOwnsLikeTheBroker(t *testing.T) {
	dir := t.TempDir()
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	fresh := filepath.Join(dir, "00000000000000000010.snapshot")
	if err := WriteProducerSnapshotFile(fresh, nil, false); err != nil {
		t.Fatal(err)
	}
	replaced := filepath.Join(dir, "leader-epoch-checkpoint")
	if err := os.WriteFile(replaced, []byte("0\n0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(replaced, 0o664); err != nil {
		t.Fatal(err)
	}
	if root {
		if err := os.Chown(replaced, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFileAtomic(replaced, []byte("0\n1\n0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{fresh: 0o644, replaced: 0o664} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %o under umask 077, want %o", filepath.Base(path), fi.Mode().Perm(), mode)
		}
		if st := fi.Sys().(*syscall.Stat_t); root && (st.Uid != 65534 || st.Gid != 65534) {
			t.Errorf("%s: owned by %d:%d, want 65534:65534 (the directory's, the replaced file's)", filepath.Base(path), st.Uid, st.Gid)
		}
	}
}
