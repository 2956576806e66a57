package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

var partitionsDir = barriertest.PartitionsDir()

func repairCorpus(t testing.TB) *segtest.Corpus {
	t.Helper()
	c, err := segtest.NewCorpus(partitionsDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeCase writes a corpus case as <tmp>/logs/<base> (a log directory
// of its own, so nothing of the repository is touched).
func writeCase(t testing.TB, c *segtest.Corpus, cc *segtest.CorruptCase) string {
	t.Helper()
	dir, err := c.Write(cc, filepath.Join(t.TempDir(), "logs"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustPlanRepair(t testing.TB, dir string, o Options) *Plan {
	t.Helper()
	p, err := PlanRepair(dir, o)
	if err != nil {
		t.Fatalf("PlanRepair(%s): %v", dir, err)
	}
	return p
}

// assertRepaired checks what a repaired partition must satisfy: a new
// plan has nothing to do; every segment's indexes verify against its log
// (dump --verify-index) and pass the broker's sanity checks; every
// producer snapshot matches the state rebuilt from the log (replay-psm
// --check-snapshots); every .log scans clean.
func assertRepaired(t *testing.T, name, dir string) {
	t.Helper()
	if p := mustPlanRepair(t, dir, Options{}); !p.NothingToDo {
		t.Fatalf("%s: a second plan still has %d operations: %+v", name, len(p.Ops), p.Ops)
	}
	pd := segtest.OpenDir(t, dir)
	for _, s := range pd.Segments {
		if s.Log == "" {
			t.Fatalf("%s: orphaned index files at %d", name, s.BaseOffset)
		}
		probs, err := segment.VerifySegmentIndexes(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) > 0 {
			t.Fatalf("%s: segment %d: %v", name, s.BaseOffset, probs)
		}
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := lf.Scanner(segment.ScanOptions{})
		for sc.Next() {
			if !sc.Batch().CRCValid() {
				t.Fatalf("%s: a batch of %s fails its CRC", name, filepath.Base(s.Log))
			}
		}
		lf.Close()
		if k := sc.Tail().Kind; k != segment.TailClean {
			t.Fatalf("%s: %s ends %s", name, filepath.Base(s.Log), k)
		}
	}
	o := psm.DefaultOptions()
	checks, _, err := psm.CheckSnapshots(pd, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Status != psm.CheckMatch && c.Status != psm.CheckSkipped {
			t.Fatalf("%s: %s is %s: %s %v", name, filepath.Base(c.Path), c.Status, c.Reason, c.Differences)
		}
	}
}

// TestRepairCorpus plans and applies a repair for every class of the
// corruption corpus (and a spread of its torn tails) and checks the plan
// against what the generator says the broker's recovery does — cut at the
// damaged batch, or keep every byte — and the repaired partition against
// dump --verify-index and replay-psm --check-snapshots.
func TestRepairCorpus(t *testing.T) {
	c := repairCorpus(t)
	torn := map[string]int{}
	defer func() {
		for _, b := range segtest.CorpusBases {
			if torn[b] < 10 {
				t.Errorf("%s: %d torn tails repaired", b, torn[b])
			}
		}
	}()
	for i := range c.Cases {
		cc := &c.Cases[i]
		if cc.Class == "torn-tail" {
			// The boundaries of the last batch's header (offset, length,
			// magic), one byte in the middle and the last one; the corpus
			// test in cmd runs dump over every byte.
			size := int64(len(c.Healthy(cc.Base, cc.Expect.File))) - cc.Expect.Position
			k, _ := strconv.ParseInt(cc.Name[strings.LastIndex(cc.Name, "/")+1:], 10, 64)
			if !slices.Contains([]int64{1, 7, 8, 11, 12, 16, 17, 18, 60, 61, size / 2, size - 1}, k) {
				continue
			}
			torn[cc.Base]++
		}
		t.Run(cc.Name, func(t *testing.T) {
			dir := writeCase(t, c, cc)
			p, err := PlanRepair(dir, Options{})
			if cc.Expect.Kind == segtest.KindOffsetOverflow {
				if !barriertest.IsRefusal(err, RefuseOffsetOverflow) {
					t.Fatalf("PlanRepair: %v, want a %s refusal", err, RefuseOffsetOverflow)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cut *Cut
			for _, s := range p.Segments {
				if s.Log == cc.Expect.File && s.Cut != nil {
					cut = s.Cut
				}
			}
			switch {
			case cc.Truncate >= 0 && cut == nil:
				t.Fatalf("no cut in %s, want one at %d; findings %+v", cc.Expect.File, cc.Truncate, p.Findings)
			case cc.Truncate >= 0 && cut.Position != cc.Truncate:
				t.Fatalf("cut at %d (%s), want %d", cut.Position, cut.Kind, cc.Truncate)
			case cc.Truncate < 0 && cut != nil:
				t.Fatalf("cut at %d (%s), but recovery keeps every byte", cut.Position, cut.Kind)
			}
			if cut != nil && cut.Kind != finding.ZeroTail && !p.Damage {
				t.Fatalf("a %s cut is damage", cut.Kind)
			}
			before := barriertest.SnapDir(t, dir)
			rep, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")})
			if err != nil {
				t.Fatal(err)
			}
			if p.NothingToDo {
				barriertest.AssertUnchanged(t, before, dir)
				return
			}
			if v := rep.Verification; v == nil || !v.OK() {
				t.Fatalf("verification: %+v", v)
			}
			assertRepaired(t, cc.Name, dir)
		})
	}
}

// TestRepairHealthyIsNoOp: the healthy fixtures need no repair, and a
// repair with --all changes nothing; a copy of control-0 given a stale
// snapshot after its MIRROR_PID_RESET barriers gets that snapshot rewritten.
func TestRepairHealthyIsNoOp(t *testing.T) {
	t.Run("stale-snapshot", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "control-0")
		barriertest.CopyTree(t, filepath.Join(partitionsDir, "control-0"), dir)
		stale := segment.EncodeProducerSnapshot([]segment.SnapshotEntry{{ProducerID: 3000, ProducerEpoch: 0, LastSequence: 1,
			LastOffset: 7, OffsetDelta: 1, Timestamp: 1700000000050, CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1}})
		if err := os.WriteFile(filepath.Join(dir, segment.SegmentFileName(14, segment.SnapshotSuffix)), stale, 0o644); err != nil {
			t.Fatal(err)
		}
		p := mustPlanRepair(t, dir, Options{All: true})
		if p.NothingToDo || len(p.Ops) != 1 || p.Ops[0].Name != segment.SegmentFileName(14, segment.SnapshotSuffix) {
			t.Fatalf("stale snapshot: %+v", p.Ops)
		}
		if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}); err != nil {
			t.Fatal(err)
		}
		assertRepaired(t, "control-0", dir)
	})
	for _, name := range segtest.PartitionNames {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, name)
			barriertest.CopyTree(t, filepath.Join(partitionsDir, name), dir)
			p := mustPlanRepair(t, dir, Options{All: true})
			if !p.NothingToDo || p.Damage || len(p.Findings) > 0 {
				t.Fatalf("a healthy partition: %+v", p)
			}
		})
	}
}

// TestRepairMultiSegment: a CRC mismatch in the middle of orders-0's
// second segment cuts it there, deletes the third segment, the snapshots
// above the cut and the leader epoch that started above it, rebuilds the
// second segment's indexes and writes the producer snapshot at the cut.
func TestRepairMultiSegment(t *testing.T) {
	dir := barriertest.CRCDamagedOrders(t)
	p := mustPlanRepair(t, dir, Options{})
	if p.NewLogEndOffset != 36 || p.LogEndOffset != 73 || !p.Damage {
		t.Fatalf("log end %d -> %d, damage %v", p.LogEndOffset, p.NewLogEndOffset, p.Damage)
	}
	if !slices.Equal(p.SegmentsDeleted, []int64{53}) || !slices.Equal(p.SnapshotsDeleted, []int64{53, 73}) {
		t.Fatalf("segments deleted %v, snapshots deleted %v", p.SegmentsDeleted, p.SnapshotsDeleted)
	}
	if len(p.EpochEntriesRemoved) != 1 || p.EpochEntriesRemoved[0].StartOffset != 40 {
		t.Fatalf("epoch entries removed: %v", p.EpochEntriesRemoved)
	}
	if p.SnapshotOffset != 36 || p.Removed.Batches != 7+8 {
		t.Fatalf("snapshot %d, batches removed %d", p.SnapshotOffset, p.Removed.Batches)
	}
	rep, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verification.OK() {
		t.Fatalf("%+v", rep.Verification)
	}
	assertRepaired(t, "orders-0", dir)
	// The snapshot at the cut holds what the broker's own snapshot at 26
	// plus the replay of 26..35 gives; check it against a replay of the
	// log alone too.
	entries, err := segment.ReadProducerSnapshot(filepath.Join(dir, segment.SegmentFileName(36, segment.SnapshotSuffix)))
	if err != nil || len(entries) != 3 {
		t.Fatalf("36.snapshot: %v, %d entries", err, len(entries))
	}
	// The backup holds every file that changed or went.
	names, _ := os.ReadDir(rep.BackupDir)
	if len(names) < 8 {
		t.Fatalf("backup holds %d files", len(names))
	}
}

// TestRepairRecoveryPoint: only the segment holding the recovery point and
// the later ones are examined; below it, a segment is examined only when
// its .index is missing (LogLoader.loadSegmentFiles recovers it).
func TestRepairRecoveryPoint(t *testing.T) {
	dir := barriertest.CRCDamagedOrders(t) // damage in segment 26
	logDir := filepath.Dir(dir)
	writeRP := func(off int64) {
		t.Helper()
		content := fmt.Sprintf("0\n1\norders 0 %d\n", off)
		if err := os.WriteFile(filepath.Join(logDir, segment.RecoveryPointCheckpointName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRP(60)
	p := mustPlanRepair(t, dir, Options{})
	if p.RecoveryPoint != 60 || p.FirstExamined != 53 || len(p.Segments) != 1 || !p.NothingToDo {
		t.Fatalf("recovery point %d, first examined %d, %d segments, nothing to do %v", p.RecoveryPoint, p.FirstExamined, len(p.Segments), p.NothingToDo)
	}
	if p = mustPlanRepair(t, dir, Options{All: true}); p.FirstExamined != 0 || !p.Damage {
		t.Fatalf("--all: first examined %d, damage %v", p.FirstExamined, p.Damage)
	}
	writeRP(30)
	if p = mustPlanRepair(t, dir, Options{}); p.FirstExamined != 26 || !p.Damage || p.NewLogEndOffset != 36 {
		t.Fatalf("recovery point 30: first examined %d, damage %v, new end %d", p.FirstExamined, p.Damage, p.NewLogEndOffset)
	}
	// Below the recovery point, a missing .index gets the segment
	// recovered (and its index rebuilt).
	writeRP(60)
	if err := os.Remove(filepath.Join(dir, segment.SegmentFileName(0, segment.IndexSuffix))); err != nil {
		t.Fatal(err)
	}
	p = mustPlanRepair(t, dir, Options{})
	if p.FirstExamined != 0 || len(p.Segments) != 2 || p.Segments[0].Index.Action != FileCreate {
		t.Fatalf("missing index below the recovery point: %+v", p.Segments)
	}
}

// TestRepairRefusals: nothing is touched when kseg refuses.
func TestRepairRefusals(t *testing.T) {
	c := repairCorpus(t)
	cc := findCase(t, c, "events-0/torn-tail/40")
	for _, tc := range []struct {
		name   string
		setup  func(dir string) string
		reason edit.Reason
	}{
		{"read-only", func(dir string) string { return dir }, edit.RefuseReadOnly},
		{"swap file", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "00000000000000000000.log.swap"), nil, 0o644)
			return dir
		}, edit.RefuseTransientFiles},
		{"not a partition", func(dir string) string {
			d := filepath.Join(filepath.Dir(dir), "not_a_partition")
			os.Mkdir(d, 0o755)
			return d
		}, edit.RefuseNotPartition},
		{"pending mirror", func(dir string) string {
			os.WriteFile(filepath.Join(dir, edit.JournalName), []byte(`{"version":1,"tool":"kseg mirror","state":"prepared","mirror":{}}`), 0o644)
			return dir
		}, edit.RefusePending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(writeCase(t, c, cc))
			before := barriertest.SnapDir(t, filepath.Dir(dir))
			o := Options{}
			if tc.reason == edit.RefuseReadOnly {
				o.checkWritable = func(string) (bool, string, error) { return false, "the file system is mounted read-only", nil }
			}
			_, err := PlanRepair(dir, o)
			if !barriertest.IsRefusal(err, tc.reason) {
				t.Fatalf("PlanRepair: %v, want %s", err, tc.reason)
			}
			barriertest.AssertUnchanged(t, before, filepath.Dir(dir))
		})
	}
}

func findCase(t testing.TB, c *segtest.Corpus, name string) *segtest.CorruptCase {
	t.Helper()
	for i := range c.Cases {
		if c.Cases[i].Name == name {
			return &c.Cases[i]
		}
	}
	t.Fatalf("no corpus case %s", name)
	return nil
}

// TestRepairOrphanIndex: index files without their .log go, as LogLoader
// deletes them at load; the finding is an orphan-index error, as dump
// calls it (the segment's data is missing).
func TestRepairOrphanIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "orders-0")
	barriertest.CopyTree(t, filepath.Join(partitionsDir, "orders-0"), dir)
	orphan := filepath.Join(dir, segment.SegmentFileName(99, segment.IndexSuffix))
	if err := os.WriteFile(orphan, make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	p := mustPlanRepair(t, dir, Options{})
	if p.NothingToDo || !p.Damage || len(p.Ops) != 1 || p.Ops[0].Action != edit.OpDelete {
		t.Fatalf("plan: %+v", p.Ops)
	}
	if len(p.Findings) != 1 || p.Findings[0].Kind != finding.OrphanIndex || p.Findings[0].Severity() != finding.Error {
		t.Errorf("findings: %+v", p.Findings)
	}
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the orphan is still there: %v", err)
	}
	assertRepaired(t, "orders-0", dir)
}

// crashAtFirstCommit stops an apply at its first commit step, as a crash
// there would: the journal says committing, some files may be new.
func crashAtFirstCommit(step string) error {
	if strings.HasPrefix(step, "commit:") {
		return errCrash
	}
	return nil
}

var errCrash = errors.New("crash")

// TestRollbackTakesTheLockBeforeTheJournal: another kseg run may finish
// an interrupted repair while a rollback waits for the log directory's
// lock. The rollback reads the journal only once it holds the lock, so it
// finds nothing to roll back and leaves the finished repair as it is.
// Reading the journal first (as it did) restored the backup over the
// completed, verified repair and then failed removing the journal.
func TestRollbackTakesTheLockBeforeTheJournal(t *testing.T) {
	c := repairCorpus(t)
	dir := writeCase(t, c, findCase(t, c, "events-0/torn-tail/40"))
	p := mustPlanRepair(t, dir, Options{})
	if _, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk"), FaultAt: crashAtFirstCommit}); !errors.Is(err, errCrash) {
		t.Fatalf("apply: %v, want it stopped at its first commit step", err)
	}
	var finished map[string]barriertest.Snap
	_, err := Rollback(dir, edit.Options{FaultAt: func(step string) error {
		if step != "lock" {
			return nil
		}
		// Another run finishes the repair just before the lock is taken.
		rp := mustPlanRepair(t, dir, Options{})
		if _, err := Apply(rp, edit.Options{}); err != nil {
			t.Fatalf("the other run: %v", err)
		}
		finished = barriertest.SnapDir(t, dir)
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), "no interrupted operation to roll back") {
		t.Fatalf("rollback after the repair finished: %v, want nothing to roll back", err)
	}
	barriertest.AssertUnchanged(t, finished, dir)
}

// TestApplyRefusesAJournalThatAppearedSincePlanning: a fresh apply holds
// the lock, then finds the journal of another run that stopped mid-edit
// after this one planned. It refuses before anything, and the other run's
// journal and staged files stay, so that run can still be finished or
// rolled back. Before, sealing refused and its clean-up removed them,
// leaving a half-repaired partition with no way out.
func TestApplyRefusesAJournalThatAppearedSincePlanning(t *testing.T) {
	c := repairCorpus(t)
	dir := writeCase(t, c, findCase(t, c, "events-0/torn-tail/40"))
	p := mustPlanRepair(t, dir, Options{})
	var half map[string]barriertest.Snap
	_, err := Apply(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk1"), FaultAt: func(step string) error {
		if step != "lock" {
			return nil
		}
		p2 := mustPlanRepair(t, dir, Options{})
		if _, err := Apply(p2, edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk2"), FaultAt: crashAtFirstCommit}); !errors.Is(err, errCrash) {
			t.Fatalf("the other run: %v, want it stopped at its first commit step", err)
		}
		half = barriertest.SnapDir(t, dir)
		return nil
	}})
	if !barriertest.IsRefusal(err, edit.RefusePending) {
		t.Fatalf("apply over another run's journal: %v, want a %s refusal", err, edit.RefusePending)
	}
	barriertest.AssertUnchanged(t, half, dir)
	if _, err := Rollback(dir, edit.Options{}); err != nil {
		t.Fatalf("the other run can no longer be rolled back: %v", err)
	}
}
