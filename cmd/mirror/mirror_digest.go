package mirror

import (
	"context"

	barriermirror "github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/internal/writecmd"
	"github.com/kseg/kseg/segment"
)

// `kseg mirror --dry-run SRC DIGEST`: the plan against a digest of the
// destination (kseg digest), made where SRC is, without the
// destination's disk: what would be copied.

func runMirrorDigest(ctx context.Context, s *ui.Streams, o *mirrorOptions, src, dst string) error {
	if !o.DryRun {
		return ui.UsageErrorf("%s is a digest: a mirror writes the destination's files, so it runs on the destination's disk; --dry-run plans against a digest", dst)
	}
	if err := inputs.Check(s, "mirror", src, inputs.Partition); err != nil {
		return err
	}
	nodes, done, err := chainnode.Open(s, []string{dst})
	defer done()
	if err != nil {
		return err
	}
	opts := o.mirror
	p, err := ui.StepProgress(s, "planning", func() int64 { return ui.LogBytes(src) }, func(progress func(int64)) (*barriermirror.DigestPlan, error) {
		opts.Progress = progress
		return barriermirror.PlanFromDigest(src, nodes[0], opts)
	})
	if err != nil {
		return writecmd.Exit(err)
	}
	ui.WarnDiagnostics(s.Err, p.Warnings)
	if o.Output == "json" {
		return ui.JSONLine(s.Out, mirrorDigestPlanJSON{PlanJSON: mirrorPlanWire(&p.Plan, true), Destination: chainnode.DigestOf(p.Digest)})
	}
	printMirrorDigestPlan(writecmd.NewText(s, o.Output), p)
	return nil
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
