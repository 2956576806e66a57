// Package clitest is what the tests of kseg's command packages share: the
// command tree run in-process (Run, Exec: a test package's TestMain
// registers cmd.Run), fixtures copied into a temporary directory, golden
// files recorded and compared (-update rewrites them), JSON lines decoded,
// and the state of a directory compared before and after a command that
// must not change it. It is imported by tests only.
package clitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

var Update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestdataDir is the module's testdata directory relative to the test's
// package directory ("../testdata" from cmd, "../../testdata" from a
// command's package), resolved before any test changes directory.
var TestdataDir = moduleTestdata()

// moduleTestdata finds the module root (the directory of go.mod) above the
// working directory a test binary starts in, its package directory.
func moduleTestdata() string {
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "testdata")
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(wd, filepath.Join(dir, "testdata"))
			if err != nil {
				panic(err)
			}
			return rel
		}
		if filepath.Dir(dir) == dir {
			// A test binary re-run elsewhere as a helper process (as
			// another user, in a temporary directory): no fixtures there.
			return filepath.Join("..", "testdata")
		}
	}
}

// runFunc runs the command tree in-process: cmd.Run.
type runFunc func(ctx context.Context, args []string, s *ui.Streams) int

// runner is the tree runKseg runs, set by register.
var runner runFunc

// Register sets the command tree runKseg runs. A test package's TestMain
// calls it with cmd.Run before any test starts (clitest cannot import cmd:
// cmd's own tests import clitest).
func Register(run runFunc) { runner = run }

// The placeholder that replaces the temporary working directory in
// goldens (it appears only where kseg prints absolute paths, as
// kafka-dump-log does).
const WorkPlaceholder = "$WORK"

// CopyTree copies the fixture directory src to dst (barriertest.CopyTree).
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	barriertest.CopyTree(t, src, dst)
}

// Result is one recorded invocation.
type Result struct {
	Args           []string
	Code           int
	Stdout, Stderr string
}

// Run runs the real command tree in-process, as Main does.
func Run(args ...string) Result { return RunWith(nil, args...) }

// RunWith is Run on test streams that setup (when not nil) changes first:
// a terminal, its width, the environment, the file system.
func RunWith(setup func(*ui.Streams), args ...string) Result {
	s, out, errb := ui.TestStreams()
	if setup != nil {
		setup(s)
	}
	code := RunStreams(context.Background(), s, args...)
	return Result{Args: args, Code: code, Stdout: out.String(), Stderr: errb.String()}
}

func MustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

// FirstDiff shows the first differing line.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %q\n  got:  %q", i+1, w, g)
		}
	}
	return "(same lines)"
}

// CheckJSONLines requires every stdout line of a json run to be one JSON
// object with a type.
func CheckJSONLines(t *testing.T, r Result) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("kseg %s: stdout line %d is not JSON: %v\n%s", strings.Join(r.Args, " "), i+1, err, line)
			continue
		}
		if _, ok := m["type"].(string); !ok {
			t.Errorf("kseg %s: stdout line %d has no type: %s", strings.Join(r.Args, " "), i+1, line)
		}
		objs = append(objs, m)
	}
	return objs
}

func IsJSONRun(args []string) bool {
	i := slices.Index(args, "--output")
	return i >= 0 && i+1 < len(args) && args[i+1] == "json"
}

// GoldenRoot is testdata/golden, resolved before any test changes
// directory.
var GoldenRoot = MustAbs(filepath.Join(TestdataDir, "golden"))

// RenderRuns renders a golden file: the header lines as comments, then for
// every run its arguments, exit code, stdout and stderr.
func RenderRuns(header []string, res []Result) []byte {
	var b bytes.Buffer
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "# Regenerate: go test ./cmd -run Golden -update\n")
	for _, r := range res {
		fmt.Fprintf(&b, "\n=== kseg %s\n", strings.Join(r.Args, " "))
		fmt.Fprintf(&b, "--- exit %d\n", r.Code)
		fmt.Fprintf(&b, "--- stdout\n%s", r.Stdout)
		if r.Stdout != "" && !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteString("\n(no final newline)\n")
		}
		fmt.Fprintf(&b, "--- stderr\n%s", r.Stderr)
		if r.Stderr != "" && !strings.HasSuffix(r.Stderr, "\n") {
			b.WriteString("\n(no final newline)\n")
		}
	}
	return b.Bytes()
}

// CheckGoldenPath compares got with the golden file at path, or rewrites
// it under -update. The goldens' "# Regenerate" line names ./cmd, where
// every golden test was when they were recorded; the tests of a command
// that is a package of its own regenerate its goldens from there
// (go test ./cmd/... -run Golden -update regenerates them all).
func CheckGoldenPath(t *testing.T, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/... -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; rerun with -update and review the diff:\n%s", path, FirstDiff(string(want), string(got)))
	}
}

// nowPlaceholder replaces the wall-clock milliseconds a run printed (the
// default timestamp of the batches inject-barrier writes).
const nowPlaceholder = "$NOW"

var millisRE = regexp.MustCompile(`\b1[0-9]{12}\b`)

// nowDateRE is $NOW followed by its date, as inject-barrier's plan
// prints the barrier's timestamp.
var nowDateRE = regexp.MustCompile(`\$NOW \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)`)

// GoldenWork is a temporary working directory for one scenario.
type GoldenWork struct {
	T          *testing.T
	Dir, real  string // as created, and with symbolic links resolved
	Res        []Result
	keepChange bool // setup runs: their results are not recorded
}

// NewGoldenWork creates the working directory and makes it the current
// directory for the rest of the test.
func NewGoldenWork(t *testing.T) *GoldenWork {
	dir := t.TempDir()
	t.Chdir(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	return &GoldenWork{T: t, Dir: dir, real: real}
}

// CopyFixture copies testdata/<from> to <to> in the working directory.
func (w *GoldenWork) CopyFixture(from, to string) {
	w.T.Helper()
	src := filepath.Join(filepath.Dir(GoldenRoot), from)
	if _, err := os.Stat(src); err != nil {
		w.T.Fatalf("fixture missing: %v (go run ./testdata/gen)", err)
	}
	CopyTree(w.T, src, filepath.Join(w.Dir, to))
}

// Mkdir creates an empty directory (a partition a mirror will fill).
func (w *GoldenWork) Mkdir(rel string) {
	w.T.Helper()
	Mkdir(w.T, filepath.Join(w.Dir, rel))
}

// Setup runs kseg to prepare the scenario (a mirror, an injection); it
// must succeed, and is not recorded.
func (w *GoldenWork) Setup(args ...string) {
	w.T.Helper()
	if r := Run(args...); r.Code != ui.ExitOK {
		w.T.Fatalf("setup kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
}

// Run runs kseg, records the result with the working directory and the
// wall clock replaced by placeholders, and returns it as it was printed.
func (w *GoldenWork) Run(args ...string) Result {
	before := time.Now().UnixMilli()
	r := Run(args...)
	after := time.Now().UnixMilli()
	clean := func(s string) string {
		for _, d := range []string{w.real, w.Dir} {
			s = strings.ReplaceAll(s, d, WorkPlaceholder)
		}
		s = millisRE.ReplaceAllStringFunc(s, func(m string) string {
			if v, err := strconv.ParseInt(m, 10, 64); err == nil && v >= before && v <= after {
				return nowPlaceholder
			}
			return m
		})
		// The same instant as a date, where a plan shows both.
		return nowDateRE.ReplaceAllLiteralString(s, nowPlaceholder+" ("+nowPlaceholder+")")
	}
	rec := r
	rec.Stdout, rec.Stderr = clean(r.Stdout), clean(r.Stderr)
	w.Res = append(w.Res, rec)
	return r
}

// Check compares the recorded runs with testdata/golden/<file>.
func (w *GoldenWork) Check(file string, header ...string) {
	w.T.Helper()
	CheckGoldenPath(w.T, filepath.Join(GoldenRoot, file), RenderRuns(header, w.Res))
}

// JSONLines parses the stdout of a json run (every line one object with a
// type) and returns the objects of the given type.
func JSONLines(t *testing.T, r Result, typ string) []map[string]any {
	t.Helper()
	return JSONByType(t, r)[typ]
}

// JSONByType parses the stdout of a json run (every line one object with
// a type) into its objects by type.
func JSONByType(t *testing.T, r Result) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, m := range CheckJSONLines(t, r) {
		typ, _ := m["type"].(string)
		out[typ] = append(out[typ], m)
	}
	return out
}

// CountLines counts the lines of out that contain sub.
func CountLines(out, sub string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// JSONLine decodes the first line of out whose "type" is typ.
func JSONLine(t *testing.T, out, typ string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, l)
		}
		if m["type"] == typ {
			return m
		}
	}
	t.Fatalf("no %q line in\n%s", typ, out)
	return nil
}

// Testdata is the path of testdata/<rel> (a slash-separated path) from
// the test's package directory.
func Testdata(rel string) string { return filepath.Join(TestdataDir, filepath.FromSlash(rel)) }

// RepoFile is the text of a file of the repository, rel (slash-separated)
// from the module root: a document a test holds to the code.
func RepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(TestdataDir, "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Fixture copies testdata/<from> (a slash-separated path) to dst and
// returns dst.
func Fixture(t *testing.T, from, dst string) string {
	t.Helper()
	CopyTree(t, Testdata(from), dst)
	return dst
}

// WrittenBackup is what restore takes: root/backup, the backup of a
// completed write — inject-barrier over root/w/<name>, a copy of
// testdata/partitions/<name> (--yes: txn-0's cut removes committed
// records).
func WrittenBackup(t *testing.T, root, name string) string {
	t.Helper()
	written := Fixture(t, "partitions/"+name, filepath.Join(root, "w", name))
	backup := filepath.Join(root, "backup")
	if r := Run("inject-barrier", "--yes", "--timestamp", InjectTs, "--backup-dir", backup, written); r.Code != ui.ExitOK {
		t.Fatalf("inject-barrier for a backup: exit %d\n%s", r.Code, r.Stderr)
	}
	return backup
}

// InjectTs is the timestamp of the injected batches: a minute after the
// fixture's last data, so that the replay's log clock expires no one.
const InjectTs = "1700000060000"

// Exec is Run as its exit code, stdout and stderr.
func Exec(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := Run(args...)
	return r.Code, r.Stdout, r.Stderr
}

// Entry is what WalkState records of one path: its mode and modification
// time, and a regular file's SHA-256; for a symbolic link, its target
// and, when that is a regular file, the target's SHA-256 (a command that
// writes through a symlinked segment changed the tree it was given).
// Other files (a FIFO, a socket) are not opened: reading a FIFO would
// block.
type Entry struct {
	Mode  fs.FileMode
	MTime time.Time
	Sum   string
}

// WalkState records every path under dir (relative to it), the directory
// itself included: what a command that must change nothing is held to.
func WalkState(t *testing.T, dir string) map[string]Entry {
	t.Helper()
	out := map[string]Entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Mode: st.Mode(), MTime: st.ModTime()}
		if st.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Sum = "-> " + target + " "
			if ts, err := os.Stat(p); err == nil && ts.Mode().IsRegular() {
				st = ts
			}
		}
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			e.Sum += hex.EncodeToString(h[:])
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// DiffState lists, sorted, what differs between two WalkStates of one
// tree: a path removed or created, a mode, an mtime, a file's content.
func DiffState(before, after map[string]Entry) []string {
	var diffs []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			diffs = append(diffs, p+": removed")
		case a.Mode != b.Mode:
			diffs = append(diffs, p+": mode "+b.Mode.String()+" -> "+a.Mode.String())
		case !a.MTime.Equal(b.MTime):
			diffs = append(diffs, p+": mtime "+b.MTime.String()+" -> "+a.MTime.String())
		case a.Sum != b.Sum:
			diffs = append(diffs, p+": content changed")
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, p+": created")
		}
	}
	slices.Sort(diffs)
	return diffs
}

// AssertSameState fails the test if dir is no longer as before recorded
// it.
func AssertSameState(t *testing.T, before map[string]Entry, dir string) {
	t.Helper()
	if diffs := DiffState(before, WalkState(t, dir)); len(diffs) > 0 {
		t.Fatalf("%s changed:\n%s", dir, strings.Join(diffs, "\n"))
	}
}

func MustContain(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
}

// Head is the first lines of s, for messages.
func Head(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = append(lines[:3], "…")
	}
	return strings.Join(lines, "\n")
}

// MirrorPair is the barriertest fixture as a source a/mirror-0 and an
// empty log directory b for the destination b/mirror-0.
func MirrorPair(t *testing.T) (src, dst string) {
	t.Helper()
	root := t.TempDir()
	src = barriertest.WritePartition(t, filepath.Join(root, "a"), barriertest.MirrorBatches(t), 400)
	return src, filepath.Join(Mkdir(t, filepath.Join(root, "b")), "mirror-0")
}

// Main is a command package's TestMain: it registers the command tree
// (cmd.Run) and runs the package's tests.
func Main(m *testing.M, run func(ctx context.Context, args []string, s *ui.Streams) int) {
	Register(run)
	os.Exit(m.Run())
}

// RunStreams runs the command tree in-process on streams s (a test that
// measures the run, or routes its output away).
func RunStreams(ctx context.Context, s *ui.Streams, args ...string) int {
	if runner == nil {
		panic("clitest: no command tree; call clitest.Register(cmd.Run) in TestMain")
	}
	return runner(ctx, args, s)
}

// ChdirFixture copies testdata/<kind>/<name> into a temporary directory
// and changes into it, so paths in the output are relative; it returns
// the copy's name.
func ChdirFixture(t *testing.T, kind, name string) string {
	t.Helper()
	src := filepath.Join(filepath.Dir(GoldenRoot), kind, name)
	work := t.TempDir()
	CopyTree(t, src, filepath.Join(work, filepath.Base(name)))
	t.Chdir(work)
	return filepath.Base(name)
}
