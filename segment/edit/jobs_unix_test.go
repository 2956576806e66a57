//go:build unix

package edit_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

// TestEditLockThroughSymlinks: a broker holds the fcntl lock of the real log
// directory ld; the partition is reached through a symlinked partition
// directory (alias/mirror-0 -> ld/mirror-0) and through a symlinked log
// directory (ldlink -> ld). Every write command resolves the real
// directory before anything else, checks ld/.lock, and refuses
// (broker-running); nothing changes.
func TestEditLockThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	ld := filepath.Join(root, "ld")
	dir := writeFixtureIn(t, ld)
	src := writeFixtureIn(t, filepath.Join(root, "src"))
	if err := os.MkdirAll(filepath.Join(root, "alias"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "alias", "mirror-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ld, filepath.Join(root, "ldlink")); err != nil {
		t.Fatal(err)
	}
	barriertest.HoldBrokerLock(t, filepath.Join(ld, ".lock"))
	beforeLD, beforeSrc := barriertest.SnapDir(t, ld), barriertest.SnapDir(t, src)
	for _, path := range []string{filepath.Join(root, "alias", "mirror-0"), filepath.Join(root, "ldlink", "mirror-0")} {
		_, errI := barrier.PlanInjection(path, planOpts())
		_, errR := recovery.PlanRepair(path, recovery.Options{})
		_, errM := mirror.PlanMirror(src, path, mirrorOpts(-1))
		for what, err := range map[string]error{"inject-barrier": errI, "repair": errR, "mirror": errM} {
			var re *edit.RefusalError
			if !errors.As(err, &re) || re.Reason != edit.RefuseLocked {
				t.Errorf("%s %s: %v, want a %s refusal", what, path, err, edit.RefuseLocked)
			}
		}
	}
	barriertest.AssertUnchanged(t, beforeLD, ld)
	barriertest.AssertUnchanged(t, beforeSrc, src)
}

// TestHelperApplyAsAnotherUser is not a test: run as a child process by
// TestEditForeignOwnedTargetUndone under another uid, it applies one case
// and prints how it ended.
func TestHelperApplyAsAnotherUser(t *testing.T) {
	name := os.Getenv("KSEG_HELPER_APPLY_CASE")
	if name == "" {
		t.Skip("a helper, run by TestEditForeignOwnedTargetUndone")
	}
	for _, tc := range editCases() {
		if tc.name != name {
			continue
		}
		_, err := tc.apply(os.Getenv("KSEG_HELPER_ROOT"), edit.Options{BackupDir: os.Getenv("KSEG_HELPER_BACKUP")})
		var ue *edit.UndoneError
		switch {
		case errors.As(err, &ue):
			fmt.Println("RESULT undone:", err)
		case err != nil:
			fmt.Println("RESULT failed:", err)
		default:
			fmt.Println("RESULT applied")
		}
		return
	}
	t.Fatalf("no case %s", name)
}

// TestEditForeignOwnedTargetUndone: kseg runs as a user who owns every file
// of the partition but the last one the job replaces or deletes, which
// another user owns, in a sticky partition directory (mode 1777): renaming
// over that file or deleting it fails with EPERM after the other files
// were changed. The engine undoes what it did: the partition is
// byte-identical to before, with no journal, no staged file and no backup
// left; once the file is the user's, a rerun converges to the bytes of an
// undisturbed run. The run under another uid needs root to set up.
func TestEditForeignOwnedTargetUndone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test runs the edit as another user (syscall.Credential) over files it chowns")
	}
	const uid, gid = 65534, 65534 // nobody
	bin := filepath.Join(t.TempDir(), "edit.test")
	if err := segtest.CopyExecutable(os.Args[0], bin); err != nil {
		t.Skipf("cannot copy the test binary for another user: %v", err)
	}
	for _, tc := range []editCase{injectCase(barrier.ModeTruncate), repairCase} {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := worldContent(t, template)
			after, rep := referenceRun(t, tc, template, rel, edit.Options{SkipVerify: true})
			victim := lastChanged(rep)
			root := copyWorld(t, template)
			dir := filepath.Join(root, rel)
			bdParent := t.TempDir()
			bd := filepath.Join(bdParent, "b")
			// Every directory on the way open to the other user; the
			// partition directory sticky; every file the user's but the
			// victim.
			for _, d := range []string{filepath.Dir(filepath.Dir(root)), filepath.Dir(root), filepath.Dir(filepath.Dir(bdParent)), filepath.Dir(bdParent)} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(bdParent, 0o777); err != nil {
				t.Fatal(err)
			}
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					return os.Chmod(p, 0o777)
				}
				if filepath.Base(p) == victim && filepath.Dir(p) == dir {
					return nil // root's
				}
				return os.Chown(p, uid, gid)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "-test.run=^TestHelperApplyAsAnotherUser$", "-test.v")
			cmd.Env = append(os.Environ(), "KSEG_HELPER_APPLY_CASE="+tc.name, "KSEG_HELPER_ROOT="+root, "KSEG_HELPER_BACKUP="+bd)
			cmd.Dir = bdParent
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), "RESULT undone:") {
				t.Fatalf("apply as uid %d over %s owned by root in a sticky directory: %v\n%s", uid, victim, err, out)
			}
			if got := worldContent(t, root); !maps.Equal(got, before) {
				t.Fatalf("the partition is not byte-identical to before: %v", diffContent(before, got))
			}
			if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the backup folder is left behind")
			}
			if err := os.Chown(filepath.Join(dir, victim), uid, gid); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.apply(root, edit.Options{BackupDir: bd}); err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if got := barriertest.KafkaFiles(t, dir); !maps.Equal(got, after) {
				t.Fatal("the rerun did not converge to the undisturbed result")
			}
		})
	}
}

// TestEditRefusesSymlinkedFile is issue 12's defect 6, its second half: a
// Kafka file the edit replaces that is a symbolic link was silently
// replaced by a regular file (the link gone, its target left as it was).
// The edit refuses it (not-regular) before any change: the link, its
// target and the partition are as they were, with no journal and no backup.
func TestEditRefusesSymlinkedFile(t *testing.T) {
	tc := injectCase(barrier.ModeTruncate)
	template, rel := tc.world(t)
	ref := copyWorld(t, template)
	rep, err := tc.apply(ref, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	victim := ""
	for _, op := range rep.ops {
		if op.Action == edit.OpReplace {
			victim = op.Name
		}
	}
	root := copyWorld(t, template)
	dir := filepath.Join(root, rel)
	outside := filepath.Join(t.TempDir(), victim)
	if err := os.Rename(filepath.Join(dir, victim), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, victim)); err != nil {
		t.Fatal(err)
	}
	// The partition directory (the log directory gains the .lock taking
	// the lock creates, as a broker's start does).
	before, beforeOut := barriertest.SnapDir(t, dir), barriertest.SnapDir(t, filepath.Dir(outside))
	bd := filepath.Join(t.TempDir(), "b")
	_, err = tc.apply(root, edit.Options{BackupDir: bd})
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseNotRegular {
		t.Fatalf("apply over a symlinked %s: %v, want a %s refusal", victim, err, edit.RefuseNotRegular)
	}
	barriertest.AssertUnchanged(t, before, dir)
	barriertest.AssertUnchanged(t, beforeOut, filepath.Dir(outside))
	if fi, err := os.Lstat(filepath.Join(dir, victim)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer the symbolic link: %v", victim, err)
	}
	if edit.HasJournal(dir) {
		t.Fatal("a journal is left")
	}
	if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a backup folder is left")
	}
}

// TestEditTwoRunsCollide is issue 12's defect 7: a second kseg run on a
// directory another kseg run is writing was told "process -1 holds the log
// directory lock: a broker is running on it". kseg's own lock is an
// open-file-description lock, which F_OFD_GETLK reports with pid -1: the
// refusal now says another kseg run holds it.
func TestEditTwoRunsCollide(t *testing.T) {
	dir := writeFixture(t)
	var second error
	_, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"),
		FaultAt: func(step string) error {
			if step == "seal" { // the first run holds the lock
				_, second = barrier.PlanInjection(dir, planOpts())
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var re *edit.RefusalError
	if !errors.As(second, &re) || re.Reason != edit.RefuseLocked || !strings.Contains(second.Error(), "another kseg run") ||
		strings.Contains(second.Error(), "process -1") {
		t.Fatalf("the second run: %v", second)
	}
}

// TestEditRefusesWithoutSpace is issue 12's defect 3, its first half: the
// free space of the backup's file system is checked before the first
// change, and the refusal (no-space) says how much is needed; nothing is
// created. It mounts a 64 KiB tmpfs for the backup, and skips where it
// cannot (not root, no mount permission).
func TestEditRefusesWithoutSpace(t *testing.T) {
	small := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", small).Run() })
	tc := repairCase
	template, rel := tc.world(t)
	root := copyWorld(t, template)
	before := barriertest.SnapDir(t, filepath.Join(root, rel))
	bd := filepath.Join(small, "b")
	_, err := tc.apply(root, edit.Options{BackupDir: bd})
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseNoSpace || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("a backup on a 64 KiB file system: %v, want a %s refusal saying how much is needed", err, edit.RefuseNoSpace)
	}
	barriertest.AssertUnchanged(t, before, filepath.Join(root, rel))
	if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the backup folder was created")
	}
	if edit.HasJournal(filepath.Join(root, rel)) {
		t.Fatal("a journal is left")
	}
}
