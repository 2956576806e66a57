package recovery

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

// TestRepairAllWithLogStartInsideASegment: after DeleteRecords the log
// start lies inside a segment; LogSegment.recover still replays that
// segment from its base, so the .txnindex a broker wrote holds the
// transactions aborted below the log start and those that began below it
// (issue 27, item 2). repair --all used to replay from the log start,
// call the healthy .txnindex txnindex-mismatch and plan to replace it.
func TestRepairAllWithLogStartInsideASegment(t *testing.T) {
	dirs, err := segtest.BrokerShaped(t.TempDir(), "deleterecords-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		p := mustPlanRepair(t, dir, Options{All: true})
		if !p.NothingToDo || finding.HasErrors(p.Findings) {
			t.Errorf("%s: repair --all on a healthy partition plans %d operations: %+v; findings %+v", dir, len(p.Ops), p.Ops, p.Findings)
		}
	}
}

// TestRepairLeavesWhatTheBrokerLoads: a repaired partition is what a
// broker leaves after loading it (issue 27, item 4). A torn last batch
// that began a new leader epoch: the cut puts the log end at the epoch's
// start offset, and LeaderEpochFileCache.truncateFromEnd drops the entry.
// A stray snapshot beside the one written at the new log end:
// removeStraySnapshots keeps only the newest stray.
func TestRepairLeavesWhatTheBrokerLoads(t *testing.T) {
	dir := barriertest.Staged(t, filepath.Join("..", "..", "testdata", "partitions", "orders-0"))
	// Epoch 6 from offset 71, the last batch (71..72, 141 bytes at 1199),
	// which a crash tore.
	epochs := []segment.EpochEntry{{Epoch: 3, StartOffset: 0}, {Epoch: 5, StartOffset: 40}, {Epoch: 6, StartOffset: 71}}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(segment.LeaderEpochCheckpointName, segment.EncodeLeaderEpochCheckpoint(epochs))
	write(segment.SegmentFileName(60, segment.SnapshotSuffix), segment.EncodeProducerSnapshot(nil))
	if err := os.Truncate(filepath.Join(dir, segment.SegmentFileName(53, segment.LogSuffix)), 1199+70); err != nil {
		t.Fatal(err)
	}
	p := mustPlanRepair(t, dir, Options{})
	if p.NewLogEndOffset != 71 {
		t.Fatalf("new log end %d, want 71", p.NewLogEndOffset)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")}); err != nil {
		t.Fatal(err)
	}
	got, err := segment.ReadLeaderEpochCheckpoint(filepath.Join(dir, segment.LeaderEpochCheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, epochs[:2]) {
		t.Errorf("leader epochs after the repair %v, want %v (truncateFromEnd drops an entry starting at the log end)", got, epochs[:2])
	}
	snaps := barriertest.SnapshotOffsets(t, dir)
	if want := []int64{26, 53, 71}; !slices.Equal(snaps, want) {
		t.Errorf("snapshots after the repair %v, want %v (the stray at 60 is one the broker deletes)", snaps, want)
	}
	assertRepaired(t, "torn tail in a new epoch", dir)
}

// TestRepairWritesNoSnapshotAtTheLogStart: a torn first batch leaves the
// log end at the log start; a snapshot there is one the broker deletes at
// load (truncateAndReload drops those at or below the log start), so the
// repair writes none (issue 27, item 4: it wrote 00000000000000000000.snapshot).
func TestRepairWritesNoSnapshotAtTheLogStart(t *testing.T) {
	dir := barriertest.Staged(t, filepath.Join("..", "..", "testdata", "broken", "torn-tail", "events-0"))
	if err := os.Truncate(filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix)), 50); err != nil {
		t.Fatal(err)
	}
	p := mustPlanRepair(t, dir, Options{})
	if p.NewLogEndOffset != 0 || p.SnapshotOffset >= 0 {
		t.Fatalf("new log end %d, snapshot at %d: want the log empty and no snapshot", p.NewLogEndOffset, p.SnapshotOffset)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")}); err != nil {
		t.Fatal(err)
	}
	pd := segtest.OpenDir(t, dir)
	if len(pd.Snapshots) != 0 {
		t.Errorf("snapshots after the repair: %+v; the broker deletes a snapshot at the log start", pd.Snapshots)
	}
}
