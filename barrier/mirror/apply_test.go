package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// sourceLogs are the .log files of a partition directory.
func sourceLogs(t *testing.T, dir string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no .log in %s: %v", dir, err)
	}
	return logs
}

// TestMirrorReadsSourcesOnlyWhenStaging: sealing a mirror hashes what it
// replaces, not the source ranges it copies (their bytes are read once,
// when the staged copy is checked against them): with the source's
// segments out of the way while the engine seals, the mirror still
// succeeds and verifies. Hashing the sources at seal read every copied
// byte once more.
func TestMirrorReadsSourcesOnlyWhenStaging(t *testing.T) {
	src, dst := segmentedPair(t)
	p, err := PlanMirror(src, dst, mirrorOpts(-1))
	if err != nil {
		t.Fatal(err)
	}
	logs := sourceLogs(t, src)
	hidden := false
	move := func(from, to string) {
		for _, l := range logs {
			if err := os.Rename(l+from, l+to); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk"), FaultAt: func(step string) error {
		switch {
		case step == "seal":
			move("", ".away")
			hidden = true
		case strings.HasPrefix(step, "stage:") && hidden:
			move(".away", "")
			hidden = false
		}
		return nil
	}}
	rep, err := Apply(p, o)
	if err != nil {
		t.Fatalf("apply with the sources away while sealing: %v", err)
	}
	if !rep.Verification.OK() || rep.Verification.Compared != p.Copied.Batches {
		t.Fatalf("verification %+v", rep.Verification)
	}
}

// TestMirrorRefusesSourceChangedBeforeStaging: a source byte that changes
// between the plan and the staged copy (a broker truncating and
// rewriting it) is caught by the staged copy's read-back, before anything
// in the destination changes: the mirror is refused, the directory it was
// to create is gone.
func TestMirrorRefusesSourceChangedBeforeStaging(t *testing.T) {
	src, dst := segmentedPair(t)
	p, err := PlanMirror(src, dst, mirrorOpts(-1))
	if err != nil {
		t.Fatal(err)
	}
	var target edit.SourceRange
	for _, op := range p.Ops {
		if len(op.Sources) > 0 {
			target = op.Sources[0]
			break
		}
	}
	if target.Path == "" {
		t.Fatal("no source range in the plan")
	}
	o := edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk"), FaultAt: func(step string) error {
		if step == "backup-dir" {
			f, err := os.OpenFile(target.Path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, 1)
			pos := target.Pos + target.Len - 1
			f.ReadAt(b, pos)
			b[0] ^= 0xff
			if _, err := f.WriteAt(b, pos); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}}
	_, err = Apply(p, o)
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseChanged {
		t.Fatalf("want a %s refusal, got %v", edit.RefuseChanged, err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the destination directory is left: %v", err)
	}
}

// TestMirrorBacksUpAppendedSegmentByCopy: an incremental mirror replaces
// the active segment it appends to by a staged file; its backup is a copy
// of the old bytes, never a hard link to the live file. A link would be
// cheaper, but after a rollback the live file is the old inode again, and
// a broker started then appends to its active segment and rewrites its
// indexes in place: a linked "backup" would change with them. Here the
// run stops at its first commit step and is rolled back: every backup
// still holds the old bytes, in an inode of its own.
func TestMirrorBacksUpAppendedSegmentByCopy(t *testing.T) {
	src, dst := segmentedPair(t)
	// One segment: the second mirror appends to it.
	o := mirrorOpts(9)
	o.SegmentBytes = 1 << 20
	mustMirror(t, src, dst, o)
	o.Upto = -1
	p, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.AppendSegment < 0 {
		t.Fatal("the plan appends to no segment")
	}
	active := filepath.Join(dst, segment.SegmentFileName(p.AppendSegment, segment.LogSuffix))
	oldBytes, err := os.ReadFile(active)
	if err != nil {
		t.Fatal(err)
	}
	bk := filepath.Join(t.TempDir(), "bk")
	stop := errors.New("stopped")
	if _, err := Apply(p, edit.Options{BackupDir: bk, FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return stop
		}
		return nil
	}}); !errors.Is(err, stop) {
		t.Fatalf("apply: %v, want it stopped at its first commit step", err)
	}
	if _, err := Rollback(dst, edit.Options{}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(bk, filepath.Base(active))
	st, err := os.Stat(backup)
	if err != nil {
		t.Fatal(err)
	}
	live, err := os.Stat(active)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(live, st) {
		t.Errorf("the backup of %s is the live file's inode: a broker appending to it would change the backup", filepath.Base(active))
	}
	if got, _ := os.ReadFile(backup); string(got) != string(oldBytes) {
		t.Errorf("the backup does not hold the old bytes")
	}
	if got, _ := os.ReadFile(active); string(got) != string(oldBytes) {
		t.Errorf("the rollback did not restore the old bytes")
	}
}

// TestMirrorVerifyFindsDamage: the read-back check, reading the
// destination once, still finds a written segment's wrong index entry and
// a copied byte that differs from the source.
func TestMirrorVerifyFindsDamage(t *testing.T) {
	src, dst := segmentedPair(t)
	rep := mustMirror(t, src, dst, mirrorOpts(-1))
	p := rep.Plan
	pd, err := segment.OpenPartitionDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	var seg segment.SegmentFiles
	for _, s := range pd.Segments {
		if st, err := os.Stat(s.Index); err == nil && st.Size() >= 8 {
			seg = s
			break
		}
	}
	if seg.Log == "" {
		t.Fatal("no written segment with an index entry")
	}
	idx, err := os.ReadFile(seg.Index)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), idx...)
	bad[3]++ // the first entry's relative offset
	if err := os.WriteFile(seg.Index, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(p)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || len(v.IndexProblems) == 0 || !strings.Contains(v.IndexProblems[0], filepath.Base(seg.Log)) {
		t.Fatalf("a wrong index entry not found: %+v", v)
	}
	os.WriteFile(seg.Index, idx, 0o644)

	log, err := os.ReadFile(seg.Log)
	if err != nil {
		t.Fatal(err)
	}
	log[len(log)-1] ^= 0xff
	if err := os.WriteFile(seg.Log, log, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err = Verify(p); err != nil {
		t.Fatal(err)
	}
	if v.OK() || v.Mismatch == "" {
		t.Fatalf("a copied byte that differs not found: %+v", v)
	}
}
