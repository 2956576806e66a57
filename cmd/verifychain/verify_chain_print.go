package verifychain

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/chainnode"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/finding"
)

// chainPrinter renders a verify-chain report.
type chainPrinter interface {
	Print(r *mirror.ChainReport) error
}

// digests are the nodes that are digests (kseg digest), by name.
func newChainPrinter(s *ui.Streams, output string, digests map[string]*digest.Info) chainPrinter {
	switch output {
	case "json":
		return &chainJSONPrinter{w: s.Out, digests: digests}
	case "table":
		return &chainTablePrinter{s: s}
	}
	return &chainTextPrinter{w: s.Out, st: s.Styles(), ls: s.Lister(), digests: digests}
}

// statusText says what an edge is, in words.
func statusText(e *mirror.EdgeReport) string {
	var s string
	switch e.Status {
	case mirror.EdgeInSync:
		s = "in sync (D holds all of U)"
	case mirror.EdgeLagging:
		s = fmt.Sprintf("lagging by %s (still mirroring)", ui.Plural(e.Lag, "offset"))
	case mirror.EdgeFailedOver:
		s = "failed over (U's prefix, D's barrier, D's own writes)"
	default:
		return "DIVERGED"
	}
	if e.OK() {
		return s + ": consistent"
	}
	return s
}

func barrierText(ls ui.Lister, b *mirror.EdgeBarrier) string {
	if b == nil {
		return "none"
	}
	s := fmt.Sprintf("offset %d (%s position %d, partitionLeaderEpoch %d)", b.Offset, b.File, b.Position, b.PartitionLeaderEpoch)
	if len(b.Aborts) > 0 {
		s += ", after ABORT markers at " + ls.Offsets(b.Aborts)
	}
	return s + fmt.Sprintf("; clears %s", ui.Plural(b.ProducersCleared, "producer"))
}

func mirroredBarriersText(ls ui.Lister, v []mirror.MirroredBarrier) string {
	if len(v) == 0 {
		return "none"
	}
	parts := make([]string, len(v))
	for i, b := range v {
		parts[i] = fmt.Sprintf("%d (clears %s in D)", b.Offset, ui.Plural(b.ProducersCleared, "producer"))
		if !b.Applied {
			parts[i] = fmt.Sprintf("%d (NOT applied in D)", b.Offset)
		}
	}
	return ls.Join(parts, ", ")
}

// averted lists what a replay ignoring the barriers reports that the
// barriers prevent: the first four, or under --verbose all.
func averted(ls ui.Lister, e *mirror.EdgeReport) string {
	if len(e.Averted) == 0 {
		return "0"
	}
	parts := make([]string, 0, 4)
	for i, a := range e.Averted {
		if i == 4 && !ls.All {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Averted)-4))
			break
		}
		parts = append(parts, fmt.Sprintf("%s at %d (producer %d)", a.Kind, a.Offset, a.ProducerID))
	}
	return fmt.Sprintf("%d; without the barriers a replay reports %s", e.CollisionsAverted, strings.Join(parts, ", "))
}

func findingWhere(f finding.Finding) string {
	var parts []string
	if f.File != "" {
		if f.Position >= 0 {
			parts = append(parts, fmt.Sprintf("D %s position %d", f.File, f.Position))
		} else {
			parts = append(parts, "D "+f.File)
		}
	}
	if f.UpstreamFile != "" {
		parts = append(parts, fmt.Sprintf("U %s position %d", f.UpstreamFile, f.UpstreamPosition))
	}
	return strings.Join(parts, "; ")
}

func chainSummary(r *mirror.ChainReport) string {
	ok, errs, findings := 0, 0, 0
	for _, e := range r.Edges {
		if e.OK() {
			ok++
		}
		errs += e.Errors()
		findings += len(e.Findings)
	}
	s := fmt.Sprintf("%s, %d consistent", ui.Plural(len(r.Edges), "edge"), ok)
	if ok < len(r.Edges) {
		s += fmt.Sprintf(", %d with errors (%s)", len(r.Edges)-ok, ui.Plural(errs, "error finding"))
	}
	return s
}

// ---- text ----

type chainTextPrinter struct {
	w       io.Writer
	st      *ui.Styles
	ls      ui.Lister // how much of each list to show
	digests map[string]*digest.Info
}

func (t *chainTextPrinter) Print(r *mirror.ChainReport) error {
	w := bufio.NewWriter(t.w)
	st, ls := t.st, t.ls
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "  %s %s\n", ui.PadDisplay(st.Paint(st.Title, k), 19), fmt.Sprintf(format, args...))
	}
	for i, e := range r.Edges {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s %s -> %s\n", st.Paint(st.Title, fmt.Sprintf("Edge %d:", i+1)), e.Upstream, e.Downstream)
		status := statusText(e)
		if e.OK() {
			status = st.Paint(st.OK, status)
		} else {
			status = st.Paint(st.Err, status)
		}
		kv("status", "%s", status)
		kv("upstream log", "%s", chainnode.RangeText(e.UpstreamLog))
		kv("downstream log", "%s", chainnode.RangeText(e.DownstreamLog))
		for _, n := range [][2]string{{"upstream digest", e.Upstream}, {"downstream digest", e.Downstream}} {
			if info := t.digests[n[1]]; info != nil {
				kv(n[0], "%s", chainnode.DigestText(info))
			}
		}
		kv("mirrored", "%s: %s byte-identical", chainnode.RangeText(e.Mirrored), chainnode.Batches(e.BatchesCompared))
		kv("barrier", "%s", barrierText(ls, e.Barrier))
		if e.Barrier != nil {
			kv("local", "%s", chainnode.RangeText(e.Local))
		}
		kv("mirrored barriers", "%s", mirroredBarriersText(ls, e.MirroredBarriers))
		reused := "none"
		if len(e.ProducersReused) > 0 {
			reused = ls.Offsets(e.ProducersReused)
		}
		kv("producers reused", "%s", reused)
		kv("collisions averted", "%s", averted(ls, e))
		if e.EpochDifferences > 0 {
			kv("leader epochs", "%d mirrored batches differ from U in partitionLeaderEpoch", e.EpochDifferences)
		}
		if e.InheritedAnomalies > 0 {
			kv("inherited", "%d producer-state errors in the mirrored region (U's own, copied)", e.InheritedAnomalies)
		}
		if len(e.Findings) == 0 {
			kv("findings", "none")
			continue
		}
		kv("findings", "%d (%s)", len(e.Findings), ui.Plural(e.Errors(), "error"))
		ls.ByKind(len(e.Findings), func(i int) string { return e.Findings[i].Kind.String() }, func(i int) {
			f := e.Findings[i]
			head := fmt.Sprintf("%s %s at offset %d", st.Severity(f.Severity(), f.Severity().Upper()), f.Kind, f.Offset)
			if where := findingWhere(f); where != "" {
				head += ": " + where
			}
			fmt.Fprintf(w, "    %s\n      %s\n", head, f.Message)
		}, func(more string) { fmt.Fprintf(w, "    %s\n", more) })
	}
	fmt.Fprintf(w, "\n%s %s\n", st.Paint(st.Title, "Summary:"), chainSummary(r))
	return w.Flush()
}

// ---- table ----

type chainTablePrinter struct{ s *ui.Streams }

func (t *chainTablePrinter) render(header []string, rows [][]string) {
	ui.RenderTable(t.s.Out, t.s.Width, header, rows)
}

func (t *chainTablePrinter) Print(r *mirror.ChainReport) error {
	ls := t.s.Lister()
	var rows, frows [][]string
	var fkinds []string
	for i, e := range r.Edges {
		bar, local := "-", "-"
		if e.Barrier != nil {
			bar, local = ui.I64(e.Barrier.Offset), chainnode.RangeText(e.Local)
		}
		reused := "-"
		if len(e.ProducersReused) > 0 {
			reused = ls.Offsets(e.ProducersReused)
		}
		rows = append(rows, []string{ui.I64(int64(i + 1)), e.Upstream, e.Downstream, e.Status, chainnode.RangeText(e.Mirrored), bar, local,
			reused, ui.I64(int64(e.CollisionsAverted)), fmt.Sprintf("%d/%d", e.Errors(), len(e.Findings))})
		for _, f := range e.Findings {
			pos, upos := "-", "-"
			if f.Position >= 0 {
				pos = ui.I64(f.Position)
			}
			if f.UpstreamPosition >= 0 {
				upos = ui.I64(f.UpstreamPosition)
			}
			frows = append(frows, []string{ui.I64(int64(i + 1)), f.Severity().Upper(), f.Kind.String(), ui.I64(f.Offset), f.File, pos, f.UpstreamFile, upos, f.Message})
			fkinds = append(fkinds, f.Kind.String())
		}
	}
	t.render([]string{"edge", "upstream", "downstream", "status", "mirrored", "barrier", "local", "reused", "averted", "errors/findings"}, rows)
	if len(frows) > 0 {
		shown, notes := ls.KindRows(frows, func(i int) string { return fkinds[i] })
		t.render([]string{"edge", "severity", "kind", "offset", "file", "position", "upstream file", "upstream position", "message"}, shown)
		for _, n := range notes {
			fmt.Fprintln(t.s.Out, n)
		}
	}
	_, err := fmt.Fprintf(t.s.Out, "Summary: %s\n", chainSummary(r))
	return err
}

// ---- json ----

// JSON lines with explicit wire structs: one "edge" line per edge, then a
// "summary" line.

type chainJSONPrinter struct {
	w       io.Writer
	digests map[string]*digest.Info
}

type BarrierJSON struct {
	Offset               int64   `json:"offset"`
	File                 string  `json:"file"`
	Position             int64   `json:"position"`
	Aborts               []int64 `json:"aborts"`
	PartitionLeaderEpoch int32   `json:"partitionLeaderEpoch"`
	ProducersCleared     int     `json:"producersCleared"`
}

type MirroredBarrierJSON struct {
	Offset           int64 `json:"offset"`
	ProducersCleared int   `json:"producersCleared"`
	Applied          bool  `json:"applied"`
}

type AvertedJSON struct {
	Kind       string `json:"kind"`
	Offset     int64  `json:"offset"`
	ProducerID int64  `json:"producerId"`
}

type FindingJSON struct {
	Kind             string `json:"kind"`
	Severity         string `json:"severity"`
	Offset           int64  `json:"offset"`
	ProducerID       int64  `json:"producerId"`
	File             string `json:"file"`
	Position         int64  `json:"position"`
	UpstreamFile     string `json:"upstreamFile"`
	UpstreamPosition int64  `json:"upstreamPosition"`
	Message          string `json:"message"`
}

type EdgeJSON struct {
	Type               string                `json:"type"` // "edge"
	Edge               int                   `json:"edge"` // 1-based
	Upstream           string                `json:"upstream"`
	Downstream         string                `json:"downstream"`
	Status             string                `json:"status"`
	Consistent         bool                  `json:"consistent"`
	UpstreamLog        chainnode.RangeJSON   `json:"upstreamLog"`
	DownstreamLog      chainnode.RangeJSON   `json:"downstreamLog"`
	Mirrored           chainnode.RangeJSON   `json:"mirrored"`
	BatchesCompared    int64                 `json:"batchesCompared"`
	Barrier            *BarrierJSON          `json:"barrier"`
	Local              *chainnode.RangeJSON  `json:"local"`
	Lag                int64                 `json:"lag"`
	MirroredBarriers   []MirroredBarrierJSON `json:"mirroredBarriers"`
	ProducersReused    []int64               `json:"producersReused"`
	CollisionsAverted  int                   `json:"collisionsAverted"`
	Averted            []AvertedJSON         `json:"averted"`
	InheritedAnomalies int                   `json:"inheritedAnomalies"`
	EpochDifferences   int64                 `json:"epochDifferences"`
	Findings           []FindingJSON         `json:"findings"`
	// UpstreamDigest and DownstreamDigest describe a node that is a
	// digest (absent for a directory).
	UpstreamDigest   *chainnode.DigestJSON `json:"upstreamDigest,omitempty"`
	DownstreamDigest *chainnode.DigestJSON `json:"downstreamDigest,omitempty"`
}

type SummaryJSON struct {
	Type       string `json:"type"` // "summary"
	Edges      int    `json:"edges"`
	Consistent int    `json:"consistent"`
	Findings   int    `json:"findings"`
	Errors     int    `json:"errors"`
}

func (j *chainJSONPrinter) Print(r *mirror.ChainReport) error {
	sum := SummaryJSON{Type: "summary", Edges: len(r.Edges)}
	for i, e := range r.Edges {
		out := EdgeJSON{Type: "edge", Edge: i + 1, Upstream: e.Upstream, Downstream: e.Downstream, Status: e.Status, Consistent: e.OK(),
			UpstreamLog: chainnode.RangeJSON(e.UpstreamLog), DownstreamLog: chainnode.RangeJSON(e.DownstreamLog), Mirrored: chainnode.RangeJSON(e.Mirrored),
			BatchesCompared: e.BatchesCompared, Lag: e.Lag, MirroredBarriers: []MirroredBarrierJSON{},
			ProducersReused: ui.NonNil(e.ProducersReused), CollisionsAverted: e.CollisionsAverted, Averted: []AvertedJSON{},
			InheritedAnomalies: e.InheritedAnomalies, EpochDifferences: e.EpochDifferences, Findings: []FindingJSON{},
			UpstreamDigest: chainnode.DigestOf(j.digests[e.Upstream]), DownstreamDigest: chainnode.DigestOf(j.digests[e.Downstream])}
		if b := e.Barrier; b != nil {
			out.Barrier = &BarrierJSON{Offset: b.Offset, File: b.File, Position: b.Position, Aborts: ui.NonNil(b.Aborts),
				PartitionLeaderEpoch: b.PartitionLeaderEpoch, ProducersCleared: b.ProducersCleared}
			l := chainnode.RangeJSON(e.Local)
			out.Local = &l
		}
		for _, b := range e.MirroredBarriers {
			out.MirroredBarriers = append(out.MirroredBarriers, MirroredBarrierJSON(b))
		}
		for _, a := range e.Averted {
			out.Averted = append(out.Averted, AvertedJSON{Kind: a.Kind.String(), Offset: a.Offset, ProducerID: a.ProducerID})
		}
		for _, f := range e.Findings {
			out.Findings = append(out.Findings, FindingJSON{Kind: f.Kind.String(), Severity: f.Severity().String(), Offset: f.Offset,
				ProducerID: f.ProducerID, File: f.File, Position: f.Position, UpstreamFile: f.UpstreamFile, UpstreamPosition: f.UpstreamPosition,
				Message: f.Message})
			if f.IsError() {
				sum.Errors++
			}
		}
		sum.Findings += len(e.Findings)
		if e.OK() {
			sum.Consistent++
		}
		if err := ui.JSONLine(j.w, out); err != nil {
			return err
		}
	}
	return ui.JSONLine(j.w, sum)
}
