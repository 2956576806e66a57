package injectbarrier

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
)

// injectForm is inject-barrier's words for the write commands' one
// renderer (writecmd.Printer).
var injectForm = &writecmd.Form[*barrier.InjectionPlan, *barrier.InjectionVerification]{
	What: "injection",
	Head: func(p *barrier.InjectionPlan) (string, string) {
		return "Partition", fmt.Sprintf("%s (topic %s, partition %d)", p.Dir, p.Topic, p.Partition)
	},
	Found:    injectFound,
	Changes:  injectChanges,
	PlanJSON: injectPlanWire,
	Done: func(t *writecmd.Text, r *barrier.InjectionReport) {
		t.Pf("%s barrier at offset %d; new log end offset %d\n", t.St.Paint(t.St.OK, "Done:"), r.Plan.BarrierOffset, r.Plan.NewLogEndOffset)
	},
	Verified: func(v *barrier.InjectionVerification) string {
		return fmt.Sprintf("the barrier is well-formed; a replay clears %s at it and leaves none after it; the indexes agree with the log", ui.Plural(v.ProducersCleared, "producer"))
	},
	Failed:     injectFailed,
	ResultJSON: injectResultWire,
}

// injectFound is the partition as the plan found it: its log and the
// producers at its end.
func injectFound(t *writecmd.Text, p *barrier.InjectionPlan) {
	t.Pf("  %s, log start %s, log end %s, last stable offset %s\n", ui.Plural(p.Segments, "segment"), t.Off(p.LogStartOffset), t.Off(p.LogEndOffset), t.Off(p.LastStableOffset))
	ongoing := make([]string, len(p.Ongoing))
	for i, o := range p.Ongoing {
		ongoing[i] = fmt.Sprintf("producer %s from %s", t.Pid(o.ProducerID), t.Off(o.FirstOffset))
	}
	if len(ongoing) == 0 {
		t.Pf("  %s at the log end, no open transaction\n", ui.Plural(p.Producers, "producer"))
	} else {
		t.Pf("  %s at the log end, %s: %s\n", ui.Plural(p.Producers, "producer"), ui.Plural(len(ongoing), "open transaction"), t.Ls.Join(ongoing, "; "))
	}
}

// injectChanges is what the injection changes: the tail it repairs, the
// cut (truncate mode), the indexes, snapshots and leader epochs, and the
// batches it appends.
func injectChanges(t *writecmd.Text, p *barrier.InjectionPlan) {
	if tr := p.TailRepair; tr != nil {
		t.Pf("%s cut %s at position %d (%s, %d bytes): %s\n", t.Title("Tail repair:"), filepath.Base(tr.Path), tr.Position, tr.Kind, tr.Bytes, tr.Message)
		if len(tr.SegmentsDropped) > 0 {
			t.Pf("  segments after it dropped, as broker recovery does: %s\n", t.Ls.Offsets(tr.SegmentsDropped))
		}
		if tr.LogEndOffset > p.LogEndOffset {
			t.Pf("  log end %d -> %d: the repair removes offsets %d..%d\n", tr.LogEndOffset, p.LogEndOffset, p.LogEndOffset, tr.LogEndOffset-1)
		}
	}
	switch p.Mode {
	case barrier.ModeAbort:
		t.Pf("%s abort (KIP-1279 design 2): ABORT markers for the open transactions, then the barrier; nothing is truncated\n", t.Title("Mode:"))
	default:
		injectCut(t, p)
	}
	t.IndexChanges(p.Index, p.TimeIndex, p.TxnIndex)
	if len(p.SnapshotsDeleted) > 0 {
		t.Pf("  producer snapshots deleted: %s\n", t.Ls.Offsets(p.SnapshotsDeleted))
	}
	var added []segment.EpochEntry
	if e := p.EpochEntryAdded; e != nil {
		added = []segment.EpochEntry{*e}
	}
	t.EpochChanges(p.EpochEntriesRemoved, added)
	injectAppended(t, p)
}

// injectCut is truncate mode's cut (KIP-1279 design 1): where, what it
// removes, the transactions it drops and the committed data it loses.
func injectCut(t *writecmd.Text, p *barrier.InjectionPlan) {
	ls := t.Ls
	t.Pf("%s truncate (KIP-1279 design 1): cut at the last stable offset, then the barrier\n", t.Title("Mode:"))
	t.Pf("%s offset %s, %s position %d", t.Title("Cut:"), t.Off(p.Cut), segment.SegmentFileName(p.CutSegment, segment.LogSuffix), p.CutPosition)
	if len(p.CutIterations) > 1 {
		t.Pf(" (last stable offset iterated to a fixed point: %s; a cut reopened transactions whose markers lay beyond it)", ls.Offsets(p.CutIterations))
	}
	t.Pf("\n")
	r := p.Removed
	if r.Batches == 0 && r.Bytes == 0 {
		t.Pf("  nothing is removed\n")
	} else {
		t.Pf("  removed: %d batches, %d records, %d bytes, %d offsets", r.Batches, r.Records, r.Bytes, r.Offsets)
		if r.Offsets > 0 {
			t.Pf(" (%d..%d)", p.Cut, p.Cut+r.Offsets-1)
		}
		t.Pf("\n")
		if len(r.Producers) > 0 {
			t.Pf("  producers losing data: %s\n", ls.Offsets(r.Producers))
		}
	}
	if len(p.DroppedTxns) > 0 {
		t.Pf("  transactions dropped:\n")
		ls.Lines(len(p.DroppedTxns), "transactions", func(i int) {
			d := p.DroppedTxns[i]
			what := "open"
			if d.MarkerOffset >= 0 {
				what = fmt.Sprintf("%s, its marker at %d is cut too", d.State, d.MarkerOffset)
			}
			t.Pf("    producer %s from offset %s: %s\n", t.Pid(d.ProducerID), t.Off(d.FirstOffset), what)
		}, func(more string) { t.Pf("    %s\n", more) })
	}
	injectCommittedLost(t, p)
	if len(p.SegmentsDeleted) > 0 {
		t.Pf("  segments deleted: %s\n", ls.Offsets(p.SegmentsDeleted))
	}
}

// injectCommittedLost names the committed transactions a cut moved below
// the first last stable offset loses.
func injectCommittedLost(t *writecmd.Text, p *barrier.InjectionPlan) {
	txns, n := p.ReopenedCommitted()
	if len(txns) == 0 {
		return
	}
	t.Pf("  %s the fixed point moved the cut from the last stable offset %d down to %d, below committed transactions: %d committed records a read_committed consumer may have read are lost (",
		t.St.Paint(t.St.Warn, "committed data lost:"), p.LastStableOffset, p.Cut, n)
	for i, d := range txns {
		if i > 0 {
			t.Pf("; ")
		}
		t.Pf("producer %s's transaction from offset %d, %s, committed at %d", t.Pid(d.ProducerID), d.FirstOffset, ui.Plural(d.Records, "record"), d.MarkerOffset)
	}
	t.Pf("); --mode abort keeps them (ABORT markers close the open transactions, nothing is truncated)\n")
}

// injectAppended lists the batches appended (the ABORT markers and the
// barrier), the .txnindex entries and what the barrier clears.
func injectAppended(t *writecmd.Text, p *barrier.InjectionPlan) {
	t.Pf("%s\n", t.Title("Append:"))
	t.Ls.Lines(len(p.Appended), "batches", func(i int) {
		a := p.Appended[i]
		if a.Kind == "MIRROR_PID_RESET" {
			t.Pf("  offset %s position %d  %s  %d bytes  partitionLeaderEpoch %d  timestamp %d\n",
				t.Off(a.Offset), a.Position, t.St.Paint(t.St.Info, a.Kind), a.Size, p.LeaderEpoch, p.Timestamp)
			return
		}
		t.Pf("  offset %s position %d  %s  %d bytes  producerId %s producerEpoch %d coordinatorEpoch %d  (transaction from %d)\n",
			t.Off(a.Offset), a.Position, a.Kind, a.Size, t.Pid(a.ProducerID), a.ProducerEpoch, a.CoordinatorEpoch, a.TxnFirstOffset)
	}, func(more string) { t.Pf("  %s\n", more) })
	t.AbortedTxns(p.AbortedTxns)
	t.Pf("  the barrier clears %s%s; new log end offset %s", ui.Plural(p.ProducersCleared, "producer"), expiredWhy(p), t.Off(p.NewLogEndOffset))
	if p.SnapshotOffset >= 0 {
		t.Pf("; empty producer snapshot %s", segment.SegmentFileName(p.SnapshotOffset, segment.SnapshotSuffix))
	}
	t.Pf("\n")
}

// injectFailed is what a failed read-back found.
func injectFailed(t *writecmd.Text, v *barrier.InjectionVerification) {
	if !v.BarrierFound {
		t.Pf("  no MIRROR_PID_RESET batch at offset %d\n", v.BarrierOffset)
	}
	t.Ls.Lines(len(v.BarrierProblems), "barrier problems", func(i int) { t.Pf("  barrier: %s\n", v.BarrierProblems[i]) },
		func(more string) { t.Pf("  %s\n", more) })
	if v.ProducersAfter > 0 || v.OngoingAfter > 0 {
		t.Pf("  a replay leaves %s and %s after the barrier\n", ui.Plural(v.ProducersAfter, "producer"), ui.Plural(v.OngoingAfter, "open transaction"))
	}
	t.Problems(v.Anomalies, v.IndexProblems)
}

// ---- json ----

// JSON lines, explicit wire structs (docs/json.md style): one "plan" line,
// then one "result" line when something was applied or rolled back.

type injectTxnJSON struct {
	ProducerID   int64  `json:"producerId"`
	FirstOffset  int64  `json:"firstOffset"`
	MarkerOffset int64  `json:"markerOffset"`
	State        string `json:"state"`
	Records      int64  `json:"records,omitempty"` // data records the cut removes (droppedTxns)
}

type injectAppendJSON struct {
	Kind             string `json:"kind"`
	Offset           int64  `json:"offset"`
	Position         int64  `json:"position"`
	Size             int    `json:"size"`
	ProducerID       int64  `json:"producerId"`
	ProducerEpoch    int16  `json:"producerEpoch"`
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
	TxnFirstOffset   int64  `json:"txnFirstOffset"`
}

type injectTailJSON struct {
	Segment         int64   `json:"segment"`
	Position        int64   `json:"position"`
	Kind            string  `json:"kind"`
	Bytes           int64   `json:"bytes"`
	Message         string  `json:"message"`
	SegmentsDropped []int64 `json:"segmentsDropped"`
	LogEndOffset    int64   `json:"logEndOffset"`
}

type injectPlanJSON struct {
	writecmd.PlanHeadJSON                      // "plan"
	Dir                   string               `json:"dir"`
	Topic                 string               `json:"topic"`
	Partition             int32                `json:"partition"`
	Mode                  string               `json:"mode"`
	DryRun                bool                 `json:"dryRun"`
	NothingToDo           bool                 `json:"nothingToDo"`
	Reason                string               `json:"reason,omitempty"`
	Resume                *writecmd.ResumeJSON `json:"resume,omitempty"`
	Segments              int                  `json:"segments"`
	LogStartOffset        int64                `json:"logStartOffset"`
	LogEndOffset          int64                `json:"logEndOffset"`
	LastStableOffset      int64                `json:"lastStableOffset"`
	FirstUndecidedOffset  int64                `json:"firstUndecidedOffset"`
	Producers             int                  `json:"producers"`
	Ongoing               []injectTxnJSON      `json:"ongoing"`
	TailRepair            *injectTailJSON      `json:"tailRepair,omitempty"`
	Cut                   int64                `json:"cut"`
	CutIterations         []int64              `json:"cutIterations"`
	CutSegment            int64                `json:"cutSegment"`
	CutPosition           int64                `json:"cutPosition"`
	writecmd.RemovedJSON
	DroppedTxns      []injectTxnJSON `json:"droppedTxns"`
	SegmentsDeleted  []int64         `json:"segmentsDeleted"`
	SnapshotsDeleted []int64         `json:"snapshotsDeleted"`
	writecmd.IndexChangesJSON
	EpochEntryAdded  *writecmd.EpochJSON `json:"epochEntryAdded"`
	Appended         []injectAppendJSON  `json:"appended"`
	BarrierOffset    int64               `json:"barrierOffset"`
	LeaderEpoch      int32               `json:"leaderEpoch"`
	Timestamp        int64               `json:"timestamp"`
	NewLogEndOffset  int64               `json:"newLogEndOffset"`
	ProducersCleared int                 `json:"producersCleared"`
	ProducersAtCut   int                 `json:"producersAtCut"`
	ProducersExpired int                 `json:"producersExpired"`
	SnapshotOffset   int64               `json:"snapshotOffset"`
	writecmd.PlanFilesJSON
}

type injectVerifyJSON struct {
	OK               bool     `json:"ok"`
	BarrierOffset    int64    `json:"barrierOffset"`
	BarrierFound     bool     `json:"barrierFound"`
	BarrierProblems  []string `json:"barrierProblems"`
	ProducersCleared int      `json:"producersCleared"`
	ProducersAfter   int      `json:"producersAfter"`
	OngoingAfter     int      `json:"ongoingAfter"`
	Anomalies        []string `json:"anomalies"`
	IndexProblems    []string `json:"indexProblems"`
}

type injectResultJSON struct {
	writecmd.ResultJSON
	BarrierOffset   int64             `json:"barrierOffset"`
	NewLogEndOffset int64             `json:"newLogEndOffset"`
	Steps           int               `json:"steps"`
	Verification    *injectVerifyJSON `json:"verification,omitempty"`
}

// injectPlanWire is a plan's JSON line.
func injectPlanWire(p *barrier.InjectionPlan, dryRun bool) any {
	out := injectPlanJSON{PlanHeadJSON: writecmd.PlanHead("plan", p.Resume, p.Dir, p.LogDir, false), Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, Mode: string(p.Mode), DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, Segments: p.Segments, LogStartOffset: p.LogStartOffset,
		LogEndOffset: p.LogEndOffset, LastStableOffset: p.LastStableOffset, FirstUndecidedOffset: p.FirstUndecidedOffset,
		Producers: p.Producers, Ongoing: []injectTxnJSON{}, Cut: p.Cut, CutIterations: ui.NonNil(p.CutIterations),
		CutSegment: p.CutSegment, CutPosition: p.CutPosition, RemovedJSON: writecmd.RemovedOf(p.Removed),
		DroppedTxns: []injectTxnJSON{}, SegmentsDeleted: ui.NonNil(p.SegmentsDeleted), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted),
		IndexChangesJSON: writecmd.IndexChangesOf(p.Index, p.TimeIndex, p.TxnIndex, p.AbortedTxns, p.EpochEntriesRemoved),
		Resume:           writecmd.ResumeOf(p.Resume),
		Appended:         []injectAppendJSON{},
		BarrierOffset:    p.BarrierOffset, LeaderEpoch: p.LeaderEpoch, Timestamp: p.Timestamp, NewLogEndOffset: p.NewLogEndOffset,
		ProducersCleared: p.ProducersCleared, ProducersAtCut: p.ProducersAtCut, ProducersExpired: p.ProducersExpired, SnapshotOffset: p.SnapshotOffset,
		PlanFilesJSON: writecmd.PlanFilesOf(p)}
	for _, o := range p.Ongoing {
		out.Ongoing = append(out.Ongoing, injectTxnJSON{ProducerID: o.ProducerID, FirstOffset: o.FirstOffset, MarkerOffset: -1, State: "open"})
	}
	if tr := p.TailRepair; tr != nil {
		out.TailRepair = &injectTailJSON{Segment: tr.Segment, Position: tr.Position, Kind: tr.Kind, Bytes: tr.Bytes, Message: tr.Message,
			SegmentsDropped: ui.NonNil(tr.SegmentsDropped), LogEndOffset: tr.LogEndOffset}
	}
	for _, d := range p.DroppedTxns {
		out.DroppedTxns = append(out.DroppedTxns, injectTxnJSON(d))
	}
	if e := p.EpochEntryAdded; e != nil {
		out.EpochEntryAdded = &writecmd.EpochJSON{LeaderEpoch: e.Epoch, StartOffset: e.StartOffset}
	}
	for _, a := range p.Appended {
		out.Appended = append(out.Appended, injectAppendJSON(a))
	}
	return out
}

// injectResultWire is a report's JSON line.
func injectResultWire(r *barrier.InjectionReport) any {
	out := injectResultJSON{ResultJSON: writecmd.Result("result", &r.Outcome), Steps: len(r.Steps)}
	if r.Plan != nil {
		out.BarrierOffset, out.NewLogEndOffset = r.Plan.BarrierOffset, r.Plan.NewLogEndOffset
	}
	if v := r.Verification; v != nil {
		vj := &injectVerifyJSON{OK: v.OK(), BarrierOffset: v.BarrierOffset, BarrierFound: v.BarrierFound, BarrierProblems: []string{},
			ProducersCleared: v.ProducersCleared, ProducersAfter: v.ProducersAfter, OngoingAfter: v.OngoingAfter,
			Anomalies: ui.NonNil(v.Anomalies), IndexProblems: ui.NonNil(v.IndexProblems)}
		for _, p := range v.BarrierProblems {
			vj.BarrierProblems = append(vj.BarrierProblems, p.String())
		}
		out.Verification = vj
	}
	return out
}

// expiredWhy explains, after "the barrier clears N producers", the
// producers at the cut that a replay expires before it reaches the
// barrier, so that the plan says what the read-back will say and why: a
// barrier timestamped today on data a day or more old clears none.
func expiredWhy(p *barrier.InjectionPlan) string {
	if p.ProducersExpired == 0 {
		return ""
	}
	n := "the " + ui.Plural(p.ProducersAtCut, "producer")
	if p.ProducersCleared > 0 {
		n = fmt.Sprintf("%d of the %s", p.ProducersExpired, ui.Plural(p.ProducersAtCut, "producer"))
	}
	return fmt.Sprintf(" (%s at the cut expire first: the barrier's timestamp %d (%s) is producer.id.expiration.ms = %d ms (%s) or more after their last batch, and a replay, the read-back's included, removes them when its log clock reaches it, ProducerStateManager.removeExpiredProducers; --timestamp sets the barrier's time)",
		n, p.Timestamp, time.UnixMilli(p.Timestamp).UTC().Format("2006-01-02T15:04:05Z"), p.ExpirationMs, time.Duration(p.ExpirationMs)*time.Millisecond)
}
