package cmd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// textReplayPSMPrinter prints a summary, then the producers as a table
// (renderTable with --output table or on a terminal; plain aligned
// columns when piped, stable for scripts), then transactions, barriers,
// snapshot checks and anomalies.
type textReplayPSMPrinter struct {
	s     *Streams
	table bool
}

func fmtMs(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", ms, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"))
}

func orDash(v int64) string {
	if v < 0 {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

func (p *textReplayPSMPrinter) Print(v *replayPSMView) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.styles(), p.s.lister()
	p.summary(w, st, v)
	p.producers(w, ls, v)
	p.transactions(w, st, ls, v)
	p.barriers(w, st, ls, v)
	p.checks(w, st, ls, v)
	p.anomalies(w, st, ls, v)
	return w.Flush()
}

// gapLine prints a lister's "… N more" line at indent.
func gapLine(w *bufio.Writer, indent string) func(string) {
	return func(more string) { fmt.Fprintf(w, "%s%s\n", indent, more) }
}

// summary is the key-value head: the offsets, where the replay started,
// the clock and the counts.
func (p *textReplayPSMPrinter) summary(w *bufio.Writer, st *styles, v *replayPSMView) {
	r := v.Result
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "%s %s\n", padDisplay(st.paint(st.title, k), 19), fmt.Sprintf(format, args...))
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
		kv("replay", "from the snapshot at %d, then %s from offset %d", r.SnapshotLoaded, plural(r.BatchesReplayed, "batch"), r.ReplayedFrom)
	default:
		kv("replay", "no snapshot: %s from offset %d (the log start)", plural(r.BatchesReplayed, "batch"), r.ReplayedFrom)
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
	barriers := plural(len(r.Barriers), "barrier")
	if r.SnapshotLoaded > 0 {
		barriers += " after the snapshot"
	}
	kv("counts", "%s, %s, %s, %s, %s (%s, %s)",
		plural(len(r.Producers), "producer"), plural(len(r.Ongoing), "ongoing transaction"), plural(len(r.Aborted), "aborted transaction"), barriers,
		plural(len(r.Anomalies), "anomaly"), plural(errs, "error"), plural(warns, "warning"))
	if r.SnapshotLoaded > 0 {
		// The snapshot stands for everything before it, barriers included
		// (a restarting broker never sees those either); without this, "0
		// barriers" reads as "this log has none".
		kv("before the snapshot", "offsets %d..%d are not replayed: their barriers and transactions are in the snapshot's state; --from-snapshot none replays them",
			r.LogStartOffset, r.SnapshotLoaded-1)
	}
	if v.Written != "" {
		kv("snapshot written", "%s (%s)", v.Written, plural(len(r.Producers), "producer"))
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
func (p *textReplayPSMPrinter) producers(w *bufio.Writer, ls lister, v *replayPSMView) {
	r := v.Result
	if len(r.Producers) > 0 {
		fmt.Fprintln(w)
		header := []string{"producerId", "epoch", "lastSequence", "lastOffset", "offsetDelta", "lastTimestamp", "coordinatorEpoch", "txnFirstOffset", "batches"}
		// Only the rows shown are formatted (a partition may hold a
		// million producers; the table shows 15 without --verbose).
		c := ls.cut(len(r.Producers))
		narrow := p.table && !p.s.wide
		if narrow {
			// The table fits a 100-column terminal without offsetDelta
			// and coordinatorEpoch (--output wide, and the piped
			// columns, have them).
			header = dropNarrow(header)
		}
		p.render(w, header, c.rowsOf(len(header), func(i int) []string {
			e := &r.Producers[i]
			row := []string{i64(e.ProducerID), i64(int64(e.ProducerEpoch)), i64(int64(e.LastSeq())), i64(e.LastDataOffset()),
				i64(int64(e.LastOffsetDelta())), i64(e.LastTimestamp), i64(int64(e.CoordinatorEpoch)), orDash(e.CurrentTxnFirstOffset),
				strconv.Itoa(len(e.Batches))}
			if narrow {
				row = dropNarrow(row)
			}
			return row
		}))
		if c.hidden() > 0 {
			fmt.Fprintln(w, c.more("producers"))
		}
	}
}

// dropNarrow is a producer row without offsetDelta and coordinatorEpoch.
func dropNarrow(row []string) []string { return append(append(row[:4:4], row[5]), row[7:]...) }

// transactions lists the ongoing and the aborted transactions.
func (p *textReplayPSMPrinter) transactions(w *bufio.Writer, st *styles, ls lister, v *replayPSMView) {
	r := v.Result
	gap := func(indent string) func(string) { return gapLine(w, indent) }
	if len(r.Ongoing) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.paint(st.title, "ongoing transactions"))
		ls.lines(len(r.Ongoing), "ongoing transactions", func(i int) {
			t := r.Ongoing[i]
			fmt.Fprintf(w, "  producer %s from offset %s\n", st.paint(st.pid, i64(t.ProducerID)), st.paint(st.offset, i64(t.FirstOffset)))
		}, gap("  "))
	}
	if len(r.Aborted) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.paint(st.title, "aborted transactions (.txnindex entries)"))
		ls.lines(len(r.Aborted), "aborted transactions", func(i int) {
			a := r.Aborted[i]
			fmt.Fprintf(w, "  producer %s first %d last %d lastStableOffset %d\n", st.paint(st.pid, i64(a.ProducerID)), a.FirstOffset, a.LastOffset, a.LastStableOffset)
		}, gap("  "))
	}
}

// barriers lists the MIRROR_PID_RESET barriers replayed.
func (p *textReplayPSMPrinter) barriers(w *bufio.Writer, st *styles, ls lister, v *replayPSMView) {
	r := v.Result
	gap := func(indent string) func(string) { return gapLine(w, indent) }
	if len(r.Barriers) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.paint(st.title, "MIRROR_PID_RESET barriers"))
		ls.lines(len(r.Barriers), "barriers", func(i int) {
			b := r.Barriers[i]
			src := ""
			if b.SourceClusterID != nil {
				src = " sourceClusterId " + *b.SourceClusterID
			}
			if v.Opts.IgnoreBarriers {
				fmt.Fprintf(w, "  offset %s: ignored%s\n", st.paint(st.offset, i64(b.Offset)), src)
				return
			}
			fmt.Fprintf(w, "  offset %s: cleared %s%s\n", st.paint(st.offset, i64(b.Offset)), plural(b.ProducersCleared, "producer"), src)
		}, gap("  "))
	}
}

// checks prints --check-snapshots' verdict on every snapshot.
func (p *textReplayPSMPrinter) checks(w *bufio.Writer, st *styles, ls lister, v *replayPSMView) {
	gap := func(indent string) func(string) { return gapLine(w, indent) }
	if v.Checked {
		fmt.Fprintf(w, "\n%s\n", st.paint(st.title, "snapshot checks (rebuilt from the log alone)"))
		if len(v.Checks) == 0 {
			fmt.Fprintln(w, "  no producer snapshot in the directory")
		}
		ls.lines(len(v.Checks), "snapshots", func(i int) {
			c := v.Checks[i]
			name := filepath.Base(c.Path)
			switch c.Status {
			case psm.CheckMatch:
				if c.Reason != "" {
					// The broker's own state, not kseg's rebuild: say why.
					fmt.Fprintf(w, "  %s %s (%s in the file, %d rebuilt from the log: %s)\n", name, st.paint(st.ok, "MATCH"), plural(c.OnDisk, "producer"), c.Rebuilt, c.Reason)
					break
				}
				fmt.Fprintf(w, "  %s %s (%s)\n", name, st.paint(st.ok, "MATCH"), plural(c.Rebuilt, "producer"))
			case psm.CheckMismatch:
				fmt.Fprintf(w, "  %s %s (%d rebuilt, %d in the file, %s)\n", name, st.paint(st.err, "MISMATCH"), c.Rebuilt, c.OnDisk, plural(len(c.Differences), "difference"))
				ls.lines(len(c.Differences), "differences", func(i int) { fmt.Fprintf(w, "      %s\n", c.Differences[i]) }, gap("      "))
			case psm.CheckCorrupt:
				fmt.Fprintf(w, "  %s %s %s\n", name, st.paint(st.err, "CORRUPT"), c.Reason)
			default:
				fmt.Fprintf(w, "  %s %s %s\n", name, st.paint(st.dim, "SKIPPED"), c.Reason)
			}
		}, gap("  "))
	}
}

// anomalies lists what the replay found.
func (p *textReplayPSMPrinter) anomalies(w *bufio.Writer, st *styles, ls lister, v *replayPSMView) {
	r := v.Result
	gap := func(indent string) func(string) { return gapLine(w, indent) }
	if len(r.Anomalies) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.paint(st.title, "anomalies"))
		ls.byKind(len(r.Anomalies), func(i int) string { return r.Anomalies[i].Kind.String() }, func(i int) {
			a := r.Anomalies[i]
			who := ""
			if a.ProducerID >= 0 {
				who = " producer " + st.paint(st.pid, i64(a.ProducerID))
			}
			fmt.Fprintf(w, "  %s %s offset %s%s: %s\n", st.severity(a.Severity(), a.Severity().Upper()), a.Kind,
				st.paint(st.offset, i64(a.Offset)), who, a.Message)
		}, gap("  "))
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
	renderTable(w, p.s.Width, header, rows)
}
