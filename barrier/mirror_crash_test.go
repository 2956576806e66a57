package barrier

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
)

// mirrorTemplate writes, under a fresh root, the source a/mirror-0 (the
// barriertest fixture) and, unless fresh, a destination b/mirror-0 that
// mirrored it up to 11, failed over and wrote a batch of its own (so it
// must be aligned). It returns the root.
func mirrorTemplate(t *testing.T, fresh bool) string {
	t.Helper()
	root := t.TempDir()
	src := barriertest.WritePartition(t, filepath.Join(root, "a"), mirrorBatches(t), 400)
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fresh {
		return root
	}
	dst := filepath.Join(root, "b", "mirror-0")
	mustMirror(t, src, dst, mirrorOpts(11))
	o := segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}
	barriertest.AppendLocal(t, dst, [][]byte{Build(Spec{Timestamp: injectTs})}, o)
	barriertest.AppendLocal(t, dst, [][]byte{dataBatch(t, 0, 1, 7007, 0, 0, false, 0)}, o)
	return root
}

// partitionFiles is kafkaFiles, or nothing when dir does not exist.
func partitionFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	return kafkaFiles(t, dir)
}

// TestMirrorCrashAtEveryStep stops a mirror at every step ApplyMirror
// takes (but most temp-file half-steps), into a new partition directory
// and with --align into a diverged
// one, and checks what TestInjectCrashAtEveryStep checks: every Kafka file
// is its old or its new content, a rollback restores the partition as it
// was (removing a directory the mirror created), and a rerun, interrupted
// once more, converges to the bytes of an uninterrupted run.
func TestMirrorCrashAtEveryStep(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fresh        bool
		segmentBytes int64
	}{
		// One new segment: the steps particular to creating a directory.
		{"new-directory", true, 1 << 20},
		// Align: deletions, truncation, continuation, new segments.
		{"align", false, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			template := mirrorTemplate(t, tc.fresh)
			opts := mirrorOpts(-1)
			opts.Align = !tc.fresh
			// Few files, so few steps: each is a full fsynced run (the
			// generic steps are exercised at length by
			// TestInjectCrashAtEveryStep).
			opts.SegmentBytes = tc.segmentBytes
			fresh := func() (string, string) {
				root := t.TempDir()
				copyTree(t, template, root)
				return filepath.Join(root, "a", "mirror-0"), filepath.Join(root, "b", "mirror-0")
			}
			src, ref := fresh()
			before := partitionFiles(t, ref)
			rep := mustMirror(t, src, ref, opts)
			after := partitionFiles(t, ref)
			steps := rep.Steps
			if len(steps) < 15 {
				t.Fatalf("only %d steps: %v", len(steps), steps)
			}
			for i, step := range steps {
				// The ":tmp" half-steps (a temp file written, not yet
				// fsynced and renamed) are generic and exercised at length
				// by TestInjectCrashAtEveryStep; of them, only the staging
				// of a .log (copied from the source's segments) and the
				// first journal are particular to the mirror.
				if strings.HasSuffix(step, ":tmp") && !strings.HasPrefix(step, "stage:") && step != "journal:prepared:tmp" {
					continue
				}
				src, dst := fresh()
				p, err := PlanMirror(src, dst, opts)
				if err != nil {
					t.Fatal(err)
				}
				_, err = ApplyMirror(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: faultAt(i)})
				var fe *FaultError
				if !errors.As(err, &fe) || fe.Step != step {
					t.Fatalf("step %d (%s): %v", i, step, err)
				}
				cur := partitionFiles(t, dst)
				assertOldOrNew(t, i, step, before, after, cur)
				if HasJournal(dst) {
					rb := t.TempDir()
					copyTree(t, filepath.Dir(dst), rb)
					rdir := filepath.Join(rb, filepath.Base(dst))
					rr, err := Rollback(rdir, ApplyOptions{})
					if err != nil || rr.Mirror == nil {
						t.Fatalf("step %d (%s): rollback: %v", i, step, err)
					}
					if got := partitionFiles(t, rdir); !maps.Equal(got, before) {
						t.Fatalf("step %d (%s): rollback did not restore the partition", i, step)
					}
					if _, err := os.Stat(rdir); tc.fresh && !errors.Is(err, os.ErrNotExist) {
						t.Fatalf("step %d (%s): rollback left the directory the mirror created", i, step)
					}
				}
				if i%3 == 0 {
					// Now and then, the rerun is interrupted too.
					p2, err := PlanMirror(src, dst, opts)
					if err != nil {
						t.Fatalf("step %d (%s): replan: %v", i, step, err)
					}
					_, err = ApplyMirror(p2, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b2"), FaultAt: faultAt(1 + i%5)})
					if err != nil && !errors.As(err, &fe) {
						t.Fatalf("step %d (%s): second run: %v", i, step, err)
					}
				}
				p3, err := PlanMirror(src, dst, opts)
				if err != nil {
					t.Fatalf("step %d (%s): replan: %v", i, step, err)
				}
				rep3, err := ApplyMirror(p3, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b3")})
				if err != nil {
					t.Fatalf("step %d (%s): final run: %v", i, step, err)
				}
				if v := rep3.MirrorVerification; !rep3.NothingToDo && (v == nil || !v.OK()) {
					t.Fatalf("step %d (%s): verification %+v", i, step, v)
				}
				if got := partitionFiles(t, dst); !maps.Equal(got, after) {
					t.Fatalf("step %d (%s): rerun did not converge to the uninterrupted result", i, step)
				}
			}
		})
	}
}
