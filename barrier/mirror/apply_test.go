package mirror

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
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
	if !barriertest.IsRefusal(err, edit.RefuseChanged) {
		t.Fatalf("want a %s refusal, got %v", edit.RefuseChanged, err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the destination directory is left: %v", err)
	}
}

// TestMirrorAppendsInPlace: an incremental mirror that keeps every byte
// of the segment it continues appends to it in place (edit.OpAppend), as
// LogSegment.append does: the segment is not copied into the backup nor
// staged, the manifest records its old size and a fingerprint (restoring
// by hand is truncate -s), and the file stays the same inode. Here the run
// stops in the middle of the append (a torn tail) and is rolled back: the
// segment is its old bytes again, still the same inode. (Before, the
// segment was copied into the backup and staged whole: 1 GiB written
// twice to append 10 MiB.)
func TestMirrorAppendsInPlace(t *testing.T) {
	_, dst, _, p := appendingMirror(t)
	if p.AppendSegment < 0 {
		t.Fatal("the plan appends to no segment")
	}
	name := segment.SegmentFileName(p.AppendSegment, segment.LogSuffix)
	active := filepath.Join(dst, name)
	var op *edit.FileOp
	for i := range p.Ops {
		if p.Ops[i].Name == name {
			op = &p.Ops[i]
		}
	}
	if op == nil || op.Action != edit.OpAppend {
		t.Fatalf("the plan does not append to %s: %+v", name, op)
	}
	oldBytes, err := os.ReadFile(active)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(active)
	if err != nil {
		t.Fatal(err)
	}
	bk := filepath.Join(t.TempDir(), "bk")
	stop := errors.New("stopped")
	if _, err := Apply(p, edit.Options{BackupDir: bk, FaultAt: func(step string) error {
		if step == "append:"+name {
			return stop
		}
		return nil
	}}); !errors.Is(err, stop) {
		t.Fatalf("apply: %v, want it stopped in the middle of the append", err)
	}
	if st, err := os.Stat(active); err != nil || st.Size() <= before.Size() || !os.SameFile(st, before) {
		t.Fatalf("stopped mid-append, %s is not the same file with a torn tail: %v", name, err)
	}
	if _, err := os.Lstat(filepath.Join(bk, name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the backup holds a copy of %s: %v", name, err)
	}
	b, err := os.ReadFile(filepath.Join(bk, edit.BackupManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []struct {
			Name             string `json:"name"`
			Action           string `json:"action"`
			Size             int64  `json:"size"`
			SHA256           string `json:"sha256"`
			FingerprintBytes int64  `json:"fingerprintBytes"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range m.Files {
		if f.Name == name {
			found = true
			if f.Action != "append" || f.Size != int64(len(oldBytes)) || f.SHA256 == "" || f.FingerprintBytes != min(int64(len(oldBytes)), edit.FingerprintBytes) {
				t.Errorf("the manifest's entry for %s: %+v", name, f)
			}
		}
	}
	if !found {
		t.Errorf("the manifest does not list %s", name)
	}
	if _, err := Rollback(dst, edit.Options{}); err != nil {
		t.Fatal(err)
	}
	live, err := os.Stat(active)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(live, before) {
		t.Errorf("the rollback replaced %s instead of truncating it", name)
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
	pd := segtest.OpenDir(t, dst)
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

// appendingMirror mirrors the first offsets of a source into one segment
// (mirrorOpts(9)) and plans, with options o, the mirror of the rest: a
// plan that appends to that segment.
func appendingMirror(t *testing.T) (src, dst string, o Options, p *Plan) {
	t.Helper()
	src, dst = segmentedPair(t)
	o = mirrorOpts(9)
	o.SegmentBytes = 1 << 20
	mustMirror(t, src, dst, o)
	o.Upto = -1
	p, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	return src, dst, o, p
}
