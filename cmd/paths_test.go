package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestDotIsTheDirectory: every command that takes a path gives ".", "./",
// "NAME/.", ".." and a directory reached through a symbolic link the
// directory's real name. Run from the same working directory, each form
// prints what the absolute path prints and exits as it does; none is
// refused for its name ("the name is not <topic>-<partition>"), listed as
// loose files, or reported as "partition .".
func TestDotIsTheDirectory(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	part := clitest.Fixture(t, "partitions/txn-0", filepath.Join(root, "a", "txn-0"))
	mirror := clitest.Fixture(t, "partitions/txn-0", filepath.Join(root, "b", "txn-0"))
	dst := filepath.Join(root, "c", "txn-0")
	logdir := clitest.Fixture(t, "logdirs/broker-1", filepath.Join(root, "logs"))
	docs := filepath.Join(root, "docs")
	for _, d := range []string{dst, docs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mm2 := clitest.Fixture(t, "partitions/txn-0", filepath.Join(root, "b", "A.txn-0"))
	backup := clitest.WrittenBackup(t, root, "txn-0")
	link := filepath.Join(root, "current")
	if err := os.Symlink(part, link); err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(root, "backups")

	// target is the directory the path names; args builds the command
	// line around it.
	type command struct {
		target string
		args   func(p string) []string
	}
	commands := map[string]command{
		"dump":       {part, func(p string) []string { return []string{"dump", p} }},
		"explain":    {part, func(p string) []string { return []string{"explain", "5", p} }},
		"replay-psm": {part, func(p string) []string { return []string{"replay-psm", p} }},
		"inject-barrier": {part, func(p string) []string {
			return []string{"inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, "--backup-dir", backups, p}
		}},
		"repair":       {part, func(p string) []string { return []string{"repair", "--dry-run", "--backup-dir", backups, p} }},
		"verify-chain": {part, func(p string) []string { return []string{"verify-chain", p, mirror} }},
		"mirror":       {part, func(p string) []string { return []string{"mirror", "--dry-run", "--backup-dir", backups, p, dst} }},
		"mirror DST":   {dst, func(p string) []string { return []string{"mirror", "--dry-run", "--backup-dir", backups, part, p} }},
		"groups":       {logdir, func(p string) []string { return []string{"groups", p} }},
		"txns":         {logdir, func(p string) []string { return []string{"txns", p} }},
		"metadata":     {logdir, func(p string) []string { return []string{"metadata", p} }},
		"docs":         {docs, func(p string) []string { return []string{"docs", p} }},
		"check":        {part, func(p string) []string { return []string{"check", p} }},
		"digest":       {part, func(p string) []string { return []string{"digest", p} }},
		"status":       {part, func(p string) []string { return []string{"status", p} }},
		"verify-mm2":   {part, func(p string) []string { return []string{"verify-mm2", p, mm2} }},
		"restore":      {backup, func(p string) []string { return []string{"restore", "--dry-run", p} }},
	}
	for name := range pathArgsFrom {
		if _, ok := commands[name]; !ok {
			t.Errorf("%s takes paths but has no row", name)
		}
	}
	// forms: the working directory and the path written for a target,
	// and the path it must mean (absolute, but for NAME/., which keeps
	// the user's relative NAME).
	type form struct{ name, cwd, path, means string }
	forms := func(target string) []form {
		fs := []form{
			{".", target, ".", target},
			{"./", target, "./", target},
			{"NAME/.", filepath.Dir(target), filepath.Base(target) + "/.", filepath.Base(target)},
		}
		if target == logdir {
			fs = append(fs, form{"..", filepath.Join(logdir, "orders-0"), "..", logdir})
		}
		if target == part {
			fs = append(fs, form{"link/.", link, ".", part}, form{"link", root, "current", part})
		}
		return fs
	}
	// docs says how many pages a run changed: the first run, all of them.
	changed := regexp.MustCompile(`\(\d+ changed\)`)
	for name, c := range commands {
		for _, f := range forms(c.target) {
			t.Run(name+" "+f.name, func(t *testing.T) {
				t.Chdir(f.cwd)
				want := clitest.Run(c.args(f.means)...)
				got := clitest.Run(c.args(f.path)...)
				want.Stderr = changed.ReplaceAllString(want.Stderr, "")
				got.Stderr = changed.ReplaceAllString(got.Stderr, "")
				if name == "digest" {
					// A digest records when it was taken; its summary on
					// stderr names the partition.
					want.Stdout, got.Stdout = "", ""
				}
				if want.Code == ui.ExitUsage || want.Code == ui.ExitRefused {
					t.Fatalf("kseg %s: exit %d\n%s", strings.Join(want.Args, " "), want.Code, want.Stderr)
				}
				if got.Code != want.Code || got.Stdout != want.Stdout || got.Stderr != want.Stderr {
					t.Errorf("from %s, kseg %s: exit %d\nstdout %s\nstderr %s\nwant (the absolute path) exit %d\nstdout %s\nstderr %s",
						f.cwd, strings.Join(got.Args, " "), got.Code, clitest.Head(got.Stdout), got.Stderr, want.Code, clitest.Head(want.Stdout), want.Stderr)
				}
			})
		}
	}
}
