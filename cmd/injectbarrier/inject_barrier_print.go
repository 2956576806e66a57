package injectbarrier

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
)

// injectPrinter renders inject-barrier's plan and report.
type injectPrinter interface {
	Plan(p *barrier.InjectionPlan, dryRun bool) error
	Report(r *barrier.InjectionReport) error
}

func newInjectPrinter(s *ui.Streams, output string) injectPrinter {
	if output == "json" {
		return &injectJSONPrinter{w: s.Out}
	}
	t := &injectTextPrinter{w: s.Out, errw: s.Err, st: s.Styles(), ls: s.Lister()}
	if output == "table" {
		t.tbl = &ui.TableOut{W: s.Out, Width: s.Width}
	}
	return t
}

// ---- text ----

type injectTextPrinter struct {
	w    io.Writer
	errw io.Writer // warnings are diagnostics: stderr
	st   *ui.Styles
	ls   ui.Lister    // how much of each list to show
	tbl  *ui.TableOut // --output table: file operations as a table
}

func (t *injectTextPrinter) Plan(p *barrier.InjectionPlan, dryRun bool) error {
	w, st, ls := t.w, t.st, t.ls
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	title := func(s string) string { return st.Paint(st.Title, s) }
	off := func(v int64) string { return st.Paint(st.Offset, fmt.Sprint(v)) }
	pid := func(v int64) string { return st.Paint(st.Pid, fmt.Sprint(v)) }

	pf("%s %s (topic %s, partition %d)\n", title("Partition"), p.Dir, p.Topic, p.Partition)
	writecmd.TextResume(pf, st, "injection", p.Resume)
	pf("  %s, log start %s, log end %s, last stable offset %s\n", ui.Plural(p.Segments, "segment"), off(p.LogStartOffset), off(p.LogEndOffset), off(p.LastStableOffset))
	ongoing := make([]string, len(p.Ongoing))
	for i, o := range p.Ongoing {
		ongoing[i] = fmt.Sprintf("producer %s from %s", pid(o.ProducerID), off(o.FirstOffset))
	}
	if len(ongoing) == 0 {
		pf("  %s at the log end, no open transaction\n", ui.Plural(p.Producers, "producer"))
	} else {
		pf("  %s at the log end, %s: %s\n", ui.Plural(p.Producers, "producer"), ui.Plural(len(ongoing), "open transaction"), ls.Join(ongoing, "; "))
	}
	if p.NothingToDo {
		pf("%s %s\n", st.Paint(st.OK, "Nothing to do:"), p.Reason)
		return nil
	}
	if tr := p.TailRepair; tr != nil {
		pf("%s cut %s at position %d (%s, %d bytes): %s\n", title("Tail repair:"), filepath.Base(tr.Path), tr.Position, tr.Kind, tr.Bytes, tr.Message)
		if len(tr.SegmentsDropped) > 0 {
			pf("  segments after it dropped, as broker recovery does: %s\n", ls.Offsets(tr.SegmentsDropped))
		}
		if tr.LogEndOffset > p.LogEndOffset {
			pf("  log end %d -> %d: the repair removes offsets %d..%d\n", tr.LogEndOffset, p.LogEndOffset, p.LogEndOffset, tr.LogEndOffset-1)
		}
	}
	switch p.Mode {
	case barrier.ModeAbort:
		pf("%s abort (KIP-1279 design 2): ABORT markers for the open transactions, then the barrier; nothing is truncated\n", title("Mode:"))
	default:
		pf("%s truncate (KIP-1279 design 1): cut at the last stable offset, then the barrier\n", title("Mode:"))
		pf("%s offset %s, %s position %d", title("Cut:"), off(p.Cut), segment.SegmentFileName(p.CutSegment, segment.LogSuffix), p.CutPosition)
		if len(p.CutIterations) > 1 {
			pf(" (last stable offset iterated to a fixed point: %s; a cut reopened transactions whose markers lay beyond it)", ls.Offsets(p.CutIterations))
		}
		pf("\n")
		r := p.Removed
		if r.Batches == 0 && r.Bytes == 0 {
			pf("  nothing is removed\n")
		} else {
			pf("  removed: %d batches, %d records, %d bytes, %d offsets", r.Batches, r.Records, r.Bytes, r.Offsets)
			if r.Offsets > 0 {
				pf(" (%d..%d)", p.Cut, p.Cut+r.Offsets-1)
			}
			pf("\n")
			if len(r.Producers) > 0 {
				pf("  producers losing data: %s\n", ls.Offsets(r.Producers))
			}
		}
		if len(p.DroppedTxns) > 0 {
			pf("  transactions dropped:\n")
			ls.Lines(len(p.DroppedTxns), "transactions", func(i int) {
				d := p.DroppedTxns[i]
				what := "open"
				if d.MarkerOffset >= 0 {
					what = fmt.Sprintf("%s, its marker at %d is cut too", d.State, d.MarkerOffset)
				}
				pf("    producer %s from offset %s: %s\n", pid(d.ProducerID), off(d.FirstOffset), what)
			}, func(more string) { pf("    %s\n", more) })
		}
		if txns, n := p.ReopenedCommitted(); len(txns) > 0 {
			pf("  %s the fixed point moved the cut from the last stable offset %d down to %d, below committed transactions: %d committed records a read_committed consumer may have read are lost (",
				st.Paint(st.Warn, "committed data lost:"), p.LastStableOffset, p.Cut, n)
			for i, d := range txns {
				if i > 0 {
					pf("; ")
				}
				pf("producer %s's transaction from offset %d, %s, committed at %d", pid(d.ProducerID), d.FirstOffset, ui.Plural(d.Records, "record"), d.MarkerOffset)
			}
			pf("); --mode abort keeps them (ABORT markers close the open transactions, nothing is truncated)\n")
		}
		if len(p.SegmentsDeleted) > 0 {
			pf("  segments deleted: %s\n", ls.Offsets(p.SegmentsDeleted))
		}
	}
	writecmd.TextIndexChanges(pf, p.Index, p.TimeIndex, p.TxnIndex)
	if len(p.SnapshotsDeleted) > 0 {
		pf("  producer snapshots deleted: %s\n", ls.Offsets(p.SnapshotsDeleted))
	}
	var added []segment.EpochEntry
	if e := p.EpochEntryAdded; e != nil {
		added = []segment.EpochEntry{*e}
	}
	writecmd.TextEpochChanges(pf, ls, p.EpochEntriesRemoved, added)
	pf("%s\n", title("Append:"))
	ls.Lines(len(p.Appended), "batches", func(i int) {
		a := p.Appended[i]
		if a.Kind == "MIRROR_PID_RESET" {
			pf("  offset %s position %d  %s  %d bytes  partitionLeaderEpoch %d  timestamp %d\n",
				off(a.Offset), a.Position, st.Paint(st.Info, a.Kind), a.Size, p.LeaderEpoch, p.Timestamp)
			return
		}
		pf("  offset %s position %d  %s  %d bytes  producerId %s producerEpoch %d coordinatorEpoch %d  (transaction from %d)\n",
			off(a.Offset), a.Position, a.Kind, a.Size, pid(a.ProducerID), a.ProducerEpoch, a.CoordinatorEpoch, a.TxnFirstOffset)
	}, func(more string) { pf("  %s\n", more) })
	writecmd.TextAbortedTxns(pf, ls, p.AbortedTxns)
	pf("  the barrier clears %s%s; new log end offset %s", ui.Plural(p.ProducersCleared, "producer"), expiredWhy(p), off(p.NewLogEndOffset))
	if p.SnapshotOffset >= 0 {
		pf("; empty producer snapshot %s", segment.SegmentFileName(p.SnapshotOffset, segment.SnapshotSuffix))
	}
	pf("\n%s\n", title("Files:"))
	ui.WarnDiagnostics(t.errw, p.Warnings)
	writecmd.TextFilesTail(pf, st, ls, p.Ops, dryRun, t.tbl)
	return nil
}

func (t *injectTextPrinter) Report(r *barrier.InjectionReport) error {
	w, st := t.w, t.st
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if r.NothingToDo {
		return nil
	}
	if r.RolledBack {
		pf("%s the interrupted injection in %s is undone (journal state was %s); the partition is as it was before it\n", st.Paint(st.OK, "Rolled back:"), r.Dir, r.ResumedFrom)
		return nil
	}
	writecmd.TextReportHead(pf, st, "injection", &r.Outcome)
	pf("%s barrier at offset %d; new log end offset %d\n", st.Paint(st.OK, "Done:"), r.Plan.BarrierOffset, r.Plan.NewLogEndOffset)
	v := r.Verification
	if v == nil {
		return nil
	}
	if v.OK() {
		pf("%s the barrier is well-formed; a replay clears %s at it and leaves none after it; the indexes agree with the log\n",
			st.Paint(st.OK, "Verified:"), ui.Plural(v.ProducersCleared, "producer"))
		return nil
	}
	pf("%s\n", st.Paint(st.Err, "Verification failed:"))
	if !v.BarrierFound {
		pf("  no MIRROR_PID_RESET batch at offset %d\n", v.BarrierOffset)
	}
	t.ls.Lines(len(v.BarrierProblems), "barrier problems", func(i int) { pf("  barrier: %s\n", v.BarrierProblems[i]) },
		func(more string) { pf("  %s\n", more) })
	if v.ProducersAfter > 0 || v.OngoingAfter > 0 {
		pf("  a replay leaves %s and %s after the barrier\n", ui.Plural(v.ProducersAfter, "producer"), ui.Plural(v.OngoingAfter, "open transaction"))
	}
	writecmd.TextProblems(pf, t.ls, v.Anomalies, v.IndexProblems)
	return nil
}

// ---- json ----

// JSON lines, explicit wire structs (docs/json.md style): one "plan" line,
// then one "result" line when something was applied or rolled back.

type injectJSONPrinter struct{ w io.Writer }

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
	Type                 string                    `json:"type"`            // "plan"
	Owner                *writecmd.OwnerJSON       `json:"owner,omitempty"` // what created files get, when kseg changes it (root)
	Dir                  string                    `json:"dir"`
	Topic                string                    `json:"topic"`
	Partition            int32                     `json:"partition"`
	Mode                 string                    `json:"mode"`
	DryRun               bool                      `json:"dryRun"`
	NothingToDo          bool                      `json:"nothingToDo"`
	Reason               string                    `json:"reason,omitempty"`
	Resume               *writecmd.ResumeJSON      `json:"resume,omitempty"`
	Segments             int                       `json:"segments"`
	LogStartOffset       int64                     `json:"logStartOffset"`
	LogEndOffset         int64                     `json:"logEndOffset"`
	LastStableOffset     int64                     `json:"lastStableOffset"`
	FirstUndecidedOffset int64                     `json:"firstUndecidedOffset"`
	Producers            int                       `json:"producers"`
	Ongoing              []injectTxnJSON           `json:"ongoing"`
	TailRepair           *injectTailJSON           `json:"tailRepair,omitempty"`
	Cut                  int64                     `json:"cut"`
	CutIterations        []int64                   `json:"cutIterations"`
	CutSegment           int64                     `json:"cutSegment"`
	CutPosition          int64                     `json:"cutPosition"`
	RemovedBatches       int64                     `json:"removedBatches"`
	RemovedRecords       int64                     `json:"removedRecords"`
	RemovedBytes         int64                     `json:"removedBytes"`
	RemovedOffsets       int64                     `json:"removedOffsets"`
	RemovedProducers     []int64                   `json:"removedProducers"`
	DroppedTxns          []injectTxnJSON           `json:"droppedTxns"`
	SegmentsDeleted      []int64                   `json:"segmentsDeleted"`
	SnapshotsDeleted     []int64                   `json:"snapshotsDeleted"`
	Index                writecmd.IndexJSON        `json:"index"`
	TimeIndex            writecmd.IndexJSON        `json:"timeIndex"`
	TxnIndex             writecmd.IndexJSON        `json:"txnIndex"`
	AbortedTxns          []writecmd.AbortedTxnJSON `json:"abortedTxns"`
	EpochEntriesRemoved  []writecmd.EpochJSON      `json:"epochEntriesRemoved"`
	EpochEntryAdded      *writecmd.EpochJSON       `json:"epochEntryAdded"`
	Appended             []injectAppendJSON        `json:"appended"`
	BarrierOffset        int64                     `json:"barrierOffset"`
	LeaderEpoch          int32                     `json:"leaderEpoch"`
	Timestamp            int64                     `json:"timestamp"`
	NewLogEndOffset      int64                     `json:"newLogEndOffset"`
	ProducersCleared     int                       `json:"producersCleared"`
	ProducersAtCut       int                       `json:"producersAtCut"`
	ProducersExpired     int                       `json:"producersExpired"`
	SnapshotOffset       int64                     `json:"snapshotOffset"`
	Files                []writecmd.FileJSON       `json:"files"`
	Warnings             []string                  `json:"warnings"`
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

func (j *injectJSONPrinter) Plan(p *barrier.InjectionPlan, dryRun bool) error {
	out := injectPlanJSON{Type: "plan", Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, Mode: string(p.Mode), DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, Segments: p.Segments, LogStartOffset: p.LogStartOffset,
		LogEndOffset: p.LogEndOffset, LastStableOffset: p.LastStableOffset, FirstUndecidedOffset: p.FirstUndecidedOffset,
		Producers: p.Producers, Ongoing: []injectTxnJSON{}, Cut: p.Cut, CutIterations: ui.NonNil(p.CutIterations),
		CutSegment: p.CutSegment, CutPosition: p.CutPosition, RemovedBatches: p.Removed.Batches, RemovedRecords: p.Removed.Records,
		RemovedBytes: p.Removed.Bytes, RemovedOffsets: p.Removed.Offsets, RemovedProducers: ui.NonNil(p.Removed.Producers),
		DroppedTxns: []injectTxnJSON{}, SegmentsDeleted: ui.NonNil(p.SegmentsDeleted), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted),
		Index:     writecmd.IndexJSON(p.Index),
		TimeIndex: writecmd.IndexJSON(p.TimeIndex),
		TxnIndex:  writecmd.IndexJSON(p.TxnIndex),
		Resume:    writecmd.ResumeOf(p.Resume), AbortedTxns: writecmd.AbortedOf(p.AbortedTxns), EpochEntriesRemoved: writecmd.EpochsOf(p.EpochEntriesRemoved),
		Appended:      []injectAppendJSON{},
		BarrierOffset: p.BarrierOffset, LeaderEpoch: p.LeaderEpoch, Timestamp: p.Timestamp, NewLogEndOffset: p.NewLogEndOffset,
		ProducersCleared: p.ProducersCleared, ProducersAtCut: p.ProducersAtCut, ProducersExpired: p.ProducersExpired, SnapshotOffset: p.SnapshotOffset, Files: writecmd.FilesOf(p.Ops), Warnings: ui.NonNil(p.Warnings)}
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
	out.Owner = writecmd.OwnerOf(writecmd.PlannedOwnership(p.Resume, p.Dir, p.LogDir, false))
	return writecmd.JSONLine(j.w, out)
}

func (j *injectJSONPrinter) Report(r *barrier.InjectionReport) error {
	if r.NothingToDo {
		return nil
	}
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
	return writecmd.JSONLine(j.w, out)
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
