package mirror

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// stagedMirror applies a mirror of the fixture into a new directory,
// first letting tamper change the plan, and returns the plan and its
// job (whose staged check the read-back fed).
func stagedMirror(t *testing.T, tamper func(p *Plan)) (*Plan, *job) {
	t.Helper()
	return stagedMirrorAfter(t, -1, tamper)
}

// stagedMirrorAfter is stagedMirror into a destination that first
// mirrored the fixture up to prefix (-1: none) in one segment, so that
// the mirror appends to it (edit.OpAppend).
func stagedMirrorAfter(t *testing.T, prefix int64, tamper func(p *Plan)) (*Plan, *job) {
	t.Helper()
	return stagedMirrorSeg(t, prefix, 1<<20, tamper)
}

// stagedMirrorSeg is stagedMirrorAfter with segments of segBytes.
func stagedMirrorSeg(t *testing.T, prefix, segBytes int64, tamper func(p *Plan)) (*Plan, *job) {
	t.Helper()
	src, dst := segmentedPair(t)
	o := mirrorOpts(-1)
	if prefix >= 0 {
		o.SegmentBytes = segBytes
		first := o
		first.Upto = prefix
		mustMirror(t, src, dst, first)
	}
	p, err := PlanMirror(src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		tamper(p)
	}
	j := jobOf(EditKind, p).(*job)
	if j.staged == nil {
		t.Fatal("the mirror has no staged check")
	}
	if _, err := edit.Apply(j, edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk")}); err != nil {
		t.Fatal(err)
	}
	return p, j
}

// TestMirrorStagedCheckIsVerify: a mirror into an empty destination is
// verified on the staging read-back (index checks against the batches,
// the replay, every batch compared with the source there), and that
// verdict is the one Verify gives reading the committed files back, for
// a clean mirror and for one whose planned index is wrong.
func TestMirrorStagedCheckIsVerify(t *testing.T) {
	p, j := stagedMirror(t, nil)
	wantCleanStaged(t, p, j, "the staged check")

	// A planned index entry that does not match its batch is found on the
	// staged batches, as Verify finds it in the committed file.
	var name string
	p, j = stagedMirror(t, func(p *Plan) {
		for i := range p.Ops {
			op := &p.Ops[i]
			if strings.HasSuffix(op.Name, segment.IndexSuffix) && len(op.Content) >= 8 {
				op.Content = append([]byte(nil), op.Content...)
				op.Content[3]++ // the first entry's relative offset
				name = op.Name
				return
			}
		}
		t.Fatal("no index entry planned")
	})
	if v := stagedIsVerify(t, p, j, "the staged check"); v.OK() || len(v.IndexProblems) != 1 || !strings.HasPrefix(v.IndexProblems[0], strings.TrimSuffix(name, segment.IndexSuffix)) {
		t.Fatalf("a wrong index entry not found on the staged batches: %+v", v)
	}
}

// TestMirrorStagedCheckNeedsTheStagedFiles: the staged verdict stands
// only for the files staged and verified: a committed file replaced since
// (another inode, even with the same bytes) or changed in place, or a
// segment the plan did not make, leaves the check to Verify, which reads
// the destination back.
func TestMirrorStagedCheckNeedsTheStagedFiles(t *testing.T) {
	for _, tc := range []struct {
		what   string
		change func(t *testing.T, p *Plan)
	}{
		{"a .log replaced by a copy", func(t *testing.T, p *Plan) {
			path := filepath.Join(p.Dir, segment.SegmentFileName(p.SegmentsCreated[0], segment.LogSuffix))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a .timeindex changed in place", func(t *testing.T, p *Plan) {
			path := filepath.Join(p.Dir, segment.SegmentFileName(p.SegmentsCreated[0], segment.TimeIndexSuffix))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(make([]byte, 12))
			f.Close()
		}},
		{"a segment added", func(t *testing.T, p *Plan) {
			path := filepath.Join(p.Dir, segment.SegmentFileName(p.NewLogEndOffset+100, segment.LogSuffix))
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		p, j := stagedMirror(t, nil)
		if _, ok := j.staged.verdict(); !ok {
			t.Fatalf("%s: no staged verdict before the change", tc.what)
		}
		tc.change(t, p)
		if v, ok := j.staged.verdict(); ok {
			t.Errorf("%s: the staged verdict stands: %+v", tc.what, v)
		}
	}
}

// TestMirrorAppendVerifiedOnReadBack: a mirror that appends to the
// destination's last segment is verified on the read-back of the appended
// bytes alone: its batches compared with the source and CRC-checked
// there, the continued segment's index entries for them checked (the kept
// ones are the plan's kept prefix), the .txnindex checked by a replay from
// the plan's producer state at the destination's end. That verdict is
// Verify's, which reads the whole destination, for a clean append, one
// whose planned index entry for an appended batch is wrong and one whose
// planned .txnindex misses an aborted transaction.
func TestMirrorAppendVerifiedOnReadBack(t *testing.T) {
	p, j := stagedMirrorAfter(t, 9, nil)
	if p.AppendSegment < 0 || len(p.AbortedTxns) == 0 {
		t.Fatalf("the fixture's second mirror appends to segment %d with %d aborted transactions: not the case tested", p.AppendSegment, len(p.AbortedTxns))
	}
	wantCleanStaged(t, p, j, "the append's read-back")
	for _, tc := range []struct {
		what   string
		suffix string
		change func(op *edit.FileOp)
	}{
		{"an appended batch's index entry", segment.IndexSuffix, func(op *edit.FileOp) {
			op.Content[len(op.Content)-5]++ // the last entry's relative offset
		}},
		{"an aborted transaction", segment.TxnIndexSuffix, func(op *edit.FileOp) {
			op.Content = op.Content[:len(op.Content)-segment.AbortedTxnSize]
			op.NewSize -= segment.AbortedTxnSize
		}},
	} {
		p, j := stagedMirrorAfter(t, 9, func(p *Plan) {
			for i := range p.Ops {
				if op := &p.Ops[i]; strings.HasSuffix(op.Name, tc.suffix) && len(op.Content) > 0 && op.Action != edit.OpDelete {
					op.Content = append([]byte(nil), op.Content...)
					tc.change(op)
					return
				}
			}
			t.Fatalf("%s: no %s planned", tc.what, tc.suffix)
		})
		if v := stagedIsVerify(t, p, j, tc.what+": the append's read-back"); v.OK() {
			t.Fatalf("%s: a wrong one not found on the read-back: %+v", tc.what, v)
		}
	}
}

// TestMirrorAppendAndRollVerifiedOnReadBack: a mirror that appends to the
// destination's last segment and rolls new ones stages (and reads back)
// the new segments before it appends to the old one; each segment's
// batches are replayed from the producer state the plan held at its
// start, so the read-back still verifies the mirror, as Verify does.
// Before, the batches seen out of log order sent it to Verify, which read
// the whole destination again.
func TestMirrorAppendAndRollVerifiedOnReadBack(t *testing.T) {
	p, j := stagedMirrorSeg(t, 9, 700, nil)
	if p.AppendSegment < 0 || len(p.SegmentsCreated) == 0 {
		t.Fatalf("the mirror continues segment %d and creates %v: not the case tested", p.AppendSegment, p.SegmentsCreated)
	}
	wantCleanStaged(t, p, j, "the read-back")
}

// stagedIsVerify is the verdict of j's staged check (what), failing t
// when it gives none, or one other than Verify gives reading p's
// committed files back.
func stagedIsVerify(t *testing.T, p *Plan, j *job, what string) *Verification {
	t.Helper()
	v, ok := j.staged.verdict()
	if !ok {
		t.Fatalf("%s gave no verdict", what)
	}
	want, err := Verify(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("%s: verdict %+v, Verify %+v", what, v, want)
	}
	return v
}

// wantCleanStaged checks that j's staged check (what) is Verify's verdict
// and clean, every copied batch compared.
func wantCleanStaged(t *testing.T, p *Plan, j *job, what string) {
	t.Helper()
	if v := stagedIsVerify(t, p, j, what); !v.OK() || v.Compared == 0 || v.Compared != p.Copied.Batches {
		t.Fatalf("%s: verdict %+v for %d copied batches", what, v, p.Copied.Batches)
	}
}
