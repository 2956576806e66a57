package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// deniedFS is the OS except that listing one directory fails as a mode-000
// directory does for a user who is not root.
type deniedFS struct {
	dir string
}

func (deniedFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (d deniedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if filepath.Clean(name) == filepath.Clean(d.dir) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return os.ReadDir(name)
}

// badInputs builds, in a temporary directory, one of each mistake the
// README's exit-status rule names.
func badInputs(t *testing.T) (root string, inputs map[string]string) {
	t.Helper()
	root = t.TempDir()
	inputs = map[string]string{
		"file":        filepath.Join(root, "notes.txt"),
		"nonexistent": filepath.Join(root, "nosuch-0"),
		"empty":       filepath.Join(root, "empty-0"),
		"index-only":  filepath.Join(root, "indexes-0"),
		"unreadable":  filepath.Join(root, "orders-0"),
		"badname":     filepath.Join(root, "copy"),
	}
	testkit.WriteFile(t, inputs["file"], []byte("not Kafka\n"))
	for _, d := range []string{"empty", "index-only"} {
		clitest.Mkdir(t, inputs[d])
	}
	src := clitest.Testdata("partitions/orders-0")
	clitest.CopyTree(t, src, inputs["unreadable"])
	clitest.CopyTree(t, src, inputs["badname"])
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".index") || strings.HasSuffix(e.Name(), ".timeindex") {
			b := testkit.ReadFile(t, filepath.Join(src, e.Name()))
			testkit.WriteFile(t, filepath.Join(inputs["index-only"], e.Name()), b)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s has no index files to copy", src)
	}
	return root, inputs
}

// TestBadInputsOneAnswer feeds every command the same mistakes and checks
// the one answer the README's exit-status table gives for each: a path
// that cannot be read exits 1 in the operating system's words; a path that
// is not what the command takes exits 2 saying what it takes; neither
// prints anything on stdout.
func TestBadInputsOneAnswer(t *testing.T) {
	root, in := badInputs(t)
	good := clitest.Testdata("partitions/orders-0")
	commands := map[string]func(p string) []string{
		"dump":           func(p string) []string { return []string{"dump", p} },
		"explain":        func(p string) []string { return []string{"explain", "0", p} },
		"replay-psm":     func(p string) []string { return []string{"replay-psm", p} },
		"verify-chain":   func(p string) []string { return []string{"verify-chain", good, p} },
		"inject-barrier": func(p string) []string { return []string{"inject-barrier", "--dry-run", p} },
		"repair":         func(p string) []string { return []string{"repair", "--dry-run", p} },
		"mirror":         func(p string) []string { return []string{"mirror", "--dry-run", p, filepath.Join(root, "dst-0")} },
		"groups":         func(p string) []string { return []string{"groups", p} },
		"txns":           func(p string) []string { return []string{"txns", p} },
		"metadata":       func(p string) []string { return []string{"metadata", p} },
		"kafka-dump-log": func(p string) []string { return []string{"kafka-dump-log", "--files", p} },
	}
	// The views take log directories: a directory of index files holds no
	// partition directory.
	logDirViews := []string{"groups", "txns", "metadata"}
	type want struct {
		code int
		msg  string
	}
	answers := map[string]want{
		"file":        {ui.ExitUsage, "takes"},
		"nonexistent": {ui.ExitError, "no such file or directory"},
		"empty":       {ui.ExitUsage, "an empty directory"},
		"index-only":  {ui.ExitUsage, "holds no .log segment"},
		"unreadable":  {ui.ExitError, "permission denied"},
	}
	for name, args := range commands {
		for kind, w := range answers {
			if (name == "dump" || name == "kafka-dump-log") && kind == "index-only" {
				// dump decodes files, and index files decode on their own
				// (the missing .log is reported as orphan-index).
				continue
			}
			if name == "kafka-dump-log" && (kind == "file" || kind == "nonexistent") {
				// kafka-dump-log answers as Kafka does: "Dumping" then
				// "Ignoring unknown file", or the exception a missing or
				// dot-less name throws (TestKafkaIgnoresUnknownFiles,
				// TestKafkaDumpLogFiles).
				continue
			}
			if slices.Contains(logDirViews, name) && kind == "index-only" {
				w = want{ui.ExitUsage, "holds no partition directory"}
			}
			t.Run(name+"/"+kind, func(t *testing.T) {
				r := clitest.RunWith(func(s *ui.Streams) {
					if kind == "unreadable" {
						s.FS = deniedFS{dir: in[kind]}
					}
				}, args(in[kind])...)
				if r.Code != w.code || !strings.Contains(r.Stderr, w.msg) || !strings.Contains(r.Stderr, in[kind]) {
					t.Errorf("exit %d, want %d with %q naming %s; stderr:\n%s", r.Code, w.code, w.msg, in[kind], r.Stderr)
				}
				// A usage answer names the command that was given the
				// input (kafka-dump-log shares dump's code, not its name).
				if w.code == ui.ExitUsage && !strings.Contains(r.Stderr, "; "+name+" takes") {
					t.Errorf("the message does not say what %s takes:\n%s", name, r.Stderr)
				}
				if r.Stdout != "" {
					t.Errorf("stdout not empty:\n%s", r.Stdout)
				}
			})
		}
	}
	// Where the topic matters (writes, verify-chain), a directory not named
	// <topic>-<partition> is not a partition either: usage, not refusal.
	for _, name := range []string{"verify-chain", "inject-barrier", "repair", "mirror"} {
		if code := clitest.Run(commands[name](in["badname"])...).Code; code != ui.ExitUsage {
			t.Errorf("%s of a directory not named <topic>-<partition>: exit %d, want 2", name, code)
		}
	}
	// mirror's DST too, whether it exists or is to be created (it was
	// refused, exit 4, as not-a-partition).
	for _, dst := range []string{in["badname"], filepath.Join(root, "orders-0x")} {
		r := clitest.Run("mirror", "--dry-run", good, dst)
		if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, dst+": the name is not <topic>-<partition>; mirror takes") || r.Stdout != "" {
			t.Errorf("mirror to %s: exit %d, want 2 naming it\n%s%s", dst, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestBadInputsUnreadableForReal makes the unreadable partition with the
// file system's own permissions, where the test is not root (root reads a
// mode-000 directory, so the injected error above stands in for it).
func TestBadInputsUnreadableForReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: a mode-000 directory is readable; TestBadInputsOneAnswer injects the error instead")
	}
	_, in := badInputs(t)
	dir := in["unreadable"]
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	ld := filepath.Dir(dir) // a log directory holding the unreadable partition
	for _, args := range [][]string{{"dump", dir}, {"replay-psm", dir}, {"repair", "--dry-run", dir},
		{"dump", ld}, {"replay-psm", ld}, {"groups", ld}, {"txns", ld}, {"metadata", ld}} {
		if r := clitest.Run(args...); r.Code != ui.ExitError || !strings.Contains(r.Stderr, "permission denied") {
			t.Errorf("%v: exit %d, want 1 permission denied\n%s", args, r.Code, r.Stderr)
		}
	}
}

// TestBadInputsDumpIndexOnly: dump takes files, so a directory of index
// files is dumped, unlike by every command that takes a partition; with
// --verify-index each index's missing .log is a finding.
func TestBadInputsDumpIndexOnly(t *testing.T) {
	_, in := badInputs(t)
	if r := clitest.Run("dump", in["index-only"]); r.Code != ui.ExitOK || !strings.Contains(r.Stdout, "(index)") {
		t.Errorf("exit %d, want 0 with the indexes decoded\n%s", r.Code, r.Stdout)
	}
	if r := clitest.Run("dump", "--verify-index", in["index-only"]); r.Code != ui.ExitFindings || !strings.Contains(r.Stdout, "orphan-index") {
		t.Errorf("--verify-index: exit %d, want 3 with orphan-index\n%s", r.Code, r.Stdout)
	}
}

// TestReadmeStatesTheInputRule: the README's table of mistakes gives each
// the exit status TestBadInputsOneAnswer checks.
func TestReadmeStatesTheInputRule(t *testing.T) {
	readme := clitest.RepoFile(t, "README.md")
	rows := map[string]string{}
	for _, line := range strings.Split(readme, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 5 {
			rows[strings.TrimSpace(cells[3])] = strings.TrimSpace(cells[2])
		}
	}
	for phrase, code := range map[string]string{
		"no such file or directory": "1", "permission denied": "1",
		"a file, not a directory": "2", "an empty directory": "2", "holds no .log segment": "2",
		"the name is not <topic>-<partition>": "2", "refused (REASON)": "4",
		"holds no partition directory": "2", "a partition directory, not a log directory": "2",
	} {
		found := false
		for msg, c := range rows {
			if strings.Contains(msg, phrase) {
				found = true
				if c != code {
					t.Errorf("README gives %q exit %s, the commands exit %s", phrase, c, code)
				}
			}
		}
		if !found {
			t.Errorf("README's table of mistakes does not name %q", phrase)
		}
	}
}

// TestSymlinkedPartitionInLogDir: a partition directory moved to another
// disk and linked back into its log directory is dumped and replayed like
// the others (it used to be "not a Kafka file" to dump and skipped by
// replay-psm).
func TestSymlinkedPartitionInLogDir(t *testing.T) {
	ld, elsewhere := t.TempDir(), t.TempDir()
	clitest.Fixture(t, "partitions/orders-0", filepath.Join(ld, "orders-0"))
	clitest.Fixture(t, "partitions/txn-0", filepath.Join(elsewhere, "txn-0"))
	if err := os.Symlink(filepath.Join(elsewhere, "txn-0"), filepath.Join(ld, "txn-0")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if r := clitest.Run("dump", ld); strings.Contains(r.Stdout, "not a Kafka file") || !strings.Contains(r.Stdout, filepath.Join(ld, "txn-0", "00000000000000000000.log")) {
		t.Errorf("dump of the log dir does not decode the linked partition:\n%s%s", r.Stdout, r.Stderr)
	}
	if r := clitest.Run("replay-psm", ld); !strings.Contains(r.Stdout, "txn-0") {
		t.Errorf("replay-psm of the log dir skips the linked partition:\n%s%s", r.Stdout, r.Stderr)
	}
}

// TestViewsTakeLogDirectories: a partition directory given where a log
// directory is expected is a usage error. (A log directory with a
// partition that cannot be read is TestOneUnreadablePartitionNeverStopsALogDir's.)
func TestViewsTakeLogDirectories(t *testing.T) {
	ld := clitest.Fixture(t, "logdirs/broker-1", filepath.Join(t.TempDir(), "broker-1"))
	// A partition directory given where a log directory is expected.
	if r := clitest.Run("groups", filepath.Join(ld, "orders-0")); r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, "a partition directory, not a log directory") {
		t.Errorf("groups of a partition directory: exit %d\n%s", r.Code, r.Stderr)
	}
}

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
		clitest.Mkdir(t, d)
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
