package mirror

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/kafkatest"
	"github.com/kseg/kseg/segment/segtest"
)

const chainTopic = "orders"

// sourceTraffic is barriertest's source traffic on a fresh cluster.
func sourceTraffic(t testing.TB) [][]byte {
	t.Helper()
	p := barriertest.NewProducers(t, chainTopic, 0)
	p.SourceTraffic(t)
	return p.Take(t)
}

// localTraffic is barriertest's local traffic on a fresh cluster.
func localTraffic(t testing.TB) [][]byte {
	t.Helper()
	p := barriertest.NewProducers(t, chainTopic, 0)
	p.LocalTraffic(t)
	return p.Take(t)
}

func writeSource(t testing.TB, root string, batches [][]byte) string {
	t.Helper()
	return barriertest.WriteSource(t, filepath.Join(root, "a"), chainTopic, 0, batches)
}

func newDst(t testing.TB, root, cluster string) string {
	t.Helper()
	return barriertest.PartitionDir(t, root, cluster, chainTopic, 0)
}

// failover injects a barrier (truncate mode) and returns its offset.
func failover(t testing.TB, dir string, o barrier.InjectOptions) int64 {
	t.Helper()
	if o.Timestamp == 0 {
		o.Timestamp = time.Now().UnixMilli()
	}
	p, err := barrier.PlanInjection(dir, o)
	if err != nil {
		t.Fatalf("plan injection into %s: %v", dir, err)
	}
	rep, err := barrier.ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "backup")})
	if err != nil {
		t.Fatalf("inject into %s: %v", dir, err)
	}
	if !rep.Verification.OK() {
		t.Fatalf("inject verification: %+v", rep.Verification)
	}
	return p.BarrierOffset
}

var localOpts = segment.AppenderOptions{SegmentBytes: 300, IndexIntervalBytes: 100}

func verify(t testing.TB, u, d string, o ChainOptions) *EdgeReport {
	t.Helper()
	r, err := VerifyEdge(u, d, o)
	if err != nil {
		t.Fatalf("verify %s -> %s: %v", u, d, err)
	}
	sameOverDigests(t, u, d, o, r)
	return r
}

// wantFinding asserts an error finding of kind at offset and returns it.
func wantFinding(t testing.TB, r *EdgeReport, kind finding.Kind, offset int64) finding.Finding {
	t.Helper()
	var errs []finding.Finding
	for _, f := range r.Findings {
		if f.Severity() == finding.Error {
			errs = append(errs, f)
		}
	}
	for _, f := range errs {
		if f.Kind == kind && f.Offset == offset {
			return f
		}
	}
	t.Fatalf("want a %s finding at offset %d; status %s, findings:\n%s", kind, offset, r.Status, findingsText(r.Findings))
	return finding.Finding{}
}

func findingsText(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s at %d (%s@%d, U %s@%d): %s\n", f.Severity(), f.Kind, f.Offset, f.File, f.Position, f.UpstreamFile, f.UpstreamPosition, f.Message)
	}
	return b.String()
}

func entryAt(t testing.TB, dir string, offset int64) barriertest.Entry {
	t.Helper()
	for _, e := range barriertest.Entries(t, dir) {
		if e.BaseOffset == offset {
			return e
		}
	}
	t.Fatalf("%s: no batch at offset %d", dir, offset)
	return barriertest.Entry{}
}

// chainWorld is the tree the chain tests copy: a source A, B mirroring A
// then failed over (barrier in truncate mode) with its own writes, and the
// batches both clusters' producers wrote.
type chainWorld struct {
	root, a, b string
	src, local [][]byte
	barrier    int64
}

func buildWorld(t testing.TB) *chainWorld {
	t.Helper()
	w := &chainWorld{root: t.TempDir()}
	w.src, w.local = sourceTraffic(t), localTraffic(t)
	w.a = writeSource(t, w.root, w.src)
	w.b = newDst(t, w.root, "b")
	mustMirror(t, w.a, w.b, mirrorOpts(-1))
	w.barrier = failover(t, w.b, barrier.InjectOptions{})
	barriertest.AppendLocal(t, w.b, w.local, localOpts)
	return w
}

// clone copies the world's tree and returns the copy's A and B.
func (w *chainWorld) clone(t testing.TB) (a, b string) {
	t.Helper()
	root := t.TempDir()
	barriertest.CopyTree(t, w.root, root)
	return filepath.Join(root, "a", chainTopic+"-0"), filepath.Join(root, "b", chainTopic+"-0")
}

// TestChainActivePassiveWithRealClients: the consistent failover is
// recognised in every part, and each way of breaking it is found at its
// exact offset (and, for a changed byte, its exact position in both
// logs).
func TestChainActivePassiveWithRealClients(t *testing.T) {
	w := buildWorld(t)
	pid := kafkatest.TxnProducerID(barriertest.TxnID)
	if w.barrier != 10 {
		t.Fatalf("the barrier is at %d, want 10 (the source's last stable offset)", w.barrier)
	}

	t.Run("consistent", func(t *testing.T) {
		r := verify(t, w.a, w.b, ChainOptions{})
		if !r.OK() || r.Status != EdgeFailedOver {
			t.Fatalf("status %s:\n%s", r.Status, findingsText(r.Findings))
		}
		if r.Mirrored != (OffsetRange{0, 10}) || r.BatchesCompared != 6 || r.Barrier == nil || r.Barrier.Offset != 10 ||
			r.Local != (OffsetRange{11, 15}) || r.UpstreamLog != (OffsetRange{0, 13}) {
			t.Fatalf("mirrored %v (%d batches), barrier %+v, local %v, upstream %v", r.Mirrored, r.BatchesCompared, r.Barrier, r.Local, r.UpstreamLog)
		}
		if r.Barrier.ProducersCleared != 2 {
			t.Errorf("the barrier clears %d producers, want 2", r.Barrier.ProducersCleared)
		}
		if !slices.Equal(r.ProducersReused, []int64{1000, pid}) {
			t.Errorf("producers reused %v, want [1000 %d]", r.ProducersReused, pid)
		}
		if r.CollisionsAverted != 2 {
			t.Errorf("collisions averted %d, want 2: %+v", r.CollisionsAverted, r.Averted)
		}
	})

	t.Run("flipped-byte", func(t *testing.T) {
		a, b := w.clone(t)
		e := entryAt(t, b, 4)
		ua := entryAt(t, a, 4)
		const at = 70 // inside the records: covered by the CRC
		f, err := os.OpenFile(e.Log, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{e.Raw[at] ^ 0x01}, e.Position+at); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := verify(t, a, b, ChainOptions{})
		fd := wantFinding(t, r, finding.Mismatch, 4)
		if fd.File != filepath.Base(e.Log) || fd.Position != e.Position+at || fd.UpstreamFile != filepath.Base(ua.Log) || fd.UpstreamPosition != ua.Position+at {
			t.Fatalf("located at D %s@%d, U %s@%d; want D %s@%d, U %s@%d", fd.File, fd.Position, fd.UpstreamFile, fd.UpstreamPosition,
				filepath.Base(e.Log), e.Position+at, filepath.Base(ua.Log), ua.Position+at)
		}
		if r.Mirrored.End != 4 {
			t.Errorf("mirrored region ends at %d, want 4", r.Mirrored.End)
		}
	})

	t.Run("missing-barrier", func(t *testing.T) {
		d := newDst(t, t.TempDir(), "d")
		mustMirror(t, w.a, d, mirrorOpts(10))
		barriertest.AppendLocal(t, d, w.local, localOpts)
		r := verify(t, w.a, d, ChainOptions{})
		fd := wantFinding(t, r, finding.MissingBarrier, 10)
		if e := entryAt(t, d, 10); fd.Position < e.Position || fd.Position >= e.Position+int64(len(e.Raw)) || fd.UpstreamPosition < 0 {
			t.Fatalf("finding at D position %d (want inside the batch at %d), U position %d", fd.Position, e.Position, fd.UpstreamPosition)
		}
		// The replay finds the collisions the barrier would have averted.
		wantFinding(t, r, finding.PIDCollision, 10)
	})

	t.Run("barrier-above-open-transaction", func(t *testing.T) {
		d := newDst(t, t.TempDir(), "d")
		mustMirror(t, w.a, d, mirrorOpts(12))
		barriertest.AppendLocal(t, d, [][]byte{barrier.Build(barrier.Spec{Timestamp: time.Now().UnixMilli()})}, localOpts)
		r := verify(t, w.a, d, ChainOptions{})
		wantFinding(t, r, finding.OpenTxnAtBarrier, 12)
		if r.Barrier == nil || r.Barrier.Offset != 12 {
			t.Fatalf("barrier %+v", r.Barrier)
		}
	})

	t.Run("gap", func(t *testing.T) {
		d := newDst(t, t.TempDir(), "d")
		mustMirror(t, w.a, d, mirrorOpts(10))
		ap, err := segment.ResumeAppender(d, localOpts)
		if err != nil {
			t.Fatal(err)
		}
		if err := ap.Append(barrier.Build(barrier.Spec{BaseOffset: 12, Timestamp: time.Now().UnixMilli()})); err != nil {
			t.Fatal(err)
		}
		if err := ap.Close(); err != nil {
			t.Fatal(err)
		}
		r := verify(t, w.a, d, ChainOptions{})
		fd := wantFinding(t, r, finding.Gap, 12)
		if !strings.Contains(fd.Message, "offsets 10..11") {
			t.Fatalf("message %q", fd.Message)
		}
	})

	t.Run("overlap", func(t *testing.T) {
		d := newDst(t, t.TempDir(), "d")
		mustMirror(t, w.a, d, mirrorOpts(9)) // ends with the batch 7..8
		barriertest.AppendRaw(t, d, barrier.Build(barrier.Spec{BaseOffset: 8, Timestamp: time.Now().UnixMilli()}))
		r := verify(t, w.a, d, ChainOptions{})
		wantFinding(t, r, finding.Overlap, 8)
	})

	t.Run("beyond-upstream-end", func(t *testing.T) {
		d := newDst(t, t.TempDir(), "d")
		mustMirror(t, w.a, d, mirrorOpts(-1))
		barriertest.AppendLocal(t, d, w.local, localOpts)
		r := verify(t, w.a, d, ChainOptions{})
		wantFinding(t, r, finding.BeyondUpstreamEnd, 13)
	})

	t.Run("stale-snapshot", func(t *testing.T) {
		a, b := w.clone(t)
		pd := segtest.OpenDir(t, b)
		o := psm.DefaultOptions()
		o.Upto, o.FromSnapshot, o.IgnoreBarriers = 13, psm.SnapshotNone, true
		stale, err := psm.Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(b, segment.SegmentFileName(13, segment.SnapshotSuffix))
		if err := segment.WriteProducerSnapshotFile(path, stale.SnapshotEntries(), true); err != nil {
			t.Fatal(err)
		}
		r := verify(t, a, b, ChainOptions{})
		fd := wantFinding(t, r, finding.StaleSnapshot, 13)
		if fd.File != filepath.Base(path) {
			t.Fatalf("file %q", fd.File)
		}
	})

	t.Run("reordered", func(t *testing.T) {
		a, b := w.clone(t)
		// Two adjacent batches of one segment in the mirrored region.
		es := barriertest.Entries(t, b)
		i := -1
		for j := 0; j+1 < len(es) && i < 0; j++ {
			if es[j].BaseOffset > 0 && es[j].Log == es[j+1].Log && es[j+1].BaseOffset < 10 {
				i = j
			}
		}
		if i < 0 {
			t.Fatal("no two adjacent batches in one segment of the mirrored region")
		}
		x, y := es[i], es[i+1]
		swapped := append(append([]byte(nil), y.Raw...), x.Raw...)
		f, err := os.OpenFile(x.Log, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(swapped, x.Position); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := verify(t, a, b, ChainOptions{})
		fd := wantFinding(t, r, finding.Reordered, x.BaseOffset)
		if fd.Position != x.Position+int64(len(y.Raw)) {
			t.Fatalf("reordered batch at position %d, want %d", fd.Position, x.Position+int64(len(y.Raw)))
		}
	})

	t.Run("leader-epoch", func(t *testing.T) {
		a, b := w.clone(t)
		e := entryAt(t, b, 4)
		f, err := os.OpenFile(e.Log, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ple [4]byte
		binary.BigEndian.PutUint32(ple[:], 7)
		if _, err := f.WriteAt(ple[:], e.Position+12); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := verify(t, a, b, ChainOptions{})
		if !r.OK() || r.EpochDifferences != 1 {
			t.Fatalf("a partitionLeaderEpoch difference is info: %d differences\n%s", r.EpochDifferences, findingsText(r.Findings))
		}
		if len(r.Findings) != 1 || r.Findings[0].Kind != finding.LeaderEpoch || r.Findings[0].Severity() != finding.Info {
			t.Errorf("want one leader-epoch note:\n%s", findingsText(r.Findings))
		}
		r = verify(t, a, b, ChainOptions{StrictEpochs: true})
		wantFinding(t, r, finding.LeaderEpochMismatch, 4)
	})
}

// TestChainAbortDesign: a failover in design 2 (ABORT markers, epoch bump,
// then the barrier) is consistent too, and the markers are listed.
func TestChainAbortDesign(t *testing.T) {
	root := t.TempDir()
	a := writeSource(t, root, sourceTraffic(t))
	b := newDst(t, root, "b")
	mustMirror(t, a, b, mirrorOpts(-1))
	bar := failover(t, b, barrier.InjectOptions{Mode: barrier.ModeAbort, BumpLeaderEpoch: i32(5)})
	barriertest.AppendLocal(t, b, localTraffic(t), localOpts)
	r := verify(t, a, b, ChainOptions{})
	if !r.OK() || r.Status != EdgeFailedOver || r.Barrier.Offset != bar || !slices.Equal(r.Barrier.Aborts, []int64{13}) ||
		r.Mirrored != (OffsetRange{0, 13}) || r.Barrier.PartitionLeaderEpoch != 5 {
		t.Fatalf("status %s, mirrored %v, barrier %+v\n%s", r.Status, r.Mirrored, r.Barrier, findingsText(r.Findings))
	}
	// No ABORT marker before a barrier of ABORT markers only: a missing
	// barrier after them.
	c := newDst(t, root, "c")
	mustMirror(t, a, c, mirrorOpts(-1))
	entries := barriertest.Entries(t, b)
	abort := append([]byte(nil), entries[len(entries)-1].Raw...)
	for _, e := range entries {
		if e.BaseOffset == 13 {
			abort = append([]byte(nil), e.Raw...)
		}
	}
	barriertest.AppendAt(t, c, [][]byte{abort}, localOpts, 0)
	barriertest.AppendAt(t, c, [][]byte{dataBatch(t, 0, 1, 9009, 0, 0, false, 0)}, localOpts, 0)
	r = verify(t, a, c, ChainOptions{})
	wantFinding(t, r, finding.MissingBarrier, 14)
}

// TestReplayWithoutBarriersIsTheReplay pins what VerifyEdge relies on to
// skip D's second replay when the first met no barrier: IgnoreBarriers
// then changes nothing a replay reports (Manager.applyBarrier is the only
// step it changes). Checked on the bundled partitions without barriers;
// an injected barrier must make the two replays differ, or the test
// proves nothing.
func TestReplayWithoutBarriersIsTheReplay(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/partitions/*-0")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no bundled partitions: %v", err)
	}
	replay := func(dir string, ignore bool) *psm.Result {
		t.Helper()
		pd := segtest.OpenDir(t, dir)
		o := psm.DefaultOptions()
		o.FromSnapshot = psm.SnapshotNone
		o.IgnoreBarriers, o.VerifyCRC = ignore, !ignore
		r, err := psm.Rebuild(pd, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kinds := func(r *psm.Result) []string {
		var out []string
		for _, a := range r.Anomalies {
			if a.Kind != finding.CRCMismatch {
				out = append(out, fmt.Sprintf("%s@%d/%d", a.Kind, a.Offset, a.ProducerID))
			}
		}
		return out
	}
	checked := 0
	for _, dir := range dirs {
		with, without := replay(dir, false), replay(dir, true)
		if len(with.Barriers) != 0 {
			continue // control-0: VerifyEdge replays it twice
		}
		checked++
		if !slices.Equal(kinds(with), kinds(without)) || len(with.Producers) != len(without.Producers) {
			t.Errorf("%s: a replay without barriers differs from one that met none:\n%v\n%v", dir, kinds(with), kinds(without))
		}
	}
	if checked < 4 {
		t.Fatalf("only %d bundled partitions without barriers", checked)
	}
	// With a barrier the two differ: the barrier is ignored, and reported.
	dst := filepath.Join(t.TempDir(), "orders-0")
	barriertest.CopyTree(t, "../../testdata/partitions/orders-0", dst)
	plan, err := barrier.PlanInjection(dst, barrier.InjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := barrier.ApplyInjection(plan, edit.Options{BackupDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	with, without := replay(dst, false), replay(dst, true)
	if len(with.Barriers) != 1 || slices.Equal(kinds(with), kinds(without)) {
		t.Errorf("after a barrier: %d barriers, anomalies %v and %v: the replays should differ", len(with.Barriers), kinds(with), kinds(without))
	}
}
