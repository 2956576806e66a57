//go:build unix

package cmd

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/segtest"
)

// unreadableRuns is what TestHelperRunUnreadable runs: one command line
// per command that takes a log directory.
func unreadableRuns(logdir, out string) [][]string {
	return [][]string{
		{"dump", logdir},
		{"replay-psm", logdir},
		{"groups", logdir},
		{"txns", logdir},
		{"metadata", logdir},
		{"status", logdir},
		{"check", logdir},
		{"digest", "-o", filepath.Join(out, "digests"), logdir},
	}
}

// TestHelperRunUnreadable runs unreadableRuns in-process for
// TestOneUnreadablePartitionNeverStopsALogDir, as another user, and prints
// the results as one JSON line.
func TestHelperRunUnreadable(t *testing.T) {
	logdir := os.Getenv("KSEG_HELPER_LOGDIR")
	if logdir == "" {
		t.Skip("a helper, run by TestOneUnreadablePartitionNeverStopsALogDir")
	}
	var res []clitest.Result
	for _, args := range unreadableRuns(logdir, os.Getenv("KSEG_HELPER_OUT")) {
		res = append(res, clitest.Run(args...))
	}
	fmt.Println("RESULTS " + encodeRuns(res))
}

type jsonRun struct {
	Args           []string
	Code           int
	Stdout, Stderr string
}

func encodeRuns(res []clitest.Result) string {
	var js []jsonRun
	for _, r := range res {
		js = append(js, jsonRun{r.Args, r.Code, r.Stdout, r.Stderr})
	}
	b, _ := json.Marshal(js)
	return string(b)
}

// TestOneUnreadablePartitionNeverStopsALogDir: every command that takes a
// log directory goes on past a partition it cannot read — a partition
// directory of mode 000, or one file of mode 000 — reports it on stderr in
// the operating system's words, prints what it could read, and exits 1 at
// the end when it needed what it could not read. The metadata view calls
// an unreadable replica unreadable, never missing. Permissions mean
// nothing to root: as root, the commands run in a copy of this test binary
// as the user nobody.
func TestOneUnreadablePartitionNeverStopsALogDir(t *testing.T) {
	t.Parallel()
	const uid, gid = 65534, 65534 // nobody
	asRoot := os.Geteuid() == 0
	var bin string
	if asRoot {
		bin = filepath.Join(t.TempDir(), "cmd.test")
		if err := segtest.CopyExecutable(os.Args[0], bin); err != nil {
			t.Skipf("cannot copy the test binary for another user: %v", err)
		}
	}
	cases := []struct {
		name string
		// path is made unreadable, relative to the log directory.
		path string
		// needs: the commands that read it, which exit 1; the others
		// exit as on a readable copy.
		needs []string
	}{
		{"data partition", "orders-0", []string{"dump", "replay-psm", "groups", "txns", "metadata", "status", "check", "digest"}},
		{"coordinator partition", "__consumer_offsets-9", []string{"dump", "replay-psm", "groups", "txns", "metadata", "status", "check", "digest"}},
		{"transaction state partition", "__transaction_state-0", []string{"dump", "replay-psm", "groups", "txns", "metadata", "status", "check", "digest"}},
		{"a segment", "payments-0/00000000000000000000.log", []string{"dump", "replay-psm", "txns", "status", "check", "digest"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			logdir := clitest.Fixture(t, "logdirs/healthy", filepath.Join(root, "logs"))
			// out: where digest writes, open to the other user; the
			// readable copy's run writes elsewhere.
			out := filepath.Join(root, "out")
			if err := os.Mkdir(out, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(out, 0o777); err != nil {
				t.Fatal(err)
			}
			healthy := map[string]clitest.Result{}
			for _, args := range unreadableRuns(logdir, t.TempDir()) {
				healthy[args[0]] = clitest.Run(args...)
			}
			// Every directory on the way open to the other user, then
			// the one path closed.
			if asRoot {
				for d := root; d != "/" && d != "."; d = filepath.Dir(d) {
					if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
						if err := os.Chmod(d, st.Mode().Perm()|0o005); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			victim := filepath.Join(logdir, tc.path)
			if err := os.Chmod(victim, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(victim, 0o755) })
			var res []clitest.Result
			if asRoot {
				cmd := exec.Command(bin, "-test.run=^TestHelperRunUnreadable$", "-test.v")
				// A temporary directory the other user may write (the
				// package's TestMain makes one; /tmp may not be open).
				tmp := filepath.Join(root, "tmp")
				if err := os.Mkdir(tmp, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(tmp, 0o777); err != nil {
					t.Fatal(err)
				}
				cmd.Env = append(os.Environ(), "KSEG_HELPER_LOGDIR="+logdir, "KSEG_HELPER_OUT="+out, "TMPDIR="+tmp)
				cmd.Dir = root
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
				out, err := cmd.CombinedOutput()
				i := strings.Index(string(out), "RESULTS ")
				if i < 0 {
					t.Fatalf("the helper as uid %d: %v\n%s", uid, err, out)
				}
				line, _, _ := strings.Cut(string(out[i+len("RESULTS "):]), "\n")
				var js []jsonRun
				if err := json.Unmarshal([]byte(line), &js); err != nil {
					t.Fatal(err)
				}
				for _, j := range js {
					res = append(res, clitest.Result{Args: j.Args, Code: j.Code, Stdout: j.Stdout, Stderr: j.Stderr})
				}
			} else {
				for _, args := range unreadableRuns(logdir, out) {
					res = append(res, clitest.Run(args...))
				}
			}
			if _, err := os.ReadDir(victim); err == nil && !asRoot {
				t.Skip("this user reads a mode-000 directory")
			}
			for _, r := range res {
				name := r.Args[0]
				h := healthy[name]
				if !slices.Contains(tc.needs, name) {
					if r.Code != h.Code {
						t.Errorf("kseg %s: exit %d, %d on the readable copy (it does not read %s)\n%s", name, r.Code, h.Code, tc.path, r.Stderr)
					}
					continue
				}
				if r.Code != ui.ExitError {
					t.Errorf("kseg %s with %s unreadable: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, tc.path, r.Code, ui.ExitError, clitest.Head(r.Stdout), r.Stderr)
				}
				// On stderr, or in the report for status and check, whose
				// rows say which partition could not be read.
				said := r.Stderr
				if name == "status" || name == "check" {
					said += r.Stdout
				}
				if !strings.Contains(said, filepath.Base(filepath.Dir(victim))) && !strings.Contains(said, filepath.Base(victim)) ||
					!strings.Contains(said, fs.ErrPermission.Error()) {
					t.Errorf("kseg %s: does not name %s and say %q:\n%s", name, tc.path, fs.ErrPermission, said)
				}
				// What it could read is still there.
				part := strings.SplitN(tc.path, "/", 2)[0]
				var keep []string
				for _, line := range strings.Split(h.Stdout, "\n") {
					switch {
					case strings.Contains(line, part), strings.Contains(line, " replayed"):
					case name == "dump" && strings.HasPrefix(line, "=== "),
						name == "replay-psm" && line != "",
						name == "groups" && strings.HasPrefix(line, "group ") && part != "__consumer_offsets-9",
						name == "txns" && strings.HasPrefix(line, "transactionalId ") && part != "__transaction_state-0",
						name == "metadata" && strings.HasPrefix(line, "topic "),
						name == "status" && strings.HasPrefix(line, "partition "):
						keep = append(keep, line)
					}
				}
				// The only group and the only transactional id live in
				// the coordinator partitions of two cases: nothing else
				// to show there.
				// check and digest say little on stdout (a report, files):
				// their exit and stderr say it.
				if len(keep) == 0 && !(name == "groups" && part == "__consumer_offsets-9") && !(name == "txns" && part == "__transaction_state-0") &&
					name != "check" && name != "digest" {
					t.Errorf("kseg %s: nothing to compare on the readable copy:\n%s", name, h.Stdout)
				}
				for _, line := range keep {
					if !strings.Contains(r.Stdout, line) {
						t.Errorf("kseg %s with %s unreadable lost %q", name, tc.path, line)
					}
				}
				if name == "metadata" {
					for _, line := range strings.Split(r.Stdout, "\n") {
						if strings.Contains(line, " "+part+" ") && strings.Contains(line, "missing") {
							t.Errorf("metadata calls the unreadable %s missing: %s", part, line)
						}
					}
					if tc.path == part && !strings.Contains(r.Stdout, "disk "+part+" node 1 unreadable") {
						t.Errorf("metadata has no unreadable row for %s:\n%s", part, r.Stdout)
					}
				}
			}
		})
	}
}
