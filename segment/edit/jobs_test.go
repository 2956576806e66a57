package edit_test

// The edit engine's tests run over every job a write command gives it,
// through the commands' own planners (barrier's injection, mirror,
// repair): one table of cases, every crash, every failed write.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// run is what a case's apply reports, whichever its tool.
type run struct {
	edit.Outcome
	// ok: nothing to do, or the read-back check passed.
	ok  bool
	ops []edit.FileOp
}

// runOf is a write command's report as a run.
func runOf[P any, V interface {
	comparable
	edit.Verdict
}](r *edit.Result[P, V], err error, ops func(P) []edit.FileOp) (*run, error) {
	if r == nil {
		return nil, err
	}
	var none V
	return &run{Outcome: r.Outcome, ok: r.NothingToDo || (r.Verification != none && r.Verification.OK()), ops: ops(r.Plan)}, err
}

// kinds are every write command's tools.
var kinds = []*edit.Kind{barrier.InjectKind, mirror.EditKind, recovery.EditKind}

// editCase is one write command's job over a template world: the edit
// engine is exercised through every job the same way.
type editCase struct {
	name string
	// world writes a template and returns its root and the partition
	// directory's path relative to it.
	world func(t *testing.T) (root, rel string)
	// apply plans and applies in the world copied to root.
	apply func(root string, o edit.Options) (*run, error)
	// minSteps guards against a job that silently does nothing.
	minSteps int
	// skip leaves out steps exercised by another case (the generic
	// temp-file half-steps), to keep the run short.
	skip func(step string) bool
}

// referenceRun applies tc undisturbed on a copy of template: what every
// disturbed run of the same job must converge to (the Kafka files of its
// partition directory rel), and its report.
func referenceRun(t *testing.T, tc editCase, template, rel string, o edit.Options) (after map[string]string, r *run) {
	t.Helper()
	o.BackupDir = filepath.Join(t.TempDir(), "b")
	ref := copyWorld(t, template)
	r, err := tc.apply(ref, o)
	if err != nil {
		t.Fatal(err)
	}
	return barriertest.KafkaFiles(t, filepath.Join(ref, rel)), r
}

// lastChanged is the last file the run replaces or deletes.
func lastChanged(r *run) string {
	victim := ""
	for _, op := range r.ops {
		if op.Action != edit.OpCreate {
			victim = op.Name
		}
	}
	return victim
}

func planOpts() barrier.InjectOptions { return barrier.InjectOptions{Timestamp: barriertest.InjectTs} }

func mustPlan(t *testing.T, dir string, o barrier.InjectOptions) *barrier.InjectionPlan {
	t.Helper()
	p, err := barrier.PlanInjection(dir, o)
	if err != nil {
		t.Fatalf("PlanInjection(%s): %v", dir, err)
	}
	return p
}

// refusedUnchanged plans an injection into planDir and applies p: both
// must be refused for reason with an error that names want (situation
// says what stands in the way, for a failure), and dir must not change.
func refusedUnchanged(t *testing.T, dir, planDir string, p *barrier.InjectionPlan, reason edit.Reason, want, situation string) {
	t.Helper()
	before := barriertest.SnapDir(t, dir)
	_, errPlan := barrier.PlanInjection(planDir, planOpts())
	_, errApply := barrier.ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
	for what, err := range map[string]error{"plan": errPlan, "apply": errApply} {
		var re *edit.RefusalError
		if !errors.As(err, &re) || re.Reason != reason || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: %v, want a %s refusal naming %q", what, situation, err, reason, want)
		}
	}
	barriertest.AssertUnchanged(t, before, dir)
}

// writeFixture writes the barriertest fixture as <tmp>/logs/mirror-0 with
// 400-byte segments.
func writeFixture(t *testing.T) string {
	t.Helper()
	return writeFixtureIn(t, filepath.Join(t.TempDir(), "logs"))
}

// writeFixtureIn writes the barriertest fixture as <logDir>/mirror-0 with
// 400-byte segments.
func writeFixtureIn(t *testing.T, logDir string) string {
	t.Helper()
	return barriertest.WritePartition(t, logDir, barriertest.MirrorBatches(t), 400)
}

func injectCase(mode barrier.Mode) editCase {
	return editCase{
		name: "inject-" + string(mode),
		world: func(t *testing.T) (string, string) {
			dir := writeFixture(t)
			return filepath.Dir(dir), filepath.Base(dir)
		},
		apply: func(root string, o edit.Options) (*run, error) {
			opts := planOpts()
			opts.Mode = mode
			p, err := barrier.PlanInjection(filepath.Join(root, "mirror-0"), opts)
			if err != nil {
				return nil, err
			}
			r, err := barrier.ApplyInjection(p, o)
			return runOf(r, err, func(p *barrier.InjectionPlan) []edit.FileOp { return p.Ops })
		},
		minSteps: 20,
	}
}

// mirrorOpts are small segments and a small index interval, so that the
// fixture's 18 offsets span several segments and index entries.
func mirrorOpts(upto int64) mirror.Options {
	o := mirror.DefaultOptions()
	o.Upto, o.SegmentBytes, o.IndexIntervalBytes = upto, 300, 100
	return o
}

// mirrorTemplate writes, under a fresh root, the source a/mirror-0 (the
// barriertest fixture) and, unless fresh, a destination b/mirror-0 that
// mirrored it up to 11, failed over and wrote a batch of its own (so it
// must be aligned). It returns the root.
func mirrorTemplate(t *testing.T, fresh bool) string {
	t.Helper()
	root := t.TempDir()
	src := writeFixtureIn(t, filepath.Join(root, "a"))
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fresh {
		return root
	}
	dst := filepath.Join(root, "b", "mirror-0")
	p, err := mirror.PlanMirror(src, dst, mirrorOpts(11))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")}); err != nil {
		t.Fatal(err)
	}
	o := segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}
	barriertest.AppendLocal(t, dst, [][]byte{barrier.Build(barrier.Spec{Timestamp: barriertest.InjectTs})}, o)
	barriertest.AppendLocal(t, dst, [][]byte{barriertest.DataBatch(t, 0, 1, 7007, 0, 0, false, 0)}, o)
	return root
}

// mirrorPrefixTemplate writes, under a fresh root, the source a/mirror-0
// and a destination b/mirror-0 that mirrored it up to 11 and nothing
// else: a prefix of the source, whose last segment a mirror continues
// with an append (edit.OpAppend).
func mirrorPrefixTemplate(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := writeFixtureIn(t, filepath.Join(root, "a"))
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := mirror.PlanMirror(src, filepath.Join(root, "b", "mirror-0"), mirrorOpts(11))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")}); err != nil {
		t.Fatal(err)
	}
	return root
}

// mirrorAppendCase continues a destination that is a prefix of its
// source: the last segment's .log is appended to in place.
func mirrorAppendCase() editCase {
	tc := mirrorCase("append", true, 1<<20)
	tc.world = func(t *testing.T) (string, string) {
		return mirrorPrefixTemplate(t), filepath.Join("b", "mirror-0")
	}
	apply := tc.apply
	tc.apply = func(root string, o edit.Options) (*run, error) {
		r, err := apply(root, o)
		if r != nil && len(r.ops) > 0 && !slices.ContainsFunc(r.ops, func(op edit.FileOp) bool { return op.Action == edit.OpAppend }) {
			return r, fmt.Errorf("the plan holds no append: %+v", r.ops)
		}
		return r, err
	}
	tc.minSteps = 10
	return tc
}

func mirrorCase(name string, fresh bool, segmentBytes int64) editCase {
	opts := mirrorOpts(-1)
	opts.Align = !fresh
	opts.SegmentBytes = segmentBytes
	return editCase{
		name: "mirror-" + name,
		world: func(t *testing.T) (string, string) {
			return mirrorTemplate(t, fresh), filepath.Join("b", "mirror-0")
		},
		apply: func(root string, o edit.Options) (*run, error) {
			p, err := mirror.PlanMirror(filepath.Join(root, "a", "mirror-0"), filepath.Join(root, "b", "mirror-0"), opts)
			if err != nil {
				return nil, err
			}
			r, err := mirror.Apply(p, o)
			return runOf(r, err, func(p *mirror.Plan) []edit.FileOp { return p.Ops })
		},
		minSteps: 15,
		// The ":tmp" half-steps are generic and exercised at length by the
		// injection cases; of them, only the staging of a .log (copied
		// from the source's segments) and the first journal are particular
		// to the mirror.
		skip: func(step string) bool {
			return strings.HasSuffix(step, ":tmp") && !strings.HasPrefix(step, "stage:") && step != "journal:prepared:tmp"
		},
	}
}

var repairCase = editCase{
	name: "repair",
	world: func(t *testing.T) (string, string) {
		dir := barriertest.CRCDamagedOrders(t)
		return filepath.Dir(dir), filepath.Base(dir)
	},
	apply: func(root string, o edit.Options) (*run, error) {
		p, err := recovery.PlanRepair(filepath.Join(root, "orders-0"), recovery.Options{})
		if err != nil {
			return nil, err
		}
		r, err := recovery.Apply(p, o)
		return runOf(r, err, func(p *recovery.Plan) []edit.FileOp { return p.Ops })
	},
	minSteps: 30,
}

// editCases are every write command's jobs: injection in both modes, a
// mirror into a new directory (one new segment: the steps of creating a
// directory) and with --align into a diverged one (deletions, truncation,
// continuation, new segments), a multi-segment repair.
func editCases() []editCase {
	return []editCase{
		injectCase(barrier.ModeTruncate),
		injectCase(barrier.ModeAbort),
		mirrorCase("new-directory", true, 1<<20),
		mirrorCase("align", false, 700),
		mirrorAppendCase(),
		repairCase,
	}
}

// completedEdit is a job run to its end, with a backup, in a copy of its
// world.
type completedEdit struct {
	template, rel string            // the world the job starts from
	root, backup  string            // the copy it ran in, its backup folder
	before        map[string]string // the world's content before the job
}

// complete runs tc to its end in a fresh copy of its world.
func complete(t *testing.T, tc editCase) completedEdit {
	t.Helper()
	var c completedEdit
	c.template, c.rel = tc.world(t)
	c.before = worldContent(t, c.template)
	c.root = copyWorld(t, c.template)
	c.backup = filepath.Join(t.TempDir(), "b")
	if _, err := tc.apply(c.root, edit.Options{BackupDir: c.backup}); err != nil {
		t.Fatal(err)
	}
	return c
}

// copyWorld copies a template world to a fresh root.
func copyWorld(t *testing.T, template string) string {
	t.Helper()
	root := t.TempDir()
	barriertest.CopyTree(t, template, root)
	return root
}

// TestEditCrashAtEveryStep stops every job at every step the engine takes
// (as a crash would: nothing cleaned up) and checks that
//   - every Kafka file is then either exactly as before or exactly as after;
//   - without a journal left behind, the whole partition is exactly as
//     before or exactly as after;
//   - a rollback (of a copy) brings back exactly the bytes before, removing
//     a directory the job created;
//   - a rerun (itself interrupted once more now and then, then run to the
//     end) converges to exactly the bytes of an uninterrupted run, leaving
//     no journal or staged file behind.
//
// Every case, and every step of a case, runs in a world of its own: they
// run as parallel subtests, so that one's fsyncs overlap another's work
// (the loop waits on the disk far more than it computes).
func TestEditCrashAtEveryStep(t *testing.T) {
	for _, tc := range editCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			template, rel := tc.world(t)
			before := barriertest.KafkaFiles(t, filepath.Join(template, rel))
			after, rep := referenceRun(t, tc, template, rel, edit.Options{})
			steps := rep.Steps
			if len(steps) < tc.minSteps {
				t.Fatalf("only %d steps: %v", len(steps), steps)
			}
			for i, step := range steps {
				if tc.skip != nil && tc.skip(step) {
					continue
				}
				t.Run(fmt.Sprintf("%02d-%s", i, step), func(t *testing.T) {
					t.Parallel()
					crashAtStep(t, tc, template, rel, i, step, before, after)
				})
			}
		})
	}
}

// crashAtStep is one step of TestEditCrashAtEveryStep: the job stopped
// there, then what a rollback and a rerun make of it.
func crashAtStep(t *testing.T, tc editCase, template, rel string, i int, step string, before, after map[string]string) {
	t.Helper()
	root := copyWorld(t, template)
	dir := filepath.Join(root, rel)
	_, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: barriertest.FaultAt(i)})
	var fe *edit.FaultError
	if !errors.As(err, &fe) || fe.Step != step {
		t.Fatalf("step %d (%s): %v", i, step, err)
	}
	cur := barriertest.KafkaFiles(t, dir)
	if name, ok := strings.CutPrefix(step, "append:"); ok {
		// Stopped in the middle of an append: its file is torn
		// (the old bytes, then part of the new), which only
		// the journal's rerun or rollback may finish.
		assertTorn(t, filepath.Join(template, rel, name), filepath.Join(dir, name))
		delete(cur, name)
		cur[name] = before[name]
	}
	barriertest.AssertOldOrNew(t, i, step, before, after, cur)
	if _, err := os.Stat(dir); err == nil {
		if all := barriertest.ContentOf(barriertest.SnapDir(t, dir)); maps.Equal(all, cur) && !maps.Equal(all, before) && !maps.Equal(all, after) {
			t.Fatalf("step %d (%s): no kseg file left, yet the partition is neither before nor after", i, step)
		}
	}
	if edit.HasJournal(dir) {
		rb := t.TempDir()
		barriertest.CopyTree(t, root, rb)
		rdir := filepath.Join(rb, rel)
		rr, err := edit.Rollback(rdir, edit.Options{}, kinds...)
		if err != nil || !rr.RolledBack {
			t.Fatalf("step %d (%s): rollback: %v", i, step, err)
		}
		if got := barriertest.KafkaFiles(t, rdir); !maps.Equal(got, before) {
			t.Fatalf("step %d (%s): rollback did not restore the partition", i, step)
		}
		if _, err := os.Stat(rdir); len(before) == 0 && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("step %d (%s): rollback left the directory the job created", i, step)
		}
	}
	if i%3 == 0 {
		// Now and then, the rerun is interrupted too.
		_, err = tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b2"), FaultAt: barriertest.FaultAt(1 + i%7)})
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("step %d (%s): second run: %v", i, step, err)
		}
	}
	rep3, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b3")})
	if err != nil {
		t.Fatalf("step %d (%s): final run: %v", i, step, err)
	}
	if !rep3.ok {
		t.Fatalf("step %d (%s): verification failed: %+v", i, step, rep3)
	}
	if got := barriertest.ContentOf(barriertest.SnapDir(t, dir)); !maps.Equal(got, after) {
		t.Fatalf("step %d (%s): rerun did not converge to the uninterrupted result", i, step)
	}
}

// assertTorn checks that path holds the bytes of old and then some, as
// an interrupted append leaves it.
func assertTorn(t *testing.T, old, path string) {
	t.Helper()
	was := testkit.ReadFile(t, old)
	got := testkit.ReadFile(t, path)
	if len(got) <= len(was) || !bytes.HasPrefix(got, was) {
		t.Fatalf("%s: %d bytes, not its %d old bytes followed by part of the appended ones", path, len(got), len(was))
	}
}

// failingWriter writes half of the n-th write (counted across every file the
// engine writes) and then fails it with err, as a full disk does.
type failingWriter struct {
	w     io.Writer
	count *int
	at    int
	err   error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	defer func() { *f.count++ }()
	if *f.count == f.at {
		n, _ := f.w.Write(p[:len(p)/2])
		return n, f.err
	}
	return f.w.Write(p)
}

func failWriteAt(at int, count *int, err error) func(string, io.Writer) io.Writer {
	return func(_ string, w io.Writer) io.Writer { return &failingWriter{w: w, count: count, at: at, err: err} }
}

// TestEditENOSPCAtEveryWrite fails every write the engine makes (backup
// copies, the manifest, staged files, the journal), one at a time, with
// ENOSPC after writing half of it, and checks that the partition is then
// byte-identical to before with no journal and no staged file, that no
// backup folder is left behind, and that a rerun with the same
// --backup-dir, once the disk has room again, converges to the bytes of an
// undisturbed run.
func TestEditENOSPCAtEveryWrite(t *testing.T) {
	for _, tc := range editCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			template, rel := tc.world(t)
			before := worldContent(t, template)
			ref := copyWorld(t, template)
			writes := 0
			if _, err := tc.apply(ref, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), Writer: failWriteAt(-1, &writes, nil)}); err != nil {
				t.Fatal(err)
			}
			after := barriertest.KafkaFiles(t, filepath.Join(ref, rel))
			if writes < 5 {
				t.Fatalf("only %d writes", writes)
			}
			for k := 0; k < writes; k++ {
				t.Run(fmt.Sprintf("write-%02d", k), func(t *testing.T) {
					t.Parallel()
					enospcAtWrite(t, tc, template, rel, k, before, after)
				})
			}
		})
	}
}

// enospcAtWrite is one write of TestEditENOSPCAtEveryWrite: the disk full
// there, then a rerun.
func enospcAtWrite(t *testing.T, tc editCase, template, rel string, k int, before, after map[string]string) {
	t.Helper()
	root := copyWorld(t, template)
	bd := filepath.Join(t.TempDir(), "b")
	n := 0
	_, err := tc.apply(root, edit.Options{BackupDir: bd, Writer: failWriteAt(k, &n, syscall.ENOSPC)})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write %d: %v, want ENOSPC", k, err)
	}
	if got := worldContent(t, root); !maps.Equal(got, before) {
		t.Fatalf("write %d: the partition (or its log directory) is not byte-identical to before: %v", k, diffContent(before, got))
	}
	if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("write %d: the backup folder the run created is left behind", k)
	}
	if _, err := tc.apply(root, edit.Options{BackupDir: bd}); err != nil {
		t.Fatalf("write %d: rerun: %v", k, err)
	}
	if got := barriertest.KafkaFiles(t, filepath.Join(root, rel)); !maps.Equal(got, after) {
		t.Fatalf("write %d: the rerun did not converge to the undisturbed result", k)
	}
}

// worldContent is every file of a world but the log directories' .lock,
// which taking the lock creates (empty) as a broker's LogManager does.
func worldContent(t *testing.T, root string) map[string]string {
	t.Helper()
	out := barriertest.ContentOf(barriertest.SnapDir(t, root))
	for k := range out {
		if filepath.Base(k) == ".lock" {
			delete(out, k)
		}
	}
	return out
}

func diffContent(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new "+k)
		}
	}
	return d
}

// TestEditImmutableTargetUndone makes the last file a job replaces or
// deletes immutable (chattr +i), so that the commit fails after other files
// were already changed, and checks that the engine undoes what it did: the
// partition is byte-identical to before, with no journal, no staged file
// and no backup left; once the file is mutable again, a rerun converges.
func TestEditImmutableTargetUndone(t *testing.T) {
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("chattr is not installed: cannot make a file immutable here")
	}
	for _, tc := range []editCase{injectCase(barrier.ModeTruncate), repairCase} {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := worldContent(t, template)
			after, rep := referenceRun(t, tc, template, rel, edit.Options{SkipVerify: true})
			ops := rep.ops
			victim := lastChanged(rep)
			if victim == "" || len(ops) < 2 {
				t.Fatalf("no file to make immutable among %+v", ops)
			}
			root := copyWorld(t, template)
			path := filepath.Join(root, rel, victim)
			if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
				t.Skipf("cannot set the immutable attribute here (file system or privileges): %v: %s", err, out)
			}
			t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
			bd := filepath.Join(t.TempDir(), "b")
			_, err := tc.apply(root, edit.Options{BackupDir: bd})
			var ue *edit.UndoneError
			if !errors.As(err, &ue) {
				t.Fatalf("apply over an immutable %s: %v, want an undone failure", victim, err)
			}
			if got := worldContent(t, root); !maps.Equal(got, before) {
				t.Fatalf("the partition is not byte-identical to before: %v", diffContent(before, got))
			}
			if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the backup folder is left behind")
			}
			if out, err := exec.Command("chattr", "-i", path).CombinedOutput(); err != nil {
				t.Fatalf("chattr -i: %v: %s", err, out)
			}
			if _, err := tc.apply(root, edit.Options{BackupDir: bd}); err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if got := barriertest.KafkaFiles(t, filepath.Join(root, rel)); !maps.Equal(got, after) {
				t.Fatal("the rerun did not converge to the undisturbed result")
			}
		})
	}
}

// TestEditJournalIsUntrusted: a journal is written by whoever can write
// into the partition directory, and kseg may run as root. A journal whose
// operations name a path outside the partition (../, absolute), a file that
// is not a Kafka file, impossible sizes, or whose backup directory is not
// the one its manifest describes is refused by a rerun (the plan) and by a
// rollback, and nothing inside or outside the partition is touched.
func TestEditJournalIsUntrusted(t *testing.T) {
	template := writeFixture(t)
	// An interrupted injection: committing, two files changed.
	commitAt := func() int {
		ref := copyWorld(t, filepath.Dir(template))
		rep, err := barrier.ApplyInjection(mustPlan(t, filepath.Join(ref, "mirror-0"), planOpts()), edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, s := range rep.Steps {
			if strings.HasPrefix(s, "commit:") {
				if n++; n == 3 {
					return i
				}
			}
		}
		t.Fatalf("fewer than 3 commit steps: %v", rep.Steps)
		return 0
	}()
	// Another, complete, injection's backup folder.
	otherBackup := filepath.Join(t.TempDir(), "other")
	{
		other := copyWorld(t, filepath.Dir(template))
		if _, err := barrier.ApplyInjection(mustPlan(t, filepath.Join(other, "mirror-0"), planOpts()), edit.Options{BackupDir: otherBackup}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		tamper func(j map[string]any, root string)
	}{
		{"dot-dot", func(j map[string]any, root string) { setOp(j, 0, "name", "../victim") }},
		{"absolute", func(j map[string]any, root string) { setOp(j, 0, "name", filepath.Join(root, "victim")) }},
		{"foreign-name", func(j map[string]any, root string) { setOp(j, 0, "name", "victim") }},
		{"impossible-size", func(j map[string]any, root string) { setOp(j, 0, "keepPrefix", 1e9) }},
		{"setuid-mode", func(j map[string]any, root string) { setOp(j, 0, "perm", 0o4755) }},
		{"append-shrinks", func(j map[string]any, root string) {
			setOp(j, 0, "action", "append")
			setOp(j, 0, "keepPrefix", 0)
			setOp(j, 0, "newSize", 0)
		}},
		{"other-backup", func(j map[string]any, root string) { j["backupDir"] = otherBackup }},
		{"backup-without-manifest", func(j map[string]any, root string) { j["backupDir"] = root }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyWorld(t, filepath.Dir(template))
			dir := filepath.Join(root, "mirror-0")
			bd := filepath.Join(root, "..", filepath.Base(root)+"-backup")
			t.Cleanup(func() { os.RemoveAll(bd) })
			_, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{BackupDir: bd, FaultAt: barriertest.FaultAt(commitAt)})
			var fe *edit.FaultError
			if !errors.As(err, &fe) || !edit.HasJournal(dir) {
				t.Fatalf("interrupted run: %v", err)
			}
			victim := filepath.Join(root, "victim")
			testkit.WriteFile(t, victim, []byte("not kafka's"))
			barriertest.RewriteJournal(t, dir, func(j map[string]any) { tc.tamper(j, root) })
			snaps := map[string]map[string]barriertest.Snap{}
			for _, d := range []string{root, bd, otherBackup} {
				snaps[d] = barriertest.SnapDir(t, d)
			}
			_, err = barrier.PlanInjection(dir, planOpts())
			var re *edit.RefusalError
			if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
				t.Fatalf("rerun: %v, want a %s refusal", err, edit.RefuseJournal)
			}
			_, err = barrier.RollbackInjection(dir, edit.Options{})
			if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
				t.Fatalf("rollback: %v, want a %s refusal", err, edit.RefuseJournal)
			}
			for d, s := range snaps {
				barriertest.AssertUnchanged(t, s, d)
			}
		})
	}
}

// setOp sets a field of the i-th file operation of a journal's plan.
func setOp(j map[string]any, i int, key string, v any) {
	ops := j["plan"].(map[string]any)["ops"].([]any)
	ops[i].(map[string]any)[key] = v
}

// interruptAtCommit applies tc in a copy of its world, stopped (as by a
// crash) at its first commit step, so that a journal in state committing
// is left; it returns the world's root and the partition directory.
func interruptAtCommit(t *testing.T, tc editCase, template, rel string) (root, dir string) {
	t.Helper()
	root = copyWorld(t, template)
	dir = filepath.Join(root, rel)
	_, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return barriertest.ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, barriertest.ErrCrash) || !edit.HasJournal(dir) {
		t.Fatalf("interrupted run: %v", err)
	}
	return root, dir
}

// TestEditRollbackRefusesAnotherToolsJournal: every tool's rollback of
// another tool's interrupted edit (kseg repair --rollback on an
// injection's journal, say) refuses, naming the tool, and changes nothing,
// rather than saying it undid what it did not; the tool's own rollback
// then undoes it and reports its own plan.
func TestEditRollbackRefusesAnotherToolsJournal(t *testing.T) {
	for _, tc := range []editCase{injectCase(barrier.ModeTruncate), mirrorCase("align", false, 700), repairCase} {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := barriertest.KafkaFiles(t, filepath.Join(template, rel))
			root, dir := interruptAtCommit(t, tc, template, rel)
			j, err := edit.ReadJournal(dir)
			if err != nil {
				t.Fatal(err)
			}
			var own *edit.Kind
			for _, k := range kinds {
				if k.Tool == j.Tool {
					own = k
					continue
				}
				snap := barriertest.SnapDir(t, root)
				_, err := edit.Rollback(dir, edit.Options{}, k)
				var re *edit.RefusalError
				if !errors.As(err, &re) || re.Reason != edit.RefuseOtherTool || !strings.Contains(err.Error(), j.Tool) {
					t.Fatalf("%s's rollback of a %s: %v", k.Tool, j.Tool, err)
				}
				barriertest.AssertUnchanged(t, snap, root)
			}
			rep, err := edit.Rollback(dir, edit.Options{}, own)
			if err != nil || !rep.RolledBack || rep.Kind != own || rep.Job == nil {
				t.Fatalf("%s's own rollback: %+v %v", j.Tool, rep, err)
			}
			if got := barriertest.KafkaFiles(t, dir); !maps.Equal(got, before) || edit.HasJournal(dir) {
				t.Fatal("the rollback did not restore the partition")
			}
		})
	}
}

// TestEditReadsLegacyJournal: an edit an older kseg left pending — its
// journal named .kseg-inject.journal, a mirror's plan under "mirror" and a
// repair's under "repair" — is still seen (HasJournal, and a pending edit
// for the other tools' planners), finished by a rerun and undone by a
// rollback, under its own name, which is gone afterwards.
func TestEditReadsLegacyJournal(t *testing.T) {
	legacyKey := map[string]string{mirror.EditKind.Tool: "mirror", recovery.EditKind.Tool: "repair"}
	for _, tc := range []editCase{injectCase(barrier.ModeTruncate), mirrorCase("align", false, 700), repairCase} {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := barriertest.KafkaFiles(t, filepath.Join(template, rel))
			after, _ := referenceRun(t, tc, template, rel, edit.Options{})
			root, dir := interruptAtCommit(t, tc, template, rel)
			// What an older kseg wrote.
			barriertest.RewriteJournal(t, dir, func(j map[string]any) {
				if k := legacyKey[j["tool"].(string)]; k != "" {
					j[k] = j["plan"]
					delete(j, "plan")
				}
			})
			if err := os.Rename(filepath.Join(dir, edit.JournalName), filepath.Join(dir, edit.LegacyJournalName)); err != nil {
				t.Fatal(err)
			}
			if !edit.HasJournal(dir) {
				t.Fatal("HasJournal does not see the legacy journal")
			}
			j, err := edit.ReadJournal(dir)
			if err != nil || j.Path(dir) != filepath.Join(dir, edit.LegacyJournalName) || len(j.Plan) == 0 {
				t.Fatalf("ReadJournal: %+v %v", j, err)
			}
			if tc.name != "repair" {
				var re *edit.RefusalError
				if _, err := recovery.PlanRepair(dir, recovery.Options{}); !errors.As(err, &re) || re.Reason != edit.RefusePending {
					t.Fatalf("repair over a pending legacy %s: %v", j.Tool, err)
				}
			}
			rb := t.TempDir()
			barriertest.CopyTree(t, root, rb)
			rdir := filepath.Join(rb, rel)
			if rr, err := edit.Rollback(rdir, edit.Options{}, kinds...); err != nil || !rr.RolledBack {
				t.Fatalf("rollback: %v", err)
			}
			if got := barriertest.KafkaFiles(t, rdir); !maps.Equal(got, before) || edit.HasJournal(rdir) {
				t.Fatal("the rollback did not restore the partition, or left the legacy journal")
			}
			r, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b2")})
			if err != nil || !r.Resumed || !r.ok {
				t.Fatalf("rerun: %+v %v", r, err)
			}
			if got := barriertest.KafkaFiles(t, dir); !maps.Equal(got, after) || edit.HasJournal(dir) {
				t.Fatal("the rerun did not finish the edit, or left the legacy journal")
			}
			for _, name := range []string{edit.JournalName, edit.LegacyJournalName} {
				if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s left behind", name)
				}
			}
		})
	}
}

// TestEditProgressCountsEveryCopiedByte: for every job, Options.Progress
// is called with the bytes backed up and staged, and they add up to what
// CopyBytes says a run copies (what a progress line's total is). Before
// it, an apply was silent however many bytes it copied.
func TestEditProgressCountsEveryCopiedByte(t *testing.T) {
	for _, c := range editCases() {
		t.Run(c.name, func(t *testing.T) {
			template, _ := c.world(t)
			root := copyWorld(t, template)
			var done int64
			calls := 0
			r, err := c.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup"),
				Progress: func(n int64) {
					if n <= 0 {
						t.Errorf("Progress(%d): not a count of bytes", n)
					}
					done += n
					calls++
				}})
			if err != nil {
				t.Fatal(err)
			}
			want := edit.CopyBytes(r.ops)
			if want == 0 || calls == 0 {
				t.Fatalf("the job copies %d bytes in %d calls: nothing to measure", want, calls)
			}
			if done != want {
				t.Errorf("Progress counted %d bytes, CopyBytes says %d", done, want)
			}
		})
	}
}

// TestEditManifestRestoresExactly: following the backup manifest by hand —
// copy back every file listed with a size, delete every file listed with
// size -1, remove every directory in createdDirs — gives back exactly the
// log directory from before, for every job; a mirror into a new partition
// directory lists that directory (issue 12, defect 8), the others none.
func TestEditManifestRestoresExactly(t *testing.T) {
	for _, tc := range editCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := complete(t, tc)
			template, rel, root, before := c.template, c.rel, c.root, c.before
			b := testkit.ReadFile(t, filepath.Join(c.backup, edit.BackupManifestName))
			var m struct {
				PartitionDir string `json:"partitionDir"`
				Files        []struct {
					Name   string      `json:"name"`
					Action edit.Action `json:"action"`
					Size   int64       `json:"size"`
				} `json:"files"`
				CreatedDirs []string `json:"createdDirs"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(template, rel))
			if created := errors.Is(statErr, os.ErrNotExist); created != (len(m.CreatedDirs) == 1) ||
				(created && m.CreatedDirs[0] != filepath.Join(root, rel)) {
				t.Fatalf("createdDirs %v, the job created the partition directory: %v", m.CreatedDirs, created)
			}
			for _, f := range m.Files {
				path := filepath.Join(m.PartitionDir, f.Name)
				if f.Action == edit.OpAppend {
					// truncate -s SIZE: an append wrote only after them.
					if err := os.Truncate(path, f.Size); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if f.Size < 0 {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
					continue
				}
				data := testkit.ReadFile(t, filepath.Join(c.backup, f.Name))
				testkit.WriteFile(t, path, data)
			}
			for _, d := range m.CreatedDirs {
				if err := os.Remove(d); err != nil {
					t.Fatalf("removing the created directory %s: %v", d, err)
				}
			}
			if got := worldContent(t, root); !maps.Equal(got, before) {
				t.Fatalf("the manual restore is not exact: %v", diffContent(before, got))
			}
		})
	}
}

// TestEditCreatedCopyIdentifiedBySources: a created file that is source
// ranges alone (a mirror's new segment) is not hashed: the staging
// read-back compares every byte with the sources, and a rerun identifies
// the committed file by comparing it with them again, so the committing
// journal records no hash for it. A rerun then finishes the edit when the
// file is the sources' bytes, and refuses it when one byte differs. (The
// SHA-256 of the whole copy cost more CPU than the copy.)
func TestEditCreatedCopyIdentifiedBySources(t *testing.T) {
	tc := mirrorCase("new-directory", true, 1<<20)
	template, rel := tc.world(t)
	after, _ := referenceRun(t, tc, template, rel, edit.Options{})
	for _, damage := range []bool{false, true} {
		root, dir := interruptedAfterLogCommit(t, tc, template, rel)
		j, err := edit.ReadJournal(dir)
		if err != nil {
			t.Fatal(err)
		}
		var plan struct {
			Ops []edit.FileOp `json:"ops"`
		}
		if err := json.Unmarshal(j.Plan, &plan); err != nil {
			t.Fatal(err)
		}
		var log *edit.FileOp
		for i := range plan.Ops {
			if op := &plan.Ops[i]; op.Action == edit.OpCreate && len(op.Sources) > 0 {
				log = op
			}
		}
		if log == nil || log.NewSHA256 != "" {
			t.Fatalf("the journal's created copy: %+v, want one without a hash", log)
		}
		if damage {
			flipLastByte(t, filepath.Join(dir, log.Name))
		}
		_, err = tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b2")})
		var re *edit.RefusalError
		switch {
		case damage && (!errors.As(err, &re) || re.Reason != edit.RefuseJournalMismatch):
			t.Fatalf("rerun over a changed copy: %v, want a %s refusal", err, edit.RefuseJournalMismatch)
		case !damage && err != nil:
			t.Fatalf("rerun: %v", err)
		case !damage && !maps.Equal(barriertest.KafkaFiles(t, dir), after):
			t.Fatal("the rerun did not converge to the uninterrupted result")
		}
	}
}

// TestEditCreatedCopyWithoutItsSources: a mirror interrupted after
// committing a copied segment, whose source segments are then deleted
// (the source's retention), is still rolled back: the copy is recognised
// by its batches' framing, which the staging read-back recorded in the
// journal (NewFraming), and removed; without that record the rollback
// refuses, as it must with a copy that differs.
func TestEditCreatedCopyWithoutItsSources(t *testing.T) {
	tc := mirrorCase("new-directory", true, 1<<20)
	template, rel := tc.world(t)
	before := worldContent(t, template)
	for _, tamper := range []string{"", "no framing", "copy changed"} {
		root, dir := interruptedAfterLogCommit(t, tc, template, rel)
		src := filepath.Join(root, "a", "mirror-0")
		logs, err := filepath.Glob(filepath.Join(src, "*"+segment.LogSuffix))
		if err != nil || len(logs) == 0 {
			t.Fatalf("the source's segments: %v %v", logs, err)
		}
		var copied string
		barriertest.RewriteJournal(t, dir, func(j map[string]any) {
			for _, op := range j["plan"].(map[string]any)["ops"].([]any) {
				op := op.(map[string]any)
				if op["action"] == "create" && op["sources"] != nil {
					if op["newFraming"] == nil || op["newFraming"] == "" {
						t.Fatalf("the journal's copy %s records no framing", op["name"])
					}
					copied = op["name"].(string)
					if tamper == "no framing" {
						delete(op, "newFraming")
					}
				}
			}
		})
		if tamper == "copy changed" {
			flipLastByte(t, filepath.Join(dir, copied))
		}
		// Retention on the source: its segments are gone (the rest of the
		// world stays, to compare with).
		gone := map[string][]byte{}
		for _, l := range logs {
			b := testkit.ReadFile(t, l)
			gone[l] = b
			if err := os.Remove(l); err != nil {
				t.Fatal(err)
			}
		}
		_, err = edit.Rollback(dir, edit.Options{}, kinds...)
		var re *edit.RefusalError
		switch tamper {
		case "":
			if err != nil {
				t.Fatalf("rollback with the sources gone: %v", err)
			}
			for l, b := range gone {
				testkit.WriteFile(t, l, b)
			}
			if got := worldContent(t, root); !maps.Equal(got, before) {
				t.Fatal("the rollback did not restore the world as it was")
			}
		default:
			if !errors.As(err, &re) || re.Reason != edit.RefuseJournalMismatch {
				t.Fatalf("%s: rollback with the sources gone: %v, want a %s refusal", tamper, err, edit.RefuseJournalMismatch)
			}
		}
	}
}

// interruptedAfterLogCommit runs tc on a copy of template, stopped (as a
// crash would) after the commit of a .log and before the journal records
// it; it returns the copy's root and partition directory.
func interruptedAfterLogCommit(t *testing.T, tc editCase, template, rel string) (root, dir string) {
	t.Helper()
	root = copyWorld(t, template)
	_, err := tc.apply(root, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
		if strings.HasPrefix(step, "journal:") && strings.HasSuffix(step, segment.LogSuffix) {
			return barriertest.ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, barriertest.ErrCrash) {
		t.Fatalf("interrupted run: %v", err)
	}
	return root, filepath.Join(root, rel)
}

// flipLastByte changes the last byte of the file at path.
func flipLastByte(t *testing.T, path string) {
	t.Helper()
	b := testkit.ReadFile(t, path)
	b[len(b)-1] ^= 1
	testkit.WriteFile(t, path, b)
}
