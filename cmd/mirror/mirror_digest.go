package mirror

import (
	"context"
	"fmt"
	"io"

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
		return writecmd.JSONLine(s.Out, mirrorDigestPlanJSON{PlanJSON: mirrorPlanWire(&p.Plan, true), Destination: chainnode.DigestOf(p.Digest)})
	}
	return printMirrorDigestPlan(s.Out, s.Styles(), p)
}

// mirrorDigestPlanJSON is mirror's plan line, with the digest the
// destination was read from.
type mirrorDigestPlanJSON struct {
	PlanJSON
	Destination *chainnode.DigestJSON `json:"dstDigest"`
}

func printMirrorDigestPlan(w io.Writer, st *ui.Styles, p *barriermirror.DigestPlan) error {
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	title := func(s string) string { return st.Paint(st.Title, s) }
	off := func(v int64) string { return st.Paint(st.Offset, fmt.Sprint(v)) }
	pf("%s %s -> %s (topic %s, partition %d)\n", title("Mirror"), ui.Esc(p.Src), ui.Esc(p.Name), ui.Esc(p.Topic), p.Partition)
	src := fmt.Sprintf("log %s", chainnode.RangeText(p.SrcLog))
	if p.TopicID != "" {
		src += ", topic id " + p.TopicID
	}
	pf("  source       %s\n", src)
	pf("  destination  a digest %s\n", chainnode.DigestText(p.Digest))
	if p.DstLog.Start < 0 {
		pf("               empty\n")
	} else {
		pf("               log %s, %s; %d batches identical to the source's (every batch the digest holds compared)", chainnode.RangeText(p.DstLog), ui.Plural(p.DstSegments, "segment"), p.Compared)
		if p.EpochDifferences > 0 {
			pf(" (%d differ in partitionLeaderEpoch only)", p.EpochDifferences)
		}
		pf("\n")
	}
	if d := p.Divergence; d != nil {
		pf("  %s at offset %s: %s\n", st.Paint(st.Warn, "diverged"), off(d.Offset), ui.Esc(d.Reason))
	}
	if tr := p.Truncation; tr != nil {
		pf("%s at offset %s, %s position %d (--align)\n", title("Truncate:"), off(tr.Offset), segment.SegmentFileName(tr.Segment, segment.LogSuffix), tr.Position)
		pf("  removed: %s, %d bytes, %d offsets\n", chainnode.Batches(tr.Removed.Batches), tr.Removed.Bytes, tr.Removed.Offsets)
	}
	if p.NothingToDo {
		pf("%s %s\n", st.Paint(st.OK, "Nothing to do:"), p.Reason)
		return nil
	}
	if p.Copied.Batches == 0 {
		pf("%s nothing (the source has no batch from offset %d)\n", title("Copy:"), p.From)
	} else {
		pf("%s offsets [%s, %s): %d batches, %d records, %d bytes\n", title("Copy:"), off(p.From), off(p.To), p.Copied.Batches, p.Copied.Records, p.Copied.Bytes)
	}
	if len(p.Barriers) > 0 {
		pf("  MIRROR_PID_RESET barriers copied: %s\n", writecmd.OffsetsList(p.Barriers))
	}
	pf("  new log end offset %s\n", off(p.NewLogEndOffset))
	pf("%s not planned: a digest holds the destination's batches, not its indexes, snapshots or leader-epoch-checkpoint; the dry run on the destination's disk lists them\n", title("Files:"))
	pf("%s nothing was changed; run on the destination's disk, without --dry-run, to apply\n", st.Paint(st.Info, "Dry run:"))
	return nil
}
