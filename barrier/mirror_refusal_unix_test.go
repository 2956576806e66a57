//go:build unix

package barrier

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
)

// TestMirrorRefusals: a broker holding the destination's log directory, a
// different topic id, a destination ending below the source's log start,
// an interrupted injection, and the source itself are refused, with
// nothing changed; a corrupt batch in the range to copy is not copied.
func TestMirrorRefusals(t *testing.T) {
	t.Run("broker-running", func(t *testing.T) {
		src, dst := mirrorPair(t)
		p, err := PlanMirror(src, dst, mirrorOpts(-1))
		if err != nil {
			t.Fatal(err)
		}
		holdBrokerLock(t, filepath.Join(filepath.Dir(dst), segment.LockName))
		before := snapDir(t, filepath.Dir(dst))
		_, err = PlanMirror(src, dst, mirrorOpts(-1))
		var re *RefusalError
		if !errors.As(err, &re) || re.Reason != RefuseLocked {
			t.Fatalf("plan: %v", err)
		}
		_, err = ApplyMirror(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b")})
		if !errors.As(err, &re) || re.Reason != RefuseLocked {
			t.Fatalf("apply: %v", err)
		}
		assertUnchanged(t, before, filepath.Dir(dst))
	})

	t.Run("topic-id", func(t *testing.T) {
		src, dst := mirrorPair(t)
		mustMirror(t, src, dst, mirrorOpts(5))
		id := barriertest.TopicID
		if err := segment.WriteFileAtomic(filepath.Join(src, segment.PartitionMetadataName),
			segment.EncodePartitionMetadata(segment.PartitionMetadata{TopicID: id}), 0o644); err != nil {
			t.Fatal(err)
		}
		other := id
		other[0]++
		if err := segment.WriteFileAtomic(filepath.Join(dst, segment.PartitionMetadataName),
			segment.EncodePartitionMetadata(segment.PartitionMetadata{TopicID: other}), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := PlanMirror(src, dst, mirrorOpts(-1))
		var re *RefusalError
		if !errors.As(err, &re) || re.Reason != RefuseTopicID {
			t.Fatalf("want a topic-id refusal, got %v", err)
		}
	})

	t.Run("gap", func(t *testing.T) {
		src, dst := mirrorPair(t)
		mustMirror(t, src, dst, mirrorOpts(5))
		// Retention on the source: its log now starts at 11.
		if err := os.WriteFile(filepath.Join(filepath.Dir(src), segment.LogStartOffsetCheckpointName),
			segment.EncodeOffsetCheckpoint([]segment.OffsetCheckpointEntry{{Topic: "mirror", Partition: 0, Offset: 11}}), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := PlanMirror(src, dst, mirrorOpts(-1))
		var ge *GapError
		if !errors.As(err, &ge) || ge.DstEnd != 5 || ge.SrcStart != 11 {
			t.Fatalf("want a gap 5..11, got %v", err)
		}
		r, err := VerifyEdge(src, dst, ChainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantFinding(t, r, FindingGap, 5)
	})

	t.Run("pending-injection", func(t *testing.T) {
		src, dst := mirrorPair(t)
		mustMirror(t, src, dst, mirrorOpts(-1))
		p := mustPlan(t, dst, planOpts())
		_, err := Apply(p, ApplyOptions{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: faultAt(5)})
		var fe *FaultError
		if !errors.As(err, &fe) {
			t.Fatal(err)
		}
		_, err = PlanMirror(src, dst, mirrorOpts(-1))
		var re *RefusalError
		if !errors.As(err, &re) || re.Reason != RefusePending {
			t.Fatalf("want operation-pending, got %v", err)
		}
	})

	t.Run("same-directory", func(t *testing.T) {
		src, _ := mirrorPair(t)
		_, err := PlanMirror(src, src+"/", mirrorOpts(-1))
		var re *RefusalError
		if !errors.As(err, &re) || re.Reason != RefuseSameDir {
			t.Fatalf("want same-directory, got %v", err)
		}
	})

	t.Run("corrupt-source", func(t *testing.T) {
		src, dst := mirrorPair(t)
		e := entryAt(t, src, 8)
		f, err := os.OpenFile(e.Log, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{e.Raw[70] ^ 1}, e.Position+70); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = PlanMirror(src, dst, mirrorOpts(-1))
		var ce *CorruptSourceError
		if !errors.As(err, &ce) || ce.Offset != 8 || ce.Position != e.Position {
			t.Fatalf("want a corrupt source batch at 8, got %v", err)
		}
		if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the destination was created")
		}
	})
}

// mirrorPair is the barriertest fixture as a/mirror-0 and a path for
// b/mirror-0 in an existing log directory.
func mirrorPair(t *testing.T) (src, dst string) {
	t.Helper()
	root := t.TempDir()
	src = barriertest.WritePartition(t, filepath.Join(root, "a"), mirrorBatches(t), 400)
	return src, barriertest.PartitionDir(t, root, "b", "mirror", 0)
}
