package edit_test

import (
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/edit"
)

// TestRestoreUndoesCompletedEdits is issue 25's item 15: after a
// completed write, --rollback said "no interrupted operation", while the
// backup's kseg-backup.json holds all a restore needs. For every write
// command's job, a restore from the backup folder gives back exactly the
// log directory from before (a mirror's created partition directory
// removed), under the same lock and journal; a second restore has nothing
// to do.
func TestRestoreUndoesCompletedEdits(t *testing.T) {
	for _, tc := range editCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := complete(t, tc)
			root, bd, before := c.root, c.backup, c.before
			p, err := edit.PlanRestore(bd, edit.RestoreOptions{})
			if err != nil || p.NothingToDo || p.Completed == "" {
				t.Fatalf("plan: %+v %v", p, err)
			}
			for _, f := range p.Files {
				if f.State != edit.RestoreAfter {
					t.Fatalf("%s is %s, want %s: the edit just completed", f.Name, f.State, edit.RestoreAfter)
				}
			}
			r, err := edit.ApplyRestore(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "rb")})
			if err != nil || r.Verification == nil || !r.Verification.OK() {
				t.Fatalf("restore: %+v %v", r, err)
			}
			if got := worldContent(t, root); !maps.Equal(got, before) {
				t.Fatalf("the restore is not exact: %v", diffContent(before, got))
			}
			again, err := edit.PlanRestore(bd, edit.RestoreOptions{})
			if err != nil || !again.NothingToDo {
				t.Fatalf("a second restore: %+v %v", again, err)
			}
		})
	}
}

// TestRestoreRefusesChangedPartition: a file that changed since the edit
// completed (a broker appended, another edit) is named and refused
// (changed), with nothing touched; forced, the backup is restored over it
// too. A backup without the record of what the edit left (an older
// kseg's) is refused the same way unless forced.
func TestRestoreRefusesChangedPartition(t *testing.T) {
	tc := injectCase("truncate")
	template, rel := tc.world(t)
	before := worldContent(t, template)
	for _, tamper := range []string{"changed", "no result recorded"} {
		root := copyWorld(t, template)
		dir := filepath.Join(root, rel)
		bd := filepath.Join(t.TempDir(), "b")
		r, err := tc.apply(root, edit.Options{BackupDir: bd})
		if err != nil {
			t.Fatal(err)
		}
		victim := ""
		for _, op := range r.ops {
			if op.Action != edit.OpDelete && op.NewSize > 0 {
				victim = op.Name
			}
		}
		switch tamper {
		case "changed":
			flipLastByte(t, filepath.Join(dir, victim))
		default:
			b := testkit.ReadFile(t, filepath.Join(bd, edit.BackupManifestName))
			s := string(b)
			i := strings.Index(s, `"completed"`)
			j := strings.Index(s[i:], "\n")
			s = s[:i] + s[i+j+1:]
			testkit.WriteFile(t, filepath.Join(bd, edit.BackupManifestName), []byte(s))
		}
		snap := barriertest.SnapDir(t, root)
		p, err := edit.PlanRestore(bd, edit.RestoreOptions{})
		var re *edit.RefusalError
		if !errors.As(err, &re) || re.Reason != edit.RefuseChanged || p == nil {
			t.Fatalf("%s: restore: %v, want a %s refusal with its plan", tamper, err, edit.RefuseChanged)
		}
		if tamper == "changed" && !strings.Contains(err.Error(), victim) {
			t.Fatalf("the refusal does not name %s: %v", victim, err)
		}
		barriertest.AssertUnchanged(t, snap, root)
		p, err = edit.PlanRestore(bd, edit.RestoreOptions{Force: true})
		if err != nil {
			t.Fatalf("%s: forced: %v", tamper, err)
		}
		if _, err := edit.ApplyRestore(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "rb")}); err != nil {
			t.Fatalf("%s: forced restore: %v", tamper, err)
		}
		if got := worldContent(t, root); !maps.Equal(got, before) {
			t.Fatalf("%s: the forced restore is not exact: %v", tamper, diffContent(before, got))
		}
	}
}

// TestRestoreIsCrashSafe: a restore stopped at its first commit step (as
// by a crash) leaves its journal; a rollback of it gives back the
// partition as the edit left it, and a rerun finishes the restore.
func TestRestoreIsCrashSafe(t *testing.T) {
	tc := mirrorCase("align", false, 700)
	c := complete(t, tc)
	rel, root, bd, before := c.rel, c.root, c.backup, c.before
	after := worldContent(t, root)
	dir := filepath.Join(root, rel)
	p, err := edit.PlanRestore(bd, edit.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = edit.ApplyRestore(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "rb"), FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return barriertest.ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, barriertest.ErrCrash) || !edit.HasJournal(dir) {
		t.Fatalf("interrupted restore: %v", err)
	}
	rb := t.TempDir()
	barriertest.CopyTree(t, root, rb)
	if _, err := edit.Rollback(filepath.Join(rb, rel), edit.Options{}, edit.RestoreKind); err != nil {
		t.Fatalf("rollback of the restore: %v", err)
	}
	if got := worldContent(t, rb); !maps.Equal(got, after) {
		t.Fatalf("the rollback of the restore is not the edit's result: %v", diffContent(after, got))
	}
	p, err = edit.PlanRestore(bd, edit.RestoreOptions{})
	if err != nil || p.Resume == nil {
		t.Fatalf("rerun: %+v %v", p, err)
	}
	if _, err := edit.ApplyRestore(p, edit.Options{}); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if got := worldContent(t, root); !maps.Equal(got, before) {
		t.Fatalf("the finished restore is not exact: %v", diffContent(before, got))
	}
}

// TestRestoreManifestIsUntrusted: a manifest naming a file outside the
// partition, or that is not a Kafka file, is refused (bad-backup) and
// nothing is touched.
func TestRestoreManifestIsUntrusted(t *testing.T) {
	tc := injectCase("truncate")
	template, _ := tc.world(t)
	for _, bad := range []string{"../victim", "victim"} {
		root := copyWorld(t, template)
		bd := filepath.Join(t.TempDir(), "b")
		if _, err := tc.apply(root, edit.Options{BackupDir: bd}); err != nil {
			t.Fatal(err)
		}
		mp := filepath.Join(bd, edit.BackupManifestName)
		b := testkit.ReadFile(t, mp)
		s := strings.Replace(string(b), `"name": "`, `"name": "`+bad+`", "was": "`, 1)
		testkit.WriteFile(t, mp, []byte(s))
		snap := barriertest.SnapDir(t, root)
		_, err := edit.PlanRestore(bd, edit.RestoreOptions{Force: true})
		var re *edit.RefusalError
		if !errors.As(err, &re) || re.Reason != edit.RefuseBadBackup {
			t.Fatalf("a manifest naming %q: %v, want a %s refusal", bad, err, edit.RefuseBadBackup)
		}
		barriertest.AssertUnchanged(t, snap, root)
	}
}
