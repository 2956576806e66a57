package mirror

import (
	"fmt"
	"strings"

	barriermirror "github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
)

// mirrorForm is mirror's words for the write commands' one renderer
// (writecmd.Printer).
var mirrorForm = &writecmd.Form[*barriermirror.Plan, *barriermirror.Verification]{
	What:   "mirror",
	Writes: func(p *barriermirror.Plan) (string, bool) { return p.Dir, p.CreateDir },
	Head: func(p *barriermirror.Plan) (string, string) {
		return "Mirror", fmt.Sprintf("%s -> %s (topic %s, partition %d)", p.Src, p.Dir, p.Topic, p.Partition)
	},
	Found:   mirrorFound,
	Changes: mirrorChanges,
	PlanJSON: func(p *barriermirror.Plan, dryRun bool) any {
		return mirrorPlanWire(p, dryRun)
	},
	Done: func(t *writecmd.Text, r *barriermirror.Report) {
		p := r.Plan
		if p.Copied.Batches > 0 {
			t.Pf("%s offsets [%d, %d) mirrored; new log end offset %d\n", t.St.Paint(t.St.OK, "Done:"), p.From, p.To, p.NewLogEndOffset)
		} else {
			t.Pf("%s truncated at %d; new log end offset %d\n", t.St.Paint(t.St.OK, "Done:"), p.Truncation.Offset, p.NewLogEndOffset)
		}
	},
	Verified: func(v *barriermirror.Verification) string {
		return fmt.Sprintf("%s identical to the source's; the indexes agree with the log; .txnindex agrees with a replay", ui.Plural(v.Compared, "batch"))
	},
	Failed: func(t *writecmd.Text, v *barriermirror.Verification) {
		if v.Mismatch != "" {
			t.Pf("  %s\n", v.Mismatch)
		}
		t.Problems(v.IndexProblems, v.TxnIndexProblems)
	},
	ResultJSON: mirrorResultWire,
}

// mirrorSourceLine is the plan's line about the source's log.
func mirrorSourceLine(t *writecmd.Text, log barriermirror.OffsetRange, topicID string) {
	src := fmt.Sprintf("log %s", chainnode.RangeText(log))
	if topicID != "" {
		src += ", topic id " + topicID
	}
	t.Pf("  source       %s\n", src)
}

// mirrorFound is the source and the destination as the plan found them,
// and where they diverge.
func mirrorFound(t *writecmd.Text, p *barriermirror.Plan) {
	mirrorSourceLine(t, p.SrcLog, p.TopicID)
	switch {
	case p.CreateDir:
		t.Pf("  destination  new partition directory\n")
	case p.DstLog.Start < 0 || p.DstSegments == 0:
		t.Pf("  destination  empty\n")
	case p.ComparedLastBatch:
		t.Pf("  destination  log %s, %s; compared: the last batch, identical to the source's", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"))
		if p.EpochDifferences > 0 {
			t.Pf(" (but for its partitionLeaderEpoch)")
		}
		t.Pf("; the batches below it are taken as the source's, as a follower trusts its log below the high watermark (--full-compare compares them all)\n")
	default:
		t.Pf("  destination  log %s, %s; %s identical to the source's", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"), ui.Plural(p.Compared, "batch"))
		if p.EpochDifferences > 0 {
			t.Pf(" (%d differ in partitionLeaderEpoch only)", p.EpochDifferences)
		}
		t.Pf("\n")
	}
	if d := p.Divergence; d != nil {
		t.Pf("  %s at offset %s: %s\n", t.St.Paint(t.St.Warn, "diverged"), t.Off(d.Offset), d.Reason)
	}
}

// mirrorCopyLine is the plan's line about the batches it copies.
func mirrorCopyLine(t *writecmd.Text, from, to int64, copied barriermirror.Copied) {
	if copied.Batches == 0 {
		t.Pf("%s nothing (the source has no batch from offset %d)\n", t.Title("Copy:"), from)
	} else {
		t.Pf("%s offsets [%s, %s): %d batches, %d records, %d bytes\n", t.Title("Copy:"), t.Off(from), t.Off(to), copied.Batches, copied.Records, copied.Bytes)
	}
}

// mirrorChanges is what the mirror changes: the truncation --align makes,
// the batches copied and the segments they go into, the indexes, leader
// epochs and snapshots.
func mirrorChanges(t *writecmd.Text, p *barriermirror.Plan) {
	ls := t.Ls
	if tr := p.Truncation; tr != nil {
		t.Pf("%s at offset %s, %s position %d (--align)\n", t.Title("Truncate:"), t.Off(tr.Offset), segment.SegmentFileName(tr.Segment, segment.LogSuffix), tr.Position)
		r := tr.Removed
		t.Pf("  removed: %d batches, %d records, %d bytes, %d offsets", r.Batches, r.Records, r.Bytes, r.Offsets)
		if len(r.Producers) > 0 {
			t.Pf("; producers losing data: %s", ls.Offsets(r.Producers))
		}
		t.Pf("\n")
		if len(tr.SegmentsDeleted) > 0 {
			t.Pf("  segments deleted: %s\n", ls.Offsets(tr.SegmentsDeleted))
		}
	}
	mirrorCopyLine(t, p.From, p.To, p.Copied)
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
		t.Pf("  %s\n", strings.Join(into, "; "))
	}
	if len(p.Barriers) > 0 {
		t.Pf("  MIRROR_PID_RESET barriers copied: %s\n", ls.Offsets(p.Barriers))
	}
	t.IndexChanges(p.Index, p.TimeIndex, p.TxnIndex)
	t.AbortedTxns(p.AbortedTxns)
	t.EpochChanges(p.EpochEntriesRemoved, p.EpochEntriesAdded)
	if len(p.SnapshotsDeleted) > 0 {
		t.Pf("  producer snapshots deleted: %s\n", ls.Offsets(p.SnapshotsDeleted))
	}
	if len(p.SnapshotsCreated) > 0 {
		t.Pf("  producer snapshots at the rolls: %s\n", ls.Offsets(p.SnapshotsCreated))
	}
	if p.EndSnapshot >= 0 {
		t.Pf("  producer snapshot at the new log end: %s (as a broker's clean shutdown writes it)\n", t.Off(p.EndSnapshot))
	}
	t.Pf("  new log end offset %s\n", t.Off(p.NewLogEndOffset))
}

// ---- json ----

// JSON lines with explicit wire structs: one "mirror-plan" line, then one
// "mirror-result" line when something was applied or rolled back.

type mirrorDivergenceJSON struct {
	Offset      int64  `json:"offset"`
	Reason      string `json:"reason"`
	DstFile     string `json:"dstFile"`
	DstPosition int64  `json:"dstPosition"`
	SrcFile     string `json:"srcFile"`
	SrcPosition int64  `json:"srcPosition"`
}

type mirrorTruncationJSON struct {
	Offset   int64 `json:"offset"`
	Segment  int64 `json:"segment"`
	Position int64 `json:"position"`
	writecmd.RemovedJSON
	SegmentsDeleted []int64 `json:"segmentsDeleted"`
}

type PlanJSON struct {
	writecmd.PlanHeadJSON                       // "mirror-plan"
	Src                   string                `json:"src"`
	Dir                   string                `json:"dir"`
	Topic                 string                `json:"topic"`
	Partition             int32                 `json:"partition"`
	DryRun                bool                  `json:"dryRun"`
	NothingToDo           bool                  `json:"nothingToDo"`
	Reason                string                `json:"reason,omitempty"`
	Resume                *writecmd.ResumeJSON  `json:"resume,omitempty"`
	CreateDir             bool                  `json:"createDir"`
	TopicID               string                `json:"topicId"`
	SrcLog                chainnode.RangeJSON   `json:"srcLog"`
	DstLog                chainnode.RangeJSON   `json:"dstLog"`
	DstSegments           int                   `json:"dstSegments"`
	Compared              int64                 `json:"compared"`
	ComparedLastBatch     bool                  `json:"comparedLastBatch,omitempty"`
	EpochDifferences      int64                 `json:"epochDifferences"`
	Divergence            *mirrorDivergenceJSON `json:"divergence"`
	Truncation            *mirrorTruncationJSON `json:"truncation"`
	From                  int64                 `json:"from"`
	To                    int64                 `json:"to"`
	CopiedBatches         int64                 `json:"copiedBatches"`
	CopiedRecords         int64                 `json:"copiedRecords"`
	CopiedBytes           int64                 `json:"copiedBytes"`
	Barriers              []int64               `json:"barriers"`
	AppendSegment         int64                 `json:"appendSegment"`
	SegmentsCreated       []int64               `json:"segmentsCreated"`
	writecmd.IndexChangesJSON
	EpochEntriesAdded []writecmd.EpochJSON `json:"epochEntriesAdded"`
	SnapshotsCreated  []int64              `json:"snapshotsCreated"`
	SnapshotsDeleted  []int64              `json:"snapshotsDeleted"`
	EndSnapshot       *int64               `json:"endSnapshot,omitempty"`
	NewLogEndOffset   int64                `json:"newLogEndOffset"`
	writecmd.PlanFilesJSON
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

// mirrorPlanWire is a plan's JSON line.
func mirrorPlanWire(p *barriermirror.Plan, dryRun bool) PlanJSON {
	out := PlanJSON{PlanHeadJSON: writecmd.PlanHead("mirror-plan", p.Resume, p.Dir, p.LogDir, p.CreateDir), Src: p.Src, Dir: p.Dir, Topic: p.Topic, Partition: p.Partition, DryRun: dryRun,
		NothingToDo: p.NothingToDo, Reason: p.Reason, CreateDir: p.CreateDir, TopicID: p.TopicID,
		SrcLog: chainnode.RangeJSON(p.SrcLog), DstLog: chainnode.RangeJSON(p.DstLog), DstSegments: p.DstSegments, Compared: p.Compared, ComparedLastBatch: p.ComparedLastBatch,
		EpochDifferences: p.EpochDifferences, From: p.From, To: p.To, CopiedBatches: p.Copied.Batches, CopiedRecords: p.Copied.Records,
		CopiedBytes: p.Copied.Bytes, Barriers: ui.NonNil(p.Barriers), AppendSegment: p.AppendSegment, SegmentsCreated: ui.NonNil(p.SegmentsCreated),
		IndexChangesJSON:  writecmd.IndexChangesOf(p.Index, p.TimeIndex, p.TxnIndex, p.AbortedTxns, p.EpochEntriesRemoved),
		Resume:            writecmd.ResumeOf(p.Resume),
		EpochEntriesAdded: writecmd.EpochsOf(p.EpochEntriesAdded),
		SnapshotsCreated:  ui.NonNil(p.SnapshotsCreated), SnapshotsDeleted: ui.NonNil(p.SnapshotsDeleted), NewLogEndOffset: p.NewLogEndOffset,
		PlanFilesJSON: writecmd.PlanFilesOf(p)}
	if p.EndSnapshot >= 0 {
		out.EndSnapshot = &p.EndSnapshot
	}
	if d := p.Divergence; d != nil {
		out.Divergence = &mirrorDivergenceJSON{Offset: d.Offset, Reason: d.Reason, DstFile: d.DstFile, DstPosition: d.DstPosition,
			SrcFile: d.SrcFile, SrcPosition: d.SrcPosition}
	}
	if tr := p.Truncation; tr != nil {
		out.Truncation = &mirrorTruncationJSON{Offset: tr.Offset, Segment: tr.Segment, Position: tr.Position,
			RemovedJSON: writecmd.RemovedOf(tr.Removed), SegmentsDeleted: ui.NonNil(tr.SegmentsDeleted)}
	}
	return out
}

// mirrorResultWire is a report's JSON line.
func mirrorResultWire(r *barriermirror.Report) any {
	out := ResultJSON{ResultJSON: writecmd.Result("mirror-result", &r.Outcome), Steps: len(r.Steps)}
	if p := r.Plan; p != nil {
		out.From, out.To, out.NewLogEndOffset = p.From, p.To, p.NewLogEndOffset
	}
	if v := r.Verification; v != nil {
		out.Verification = &mirrorVerifyJSON{OK: v.OK(), Compared: v.Compared, Mismatch: v.Mismatch,
			IndexProblems: ui.NonNil(v.IndexProblems), TxnIndexProblems: ui.NonNil(v.TxnIndexProblems)}
	}
	return out
}

// mirrorDigestPlanJSON is mirror's plan line, with the digest the
// destination was read from.
type mirrorDigestPlanJSON struct {
	PlanJSON
	Destination *chainnode.DigestJSON `json:"dstDigest"`
}

// printMirrorDigestPlan is the plan against a digest: mirror's plan but
// for the destination's files, which a digest does not hold.
func printMirrorDigestPlan(t *writecmd.Text, p *barriermirror.DigestPlan) {
	st := t.St
	t.Pf("%s %s -> %s (topic %s, partition %d)\n", t.Title("Mirror"), ui.Esc(p.Src), ui.Esc(p.Name), ui.Esc(p.Topic), p.Partition)
	mirrorSourceLine(t, p.SrcLog, p.TopicID)
	t.Pf("  destination  a digest %s\n", chainnode.DigestText(p.Digest))
	if p.DstLog.Start < 0 {
		t.Pf("               empty\n")
	} else {
		t.Pf("               log %s, %s; %d batches identical to the source's (every batch the digest holds compared)", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"), p.Compared)
		if p.EpochDifferences > 0 {
			t.Pf(" (%d differ in partitionLeaderEpoch only)", p.EpochDifferences)
		}
		t.Pf("\n")
	}
	if d := p.Divergence; d != nil {
		t.Pf("  %s at offset %s: %s\n", st.Paint(st.Warn, "diverged"), t.Off(d.Offset), ui.Esc(d.Reason))
	}
	if tr := p.Truncation; tr != nil {
		t.Pf("%s at offset %s, %s position %d (--align)\n", t.Title("Truncate:"), t.Off(tr.Offset), segment.SegmentFileName(tr.Segment, segment.LogSuffix), tr.Position)
		t.Pf("  removed: %s, %d bytes, %d offsets\n", chainnode.Batches(tr.Removed.Batches), tr.Removed.Bytes, tr.Removed.Offsets)
	}
	if p.NothingToDo {
		t.Pf("%s %s\n", st.Paint(st.OK, "Nothing to do:"), p.Reason)
		return
	}
	mirrorCopyLine(t, p.From, p.To, p.Copied)
	if len(p.Barriers) > 0 {
		t.Pf("  MIRROR_PID_RESET barriers copied: %s\n", writecmd.OffsetsList(p.Barriers))
	}
	t.Pf("  new log end offset %s\n", t.Off(p.NewLogEndOffset))
	t.Pf("%s not planned: a digest holds the destination's batches, not its indexes, snapshots or leader-epoch-checkpoint; the dry run on the destination's disk lists them\n", t.Title("Files:"))
	t.Pf("%s nothing was changed; run on the destination's disk, without --dry-run, to apply\n", st.Paint(st.Info, "Dry run:"))
}
