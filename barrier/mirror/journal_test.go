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
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("rerun: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	if _, err = Rollback(dir, edit.Options{}); !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("rollback: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	barriertest.AssertUnchanged(t, before, root)
}
