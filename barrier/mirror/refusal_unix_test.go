//go:build unix

package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// TestHelperFcntlLockHolder is not a test: run as a child process by
// barriertest.HoldBrokerLock, it holds the lock a broker holds.
func TestHelperFcntlLockHolder(t *testing.T) { barriertest.RunLockHolder(t) }

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
		barriertest.RefusedWhileLocked(t, filepath.Dir(dst),
			func() error { _, err := PlanMirror(src, dst, mirrorOpts(-1)); return err },
			func() error { _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}); return err })
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
		if !barriertest.IsRefusal(err, RefuseTopicID) {
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
		wantFinding(t, r, finding.Gap, 5)
	})

	t.Run("pending-injection", func(t *testing.T) {
		src, dst := mirrorPair(t)
		mustMirror(t, src, dst, mirrorOpts(-1))
		p, err := barrier.PlanInjection(dst, barrier.InjectOptions{Timestamp: injectTs})
		if err != nil {
			t.Fatal(err)
		}
		_, err = barrier.ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: barriertest.FaultAt(5)})
		var fe *edit.FaultError
		if !errors.As(err, &fe) {
			t.Fatal(err)
		}
		_, err = PlanMirror(src, dst, mirrorOpts(-1))
		if !barriertest.IsRefusal(err, edit.RefusePending) {
			t.Fatalf("want operation-pending, got %v", err)
		}
	})

	t.Run("same-directory", func(t *testing.T) {
		src, _ := mirrorPair(t)
		_, err := PlanMirror(src, src+"/", mirrorOpts(-1))
		if !barriertest.IsRefusal(err, RefuseSameDir) {
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

	// A source whose bytes stop framing batches (a bad magic byte, a
	// garbage or torn tail) is refused exactly as a CRC mismatch is: a
	// mirror that copied up to the damage, or found nothing to copy, would
	// report a complete copy of a source it could not read.
	for _, tc := range []struct {
		name   string
		offset int64 // the offset the damage starts at
		damage func(t *testing.T, e barriertest.Entry)
	}{
		{"bad-magic", 8, func(t *testing.T, e barriertest.Entry) { writeAt(t, e.Log, e.Position+16, []byte{7}) }},
		{"garbage-tail", 8, func(t *testing.T, e barriertest.Entry) {
			if err := os.Truncate(e.Log, e.Position); err != nil {
				t.Fatal(err)
			}
			writeAt(t, e.Log, e.Position, []byte("not a record batch, not even a header of one"))
		}},
		{"garbage-log", 0, func(t *testing.T, e barriertest.Entry) {
			if err := os.WriteFile(e.Log, []byte("\x7fgarbage where a segment should be, long enough for a header"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run("unreadable-source-"+tc.name, func(t *testing.T) {
			src, dst := mirrorPair(t)
			e := entryAt(t, src, tc.offset)
			tc.damage(t, e)
			_, err := PlanMirror(src, dst, mirrorOpts(-1))
			var ce *CorruptSourceError
			if !errors.As(err, &ce) || ce.Offset != tc.offset || ce.Kind == "" {
				t.Fatalf("want the source refused as unreadable from offset %d, got %v", tc.offset, err)
			}
			if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the destination was created")
			}
			// Up to the damage, the copy is still possible.
			if tc.offset > 0 {
				if _, err := PlanMirror(src, dst, mirrorOpts(tc.offset)); err != nil {
					t.Fatalf("--upto %d, before the damage: %v", tc.offset, err)
				}
			}
		})
	}
}

func writeAt(t *testing.T, path string, pos int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}
