package restore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// runWithEnv runs kseg with the environment env (HOME, XDG_STATE_HOME).
func runWithEnv(env map[string]string, args ...string) clitest.Result {
	s, out, errb := ui.TestStreams()
	s.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := clitest.RunStreams(context.Background(), s, args...)
	return clitest.Result{Args: args, Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// treeOf is every file under dir with its content's hash.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	return barriertest.ContentOf(barriertest.SnapDir(t, dir))
}

// TestWriteFromTheLogDirectory is issue 25's item 3: from the log
// directory (cd /var/lib/kafka/data), inject-barrier --dry-run txn-0
// printed the plan, then refused: the default backup folder was in the
// working directory, inside the log directory. The default is a new
// folder under $XDG_STATE_HOME/kseg/backups (~/.local/state/kseg/backups),
// the plan says so, and the write goes ahead from there; the log
// directory gains nothing but the edit.
func TestWriteFromTheLogDirectory(t *testing.T) {
	root := t.TempDir()
	ld := filepath.Join(root, "data")
	clitest.Fixture(t, "partitions/txn-0", filepath.Join(ld, "txn-0"))
	home := filepath.Join(root, "home")
	t.Chdir(ld)
	env := map[string]string{"HOME": home}
	r := runWithEnv(env, "inject-barrier", "--dry-run", "--yes", "--timestamp", "1700000009000", "txn-0")
	if r.Code != ui.ExitOK || !strings.Contains(r.Stdout, "Backup: into a new folder in ~/.local/state/kseg/backups") {
		t.Fatalf("dry run from the log directory: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runWithEnv(env, "inject-barrier", "--yes", "--timestamp", "1700000009000", "txn-0")
	if r.Code != ui.ExitOK {
		t.Fatalf("inject-barrier from the log directory: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	backups, _ := filepath.Glob(filepath.Join(home, ".local", "state", "kseg", "backups", "kseg-backup-txn-0-*"))
	if len(backups) != 1 {
		t.Fatalf("backups under the state directory: %v", backups)
	}
	entries, _ := os.ReadDir(ld)
	for _, e := range entries {
		if e.Name() != "txn-0" {
			t.Errorf("the log directory gained %s", e.Name())
		}
	}
	// XDG_STATE_HOME wins over HOME.
	state := filepath.Join(root, "state")
	r = runWithEnv(map[string]string{"HOME": home, "XDG_STATE_HOME": state}, "inject-barrier", "--dry-run", "--force", "txn-0")
	if r.Code != ui.ExitOK || !strings.Contains(r.Stdout, filepath.Join(state, "kseg", "backups")) {
		t.Fatalf("dry run with XDG_STATE_HOME: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRestoreCommand is issue 25's item 15: `kseg restore BACKUP_DIR`
// undoes a completed write exactly; a file changed since is refused (exit
// 4) naming it, with nothing changed, unless --force; a second restore has
// nothing to do.
func TestRestoreCommand(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "logs", "txn-0")
	clitest.Fixture(t, "partitions/txn-0", dir)
	before := treeOf(t, dir)
	bd := filepath.Join(root, "bk")
	if r := clitest.Run("inject-barrier", "--yes", "--timestamp", "1700000009000", "--backup-dir", bd, dir); r.Code != ui.ExitOK {
		t.Fatalf("inject-barrier: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	after := treeOf(t, dir)
	r := clitest.Run("restore", "--dry-run", "-o", "json", bd)
	if r.Code != ui.ExitOK || clitest.JSONLine(t, r.Stdout, "restore-plan") == nil {
		t.Fatalf("restore --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := treeOf(t, dir); len(got) != len(after) {
		t.Fatal("a dry run changed the partition")
	}
	// A file changed since: refused, naming it; nothing changes.
	log := filepath.Join(dir, "00000000000000000000.log")
	b := testkit.ReadFile(t, log)
	changed := append(append([]byte(nil), b...), 0)
	testkit.WriteFile(t, log, changed)
	r = clitest.Run("restore", "--backup-dir", filepath.Join(root, "rb1"), bd)
	if r.Code != ui.ExitRefused || !strings.Contains(r.Stderr, "00000000000000000000.log") || !strings.Contains(r.Stderr, "--force") {
		t.Fatalf("restore over a changed file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got, _ := os.ReadFile(log); string(got) != string(changed) {
		t.Fatal("a refused restore changed the file")
	}
	testkit.WriteFile(t, log, b)
	r = clitest.Run("restore", "--backup-dir", filepath.Join(root, "rb2"), bd)
	if r.Code != ui.ExitOK || !strings.Contains(r.Stdout, "Verified:") {
		t.Fatalf("restore: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := treeOf(t, dir)
	if len(got) != len(before) {
		t.Fatalf("restored %d files, want %d", len(got), len(before))
	}
	for k, v := range before {
		if got[k] != v {
			t.Errorf("%s is not what it was before the write", k)
		}
	}
	r = clitest.Run("restore", bd)
	if r.Code != ui.ExitOK || !strings.Contains(r.Stdout, "Nothing to do") {
		t.Fatalf("a second restore: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
