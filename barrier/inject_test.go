package barrier

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/internal/planedit"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

func planOpts() InjectOptions { return InjectOptions{Timestamp: injectTs} }

func mustPlan(t *testing.T, dir string, o InjectOptions) *InjectionPlan {
	t.Helper()
	p, err := PlanInjection(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustApply(t *testing.T, p *InjectionPlan) *InjectionReport {
	t.Helper()
	rep, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verification != nil && !rep.Verification.OK() {
		t.Fatalf("verification: %+v", rep.Verification)
	}
	return rep
}

func rebuildAll(t *testing.T, dir string, ignoreBarriers bool) *psm.Result {
	t.Helper()
	pd := segtest.OpenDir(t, dir)
	o := psm.DefaultOptions()
	o.FromSnapshot = psm.SnapshotNone
	o.IgnoreBarriers = ignoreBarriers
	r, err := psm.Rebuild(pd, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// logBytes concatenates the .log segments of a partition.
func segmentLogs(t *testing.T, dir string) map[int64][]byte {
	t.Helper()
	pd := segtest.OpenDir(t, dir)
	out := map[int64][]byte{}
	for _, s := range pd.Segments {
		b, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		out[s.BaseOffset] = b
	}
	return out
}

func TestInjectTruncateFixedPoint(t *testing.T) {
	// 400-byte segments put the cut on a segment boundary and delete the
	// segments above it; one big segment puts it in the middle.
	for _, segBytes := range []int64{400, 0} {
		t.Run(fmt.Sprintf("segment.bytes=%d", segBytes), func(t *testing.T) { testTruncateFixedPoint(t, segBytes) })
	}
}

func testTruncateFixedPoint(t *testing.T, segBytes int64) {
	dir := writeFixtureSeg(t, mirrorBatches(t), segBytes)
	before := segmentLogs(t, dir)
	beforeSnap := barriertest.SnapDir(t, dir)
	p := mustPlan(t, dir, planOpts())

	if p.LastStableOffset != 11 || !slices.Equal(p.CutIterations, []int64{11, 6}) || p.Cut != 6 {
		t.Fatalf("LSO %d, iterations %v, cut %d; want 11, [11 6], 6", p.LastStableOffset, p.CutIterations, p.Cut)
	}
	// The cut removes every batch of leader epoch 1, but the leader is
	// still in epoch 1: the barrier is appended in it, never in an older one.
	if p.ProducersCleared != 2 || p.BarrierOffset != 6 || p.NewLogEndOffset != 7 || p.LeaderEpoch != 1 {
		t.Fatalf("cleared %d barrier %d leo %d epoch %d", p.ProducersCleared, p.BarrierOffset, p.NewLogEndOffset, p.LeaderEpoch)
	}
	want := []DroppedTxn{
		{ProducerID: pidReopC, FirstOffset: 6, MarkerOffset: 14, State: "aborted", Records: 2},
		{ProducerID: pidTxnA, FirstOffset: 9, MarkerOffset: 10, State: "aborted", Records: 1},
		{ProducerID: pidOpenB, FirstOffset: 11, MarkerOffset: -1, State: "open", Records: 3},
		{ProducerID: pidOpenE, FirstOffset: 15, MarkerOffset: -1, State: "open", Records: 1},
	}
	if !slices.Equal(p.DroppedTxns, want) {
		t.Fatalf("dropped txns %+v", p.DroppedTxns)
	}
	if p.Removed.Offsets != 12 || p.Removed.Batches != 10 || !slices.Equal(p.Removed.Producers, []int64{pidIdem, pidTxnA, pidOpenB, pidReopC, pidOpenE}) {
		t.Fatalf("removed %+v", p.Removed)
	}
	if (segBytes > 0) != (len(p.SegmentsDeleted) > 0) || (segBytes > 0) != (p.CutPosition == 0) || len(p.EpochEntriesRemoved) != 1 || p.EpochEntriesRemoved[0] != (segment.EpochEntry{Epoch: 1, StartOffset: 8}) {
		t.Fatalf("segments deleted %v, epochs removed %v", p.SegmentsDeleted, p.EpochEntriesRemoved)
	}
	if p.TxnIndex.Removed != 2 || (segBytes > 0) != (len(p.SnapshotsDeleted) > 0) {
		t.Fatalf("txnindex %+v snapshots deleted %v", p.TxnIndex, p.SnapshotsDeleted)
	}
	barriertest.AssertUnchanged(t, beforeSnap, dir)

	rep := mustApply(t, p)
	if rep.Verification.ProducersCleared != 2 {
		t.Fatalf("verification %+v", rep.Verification)
	}
	after := segmentLogs(t, dir)
	// The kept prefix is byte-identical; the barrier follows it.
	for base, b := range after {
		old := before[base]
		if base != p.CutSegment {
			if !bytes.Equal(b, old) {
				t.Fatalf("segment %d changed", base)
			}
			continue
		}
		if !bytes.Equal(b[:p.CutPosition], old[:p.CutPosition]) {
			t.Fatal("kept prefix differs")
		}
		bar := Build(Spec{BaseOffset: 6, PartitionLeaderEpoch: 1, Timestamp: injectTs})
		if !bytes.Equal(b[p.CutPosition:], bar) {
			t.Fatalf("tail %x, want the barrier %x", b[p.CutPosition:], bar)
		}
	}
	for _, base := range p.SegmentsDeleted {
		if _, ok := after[base]; ok {
			t.Fatalf("segment %d still there", base)
		}
	}
	r := rebuildAll(t, dir, false)
	if len(r.Barriers) != 1 || r.Barriers[0].Offset != 6 || r.Barriers[0].ProducersCleared <= 0 || len(r.Producers) != 0 || len(r.Ongoing) != 0 || r.HasErrors() {
		t.Fatalf("replay after injection: barriers %+v producers %d ongoing %d anomalies %+v", r.Barriers, len(r.Producers), len(r.Ongoing), r.Anomalies)
	}
	pd, _ := segment.OpenPartitionDir(dir)
	epochs, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint)
	if err != nil || !slices.Equal(epochs, []segment.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: 6}}) {
		t.Fatalf("leader-epoch-checkpoint %v %v", epochs, err)
	}
	var snaps []int64
	for _, s := range pd.Snapshots {
		if s.Offset > 6 {
			snaps = append(snaps, s.Offset)
		}
	}
	if !slices.Equal(snaps, []int64{7}) {
		t.Fatalf("snapshots above the cut: %v, want [7]", snaps)
	}
	if e, err := segment.ReadProducerSnapshot(filepath.Join(dir, "00000000000000000007.snapshot")); err != nil || len(e) != 0 {
		t.Fatalf("new snapshot: %v %v", e, err)
	}
	if edit.HasJournal(dir) {
		t.Fatal("journal left behind")
	}
	// The backup holds every file that changed or went, byte for byte.
	for _, op := range p.Ops {
		if op.Action == edit.OpCreate {
			continue
		}
		b, err := os.ReadFile(filepath.Join(rep.BackupDir, op.Name))
		if err != nil || barriertest.SHA256Hex(b) != beforeSnap[op.Name].Sum {
			t.Fatalf("backup of %s: %v", op.Name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(rep.BackupDir, edit.BackupManifestName)); err != nil {
		t.Fatal(err)
	}
}

func TestInjectAbortMode(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	before := segmentLogs(t, dir)
	o := planOpts()
	o.Mode = ModeAbort
	p := mustPlan(t, dir, o)
	if p.Cut != 18 || p.Removed.Batches != 0 || len(p.SegmentsDeleted) != 0 {
		t.Fatalf("abort mode must not cut: cut %d removed %+v", p.Cut, p.Removed)
	}
	if len(p.Appended) != 3 || p.Appended[0].Kind != "ABORT" || p.Appended[0].ProducerID != pidOpenB ||
		p.Appended[1].ProducerID != pidOpenE || p.Appended[2].Kind != "MIRROR_PID_RESET" || p.BarrierOffset != 20 {
		t.Fatalf("appended %+v", p.Appended)
	}
	wantTxns := []segment.AbortedTxn{
		{ProducerID: pidOpenB, FirstOffset: 11, LastOffset: 18, LastStableOffset: 15},
		{ProducerID: pidOpenE, FirstOffset: 15, LastOffset: 19, LastStableOffset: 20},
	}
	if !slices.Equal(p.AbortedTxns, wantTxns) {
		t.Fatalf("aborted txns %+v", p.AbortedTxns)
	}
	mustApply(t, p)

	after := segmentLogs(t, dir)
	last := p.CutSegment
	if !bytes.Equal(after[last][:p.CutPosition], before[last]) {
		t.Fatal("abort mode changed existing bytes")
	}
	r := rebuildAll(t, dir, false)
	if len(r.Ongoing) != 0 || len(r.Producers) != 0 || len(r.Barriers) != 1 || r.Barriers[0].ProducersCleared != 5 || r.HasErrors() {
		t.Fatalf("replay: ongoing %v producers %d barriers %+v anomalies %+v", r.Ongoing, len(r.Producers), r.Barriers, r.Anomalies)
	}
	// The .txnindex of the last segment ends with the new entries, which
	// are what a broker's recovery computes for those markers.
	pd, _ := segment.OpenPartitionDir(dir)
	seg, _ := pd.Segment(last)
	x, err := segment.ReadTxnIndex(seg.TxnIndex)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(x.Entries); n < 2 || !slices.Equal(x.Entries[n-2:], wantTxns) {
		t.Fatalf("txnindex %+v", x.Entries)
	}
	var fromReplay []segment.AbortedTxn
	for _, a := range r.Aborted {
		if a.LastOffset >= 18 {
			fromReplay = append(fromReplay, segment.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, LastStableOffset: a.LastStableOffset})
		}
	}
	if !slices.Equal(fromReplay, wantTxns) {
		t.Fatalf("psm's aborted txns %+v", fromReplay)
	}
}

func TestInjectIdempotentAndForce(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	mustApply(t, mustPlan(t, dir, planOpts()))
	snap := barriertest.SnapDir(t, dir)

	p := mustPlan(t, dir, planOpts())
	if !p.NothingToDo || p.BarrierOffset != 6 {
		t.Fatalf("second plan: nothing to do %v (%s)", p.NothingToDo, p.Reason)
	}
	rep, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
	if err != nil || !rep.NothingToDo {
		t.Fatalf("second apply: %+v %v", rep, err)
	}
	barriertest.AssertUnchanged(t, snap, dir)

	o := planOpts()
	o.Force = true
	p = mustPlan(t, dir, o)
	if p.NothingToDo || p.Cut != 7 || p.BarrierOffset != 7 || p.Removed.Batches != 0 {
		t.Fatalf("forced plan: %+v", p)
	}
	mustApply(t, p)
	r := rebuildAll(t, dir, false)
	if len(r.Barriers) != 2 || r.Barriers[1].Offset != 7 || r.Barriers[1].ProducersCleared != 0 {
		t.Fatalf("barriers %+v", r.Barriers)
	}
}

func TestInjectBumpLeaderEpoch(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	o := planOpts()
	o.BumpLeaderEpoch = i32(1)
	var oe *edit.OptionError
	if _, err := PlanInjection(dir, o); !errors.As(err, &oe) {
		t.Fatalf("bump to an existing epoch: %v", err)
	}
	o.BumpLeaderEpoch = i32(11)
	p := mustPlan(t, dir, o)
	if p.LeaderEpoch != 11 || p.EpochEntryAdded == nil || *p.EpochEntryAdded != (segment.EpochEntry{Epoch: 11, StartOffset: 6}) {
		t.Fatalf("epoch %d added %v", p.LeaderEpoch, p.EpochEntryAdded)
	}
	mustApply(t, p)
	pd, _ := segment.OpenPartitionDir(dir)
	epochs, _ := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint)
	if !slices.Equal(epochs, []segment.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 11, StartOffset: 6}}) {
		t.Fatalf("leader-epoch-checkpoint %v", epochs)
	}
	logs := segmentLogs(t, dir)
	b := logs[p.CutSegment][p.CutPosition:]
	if bb, err := decode.ParseBatch(b); err != nil || bb.PartitionLeaderEpoch != 11 || !Is(&bb) {
		t.Fatalf("barrier epoch: %+v %v", bb, err)
	}
}

func TestInjectDryRunChangesNothing(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	logDir := filepath.Dir(dir)
	before := barriertest.SnapDir(t, logDir)
	for _, m := range []Mode{ModeTruncate, ModeAbort} {
		o := planOpts()
		o.Mode = m
		mustPlan(t, dir, o)
	}
	barriertest.AssertUnchanged(t, before, logDir)
}

func TestInjectRepairTail(t *testing.T) {
	batches := mirrorBatches(t)[:4] // offsets 0..5, nothing open
	dir := writeFixture(t, batches)
	pd, _ := segment.OpenPartitionDir(dir)
	last := pd.Segments[len(pd.Segments)-1]
	good, _ := os.ReadFile(last.Log)
	torn := append(append([]byte(nil), good...), dataBatch(t, 6, 3, pidIdem, 0, 3, false, 0)[:50]...)
	if err := os.WriteFile(last.Log, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	before := barriertest.SnapDir(t, dir)
	var ct *CorruptTailError
	if _, err := PlanInjection(dir, planOpts()); !errors.As(err, &ct) || ct.ValidBytes != int64(len(good)) {
		t.Fatalf("torn tail: %v", err)
	}
	barriertest.AssertUnchanged(t, before, dir)
	o := planOpts()
	o.RepairTail = true
	p := mustPlan(t, dir, o)
	if p.TailRepair == nil || p.TailRepair.Bytes != 50 || p.Cut != 6 || p.CutPosition != int64(len(good)) {
		t.Fatalf("repair: %+v cut %d at %d", p.TailRepair, p.Cut, p.CutPosition)
	}
	mustApply(t, p)
	got, _ := os.ReadFile(last.Log)
	if !bytes.Equal(got[:len(good)], good) || len(got) != len(good)+Size {
		t.Fatal("repaired segment is not the valid prefix plus the barrier")
	}

	// A CRC failure in an earlier segment: recovery truncates there and
	// drops every later segment.
	dir = writeFixture(t, mirrorBatches(t))
	pd, _ = segment.OpenPartitionDir(dir)
	first := pd.Segments[0]
	b, _ := os.ReadFile(first.Log)
	b[len(b)-1] ^= 0xff // the last batch's last byte
	if err := os.WriteFile(first.Log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanInjection(dir, planOpts()); !errors.As(err, &ct) || ct.Kind != segment.CutCRCMismatch {
		t.Fatalf("crc: %v", err)
	}
	p = mustPlan(t, dir, o)
	if p.TailRepair == nil || len(p.TailRepair.SegmentsDropped) != len(pd.Segments)-1 {
		t.Fatalf("repair: %+v", p.TailRepair)
	}
	// The plan counts what the repair removes too: from the cut to the
	// log end before the repair, every batch from the damaged one on.
	var all, lost int64
	end := int64(0)
	for _, e := range barriertest.Entries(t, dir) {
		all++
		if e.BaseOffset >= p.Cut {
			lost++
		}
		end = max(end, e.BaseOffset+int64(binary.BigEndian.Uint32(e.Raw[23:27]))+1) // v2 lastOffsetDelta
	}
	if p.TailRepair.LogEndOffset != end || p.Removed.Offsets != end-p.Cut || p.Removed.Batches != lost || lost == 0 {
		t.Fatalf("removed %+v, log end before the repair %d: want %d offsets (%d..%d), %d of %d batches",
			p.Removed, p.TailRepair.LogEndOffset, end-p.Cut, p.Cut, end-1, lost, all)
	}
	mustApply(t, p)
}

func TestInjectRefusals(t *testing.T) {
	t.Run("not a partition", func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"notes", "orders-0", "orders-0.0123456789abcdef0123456789abcdef-delete"} {
			p := filepath.Join(root, d)
			os.MkdirAll(p, 0o755)
			if d != "orders-0" {
				os.WriteFile(filepath.Join(p, "00000000000000000000.log"), nil, 0o644)
			}
			before := barriertest.SnapDir(t, p)
			_, err := PlanInjection(p, planOpts())
			if !barriertest.IsRefusal(err, edit.RefuseNotPartition) {
				t.Fatalf("%s: %v", d, err)
			}
			barriertest.AssertUnchanged(t, before, p)
		}
	})
	t.Run("legacy format", func(t *testing.T) {
		var c decode.Codecs
		var batches [][]byte
		for i := int64(0); i < 3; i++ {
			b, _ := c.AppendLegacy(nil, decode.LegacySpec{Offset: i, Magic: 1, Timestamp: tsOf(i), Value: []byte("v")})
			batches = append(batches, b)
		}
		dir := writeFixture(t, batches)
		before := barriertest.SnapDir(t, dir)
		_, err := PlanInjection(dir, planOpts())
		if !barriertest.IsRefusal(err, RefuseLegacyFormat) {
			t.Fatalf("legacy: %v", err)
		}
		barriertest.AssertUnchanged(t, before, dir)
	})
	t.Run("read-only", func(t *testing.T) {
		dir := writeFixture(t, mirrorBatches(t))
		before := barriertest.SnapDir(t, dir)
		o := planOpts()
		o.checkWritable = func(string) (bool, string, error) { return false, "the file system is mounted read-only", nil }
		_, err := PlanInjection(dir, o)
		var re *edit.RefusalError
		if !errors.As(err, &re) || re.Reason != edit.RefuseReadOnly || !errors.Is(err, edit.ErrRefused) {
			t.Fatalf("read-only: %v", err)
		}
		barriertest.AssertUnchanged(t, before, dir)
	})
	t.Run("open transaction left at the barrier", func(t *testing.T) {
		// A bad barrier written over an open transaction (pitfall 8)
		// clears the producer but not the transaction: no ABORT marker
		// can close it any more.
		batches := [][]byte{
			dataBatch(t, 0, 2, pidOpenB, 0, 0, true, 0),
			Build(Spec{BaseOffset: 2, Timestamp: tsOf(2)}),
		}
		dir := writeFixture(t, batches)
		before := barriertest.SnapDir(t, dir)
		o := planOpts()
		o.Mode = ModeAbort
		_, err := PlanInjection(dir, o)
		if !barriertest.IsRefusal(err, RefuseOpenTransactions) {
			t.Fatalf("abort over a cleared producer: %v", err)
		}
		barriertest.AssertUnchanged(t, before, dir)
		// Truncating to the LSO removes it, and is allowed.
		p := mustPlan(t, dir, planOpts())
		if p.Cut != 0 {
			t.Fatalf("cut %d", p.Cut)
		}
	})
	t.Run("backup inside the log directory", func(t *testing.T) {
		dir := writeFixture(t, mirrorBatches(t))
		logDir := filepath.Dir(dir)
		before := barriertest.SnapDir(t, logDir)
		p := mustPlan(t, dir, planOpts())
		_, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(logDir, "backup")})
		if !barriertest.IsRefusal(err, edit.RefuseBackupDir) {
			t.Fatalf("backup in log dir: %v", err)
		}
		// Apply took the log directory lock, which creates .lock as a
		// broker would; nothing else may differ.
		delete(before, segment.LockName)
		after := barriertest.SnapDir(t, logDir)
		delete(after, segment.LockName)
		delete(after, ".")
		delete(before, ".")
		if d := barriertest.DiffSnaps(before, after, true); len(d) > 0 {
			t.Fatalf("changed: %v", d)
		}
	})
	t.Run("file changed after planning", func(t *testing.T) {
		dir := writeFixture(t, mirrorBatches(t))
		p := mustPlan(t, dir, planOpts())
		pd, _ := segment.OpenPartitionDir(dir)
		last := pd.Segments[len(pd.Segments)-1].Log
		f, _ := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(dataBatch(t, 18, 1, pidIdem, 0, 6, false, 1))
		f.Close()
		before := barriertest.SnapDir(t, dir)
		_, err := ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
		if !barriertest.IsRefusal(err, edit.RefuseChanged) {
			t.Fatalf("changed: %v", err)
		}
		barriertest.AssertUnchanged(t, before, dir)
	})
}

// TestInjectFindsIndexDamageAtPlanTime is issue 12's defect 4: with entry 0
// of orders-0's 00000000000000000053.index pointing at position 5, where no
// batch starts, the dry run said nothing, the real run wrote the barrier
// and then failed its read-back check over an entry it did not write. The
// plan now names the damage and rebuilds the cut segment's indexes in the
// same edit, so the read-back check passes and the index is sound after.
func TestInjectFindsIndexDamageAtPlanTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "orders-0")
	barriertest.CopyTree(t, filepath.Join(barriertest.PartitionsDir(), "orders-0"), dir)
	idx := filepath.Join(dir, segment.SegmentFileName(53, segment.IndexSuffix))
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[4:8], 5) // entry 0's position
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := segment.OpenPartitionDir(dir)
	seg, _ := s.Segment(53)
	if probs, err := segment.VerifySegmentIndexes(seg); err != nil || len(probs) == 0 {
		t.Fatalf("the damage is not there to find: %v %v", probs, err)
	}
	p := mustPlan(t, dir, planOpts())
	if len(p.IndexDamage) == 0 || !strings.Contains(strings.Join(p.Warnings, "\n"), "points at position 5") {
		t.Fatalf("the plan does not show the damage: %q %q", p.IndexDamage, p.Warnings)
	}
	rebuilt := false
	for _, op := range p.Ops {
		rebuilt = rebuilt || op.Name == filepath.Base(idx)
	}
	if !rebuilt {
		t.Fatalf("the plan leaves the damaged %s as it is", filepath.Base(idx))
	}
	mustApply(t, p) // fails on a read-back check that reports the damage
	if probs, err := segment.VerifySegmentIndexes(seg); err != nil || len(probs) != 0 {
		t.Fatalf("after the injection: %v %v", probs, err)
	}
}

// TestInjectRefusesTimestampInAnotherUnit is issue 28's item 10: a
// --timestamp in microseconds wrote a barrier and a time-index entry in
// the year 55,840, and time-based retention would never again delete that
// segment or any after it. A timestamp before 2010 or more than a day
// ahead of the clock is an option error naming the likely unit, unless
// forced; a plausible one goes through.
func TestInjectRefusesTimestampInAnotherUnit(t *testing.T) {
	dir := writeFixture(t, mirrorBatches(t))
	now := time.UnixMilli(injectTs + 3_600_000)
	for _, tc := range []struct {
		ts    int64
		force bool
		want  string // "" for accepted
	}{
		{injectTs, false, ""},
		{now.Add(23 * time.Hour).UnixMilli(), false, ""},
		{injectTs * 1000, false, "microseconds"},
		{injectTs * 1000_000, false, "nanoseconds"},
		{injectTs / 1000, false, "seconds"},
		{now.Add(48 * time.Hour).UnixMilli(), false, "ahead of the clock"},
		{1_000, false, "before 2010"},
		{injectTs * 1000, true, ""},
	} {
		_, err := PlanInjection(dir, InjectOptions{Timestamp: tc.ts, Force: tc.force, Now: func() time.Time { return now }})
		var oe *edit.OptionError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("timestamp %d (force %v): %v", tc.ts, tc.force, err)
		case tc.want != "" && (!errors.As(err, &oe) || oe.Option != "timestamp" || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("timestamp %d: %v, want an option error saying %q", tc.ts, err, tc.want)
		}
	}
}

// TestInjectRebuildsMissingIndexes: a cut segment without .index or
// .timeindex gets them rebuilt from its kept batches, as LogLoader
// recovers such a segment, and the plan says so; the read-back finds
// the written indexes right.
func TestInjectRebuildsMissingIndexes(t *testing.T) {
	dir := writeFixtureSeg(t, mirrorBatches(t), 0)
	cut := mustPlan(t, dir, planOpts()).CutSegment
	for _, suffix := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
		if err := os.Remove(filepath.Join(dir, segment.SegmentFileName(cut, suffix))); err != nil {
			t.Fatal(err)
		}
	}
	p := mustPlan(t, dir, planOpts())
	for _, suffix := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
		if want := "has no " + suffix + "; it is rebuilt"; !strings.Contains(strings.Join(p.Warnings, "\n"), want) {
			t.Errorf("the plan does not say %q: %q", want, p.Warnings)
		}
	}
	mustApply(t, p)
	s := segtest.OpenDir(t, dir)
	seg, _ := s.Segment(cut)
	if probs, err := segment.VerifySegmentIndexes(seg); err != nil || len(probs) != 0 {
		t.Fatalf("after the injection: %v %v", probs, err)
	}
}

// TestInjectCountsKeptIndexEntries: the cut segment's .index and
// .timeindex keep their entries below the cut (OffsetIndex.truncateTo,
// TimeIndex.truncateTo); the plan counts those kept and those removed,
// which add up to the files' entries.
func TestInjectCountsKeptIndexEntries(t *testing.T) {
	// One segment, cut at the fixed point 6 (testTruncateFixedPoint).
	dir := writeFixtureSeg(t, mirrorBatches(t), 0)
	seg, ok := segtest.OpenDir(t, dir).Segment(0)
	p := mustPlan(t, dir, planOpts())
	if !ok || p.CutSegment != 0 || p.Cut != 6 || len(p.IndexDamage) > 0 {
		t.Fatalf("cut in segment %d at %d, index damage %v: not the case tested", p.CutSegment, p.Cut, p.IndexDamage)
	}
	idxBelow, idxAll := entriesBelow(t, planedit.OffsetIndex, seg.Index, seg.BaseOffset, p.Cut, func(e segment.IndexEntry) int64 { return e.Offset })
	tidxBelow, tidxAll := entriesBelow(t, planedit.TimeIndex, seg.TimeIndex, seg.BaseOffset, p.Cut, func(e segment.TimeIndexEntry) int64 { return e.Offset })
	// The time index may lose its close entry (LogSegment.close) too:
	// recovery writes none.
	for _, c := range []struct {
		name       string
		got        edit.IndexChange
		below, all int
		exact      bool
	}{{".index", p.Index, idxBelow, idxAll, true}, {".timeindex", p.TimeIndex, tidxBelow, tidxAll, false}} {
		if c.got.Kept+c.got.Removed != c.all || c.got.Kept > c.below || c.exact && c.got.Kept != c.below {
			t.Errorf("%s of segment %d, cut at %d: plan %+v, want %d of its %d entries kept and the others removed", c.name, p.CutSegment, p.Cut, c.got, c.below, c.all)
		}
	}
	if p.Index.Removed == 0 {
		t.Errorf("the cut at %d removes no .index entry of segment %d: not the case tested", p.Cut, p.CutSegment)
	}
}

// entriesBelow counts the entries of an index file (ix, at path, of the
// segment at base) below cut, and all of them.
func entriesBelow[E any](t *testing.T, ix planedit.Index[E], path string, base, cut int64, offset func(E) int64) (below, all int) {
	t.Helper()
	entries, err := ix.Read(path, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if offset(e) < cut {
			below++
		}
	}
	return below, len(entries)
}
