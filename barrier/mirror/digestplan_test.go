package mirror

import (
	"errors"
	"slices"
	"testing"

	"github.com/kseg/kseg/segment/digest"
)

// TestPlanFromDigest: a plan against a digest of the destination finds
// what a plan on its disk finds (comparing every batch): the
// destination's log, how many batches match, where it diverges and what
// --align cuts, the range copied, its batches, records, bytes and
// barriers, the new log end; the same refusals.
func TestPlanFromDigest(t *testing.T) {
	w := buildWorld(t)
	lagging := newDst(t, t.TempDir(), "c")
	mustMirror(t, w.a, lagging, mirrorOpts(7))
	synced := newDst(t, t.TempDir(), "d")
	mustMirror(t, w.a, synced, mirrorOpts(-1))
	cases := []struct {
		name     string
		src, dst string
		opts     Options
	}{
		{"lagging", w.a, lagging, mirrorOpts(-1)},
		{"lagging, upto", w.a, lagging, mirrorOpts(11)},
		{"in sync", w.a, synced, mirrorOpts(-1)},
		{"diverged", w.a, w.b, mirrorOpts(-1)},
		{"failback with align", w.b, w.a, func() Options { o := mirrorOpts(-1); o.Align = true; return o }()},
		{"mirrored on past a barrier", w.b, lagging, mirrorOpts(-1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.FullCompare = true
			want, wantErr := PlanMirror(c.src, c.dst, o)
			n, err := OpenNode(writeDigest(t, c.dst, digest.XXH3))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			got, gotErr := PlanFromDigest(c.src, n, c.opts)
			var wd, gd *DivergedError
			if errors.As(wantErr, &wd) != errors.As(gotErr, &gd) || (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("on disk: %v; from the digest: %v", wantErr, gotErr)
			}
			if wd != nil {
				if wd.Offset != gd.Offset || wd.DstFile != gd.DstFile || wd.DstPosition != gd.DstPosition || wd.Reason != gd.Reason {
					t.Fatalf("divergence on disk %+v\nfrom the digest %+v", wd.Divergence, gd.Divergence)
				}
				return
			}
			if wantErr != nil {
				return
			}
			if got.DstLog != want.DstLog || got.SrcLog != want.SrcLog || got.From != want.From || got.To != want.To || got.Copied != want.Copied ||
				!slices.Equal(got.Barriers, want.Barriers) || got.NewLogEndOffset != want.NewLogEndOffset || got.Compared != want.Compared ||
				got.NothingToDo != want.NothingToDo || (got.Truncation == nil) != (want.Truncation == nil) {
				t.Fatalf("on disk %+v\nfrom the digest %+v", want, got.Plan)
			}
			if tr := want.Truncation; tr != nil {
				g := got.Truncation
				if g.Offset != tr.Offset || g.Segment != tr.Segment || g.Position != tr.Position || g.Removed.Batches != tr.Removed.Batches ||
					g.Removed.Bytes != tr.Removed.Bytes || g.Removed.Offsets != tr.Removed.Offsets || !slices.Equal(g.SegmentsDeleted, tr.SegmentsDeleted) {
					t.Fatalf("truncation on disk %+v\nfrom the digest %+v", tr, g)
				}
			}
		})
	}
}
