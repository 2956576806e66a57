//go:build unix

package edit_test

// What a broker must be able to open after kseg wrote (issue 28, items 1,
// 2, 3 and 7; issue 25, item 6): the log directory's .lock, the owners
// and modes of what kseg creates or rewrites, and files that share their
// inode with another name.

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment/edit"
)

// nobody is the second user the ownership tests give the log directory to.
const nobody = 65534

func isRoot() bool { return os.Geteuid() == 0 }

// owner is a file's uid and gid.
func owner(t *testing.T, fi os.FileInfo) (uid, gid int) {
	t.Helper()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no owner on this platform")
	}
	return int(st.Uid), int(st.Gid)
}

// chownTree gives every file and directory under dir to uid:gid.
func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEditLeavesLockAsFound is issue 28's item 1: a broker that stopped
// cleanly deleted its .lock; kseg, run as root, recreated it as root
// (mode 0644), and the broker, running as its own user, then failed to
// lock the directory and took it offline. A .lock kseg has to create is
// the log directory's owner's while kseg holds it (so that a kill leaves
// one the broker can open) and is removed afterwards, whether the edit
// completes, is refused or stops; a .lock that was there is left as it
// was. The ownership half needs root.
func TestEditLeavesLockAsFound(t *testing.T) {
	for _, existed := range []bool{false, true} {
		for _, end := range []string{"applied", "crashed", "rolled back"} {
			dir := writeFixture(t)
			ld := filepath.Dir(dir)
			lock := filepath.Join(ld, ".lock")
			if isRoot() {
				chownTree(t, ld, nobody, nobody)
			}
			var was os.FileInfo
			if existed {
				if err := os.WriteFile(lock, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if isRoot() {
					if err := os.Chown(lock, nobody, nobody); err != nil {
						t.Fatal(err)
					}
				}
				was, _ = os.Lstat(lock)
			}
			var during os.FileInfo
			o := edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
				if step == "seal" {
					during, _ = os.Lstat(lock)
				}
				if end != "applied" && strings.HasPrefix(step, "commit:") {
					return barriertest.ErrCrash
				}
				return nil
			}}
			_, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), o)
			if (end == "applied") != (err == nil) {
				t.Fatalf("existed %v, %s: %v", existed, end, err)
			}
			if end == "rolled back" {
				if _, err := edit.Rollback(dir, edit.Options{}, kinds...); err != nil {
					t.Fatal(err)
				}
			}
			if during == nil {
				t.Fatalf("existed %v, %s: no .lock while the edit ran", existed, end)
			}
			if isRoot() {
				if uid, gid := owner(t, during); uid != nobody || gid != nobody {
					t.Errorf("existed %v, %s: .lock owned by %d:%d while kseg held it, want the log directory's %d:%d", existed, end, uid, gid, nobody, nobody)
				}
			}
			now, err := os.Lstat(lock)
			switch {
			case !existed && !errors.Is(err, os.ErrNotExist):
				t.Errorf("%s: a .lock that was not there is left behind (%v)", end, err)
			case !existed && during.Mode().Perm() != 0o644:
				t.Errorf("%s: the .lock kseg created has mode %o, want 0644", end, during.Mode().Perm())
			case existed && err != nil:
				t.Errorf("%s: the .lock that was there is gone: %v", end, err)
			case existed && (!os.SameFile(was, now) || now.Mode() != was.Mode()):
				t.Errorf("%s: the .lock that was there changed: %v, was %v", end, now.Mode(), was.Mode())
			}
		}
	}
}

// TestEditRefusesSymlinkedLock is issue 28's item 7: a dangling .lock
// symbolic link made root create a file wherever it pointed (outside the
// log directory). .lock is opened without following links, and a link is
// refused (not-regular) by the plan, the apply and the rollback; the file
// it points to is never created.
func TestEditRefusesSymlinkedLock(t *testing.T) {
	dir := writeFixture(t)
	ld := filepath.Dir(dir)
	p := mustPlan(t, dir, planOpts())
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(ld, ".lock")); err != nil {
		t.Fatal(err)
	}
	refusedUnchanged(t, dir, dir, p, edit.RefuseNotRegular, "symbolic link", "with a dangling .lock link")
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the .lock link's target was created: %v", err)
	}
}

// TestEditSeesFlockAsHeld is issue 25's item 6: `flock -x .lock sleep 600`
// (a wrapper script's lock) was not seen: dry runs and applies went ahead.
// An flock(2) lock on .lock counts as held, as the broker's fcntl lock
// does: the plan (and so --dry-run) and the apply refuse (broker-running)
// and change nothing; once it is given up, the apply goes ahead.
func TestEditSeesFlockAsHeld(t *testing.T) {
	dir := writeFixture(t)
	lock := filepath.Join(filepath.Dir(dir), ".lock")
	p := mustPlan(t, dir, planOpts())
	// What flock(1) takes; flock locks of two open files conflict within
	// one process too.
	f := flocked(t, lock, unix.LOCK_EX)
	refusedUnchanged(t, dir, dir, p, edit.RefuseLocked, "flock", "under an flock(2) lock")
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{BackupDir: filepath.Join(t.TempDir(), "b2")}); err != nil {
		t.Fatalf("apply once the flock is given up: %v", err)
	}
}

// TestBrokerLockProbesDoNotSeeEachOther: BrokerLock's own flock probe
// is what another probe meets when two kseg runs (or the parallel
// partitions of one run) read one log directory at once; a probe in
// progress — a shared flock held for an instant — is not a holder, while
// the exclusive flock of flock(1) or of a writing kseg is.
// TestRealPartitionsTellTheTruth's parallel dry runs met the exclusive
// probe of the time as "refused (broker-running) … flock(2)" now and then.
func TestBrokerLockProbesDoNotSeeEachOther(t *testing.T) {
	lock := filepath.Join(t.TempDir(), ".lock")
	f := flocked(t, lock, unix.LOCK_SH)
	if h, held, err := edit.BrokerLock(lock); err != nil || held {
		t.Fatalf("under another probe's shared flock: held=%v (%+v), err=%v; want not held", held, h, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if h, held, err := edit.BrokerLock(lock); err != nil || !held || h.Kind != edit.LockFlock {
		t.Fatalf("under an exclusive flock: held=%v (%+v), err=%v; want held by an flock", held, h, err)
	}
}

// flocked opens path (creating it) and takes an flock(2) lock of kind how
// (LOCK_EX, LOCK_SH) without waiting, skipping the test where the file
// system has none; the file is closed when the test ends.
func flocked(t *testing.T, path string, how int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		t.Skipf("no flock(2) here: %v", err)
	}
	return f
}

// withUmask runs f under umask mask.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// TestEditOwnersAndModes is issue 28's item 2: run as root, a mirror into
// a new destination created the partition directory and every file owned
// by root (a broker running as its own user then cannot open them for
// writing, as it does every segment at load), and the umask narrowed the
// modes (0700 directories, 0600 files under umask 077; a 0664 segment came
// back 0644). Files and the directory kseg creates take the owner and
// group of the directory they are created in, a created directory mode
// 0755 and a created file the mode of the partition's newest segment;
// rewritten files keep their owner, group and mode, whatever the umask;
// the journal is the partition directory's owner's. Needs root.
func TestEditOwnersAndModes(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root: the test gives the log directory to another user (nobody) and checks kseg writes as that user")
	}
	for _, mask := range []int{0o022, 0o077} {
		t.Run("mirror-new", func(t *testing.T) {
			tc := mirrorCase("new-directory", true, 1<<20)
			template, rel := tc.world(t)
			root := copyWorld(t, template)
			chownTree(t, filepath.Dir(filepath.Join(root, rel)), nobody, nobody)
			var err error
			withUmask(mask, func() { _, err = tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}) })
			if err != nil {
				t.Fatal(err)
			}
			assertOwned(t, filepath.Join(root, rel), nil, 0o644)
			fi, err := os.Stat(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o755 {
				t.Errorf("umask %03o: the created partition directory has mode %o, want 0755", mask, fi.Mode().Perm())
			}
		})
		t.Run("inject", func(t *testing.T) {
			dir := writeFixture(t)
			chownTree(t, filepath.Dir(dir), nobody, nobody)
			modes := map[string]fs.FileMode{}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				// A broker's umask 002: group-writable files.
				if err := os.Chmod(filepath.Join(dir, e.Name()), 0o664); err != nil {
					t.Fatal(err)
				}
				modes[e.Name()] = 0o664
			}
			var journal os.FileInfo
			var err error
			withUmask(mask, func() {
				_, err = barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"),
					FaultAt: func(step string) error {
						if strings.HasPrefix(step, "commit:") && journal == nil {
							journal, _ = os.Lstat(filepath.Join(dir, edit.JournalName))
						}
						return nil
					}})
			})
			if err != nil {
				t.Fatal(err)
			}
			if journal == nil {
				t.Fatal("no journal seen during the commit")
			}
			if uid, gid := owner(t, journal); uid != nobody || gid != nobody {
				t.Errorf("umask %03o: the journal is owned by %d:%d, want the partition directory's", mask, uid, gid)
			}
			assertOwned(t, dir, modes, 0o664)
		})
	}
}

// assertOwned checks that every file in dir is nobody's, with the mode
// modes gives it, else mode created (a file the edit created).
func assertOwned(t *testing.T, dir string, modes map[string]fs.FileMode, created fs.FileMode) {
	t.Helper()
	for name := range maps.Keys(barriertest.SnapDir(t, dir)) {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if uid, gid := owner(t, fi); uid != nobody || gid != nobody {
			t.Errorf("%s is owned by %d:%d, want %d:%d (the directory's)", name, uid, gid, nobody, nobody)
		}
		if name == "." {
			continue
		}
		want, ok := modes[name]
		if !ok {
			want = created
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", name, fi.Mode().Perm(), want)
		}
	}
}

// TestEditAppendsNotThroughHardLinks is issue 28's item 3: a destination
// seeded with cp -al from its source shares its segments' inodes with
// the source; the mirror's in-place append of the active segment wrote
// the copied offsets into the source's segment as well, and said
// "Verified". A file with more than one link is copied first: the other
// link keeps its bytes, and the destination ends exactly as an
// undisturbed run leaves it. The same holds when the run stops in the
// middle of the append and is finished by a rerun or undone by a
// rollback (which truncates, the other in-place write).
func TestEditAppendsNotThroughHardLinks(t *testing.T) {
	tc := mirrorAppendCase()
	template, rel := tc.world(t)
	before := barriertest.KafkaFiles(t, filepath.Join(template, rel))
	after, ref := referenceRun(t, tc, template, rel, edit.Options{})
	var appended []string
	for _, op := range ref.ops {
		if op.Action == edit.OpAppend {
			appended = append(appended, op.Name)
		}
	}
	for _, stop := range []string{"", "append:", "journal:"} {
		root := copyWorld(t, template)
		dir := filepath.Join(root, rel)
		snap := t.TempDir()
		for _, name := range appended {
			if err := os.Link(filepath.Join(dir, name), filepath.Join(snap, name)); err != nil {
				t.Fatal(err)
			}
		}
		linked := barriertest.SnapDir(t, snap)
		o := edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}
		if stop != "" {
			o.FaultAt = func(step string) error {
				if strings.HasPrefix(step, stop) && strings.HasSuffix(step, ".log") {
					return barriertest.ErrCrash
				}
				return nil
			}
		}
		_, err := tc.apply(root, o)
		if (stop == "") != (err == nil) {
			t.Fatalf("stop %q: %v", stop, err)
		}
		barriertest.AssertUnchanged(t, linked, snap)
		if stop != "" {
			// The rollback, on a copy whose appended files are linked
			// too.
			rb, snapRB := t.TempDir(), t.TempDir()
			barriertest.CopyTree(t, root, rb)
			for _, name := range appended {
				if err := os.Link(filepath.Join(rb, rel, name), filepath.Join(snapRB, name)); err != nil {
					t.Fatal(err)
				}
			}
			linkedRB := barriertest.SnapDir(t, snapRB)
			if _, err := edit.Rollback(filepath.Join(rb, rel), edit.Options{}, kinds...); err != nil {
				t.Fatalf("stop %q: rollback: %v", stop, err)
			}
			barriertest.AssertUnchanged(t, linkedRB, snapRB)
			if got := barriertest.KafkaFiles(t, filepath.Join(rb, rel)); !maps.Equal(got, before) {
				t.Fatalf("stop %q: the rollback did not restore the partition", stop)
			}
			if _, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b2")}); err != nil {
				t.Fatalf("stop %q: rerun: %v", stop, err)
			}
			barriertest.AssertUnchanged(t, linked, snap)
		}
		if got := barriertest.ContentOf(barriertest.SnapDir(t, dir)); !maps.Equal(got, after) {
			t.Fatalf("stop %q: the destination is not what an undisturbed run leaves", stop)
		}
	}
}
