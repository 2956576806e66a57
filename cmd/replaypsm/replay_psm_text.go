package replaypsm

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// textReplayPSMPrinter prints a summary, then the producers as a table
// (renderTable with --output table or on a terminal; plain aligned
// columns when piped, stable for scripts), then transactions, barriers,
// snapshot checks and anomalies.
type textReplayPSMPrinter struct {
	s     *ui.Streams
	table bool
}

func fmtMs(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", ms, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"))
}

func (p *textReplayPSMPrinter) Print(v *replayPSMView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.Styles(), p.s.Lister()
	p.summary(w, st, v)
	p.producers(w, ls, v)
	p.transactions(w, st, ls, v)
	p.barriers(w, st, ls, v)
	p.checks(w, st, ls, v)
	p.anomalies(w, st, ls, v)
	return w.Flush()
}

// sectionTitle starts a section of the report: a blank line, then title.
func sectionTitle(w *bufio.Writer, st *ui.Styles, title string) {
	fmt.Fprintf(w, "\n%s\n", st.Paint(st.Title, title))
}

// section is a titled list of n items, when there is one: the title, then
// the items (ls summarises a long list, its gap line at two spaces, as the
// items are).
func section(w *bufio.Writer, st *ui.Styles, ls ui.Lister, title, what string, n int, item func(i int)) {
	if n == 0 {
		return
	}
	sectionTitle(w, st, title)
	ls.Lines(n, what, item, gapLine(w, "  "))
}

// gapLine prints a lister's "… N more" line at indent.
func gapLine(w *bufio.Writer, indent string) func(string) {
	return func(more string) { fmt.Fprintf(w, "%s%s\n", indent, more) }
}

// summary is the key-value head: the offsets, where the replay started,
// the clock and the counts.
func (p *textReplayPSMPrinter) summary(w *bufio.Writer, st *ui.Styles, v *replayPSMView) {
	r := v.Result
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "%s %s\n", ui.PadDisplay(st.Paint(st.Title, k), 19), fmt.Sprintf(format, args...))
	}
	kv("partition", "%s (%s)", r.Partition, v.Dir)
	kv("log", "start %d, end %d", r.LogStartOffset, r.LogEndOffset)
	kv("high watermark", "%d (%s)", r.HighWatermark, v.HWSource)
	lso := fmt.Sprintf("%d", r.LastStableOffset)
	if r.FirstUndecidedOffset >= 0 {
		lso += fmt.Sprintf(" (first undecided offset %d)", r.FirstUndecidedOffset)
	}
	kv("last stable offset", "%s", lso)
	switch {
	case r.RebuildSkipped:
		kv("replay", "none: %s and no producer snapshot, so the broker skips the rebuild and starts with no producer state", segment.CleanShutdownName)
	case r.Recovery != nil:
		kv("replay", "%s", recoveryLine(r))
	case r.SnapshotLoaded >= 0:
		kv("replay", "from the snapshot at %d, then %s from offset %d", r.SnapshotLoaded, ui.Plural(r.BatchesReplayed, "batch"), r.ReplayedFrom)
	default:
		kv("replay", "no snapshot: %s from offset %d (the log start)", ui.Plural(r.BatchesReplayed, "batch"), r.ReplayedFrom)
	}
	clock := fmtMs(r.Clock)
	kv("clock", "%s %s, producer.id.expiration.ms %d", v.Opts.Clock, clock, v.Opts.ProducerIDExpirationMs)
	if v.Opts.IgnoreBarriers {
		kv("barriers", "IGNORED (--ignore-barriers: counterfactual state)")
	}
	errs, warns := 0, 0
	for _, a := range r.Anomalies {
		switch a.Severity() {
		case finding.Error:
			errs++
		case finding.Warning:
			warns++
		}
	}
	barriers := ui.Plural(len(r.Barriers), "barrier")
	if r.SnapshotLoaded > 0 {
		barriers += " after the snapshot"
	}
	kv("counts", "%s, %s, %s, %s, %s (%s, %s)",
		ui.Plural(len(r.Producers), "producer"), ui.Plural(len(r.Ongoing), "ongoing transaction"), ui.Plural(len(r.Aborted), "aborted transaction"), barriers,
		ui.Plural(len(r.Anomalies), "anomaly"), ui.Plural(errs, "error"), ui.Plural(warns, "warning"))
	if r.SnapshotLoaded > 0 {
		// The snapshot stands for everything before it, barriers included
		// (a restarting broker never sees those either); without this, "0
		// barriers" reads as "this log has none".
		kv("before the snapshot", "offsets %d..%d are not replayed: their barriers and transactions are in the snapshot's state; --from-snapshot none replays them",
			r.LogStartOffset, r.SnapshotLoaded-1)
	}
	if v.Written != "" {
		kv("snapshot written", "%s (%s)", v.Written, ui.Plural(len(r.Producers), "producer"))
	}
}

// recoveryLine says what the broker recovers at load and where the
// state it holds comes from (psm.Result.Recovery).
func recoveryLine(r *psm.Result) string {
	rec := r.Recovery
	why := fmt.Sprintf("segment(s) %s have no .index: the broker recovers them", joinOffsets(rec.Segments))
	if rec.RecoveryPoint >= 0 {
		why = fmt.Sprintf("an unclean shutdown (no %s): the broker recovers %d segment(s) from the recovery point %d", segment.CleanShutdownName, len(rec.Segments), rec.RecoveryPoint)
	}
	from := fmt.Sprintf("no snapshot: %d batches from offset %d", r.BatchesReplayed, r.ReplayedFrom)
	if r.SnapshotLoaded >= 0 {
		from = fmt.Sprintf("from the snapshot at %d, %d batches from offset %d", r.SnapshotLoaded, r.BatchesReplayed, r.ReplayedFrom)
	}
	if rec.TruncatedAt >= 0 {
		from += fmt.Sprintf("; recovery cuts the log at %d", rec.TruncatedAt)
	}
	if n := len(rec.Segments); n > 0 {
		from += fmt.Sprintf("; the state is reloaded from the snapshot recovery writes after segment %d (one batch per producer)", rec.Segments[n-1])
	}
	return why + "; " + from
}

// joinOffsets lists offsets, comma-separated.
func joinOffsets(o []int64) string {
	s := make([]string, len(o))
	for i, v := range o {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ", ")
}

// producers is the producer table.
func (p *textReplayPSMPrinter) producers(w *bufio.Writer, ls ui.Lister, v *replayPSMView) {
	r := v.Result
	if len(r.Producers) > 0 {
		fmt.Fprintln(w)
		header := []string{"producerId", "epoch", "lastSequence", "lastOffset", "offsetDelta", "lastTimestamp", "coordinatorEpoch", "txnFirstOffset", "batches"}
		// Only the rows shown are formatted (a partition may hold a
		// million producers; the table shows 15 without --verbose).
		c := ls.Cut(len(r.Producers))
		narrow := p.table && !p.s.Wide
		if narrow {
			// The table fits a 100-column terminal without offsetDelta
			// and coordinatorEpoch (--output wide, and the piped
			// columns, have them).
			header = dropNarrow(header)
		}
		p.render(w, header, c.RowsOf(len(header), func(i int) []string {
			e := &r.Producers[i]
			row := []string{ui.I64(e.ProducerID), ui.I64(int64(e.ProducerEpoch)), ui.I64(int64(e.LastSeq())), ui.I64(e.LastDataOffset()),
				ui.I64(int64(e.LastOffsetDelta())), ui.I64(e.LastTimestamp), ui.I64(int64(e.CoordinatorEpoch)), ui.OrDash(e.CurrentTxnFirstOffset),
				strconv.Itoa(len(e.Batches))}
			if narrow {
				row = dropNarrow(row)
			}
			return row
		}))
		if c.Hidden() > 0 {
			fmt.Fprintln(w, c.More("producers"))
		}
	}
}

// dropNarrow is a producer row without offsetDelta and coordinatorEpoch.
func dropNarrow(row []string) []string { return append(append(row[:4:4], row[5]), row[7:]...) }

// transactions lists the ongoing and the aborted transactions.
func (p *textReplayPSMPrinter) transactions(w *bufio.Writer, st *ui.Styles, ls ui.Lister, v *replayPSMView) {
	r := v.Result
	section(w, st, ls, "ongoing transactions", "ongoing transactions", len(r.Ongoing), func(i int) {
		t := r.Ongoing[i]
		fmt.Fprintf(w, "  producer %s from offset %s\n", st.Paint(st.Pid, ui.I64(t.ProducerID)), st.Paint(st.Offset, ui.I64(t.FirstOffset)))
	})
	section(w, st, ls, "aborted transactions (.txnindex entries)", "aborted transactions", len(r.Aborted), func(i int) {
		a := r.Aborted[i]
		fmt.Fprintf(w, "  producer %s first %d last %d lastStableOffset %d\n", st.Paint(st.Pid, ui.I64(a.ProducerID)), a.FirstOffset, a.LastOffset, a.LastStableOffset)
	})
}

// barriers lists the MIRROR_PID_RESET barriers replayed.
func (p *textReplayPSMPrinter) barriers(w *bufio.Writer, st *ui.Styles, ls ui.Lister, v *replayPSMView) {
	r := v.Result
	section(w, st, ls, "MIRROR_PID_RESET barriers", "barriers", len(r.Barriers), func(i int) {
		b := r.Barriers[i]
		src := ""
		if b.SourceClusterID != nil {
			src = " sourceClusterId " + *b.SourceClusterID
		}
		if v.Opts.IgnoreBarriers {
			fmt.Fprintf(w, "  offset %s: ignored%s\n", st.Paint(st.Offset, ui.I64(b.Offset)), src)
			return
		}
		fmt.Fprintf(w, "  offset %s: cleared %s%s\n", st.Paint(st.Offset, ui.I64(b.Offset)), ui.Plural(b.ProducersCleared, "producer"), src)
	})
}

// checks prints --check-snapshots' verdict on every snapshot.
func (p *textReplayPSMPrinter) checks(w *bufio.Writer, st *ui.Styles, ls ui.Lister, v *replayPSMView) {
	if v.Checked {
		sectionTitle(w, st, "snapshot checks (rebuilt from the log alone)")
		if len(v.Checks) == 0 {
			fmt.Fprintln(w, "  no producer snapshot in the directory")
		}
		ls.Lines(len(v.Checks), "snapshots", func(i int) {
			c := v.Checks[i]
			name := filepath.Base(c.Path)
			switch c.Status {
			case psm.CheckMatch:
				if c.Reason != "" {
					// The broker's own state, not kseg's rebuild: say why.
					fmt.Fprintf(w, "  %s %s (%s in the file, %d rebuilt from the log: %s)\n", name, st.Paint(st.OK, "MATCH"), ui.Plural(c.OnDisk, "producer"), c.Rebuilt, c.Reason)
					break
				}
				fmt.Fprintf(w, "  %s %s (%s)\n", name, st.Paint(st.OK, "MATCH"), ui.Plural(c.Rebuilt, "producer"))
			case psm.CheckMismatch:
				fmt.Fprintf(w, "  %s %s (%d rebuilt, %d in the file, %s)\n", name, st.Paint(st.Err, "MISMATCH"), c.Rebuilt, c.OnDisk, ui.Plural(len(c.Differences), "difference"))
				ls.Lines(len(c.Differences), "differences", func(i int) { fmt.Fprintf(w, "      %s\n", c.Differences[i]) }, gapLine(w, "      "))
			case psm.CheckCorrupt:
				fmt.Fprintf(w, "  %s %s %s\n", name, st.Paint(st.Err, "CORRUPT"), c.Reason)
			default:
				fmt.Fprintf(w, "  %s %s %s\n", name, st.Paint(st.Dim, "SKIPPED"), c.Reason)
			}
		}, gapLine(w, "  "))
	}
}

// anomalies lists what the replay found.
func (p *textReplayPSMPrinter) anomalies(w *bufio.Writer, st *ui.Styles, ls ui.Lister, v *replayPSMView) {
	r := v.Result
	if len(r.Anomalies) > 0 {
		sectionTitle(w, st, "anomalies")
		ls.ByKind(len(r.Anomalies), func(i int) string { return r.Anomalies[i].Kind.String() }, func(i int) {
			a := r.Anomalies[i]
			who := ""
			if a.ProducerID >= 0 {
				who = " producer " + st.Paint(st.Pid, ui.I64(a.ProducerID))
			}
			fmt.Fprintf(w, "  %s %s offset %s%s: %s\n", st.Severity(a.Severity(), a.Severity().Upper()), a.Kind,
				st.Paint(st.Offset, ui.I64(a.Offset)), who, a.Message)
		}, gapLine(w, "  "))
	}
}

func (p *textReplayPSMPrinter) render(w *bufio.Writer, header []string, rows [][]string) {
	if !p.table {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
		return
	}
	ui.RenderTable(w, p.s.Width, header, rows)
}
