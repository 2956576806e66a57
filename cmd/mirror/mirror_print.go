package mirror

import (
	"fmt"
	"io"
	"strings"

	barriermirror "github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
)

// mirrorPrinter renders mirror's plan and report.
type mirrorPrinter interface {
	Plan(p *barriermirror.Plan, dryRun bool) error
	Report(r *barriermirror.Report) error
}

func newMirrorPrinter(s *ui.Streams, output string) mirrorPrinter {
	if output == "json" {
		return &mirrorJSONPrinter{w: s.Out}
	}
	t := &mirrorTextPrinter{w: s.Out, errw: s.Err, st: s.Styles(), ls: s.Lister()}
	if output == "table" {
		t.tbl = &ui.TableOut{W: s.Out, Width: s.Width}
	}
	return t
}

// ---- text ----

type mirrorTextPrinter struct {
	w    io.Writer
	errw io.Writer // warnings are diagnostics: stderr
	st   *ui.Styles
	ls   ui.Lister    // how much of each list to show
	tbl  *ui.TableOut // --output table: file operations as a table
}

func (t *mirrorTextPrinter) Plan(p *barriermirror.Plan, dryRun bool) error {
	w, st, ls := t.w, t.st, t.ls
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	title := func(s string) string { return st.Paint(st.Title, s) }
	off := func(v int64) string { return st.Paint(st.Offset, fmt.Sprint(v)) }

	pf("%s %s -> %s (topic %s, partition %d)\n", title("Mirror"), p.Src, p.Dir, p.Topic, p.Partition)
	writecmd.TextResume(pf, st, "mirror", p.Resume)
	src := fmt.Sprintf("log %s", chainnode.RangeText(p.SrcLog))
	if p.TopicID != "" {
		src += ", topic id " + p.TopicID
	}
	pf("  source       %s\n", src)
	switch {
	case p.CreateDir:
		pf("  destination  new partition directory\n")
	case p.DstLog.Start < 0 || p.DstSegments == 0:
		pf("  destination  empty\n")
	default:
		if p.ComparedLastBatch {
			pf("  destination  log %s, %s; compared: the last batch, identical to the source's", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"))
			if p.EpochDifferences > 0 {
				pf(" (but for its partitionLeaderEpoch)")
			}
			pf("; the batches below it are taken as the source's, as a follower trusts its log below the high watermark (--full-compare compares them all)\n")
		} else {
			pf("  destination  log %s, %s; %s identical to the source's", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"), ui.Plural(p.Compared, "batch"))
			if p.EpochDifferences > 0 {
				pf(" (%d differ in partitionLeaderEpoch only)", p.EpochDifferences)
			}
			pf("\n")
		}
	}
	if d := p.Divergence; d != nil {
		pf("  %s at offset %s: %s\n", st.Paint(st.Warn, "diverged"), off(d.Offset), d.Reason)
	}
	if p.NothingToDo {
		pf("%s %s\n", st.Paint(st.OK, "Nothing to do:"), p.Reason)
		return nil
	}
	if tr := p.Truncation; tr != nil {
		pf("%s at offset %s, %s position %d (--align)\n", title("Truncate:"), off(tr.Offset), segment.SegmentFileName(tr.Segment, segment.LogSuffix), tr.Position)
		r := tr.Removed
		pf("  removed: %d batches, %d records, %d bytes, %d offsets", r.Batches, r.Records, r.Bytes, r.Offsets)
		if len(r.Producers) > 0 {
			pf("; producers losing data: %s", ls.Offsets(r.Producers))
		}
		pf("\n")
		if len(tr.SegmentsDeleted) > 0 {
			pf("  segments deleted: %s\n", ls.Offsets(tr.SegmentsDeleted))
		}
	}
	if p.Copied.Batches == 0 {
		pf("%s nothing (the source has no batch from offset %d)\n", title("Copy:"), p.From)
	} else {
		pf("%s offsets [%s, %s): %d batches, %d records, %d bytes\n", title("Copy:"), off(p.From), off(p.To), p.Copied.Batches, p.Copied.Records, p.Copied.Bytes)
	}
	var into []string
	if p.AppendSegment >= 0 {
		into = append(into, fmt.Sprintf("continues segment %d", p.AppendSegment))
	}
	switch len(p.SegmentsCreated) {
	case 0:
	case 1:
		into = append(into, "new segment "+writecmd.OffsetsList(p.SegmentsCreated))
	default:
		into = append(into, "new segments "+ls.Offsets(p.SegmentsCreated))
	}
	if len(into) > 0 && p.Copied.Batches > 0 {
		pf("  %s\n", strings.Join(into, "; "))
	}
	if len(p.Barriers) > 0 {
		pf("  MIRROR_PID_RESET barriers copied: %s\n", ls.Offsets(p.Barriers))
	}
	writecmd.TextIndexChanges(pf, p.Index, p.TimeIndex, p.TxnIndex)
	writecmd.TextAbortedTxns(pf, ls, p.AbortedTxns)
	writecmd.TextEpochChanges(pf, ls, p.EpochEntriesRemoved, p.EpochEntriesAdded)
	if len(p.SnapshotsDeleted) > 0 {
		pf("  producer snapshots deleted: %s\n", ls.Offsets(p.SnapshotsDeleted))
	}
	if len(p.SnapshotsCreated) > 0 {
		pf("  producer snapshots at the rolls: %s\n", ls.Offsets(p.SnapshotsCreated))
	}
	if p.EndSnapshot >= 0 {
		pf("  producer snapshot at the new log end: %s (as a broker's clean shutdown writes it)\n", off(p.EndSnapshot))
	}
	pf("  new log end offset %s\n", off(p.NewLogEndOffset))
	pf("%s\n", title("Files:"))
	ui.WarnDiagnostics(t.errw, p.Warnings)
	writecmd.TextFilesTail(pf, st, ls, p.Ops, dryRun, t.tbl)
	return nil
}

func (t *mirrorTextPrinter) Report(r *barriermirror.Report) error {
	w, st := t.w, t.st
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if r.NothingToDo {
		return nil
	}
	if r.RolledBack {
		pf("%s the interrupted mirror in %s is undone (journal state was %s); the partition is as it was before it\n",
			st.Paint(st.OK, "Rolled back:"), r.Dir, r.ResumedFrom)
		return nil
	}
	writecmd.TextReportHead(pf, st, "mirror", &r.Outcome)
	p := r.Plan
	if p.Copied.Batches > 0 {
		pf("%s offsets [%d, %d) mirrored; new log end offset %d\n", st.Paint(st.OK, "Done:"), p.From, p.To, p.NewLogEndOffset)
	} else {
		pf("%s truncated at %d; new log end offset %d\n", st.Paint(st.OK, "Done:"), p.Truncation.Offset, p.NewLogEndOffset)
	}
	v := r.Verification
	if v == nil {
		return nil
	}
	if v.OK() {
		pf("%s %s identical to the source's; the indexes agree with the log; .txnindex agrees with a replay\n", st.Paint(st.OK, "Verified:"), ui.Plural(v.Compared, "batch"))
		return nil
	}
	pf("%s\n", st.Paint(st.Err, "Verification failed:"))
	if v.Mismatch != "" {
		pf("  %s\n", v.Mismatch)
	}
	writecmd.TextProblems(pf, t.ls, v.IndexProblems, v.TxnIndexProblems)
	return nil
}

// ---- json ----

// JSON lines with explicit wire structs: one "mirror-plan" line, then one
// "mirror-result" line when something was applied or rolled back.

type mirrorJSONPrinter struct{ w io.Writer }

type mirrorDivergenceJSON struct {
	Offset      int64  `json:"offset"`
	Reason      string `json:"reason"`
	DstFile     string `json:"dstFile"`
	DstPosition int64  `json:"dstPosition"`
	SrcFile     string `json:"srcFile"`
	SrcPosition int64  `json:"srcPosition"`
}

type mirrorTruncationJSON struct {
	Offset           int64   `json:"offset"`
	Segment          int64   `json:"segment"`
	Position         int64   `json:"position"`
	RemovedBatches   int64   `json:"removedBatches"`
	RemovedRecords   int64   `json:"removedRecords"`
	RemovedBytes     int64   `json:"removedBytes"`
	RemovedOffsets   int64   `json:"removedOffsets"`
	RemovedProducers []int64 `json:"removedProducers"`
	SegmentsDeleted  []int64 `json:"segmentsDeleted"`
}

type PlanJSON struct {
	Type                string                    `json:"type"`            // "mirror-plan"
	Owner               *writecmd.OwnerJSON       `json:"owner,omitempty"` // what created files get, when kseg changes it (root)
	Src                 string                    `json:"src"`
	Dir                 string                    `json:"dir"`
	Topic               string                    `json:"topic"`
	Partition           int32                     `json:"partition"`
	DryRun              bool                      `json:"dryRun"`
	NothingToDo         bool                      `json:"nothingToDo"`
	Reason              string                    `json:"reason,omitempty"`
	Resume              *writecmd.ResumeJSON      `json:"resume,omitempty"`
	CreateDir           bool                      `json:"createDir"`
	TopicID             string                    `json:"topicId"`
	SrcLog              chainnode.RangeJSON       `json:"srcLog"`
	DstLog              chainnode.RangeJSON       `json:"dstLog"`
	DstSegments         int                       `json:"dstSegments"`
	Compared            int64                     `json:"compared"`
	ComparedLastBatch   bool                      `json:"comparedLastBatch,omitempty"`
	EpochDifferences    int64                     `json:"epochDifferences"`
	Divergence          *mirrorDivergenceJSON     `json:"divergence"`
	Truncation          *mirrorTruncationJSON     `json:"truncation"`
	From                int64                     `json:"from"`
	To                  int64                     `json:"to"`
	CopiedBatches       int64                     `json:"copiedBatches"`
	CopiedRecords       int64                     `json:"copiedRecords"`
	CopiedBytes         int64                     `json:"copiedBytes"`
	Barriers            []int64                   `json:"barriers"`
	AppendSegment       int64                     `json:"appendSegment"`
	SegmentsCreated     []int64                   `json:"segmentsCreated"`
	Index               writecmd.IndexJSON        `json:"index"`
	TimeIndex           writecmd.IndexJSON        `json:"timeIndex"`
	TxnIndex            writecmd.IndexJSON        `json:"txnIndex"`
	AbortedTxns         []writecmd.AbortedTxnJSON `json:"abortedTxns"`
	EpochEntriesRemoved []writecmd.EpochJSON      `json:"epochEntriesRemoved"`
	EpochEntriesAdded   []writecmd.EpochJSON      `json:"epochEntriesAdded"`
	SnapshotsCreated    []int64                   `json:"snapshotsCreated"`
	SnapshotsDeleted    []int64                   `json:"snapshotsDeleted"`
	EndSnapshot         *int64                    `json:"endSnapshot,omitempty"`
	NewLogEndOffset     int64                     `json:"newLogEndOffset"`
	Files               []writecmd.FileJSON       `json:"files"`
	Warnings            []string                  `json:"warnings"`
}

type mirrorVerifyJSON struct {
	OK               bool     `json:"ok"`
	Compared         int64    `json:"compared"`
	Mismatch         string   `json:"mismatch"`
	IndexProblems    []string `json:"indexProblems"`
	TxnIndexProblems []string `json:"txnIndexProblems"`
}

type ResultJSON struct {
	writecmd.ResultJSON
	From            int64             `json:"from"`
	To              int64             `json:"to"`
	NewLogEndOffset int64             `json:"newLogEndOffset"`
	Steps           int               `json:"steps"`
	Verification    *mirrorVerifyJSON `json:"verification,omitempty"`
}

func (j *mirrorJSONPrinter) Plan(p *barriermirror.Plan, dryRun bool) error {
	return writecmd.JSONLine(j.w, mirrorPlanWire(p, dryRun))
}

// mirrorPlanWire is a plan's JSON line.
func mirrorPlanWire(p *barriermirror.Plan, dryRun bool) PlanJSON {
	out := PlanJSON{Type: "mirror-plan", Src: p.Src, Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, CreateDir: p.CreateDir, TopicID: p.TopicID,
		SrcLog: chainnode.RangeJSON(p.SrcLog), DstLog: chainnode.RangeJSON(p.DstLog), DstSegments: p.DstSegments, Compared: p.Compared, ComparedLastBatch: p.ComparedLastBatch,
		EpochDifferences: p.EpochDifferences, From: p.From, To: p.To, CopiedBatches: p.Copied.Batches, CopiedRecords: p.Copied.Records,
		CopiedBytes: p.Copied.Bytes, Barriers: ui.NonNil(p.Barriers), AppendSegment: p.AppendSegment, SegmentsCreated: ui.NonNil(p.SegmentsCreated),
		Index: writecmd.IndexJSON(p.Index), TimeIndex: writecmd.IndexJSON(p.TimeIndex), TxnIndex: writecmd.IndexJSON(p.TxnIndex),
		Resume: writecmd.ResumeOf(p.Resume), AbortedTxns: writecmd.AbortedOf(p.AbortedTxns), EpochEntriesRemoved: writecmd.EpochsOf(p.EpochEntriesRemoved),
		EpochEntriesAdded: writecmd.EpochsOf(p.EpochEntriesAdded),
		SnapshotsCreated:  ui.NonNil(p.SnapshotsCreated), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted), NewLogEndOffset: p.NewLogEndOffset,
		Files: writecmd.FilesOf(p.Ops), Warnings: ui.NonNil(p.Warnings)}
	if p.EndSnapshot >= 0 {
		out.EndSnapshot = &p.EndSnapshot
	}
	if d := p.Divergence; d != nil {
		out.Divergence = &mirrorDivergenceJSON{Offset: d.Offset, Reason: d.Reason, DstFile: d.DstFile, DstPosition: d.DstPosition,
			SrcFile: d.SrcFile, SrcPosition: d.SrcPosition}
	}
	if tr := p.Truncation; tr != nil {
		out.Truncation = &mirrorTruncationJSON{Offset: tr.Offset, Segment: tr.Segment, Position: tr.Position,
			RemovedBatches: tr.Removed.Batches, RemovedRecords: tr.Removed.Records, RemovedBytes: tr.Removed.Bytes,
			RemovedOffsets: tr.Removed.Offsets, RemovedProducers: ui.NonNil(tr.Removed.Producers), SegmentsDeleted: ui.NonNil(tr.SegmentsDeleted)}
	}
	out.Owner = writecmd.OwnerOf(writecmd.PlannedOwnership(p.Resume, p.Dir, p.LogDir, p.CreateDir))
	return out
}

func (j *mirrorJSONPrinter) Report(r *barriermirror.Report) error {
	if r.NothingToDo {
		return nil
	}
	out := ResultJSON{ResultJSON: writecmd.Result("mirror-result", &r.Outcome), Steps: len(r.Steps)}
	if p := r.Plan; p != nil {
		out.From, out.To, out.NewLogEndOffset = p.From, p.To, p.NewLogEndOffset
	}
	if v := r.Verification; v != nil {
		out.Verification = &mirrorVerifyJSON{OK: v.OK(), Compared: v.Compared, Mismatch: v.Mismatch,
			IndexProblems: ui.NonNil(v.IndexProblems), TxnIndexProblems: ui.NonNil(v.TxnIndexProblems)}
	}
	return writecmd.JSONLine(j.w, out)
}
