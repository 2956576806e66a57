package mm2

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/mm2/mm2test"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// fixture is a source partition and an MM2 replica of it, written by
// mm2test (MirrorSourceTask's and MirrorCheckpointTask's behaviour).
type fixture struct {
	src, tgt, syncs, cps string
	res                  *mm2test.Result
}

func newFixture(t *testing.T, so mm2test.SourceOptions, ro mm2test.Options) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{src: filepath.Join(dir, "a", "orders-0"), tgt: filepath.Join(dir, "b", "A.orders-0"),
		syncs: filepath.Join(dir, "a", "mm2-offset-syncs.B.internal-0"), cps: filepath.Join(dir, "b", "A.checkpoints.internal-0")}
	if _, err := mm2test.WriteSource(f.src, so); err != nil {
		t.Fatal(err)
	}
	res, err := mm2test.Replicate(f.src, mm2test.Paths{Target: f.tgt, OffsetSyncs: f.syncs, Checkpoints: f.cps}, ro)
	if err != nil {
		t.Fatal(err)
	}
	f.res = res
	return f
}

func (f fixture) verify(t *testing.T, opts Options) *Report {
	t.Helper()
	opts.OffsetSyncs, opts.Checkpoints = f.syncs, f.cps
	rep, err := Verify(f.src, f.tgt, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var groups = []mm2test.Group{{Name: "billing", Upstream: 0}, {Name: "audit", Upstream: 77}, {Name: "reports", Upstream: 150}, {Name: "tail", Upstream: 300}}

// kinds lists the kinds the report holds, with their counts.
func kinds(rep *Report) string {
	var out []string
	for _, k := range finding.Kinds() {
		if n := rep.Counts[k]; n > 0 {
			out = append(out, fmt.Sprintf("%s=%d", k, n))
		}
	}
	for _, f := range rep.Findings {
		out = append(out, f.Kind.String())
	}
	for _, s := range rep.OffsetSyncs {
		if s.Kind != 0 {
			out = append(out, s.Kind.String())
		}
	}
	for _, c := range rep.Checkpoints {
		if c.Kind != 0 {
			out = append(out, c.Kind.String())
		}
	}
	return strings.Join(out, " ")
}

func TestCleanReplica(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mm2test.SourceOptions{Records: 300}, mm2test.Options{MaxPollRecords: 40, Groups: groups})
	rep := f.verify(t, Options{})
	if got := kinds(rep); got != "" || !rep.OK() {
		t.Fatalf("clean replica: %s", got)
	}
	if rep.Matched != 300 || rep.Copies != 300 || rep.Mirrored != (Range{0, 299}) {
		t.Errorf("matched %d copies %d mirrored %v", rep.Matched, rep.Copies, rep.Mirrored)
	}
	if len(rep.OffsetSyncs) != len(f.res.Syncs) || len(rep.Checkpoints) != len(f.res.Checkpoints) {
		t.Errorf("%d syncs %d checkpoints checked, want %d %d", len(rep.OffsetSyncs), len(rep.Checkpoints), len(f.res.Syncs), len(f.res.Checkpoints))
	}
	// MirrorCheckpointTask's translations: U=0 from the sync 0->0
	// exactly; U=77 one past the sync 0->0 (the next sync is at 101,
	// offset.lag.max later), 76 records before the exact 77; U=150 one
	// past 101->101; U=300, the source's end, one past the last sync
	// 299->299 (promoted at the task's commit).
	want := []CheckpointCheck{{Group: "billing", UpstreamOffset: 0, DownstreamOffset: 0, Exact: 0},
		{Group: "audit", UpstreamOffset: 77, DownstreamOffset: 1, Exact: 77, Behind: 76},
		{Group: "reports", UpstreamOffset: 150, DownstreamOffset: 102, Exact: 150, Behind: 48},
		{Group: "tail", UpstreamOffset: 300, DownstreamOffset: 300, Exact: 300}}
	if !slices.Equal(rep.Checkpoints, want) {
		t.Errorf("checkpoints\n%+v, want\n%+v", rep.Checkpoints, want)
	}
}

// TestFaults: each planted fault is found, with its offsets, and nothing
// else is reported.
func TestFaults(t *testing.T) {
	t.Parallel()
	so := mm2test.SourceOptions{Records: 300, SegmentBytes: 1 << 14}
	for _, c := range []struct {
		name  string
		ro    mm2test.Options
		opts  Options
		want  string
		check func(t *testing.T, rep *Report, f fixture)
	}{
		{"lose", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Lose, At: 120, N: 15}}, Options{}, "missing-records=15", func(t *testing.T, rep *Report, f fixture) {
			wantRun(t, rep, finding.MissingRecords, Range{120, 134}, noRange())
		}},
		{"restart", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Restart, At: 150, N: 30}}, Options{}, "duplicate-records=30", func(t *testing.T, rep *Report, f fixture) {
			wantRun(t, rep, finding.DuplicateRecords, Range{121, 150}, Range{151, 180})
		}},
		{"restart allowed", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Restart, At: 150, N: 30}}, Options{AllowDuplicates: true}, "duplicate-records-allowed=30", nil},
		{"reorder", mm2test.Options{MaxPollRecords: 10, Fault: mm2test.Fault{Kind: mm2test.Reorder, At: 55}}, Options{}, "reordered=10", func(t *testing.T, rep *Report, f fixture) {
			wantRun(t, rep, finding.Reordered, Range{50, 59}, Range{60, 69})
		}},
		{"foreign", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Foreign, At: 200, N: 4}}, Options{}, "foreign-records=4", func(t *testing.T, rep *Report, f fixture) {
			wantRun(t, rep, finding.ForeignRecords, noRange(), f.foreignRange())
		}},
		{"reset", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Reset, N: 25}}, Options{}, "source-reset=25 sync-not-verified", func(t *testing.T, rep *Report, f fixture) {
			wantRun(t, rep, finding.SourceReset, noRange(), Range{0, 24})
		}},
		{"timestamp", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Timestamp, At: 10, N: 3}}, Options{}, "timestamp-mismatch=3", nil},
		{"sync", mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.SyncAhead, At: 100}}, Options{}, "sync-mismatch", nil},
		{"checkpoint ahead", mm2test.Options{Groups: groups, Fault: mm2test.Fault{Kind: mm2test.CheckpointAhead, N: 3}}, Options{}, "checkpoint-ahead", nil},
		{"checkpoint unmirrored", mm2test.Options{Groups: groups, Fault: mm2test.Fault{Kind: mm2test.CheckpointUnmirrored}}, Options{}, "checkpoint-unmirrored", nil},
		{"lag", mm2test.Options{StopAt: 250}, Options{}, "not-yet-mirrored=50", nil},
		{"target retention", mm2test.Options{MaxPollRecords: 20, SegmentBytes: 2048, DropTargetSegments: 2}, Options{}, "below-target-start=40 sync-not-verified", nil},
		{"log append time", mm2test.Options{LogAppendTime: true}, Options{}, "timestamps-replaced=300", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ro := c.ro
			if ro.Groups == nil {
				ro.Groups = groups
			}
			f := newFixture(t, so, ro)
			rep := f.verify(t, c.opts)
			got := kinds(rep)
			if !strings.HasPrefix(got, c.want) || strings.Count(got, " ") != strings.Count(c.want, " ") {
				t.Errorf("found %q, want %q alone", got, c.want)
			}
			if c.check != nil {
				c.check(t, rep, f)
			}
			for _, r := range rep.Runs {
				t.Logf("%s", r.Message)
			}
		})
	}
}

func wantRun(t *testing.T, rep *Report, k finding.Kind, src, tgt Range) {
	t.Helper()
	i := slices.IndexFunc(rep.Runs, func(r Run) bool { return r.Kind == k })
	if i < 0 {
		t.Fatalf("no %s run", k)
	}
	if r := rep.Runs[i]; r.Source != src || r.Target != tgt {
		t.Errorf("%s run: source %v target %v, want %v %v", k, r.Source, r.Target, src, tgt)
	}
}

// TestCompacted: a source compacted after MM2 copied it leaves copies of
// records it no longer holds (compacted-upstream); a target compacted
// leaves source records without copies (compacted-downstream). Neither is
// a fault.
func TestCompacted(t *testing.T) {
	t.Parallel()
	so := mm2test.SourceOptions{Records: 400, Keys: 40}
	f := newFixture(t, so, mm2test.Options{MaxPollRecords: 50, Groups: groups})
	dir := t.TempDir()
	csrc, ctgt := filepath.Join(dir, "a", "orders-0"), filepath.Join(dir, "b", "A.orders-0")
	if err := mm2test.Compact(f.src, csrc, 300); err != nil {
		t.Fatal(err)
	}
	if err := mm2test.Compact(f.tgt, ctgt, 250); err != nil {
		t.Fatal(err)
	}
	up := fixture{src: csrc, tgt: f.tgt}.verify(t, Options{})
	if got := kinds(up); !strings.HasPrefix(got, "compacted-upstream=") || strings.Contains(got, " ") || !up.OK() {
		t.Errorf("compacted source: %s", got)
	}
	if up.Counts[finding.CompactedUpstream] != 400-up.Matched || up.Source.Holes != up.Counts[finding.CompactedUpstream] {
		t.Errorf("compacted source: %d compacted-upstream, %d matched, %d holes", up.Counts[finding.CompactedUpstream], up.Matched, up.Source.Holes)
	}
	down := fixture{src: f.src, tgt: ctgt, syncs: f.syncs, cps: f.cps}.verify(t, Options{})
	if got := kinds(down); !strings.HasPrefix(got, "compacted-downstream=") || !down.OK() {
		t.Errorf("compacted target: %s", got)
	}
	if down.Counts[finding.CompactedDownstream] != down.Target.Holes {
		t.Errorf("compacted target: %d compacted-downstream, %d holes", down.Counts[finding.CompactedDownstream], down.Target.Holes)
	}
	// The same target against a source whose records were really lost:
	// copies removed by the target's cleaner look the same, but a gap the
	// target's holes cannot explain is missing.
	lost := newFixture(t, so, mm2test.Options{MaxPollRecords: 50, Fault: mm2test.Fault{Kind: mm2test.Lose, At: 350, N: 5}})
	got := kinds(lost.verify(t, Options{}))
	if got != "missing-records=5" {
		t.Errorf("lose 5 at 350: %s", got)
	}
}

// TestTransactions: MM2's consumer reads with the default isolation
// level read_uncommitted, so it copies the records of aborted and open
// transactions; under read_committed it copies neither, and stops at the
// last stable offset. Control batches are never copied. Verify follows
// the isolation level it is told, and a replica checked with the wrong
// one shows it.
func TestTransactions(t *testing.T) {
	t.Parallel()
	so := mm2test.SourceOptions{Records: 300, Transactions: true}
	unc := newFixture(t, so, mm2test.Options{MaxPollRecords: 30, Groups: groups})
	rep := unc.verify(t, Options{})
	if got := kinds(rep); got != "" {
		t.Errorf("read_uncommitted replica, read_uncommitted check: %s", got)
	}
	if rep.Source.ControlRecords == 0 || rep.Source.Records != 300 || rep.Matched != 300 {
		t.Errorf("source: %d control records, %d records, %d matched", rep.Source.ControlRecords, rep.Source.Records, rep.Matched)
	}
	com := newFixture(t, so, mm2test.Options{MaxPollRecords: 30, ReadCommitted: true, Groups: groups})
	rep = com.verify(t, Options{Isolation: ReadCommitted})
	if got := kinds(rep); got != "" {
		t.Errorf("read_committed replica, read_committed check: %s", got)
	}
	if rep.Source.Aborted == 0 || rep.Source.LastStable < 0 || rep.Source.Uncommitted == 0 {
		t.Errorf("source: %d aborted, last stable %d, %d uncommitted", rep.Source.Aborted, rep.Source.LastStable, rep.Source.Uncommitted)
	}
	aborted := rep.Source.Aborted
	rep = com.verify(t, Options{})
	if got := kinds(rep); !strings.HasPrefix(got, "missing-records=") || rep.Counts[finding.MissingRecords] != aborted {
		t.Errorf("read_committed replica, read_uncommitted check: %s, want %d missing (the aborted records)", got, aborted)
	}
}

// TestExactlyOnceTarget: with exactly.once.support MM2's producer is
// transactional; a transaction it aborts and copies again leaves aborted
// copies in the target that no read_committed consumer sees: not
// duplicates.
func TestExactlyOnceTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mm2test.SourceOptions{Records: 200}, mm2test.Options{MaxPollRecords: 25, ReadCommitted: true, ExactlyOnce: true, AbortAt: 80, Groups: groups})
	rep := f.verify(t, Options{Isolation: ReadCommitted})
	if got := kinds(rep); got != "" || rep.Target.Aborted == 0 || rep.Target.ControlRecords == 0 {
		t.Errorf("%s; target: %d aborted, %d control records", got, rep.Target.Aborted, rep.Target.ControlRecords)
	}
}

// TestBeyondTheWindow: a gap, a step back and a start further than the
// window reaches are still found (a far scan reads the source ahead on a
// second stream), and a long foreign stretch costs a few far scans.
func TestBeyondTheWindow(t *testing.T) {
	t.Parallel()
	so := mm2test.SourceOptions{Records: 2000, SegmentBytes: 1 << 18}
	small := Options{Window: 128}
	lost := newFixture(t, so, mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Lose, At: 700, N: 500}})
	rep := lost.verify(t, small)
	if got := kinds(rep); got != "missing-records=500" {
		t.Errorf("500 lost with a window of 128: %s", got)
	}
	wantRun(t, rep, finding.MissingRecords, Range{700, 1199}, noRange())
	late := newFixture(t, so, mm2test.Options{MaxPollRecords: 100, SegmentBytes: 8192, DropTargetSegments: 6})
	rep = late.verify(t, small)
	if got := kinds(rep); !strings.HasPrefix(got, "below-target-start=") || rep.Matched+rep.Counts[finding.BelowTargetStart] != 2000 {
		t.Errorf("target retention beyond the window: %s, %d matched", got, rep.Matched)
	}
	foreign := newFixture(t, so, mm2test.Options{Fault: mm2test.Fault{Kind: mm2test.Foreign, At: 1000, N: 700}})
	rep = foreign.verify(t, small)
	if got := kinds(rep); got != "foreign-records=700" {
		t.Errorf("700 foreign with a window of 128: %s", got)
	}
	wantRun(t, rep, finding.ForeignRecords, noRange(), foreign.foreignRange())
}

// foreignRange is the range of target offsets Replicate filled with
// records of no source.
func (f fixture) foreignRange() Range {
	r := noRange()
	for _, d := range f.res.Foreign {
		if r.First < 0 || d < r.First {
			r.First = d
		}
		r.Last = max(r.Last, d)
	}
	return r
}

// TestNoTimestamps: a magic-0 source has no timestamps; MM2's producer
// stamps its own clock, so the copies' timestamps are not compared.
func TestNoTimestamps(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mm2test.SourceOptions{Records: 100, NoTimestamps: true}, mm2test.Options{})
	rep := f.verify(t, Options{})
	if got := kinds(rep); got != "" || rep.Source.NoTimestamp != 100 {
		t.Errorf("%s, %d without timestamps", got, rep.Source.NoTimestamp)
	}
}

// TestNothingCopied: a replica MM2 has not written to yet holds no copy:
// the whole source is lag, not a fault; a target of records that copy
// nothing in the source is foreign.
func TestNothingCopied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "a", "orders-0")
	if _, err := mm2test.WriteSource(src, mm2test.SourceOptions{Records: 50}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		records int
		want    string
		ok      bool
	}{{0, "not-yet-mirrored=50", true}, {30, "not-yet-mirrored=50 foreign-records=30", false}} {
		tgt := filepath.Join(dir, fmt.Sprint(c.records), "A.orders-0")
		a, err := segment.OpenAppender(tgt, segment.AppenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.records {
			raw, _ := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: int64(i), ProducerID: -1, BaseSequence: -1},
				[]decode.RecordSpec{{Timestamp: int64(i), Value: fmt.Appendf(nil, "not from the source %d", i)}})
			if err := a.Append(raw); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(src, tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(rep); got != c.want || rep.OK() != c.ok {
			t.Errorf("a target of %d foreign records: %s, ok %v", c.records, got, rep.OK())
		}
	}
}

// TestTranslationNeedsNames: offset syncs or checkpoints are matched to
// the partitions by their directories' names; a target directory not
// named <topic>-<partition> is a *NameError naming the flag that needed
// it, and without either flag the name is not asked for.
func TestTranslationNeedsNames(t *testing.T) {
	f := newFixture(t, mm2test.SourceOptions{Records: 20}, mm2test.Options{})
	unnamed := filepath.Join(t.TempDir(), "replica")
	barriertest.CopyTree(t, f.tgt, unnamed)
	for _, tc := range []struct {
		flag string
		opts Options
	}{{"--offset-syncs", Options{OffsetSyncs: f.syncs}}, {"--checkpoints", Options{Checkpoints: f.cps}}} {
		var ne *NameError
		if _, err := Verify(f.src, unnamed, tc.opts); !errors.As(err, &ne) || ne.Flag != tc.flag || ne.Dir != unnamed {
			t.Errorf("%s with an unnamed target: %v, want a name error for the flag", tc.flag, err)
		}
	}
	if _, err := Verify(f.src, unnamed, Options{}); err != nil {
		t.Errorf("no translation to check: %v", err)
	}
}
