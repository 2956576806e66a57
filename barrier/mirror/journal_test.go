package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment/edit"
)

// TestMirrorJournalSourcesAreChecked: a mirror's journal names the
// source segments whose bytes are copied into the destination. One naming
// any other file (one the broker's user could not read, say) is refused by
// a rerun and a rollback, and nothing is touched.
func TestMirrorJournalSourcesAreChecked(t *testing.T) {
	src, dir := mirrorPair(t)
	root := filepath.Dir(filepath.Dir(dir))
	p, err := PlanMirror(src, dir, mirrorOpts(-1))
	if err != nil {
		t.Fatal(err)
	}
	bd := filepath.Join(t.TempDir(), "b")
	_, err = Apply(p, edit.Options{BackupDir: bd, FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return barriertest.ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, barriertest.ErrCrash) || !edit.HasJournal(dir) {
		t.Fatalf("interrupted mirror: %v", err)
	}
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("not for the broker's eyes"), 0o600); err != nil {
		t.Fatal(err)
	}
	tampered := false
	barriertest.RewriteJournal(t, dir, func(j map[string]any) {
		for _, op := range j["plan"].(map[string]any)["ops"].([]any) {
			if srcs, ok := op.(map[string]any)["sources"].([]any); ok && len(srcs) > 0 {
				srcs[0].(map[string]any)["path"] = secret
				tampered = true
			}
		}
	})
	if !tampered {
		t.Fatal("no source range in the journal")
	}
	before := barriertest.SnapDir(t, root)
	_, err = PlanMirror(src, dir, mirrorOpts(-1))
	if !barriertest.IsRefusal(err, edit.RefuseJournal) {
		t.Fatalf("rerun: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	if _, err = Rollback(dir, edit.Options{}); !barriertest.IsRefusal(err, edit.RefuseJournal) {
		t.Fatalf("rollback: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	barriertest.AssertUnchanged(t, before, root)
}

// TestMirrorJournalAppendsAreChecked: a mirror appends only copied
// batches to a .log and entries to its indexes. A journal that has it
// append to another file (a producer snapshot, whose appended bytes
// would then be the journal's), or append content to a .log, is
// refused by a rerun and a rollback, and nothing is touched.
func TestMirrorJournalAppendsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		what   string
		tamper func(op map[string]any) bool
	}{
		{"an append to a producer snapshot", func(op map[string]any) bool {
			if op["action"] != "create" || !strings.HasSuffix(op["name"].(string), ".snapshot") {
				return false
			}
			op["action"], op["oldSize"] = "append", 0.0
			return true
		}},
		{"content appended to a .log", func(op map[string]any) bool {
			if op["action"] != "append" || !strings.HasSuffix(op["name"].(string), ".log") {
				return false
			}
			op["content"] = "AAAA"
			op["newSize"] = op["newSize"].(float64) + 3
			return true
		}},
	} {
		src, dst, o, p := appendingMirror(t)
		_, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
			if strings.HasPrefix(step, "commit:") {
				return barriertest.ErrCrash
			}
			return nil
		}})
		if !errors.Is(err, barriertest.ErrCrash) || !edit.HasJournal(dst) {
			t.Fatalf("%s: interrupted mirror: %v", tc.what, err)
		}
		tampered := false
		barriertest.RewriteJournal(t, dst, func(j map[string]any) {
			for _, op := range j["plan"].(map[string]any)["ops"].([]any) {
				if !tampered && tc.tamper(op.(map[string]any)) {
					tampered = true
				}
			}
		})
		if !tampered {
			t.Fatalf("%s: nothing to tamper with in the journal", tc.what)
		}
		root := filepath.Dir(filepath.Dir(dst))
		before := barriertest.SnapDir(t, root)
		_, err = PlanMirror(src, dst, o)
		if !barriertest.IsRefusal(err, edit.RefuseJournal) {
			t.Fatalf("%s: rerun: %v, want a %s refusal", tc.what, err, edit.RefuseJournal)
		}
		if _, err = Rollback(dst, edit.Options{}); !barriertest.IsRefusal(err, edit.RefuseJournal) {
			t.Fatalf("%s: rollback: %v, want a %s refusal", tc.what, err, edit.RefuseJournal)
		}
		barriertest.AssertUnchanged(t, before, root)
	}
}
