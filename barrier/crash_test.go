package barrier

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var errCrash = errors.New("simulated crash")

// faultAt returns a FaultAt hook that fails the n-th call (0-based).
func faultAt(n int) func(string) error {
	i := 0
	return func(string) error {
		defer func() { i++ }()
		if i == n {
			return errCrash
		}
		return nil
	}
}

// kafkaFiles is a partition's file contents without kseg's own journal
// and staged files.
func kafkaFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := contentOf(snapDir(t, dir))
	for k := range out {
		if k == JournalName || k == JournalName+".tmp" || strings.HasSuffix(k, stagedSuffix) {
			delete(out, k)
		}
	}
	return out
}

// TestInjectCrashAtEveryStep stops an injection at every step Apply takes
// (as a crash would: nothing cleaned up) and checks that
//   - every Kafka file is then either exactly as before or exactly as after;
//   - without a journal left behind, the whole partition is exactly as
//     before or exactly as after;
//   - a rerun (itself interrupted once more, then run to the end) converges
//     to exactly the bytes of an uninterrupted run, leaving no journal or
//     staged file behind;
//   - a rollback instead brings back exactly the bytes before.
func TestInjectCrashAtEveryStep(t *testing.T) {
	for _, mode := range []Mode{ModeTruncate, ModeAbort} {
		t.Run(string(mode), func(t *testing.T) {
			template := writeFixture(t, mirrorBatches(t))
			opts := planOpts()
			opts.Mode = mode
			fresh := func() string {
				root := t.TempDir()
				copyTree(t, filepath.Dir(template), root)
				return filepath.Join(root, filepath.Base(template))
			}
			before := kafkaFiles(t, template)

			ref := fresh()
			rep := mustApply(t, mustPlan(t, ref, opts))
			after := kafkaFiles(t, ref)
			steps := rep.Steps
			if len(steps) < 20 {
				t.Fatalf("only %d steps: %v", len(steps), steps)
			}

			for i, step := range steps {
				dir := fresh()
				p := mustPlan(t, dir, opts)
				_, err := Apply(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: faultAt(i)})
				var fe *FaultError
				if !errors.As(err, &fe) || fe.Step != step {
					t.Fatalf("step %d (%s): %v", i, step, err)
				}
				cur := kafkaFiles(t, dir)
				assertOldOrNew(t, i, step, before, after, cur)
				if all := contentOf(snapDir(t, dir)); maps.Equal(all, cur) {
					// No kseg file left behind: exactly before or after.
					if !maps.Equal(all, before) && !maps.Equal(all, after) {
						t.Fatalf("step %d (%s): no journal, yet the partition is neither before nor after", i, step)
					}
				}

				// Rollback from a copy of this interrupted state.
				if HasJournal(dir) {
					rb := t.TempDir()
					copyTree(t, filepath.Dir(dir), rb)
					rdir := filepath.Join(rb, filepath.Base(dir))
					if _, err := Rollback(rdir, ApplyOptions{}); err != nil {
						t.Fatalf("step %d (%s): rollback: %v", i, step, err)
					}
					if got := contentOf(snapDir(t, rdir)); !maps.Equal(got, before) {
						t.Fatalf("step %d (%s): rollback did not restore the partition", i, step)
					}
				}

				// A rerun, interrupted once more, then run to the end.
				p2 := mustPlan(t, dir, opts)
				_, err = Apply(p2, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b2"), FaultAt: faultAt(1 + i%7)})
				if err != nil && !errors.As(err, &fe) {
					t.Fatalf("step %d (%s): second run: %v", i, step, err)
				}
				p3 := mustPlan(t, dir, opts)
				rep3, err := Apply(p3, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b3")})
				if err != nil {
					t.Fatalf("step %d (%s): final run: %v", i, step, err)
				}
				if !rep3.NothingToDo && !rep3.Verification.OK() {
					t.Fatalf("step %d (%s): verification %+v", i, step, rep3.Verification)
				}
				if got := contentOf(snapDir(t, dir)); !maps.Equal(got, after) {
					t.Fatalf("step %d (%s): rerun did not converge to the uninterrupted result", i, step)
				}
			}
		})
	}
}

// assertOldOrNew: after a fault at step i, every Kafka file of the
// partition holds exactly its content from before the operation or from
// after it, never anything in between.
func assertOldOrNew(t *testing.T, i int, step string, before, after, cur map[string]string) {
	t.Helper()
	names := map[string]bool{}
	for _, m := range []map[string]string{before, after, cur} {
		for k := range m {
			names[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if cur[k] != before[k] && cur[k] != after[k] {
			t.Fatalf("step %d (%s): %s is neither its old nor its new content", i, step, k)
		}
	}
}
