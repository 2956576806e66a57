package barrier

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kseg/kseg/segment/edit"
)

// editCase is one write command's job over a template world: the edit
// engine (segment/edit) is exercised through every job the same way.
type editCase struct {
	name string
	// world writes a template and returns its root and the partition
	// directory's path relative to it.
	world func(t *testing.T) (root, rel string)
	// apply plans and applies in the world copied to root.
	apply func(root string, o ApplyOptions) (*Report, error)
	// minSteps guards against a job that silently does nothing.
	minSteps int
	// skip leaves out steps exercised by another case (the generic
	// temp-file half-steps), to keep the run short.
	skip func(step string) bool
}

func verdictOK(r *Report) bool {
	switch {
	case r.NothingToDo:
		return true
	case r.Verification != nil:
		return r.Verification.OK()
	case r.MirrorVerification != nil:
		return r.MirrorVerification.OK()
	case r.RepairVerification != nil:
		return r.RepairVerification.OK()
	}
	return false
}

func injectCase(mode Mode) editCase {
	return editCase{
		name: "inject-" + string(mode),
		world: func(t *testing.T) (string, string) {
			dir := writeFixture(t, mirrorBatches(t))
			return filepath.Dir(dir), filepath.Base(dir)
		},
		apply: func(root string, o ApplyOptions) (*Report, error) {
			opts := planOpts()
			opts.Mode = mode
			p, err := PlanInjection(filepath.Join(root, "mirror-0"), opts)
			if err != nil {
				return nil, err
			}
			return Apply(p, o)
		},
		minSteps: 20,
	}
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
		apply: func(root string, o ApplyOptions) (*Report, error) {
			p, err := PlanMirror(filepath.Join(root, "a", "mirror-0"), filepath.Join(root, "b", "mirror-0"), opts)
			if err != nil {
				return nil, err
			}
			return ApplyMirror(p, o)
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
		dir := crcDamagedOrders(t)
		return filepath.Dir(dir), filepath.Base(dir)
	},
	apply: func(root string, o ApplyOptions) (*Report, error) {
		p, err := PlanRepair(filepath.Join(root, "orders-0"), RepairOptions{})
		if err != nil {
			return nil, err
		}
		return ApplyRepair(p, o)
	},
	minSteps: 30,
}

// editCases are every write command's jobs: injection in both modes, a
// mirror into a new directory (one new segment: the steps of creating a
// directory) and with --align into a diverged one (deletions, truncation,
// continuation, new segments), a multi-segment repair.
func editCases() []editCase {
	return []editCase{
		injectCase(ModeTruncate),
		injectCase(ModeAbort),
		mirrorCase("new-directory", true, 1<<20),
		mirrorCase("align", false, 700),
		repairCase,
	}
}

// copyWorld copies a template world to a fresh root.
func copyWorld(t *testing.T, template string) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, template, root)
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
func TestEditCrashAtEveryStep(t *testing.T) {
	for _, tc := range editCases() {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := partitionFiles(t, filepath.Join(template, rel))
			ref := copyWorld(t, template)
			rep, err := tc.apply(ref, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b")})
			if err != nil {
				t.Fatal(err)
			}
			after := partitionFiles(t, filepath.Join(ref, rel))
			steps := rep.Steps
			if len(steps) < tc.minSteps {
				t.Fatalf("only %d steps: %v", len(steps), steps)
			}
			for i, step := range steps {
				if tc.skip != nil && tc.skip(step) {
					continue
				}
				root := copyWorld(t, template)
				dir := filepath.Join(root, rel)
				_, err := tc.apply(root, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: faultAt(i)})
				var fe *FaultError
				if !errors.As(err, &fe) || fe.Step != step {
					t.Fatalf("step %d (%s): %v", i, step, err)
				}
				cur := partitionFiles(t, dir)
				assertOldOrNew(t, i, step, before, after, cur)
				if _, err := os.Stat(dir); err == nil {
					if all := contentOf(snapDir(t, dir)); maps.Equal(all, cur) && !maps.Equal(all, before) && !maps.Equal(all, after) {
						t.Fatalf("step %d (%s): no kseg file left, yet the partition is neither before nor after", i, step)
					}
				}
				if HasJournal(dir) {
					rb := t.TempDir()
					copyTree(t, root, rb)
					rdir := filepath.Join(rb, rel)
					rr, err := Rollback(rdir, ApplyOptions{})
					if err != nil || !rr.RolledBack {
						t.Fatalf("step %d (%s): rollback: %v", i, step, err)
					}
					if got := partitionFiles(t, rdir); !maps.Equal(got, before) {
						t.Fatalf("step %d (%s): rollback did not restore the partition", i, step)
					}
					if _, err := os.Stat(rdir); len(before) == 0 && !errors.Is(err, os.ErrNotExist) {
						t.Fatalf("step %d (%s): rollback left the directory the job created", i, step)
					}
				}
				if i%3 == 0 {
					// Now and then, the rerun is interrupted too.
					_, err = tc.apply(root, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b2"), FaultAt: faultAt(1 + i%7)})
					if err != nil && !errors.As(err, &fe) {
						t.Fatalf("step %d (%s): second run: %v", i, step, err)
					}
				}
				rep3, err := tc.apply(root, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b3")})
				if err != nil {
					t.Fatalf("step %d (%s): final run: %v", i, step, err)
				}
				if !verdictOK(rep3) {
					t.Fatalf("step %d (%s): verification failed: %+v", i, step, rep3)
				}
				if got := contentOf(snapDir(t, dir)); !maps.Equal(got, after) {
					t.Fatalf("step %d (%s): rerun did not converge to the uninterrupted result", i, step)
				}
			}
		})
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
			template, rel := tc.world(t)
			before := worldContent(t, template)
			ref := copyWorld(t, template)
			writes := 0
			if _, err := tc.apply(ref, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), Writer: failWriteAt(-1, &writes, nil)}); err != nil {
				t.Fatal(err)
			}
			after := partitionFiles(t, filepath.Join(ref, rel))
			if writes < 5 {
				t.Fatalf("only %d writes", writes)
			}
			for k := 0; k < writes; k++ {
				root := copyWorld(t, template)
				bd := filepath.Join(t.TempDir(), "b")
				n := 0
				_, err := tc.apply(root, ApplyOptions{BackupDir: bd, Writer: failWriteAt(k, &n, syscall.ENOSPC)})
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("write %d: %v, want ENOSPC", k, err)
				}
				if got := worldContent(t, root); !maps.Equal(got, before) {
					t.Fatalf("write %d: the partition (or its log directory) is not byte-identical to before: %v", k, diffContent(before, got))
				}
				if _, err := os.Lstat(bd); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("write %d: the backup folder the run created is left behind", k)
				}
				if _, err := tc.apply(root, ApplyOptions{BackupDir: bd}); err != nil {
					t.Fatalf("write %d: rerun: %v", k, err)
				}
				if got := partitionFiles(t, filepath.Join(root, rel)); !maps.Equal(got, after) {
					t.Fatalf("write %d: the rerun did not converge to the undisturbed result", k)
				}
			}
		})
	}
}

// worldContent is every file of a world but the log directories' .lock,
// which taking the lock creates (empty) as a broker's LogManager does.
func worldContent(t *testing.T, root string) map[string]string {
	t.Helper()
	out := contentOf(snapDir(t, root))
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
	for _, tc := range []editCase{injectCase(ModeTruncate), repairCase} {
		t.Run(tc.name, func(t *testing.T) {
			template, rel := tc.world(t)
			before := worldContent(t, template)
			ref := copyWorld(t, template)
			rep, err := tc.apply(ref, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), SkipVerify: true})
			if err != nil {
				t.Fatal(err)
			}
			after := partitionFiles(t, filepath.Join(ref, rel))
			var ops []FileOp
			switch {
			case rep.Plan != nil:
				ops = rep.Plan.Ops
			case rep.Repair != nil:
				ops = rep.Repair.Ops
			}
			victim := ""
			for _, op := range ops {
				if op.Action != OpCreate {
					victim = op.Name
				}
			}
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
			_, err = tc.apply(root, ApplyOptions{BackupDir: bd})
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
			if _, err := tc.apply(root, ApplyOptions{BackupDir: bd}); err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if got := partitionFiles(t, filepath.Join(root, rel)); !maps.Equal(got, after) {
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
	template := writeFixture(t, mirrorBatches(t))
	// An interrupted injection: committing, two files changed.
	commitAt := func() int {
		ref := copyWorld(t, filepath.Dir(template))
		rep, err := Apply(mustPlan(t, filepath.Join(ref, "mirror-0"), planOpts()), ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b")})
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
		if _, err := Apply(mustPlan(t, filepath.Join(other, "mirror-0"), planOpts()), ApplyOptions{BackupDir: otherBackup}); err != nil {
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
		{"other-backup", func(j map[string]any, root string) { j["backupDir"] = otherBackup }},
		{"backup-without-manifest", func(j map[string]any, root string) { j["backupDir"] = root }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyWorld(t, filepath.Dir(template))
			dir := filepath.Join(root, "mirror-0")
			bd := filepath.Join(root, "..", filepath.Base(root)+"-backup")
			t.Cleanup(func() { os.RemoveAll(bd) })
			_, err := Apply(mustPlan(t, dir, planOpts()), ApplyOptions{BackupDir: bd, FaultAt: faultAt(commitAt)})
			var fe *FaultError
			if !errors.As(err, &fe) || !HasJournal(dir) {
				t.Fatalf("interrupted run: %v", err)
			}
			victim := filepath.Join(root, "victim")
			if err := os.WriteFile(victim, []byte("not kafka's"), 0o644); err != nil {
				t.Fatal(err)
			}
			jp := filepath.Join(dir, JournalName)
			var j map[string]any
			b, err := os.ReadFile(jp)
			if err != nil || json.Unmarshal(b, &j) != nil {
				t.Fatalf("journal: %v", err)
			}
			tc.tamper(j, root)
			if b, err = json.Marshal(j); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(jp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			snaps := map[string]map[string]fileSnap{}
			for _, d := range []string{root, bd, otherBackup} {
				snaps[d] = snapDir(t, d)
			}
			_, err = PlanInjection(dir, planOpts())
			var re *RefusalError
			if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
				t.Fatalf("rerun: %v, want a %s refusal", err, edit.RefuseJournal)
			}
			_, err = Rollback(dir, ApplyOptions{}, InjectKind)
			if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
				t.Fatalf("rollback: %v, want a %s refusal", err, edit.RefuseJournal)
			}
			for d, s := range snaps {
				assertUnchanged(t, s, d)
			}
		})
	}
}

// setOp sets a field of the i-th file operation of a journal's plan.
func setOp(j map[string]any, i int, key string, v any) {
	ops := j["plan"].(map[string]any)["ops"].([]any)
	ops[i].(map[string]any)[key] = v
}

// TestEditRollbackRefusesAnotherToolsJournal: `kseg repair --rollback` on
// the journal of an interrupted injection refuses (naming the tool) rather
// than saying it undid a repair.
func TestEditRollbackRefusesAnotherToolsJournal(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	_, err := Apply(mustPlan(t, dir, planOpts()), ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return errCrash
		}
		return nil
	}})
	if !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	before := snapDir(t, dir)
	_, err = Rollback(dir, ApplyOptions{}, RepairKind)
	var re *RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseOtherTool || !strings.Contains(err.Error(), InjectKind.Tool) {
		t.Fatalf("repair's rollback of an injection: %v", err)
	}
	assertUnchanged(t, before, dir)
	rep, err := Rollback(dir, ApplyOptions{}, InjectKind)
	if err != nil || rep.Plan == nil || !rep.RolledBack {
		t.Fatalf("inject-barrier's rollback: %v", err)
	}
}

// TestEditMirrorJournalSourcesAreChecked: a mirror's journal names the
// source segments whose bytes are copied into the destination. One naming
// any other file (one the broker's user could not read, say) is refused by
// a rerun and a rollback, and nothing is touched.
func TestEditMirrorJournalSourcesAreChecked(t *testing.T) {
	tc := mirrorCase("new-directory", true, 1<<20)
	template, rel := tc.world(t)
	root := copyWorld(t, template)
	dir := filepath.Join(root, rel)
	bd := filepath.Join(t.TempDir(), "b")
	_, err := tc.apply(root, ApplyOptions{BackupDir: bd, FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return errCrash
		}
		return nil
	}})
	if !errors.Is(err, errCrash) || !HasJournal(dir) {
		t.Fatalf("interrupted mirror: %v", err)
	}
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("not for the broker's eyes"), 0o600); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, JournalName)
	var j map[string]any
	b, err := os.ReadFile(jp)
	if err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("journal: %v", err)
	}
	tampered := false
	for _, op := range j["mirror"].(map[string]any)["ops"].([]any) {
		if srcs, ok := op.(map[string]any)["sources"].([]any); ok && len(srcs) > 0 {
			srcs[0].(map[string]any)["path"] = secret
			tampered = true
		}
	}
	if !tampered {
		t.Fatal("no source range in the journal")
	}
	if b, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapDir(t, root)
	_, err = PlanMirror(filepath.Join(root, "a", "mirror-0"), dir, mirrorOpts(-1))
	var re *RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("rerun: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	if _, err = Rollback(dir, ApplyOptions{}, MirrorKind); !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("rollback: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	assertUnchanged(t, before, root)
}
