package status

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/psm/status"
)

// textStatusPrinter prints a partition as labelled lines (replay-psm's
// layout), a log directory as a table (a terminal, -o table) or one line
// per partition (piped), each target followed by its findings and its
// verdict.
type textStatusPrinter struct {
	s     *ui.Streams
	table bool
}

func (p *textStatusPrinter) Print(ts []*statusTarget) error {
	w := bufio.NewWriter(p.s.Out)
	st, ls := p.s.Styles(), p.s.Lister()
	for i, t := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		errs, warns, failed, size := t.counts()
		if !t.logDir {
			r := &t.rows[0]
			if r.err != nil {
				fmt.Fprintf(w, "%s %s\n", ui.PadDisplay(st.Paint(st.Title, "partition"), 19), ui.Esc(t.path))
				fmt.Fprintf(w, "%s %s\n", ui.PadDisplay(st.Paint(st.Title, "error"), 19), ui.Esc(r.err.Error()))
			} else {
				p.partition(w, st, r.st)
			}
		} else {
			kv := func(k, format string, args ...any) {
				fmt.Fprintf(w, "%s %s\n", ui.PadDisplay(st.Paint(st.Title, k), 19), fmt.Sprintf(format, args...))
			}
			kv("log directory", "%s", ui.Esc(t.path))
			kv("partitions", "%d", len(t.rows))
			kv("size", "%s", sizeText(size))
			kv("findings", "%s, %s", ui.Plural(errs, "error"), ui.Plural(warns, "warning"))
			fmt.Fprintln(w)
			if p.table {
				w.Flush()
				header, rows := statusRows(t.rows, p.s.Wide)
				ls.Table(w, p.s.Width, header, rows, "partitions")
			} else {
				ls.Lines(len(t.rows), "partitions", func(i int) { statusLine(w, &t.rows[i]) },
					func(more string) { fmt.Fprintln(w, more) })
			}
		}
		brokerview.PrintFindingsText(w, st, ls, findingsOf(t.rows))
		verdict := statusVerdict(errs, warns, failed, len(t.rows))
		switch {
		case errs > 0 || failed > 0:
			verdict = st.Paint(st.Err, verdict)
		default:
			verdict = st.Paint(st.OK, verdict)
		}
		fmt.Fprintln(w, verdict)
	}
	return w.Flush()
}

// partition is one partition's screen.
func (p *textStatusPrinter) partition(w *bufio.Writer, st *ui.Styles, r *status.Partition) {
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "%s %s\n", ui.PadDisplay(st.Paint(st.Title, k), 19), fmt.Sprintf(format, args...))
	}
	name := ui.Esc(r.Dir)
	if r.Topic != "" {
		name = fmt.Sprintf("%s-%d (%s)", ui.Esc(r.Topic), r.Partition, ui.Esc(r.Dir))
	}
	kv("partition", "%s", name)
	if r.TopicID != "" {
		kv("topic id", "%s", r.TopicID)
	}
	kv("size", "%s in %s; %s (%s of log)", sizeText(r.Size), ui.Plural(r.Files, "file"), ui.Plural(r.Segments, "segment"), sizeText(r.LogBytes))
	if r.Segments == 0 {
		kv("offsets", "no .log segment")
	} else {
		hw := ""
		if !r.HighWatermarkCheckpointed {
			hw = " (no replication-offset-checkpoint entry: a broker starts at the log start)"
		}
		kv("offsets", "logStartOffset %d, logEndOffset %d, highWatermark %d%s, lastStableOffset %d",
			r.LogStartOffset, r.LogEndOffset, r.HighWatermark, hw, r.LastStableOffset)
	}
	recs := fmt.Sprintf("%s in %s", plural64(r.Records, "record"), plural64(r.Batches, "batch"))
	if r.LegacyEntries > 0 {
		recs += fmt.Sprintf(" (%d legacy entries counted one record each)", r.LegacyEntries)
	}
	kv("records", "%s", recs)
	if r.FirstTimestamp >= 0 {
		kv("time", "%s .. %s", ui.FmtTime(r.FirstTimestamp), ui.FmtTime(r.LastTimestamp))
	} else {
		kv("time", "-")
	}
	if r.RebuildSkipped {
		kv("producers", "none (a clean shutdown without a producer snapshot: the broker skips the rebuild)")
	} else {
		kv("producers", "%d", r.Producers)
	}
	open := strconv.Itoa(len(r.OpenTransactions))
	if n := len(r.OpenTransactions); n > 0 {
		first := r.OpenTransactions[0]
		open += fmt.Sprintf(" (the oldest: producer %d from offset %d)", first.ProducerID, first.FirstOffset)
	}
	kv("open transactions", "%s", open)
	switch {
	case r.LastSnapshot < 0:
		kv("last snapshot", "none")
	case r.SnapshotLoaded == r.LastSnapshot:
		kv("last snapshot", "%d (the broker starts from it)", r.LastSnapshot)
	case r.SnapshotLoaded >= 0:
		kv("last snapshot", "%d (not usable: the broker starts from %d)", r.LastSnapshot, r.SnapshotLoaded)
	default:
		kv("last snapshot", "%d (not usable: the broker replays the log)", r.LastSnapshot)
	}
	if r.LeaderEpoch >= 0 {
		kv("leader epoch", "%d from offset %d", r.LeaderEpoch, r.LeaderEpochStart)
	}
	e, wn := r.Count()
	kv("findings", "%s, %s", ui.Plural(e, "error"), ui.Plural(wn, "warning"))
}

// statusLine is a partition's line of a piped log-directory status.
func statusLine(w *bufio.Writer, r *statusRow) {
	if r.err != nil {
		fmt.Fprintf(w, "partition %s error %s\n", ui.Esc(partitionName(r)), ui.Esc(r.err.Error()))
		return
	}
	p := r.st
	e, wn := p.Count()
	fmt.Fprintf(w, "partition %s size %d segments %d logStartOffset %d logEndOffset %d highWatermark %d lastStableOffset %d records %d producers %d openTransactions %d lastSnapshot %s errors %d warnings %d\n",
		ui.Esc(partitionName(r)), p.Size, p.Segments, p.LogStartOffset, p.LogEndOffset, p.HighWatermark, p.LastStableOffset,
		p.Records, p.Producers, len(p.OpenTransactions), ui.OrDash(p.LastSnapshot), e, wn)
}

// statusRows is a log directory's table: kafka-log-dirs' PARTITION and
// SIZE, then the offsets, records, producers and findings.
func statusRows(rows []statusRow, wide bool) ([]string, [][]string) {
	header := []string{"PARTITION", "SIZE", "LOG-START-OFFSET", "LOG-END-OFFSET", "RECORDS", "OPEN-TXNS", "ERRORS"}
	if wide {
		header = append(header, "WARNINGS", "SEGMENTS", "PRODUCERS", "HIGH-WATERMARK", "LAST-STABLE-OFFSET", "LAST-SNAPSHOT", "LEADER-EPOCH", "FIRST-TIMESTAMP", "LAST-TIMESTAMP")
	}
	out := make([][]string, len(rows))
	for i := range rows {
		r := &rows[i]
		if r.err != nil {
			row := make([]string, len(header))
			for k := range row {
				row[k] = "-"
			}
			row[0], row[len(row)-1] = partitionName(r), "unreadable: "+r.err.Error()
			out[i] = row
			continue
		}
		p := r.st
		e, wn := p.Count()
		out[i] = []string{partitionName(r), sizeText(p.Size), ui.I64(p.LogStartOffset), ui.I64(p.LogEndOffset),
			ui.I64(p.Records), strconv.Itoa(len(p.OpenTransactions)), strconv.Itoa(e)}
		if wide {
			epoch := "-"
			if p.LeaderEpoch >= 0 {
				epoch = strconv.Itoa(int(p.LeaderEpoch))
			}
			out[i] = append(out[i], strconv.Itoa(wn), strconv.Itoa(p.Segments), strconv.Itoa(p.Producers), ui.I64(p.HighWatermark), ui.I64(p.LastStableOffset), ui.OrDash(p.LastSnapshot), epoch,
				ui.FmtTime(p.FirstTimestamp), ui.FmtTime(p.LastTimestamp))
		}
	}
	return header, out
}

// sizeText is a size in binary units, exact below a KiB.
func sizeText(n int64) string { return ui.HumanBytes(n) }

func plural64(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "ch") {
		return strconv.FormatInt(n, 10) + " " + what + "es"
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// jsonStatusPrinter writes one {"type":"partitionStatus"} per partition,
// a {"type":"logDirStatus"} after a log directory's partitions, then one
// {"type":"finding"} per finding (docs/json.md).
type jsonStatusPrinter struct {
	s *ui.Streams
	j ui.JSONWriter
}

func (p *jsonStatusPrinter) Print(ts []*statusTarget) error {
	j := &p.j
	for _, t := range ts {
		j.B = j.B[:0]
		for i := range t.rows {
			r := &t.rows[i]
			j.BeginLine("partitionStatus")
			j.Str("partition", partitionName(r))
			j.Str("partitionDir", r.dir)
			if r.err != nil {
				j.Str("error", r.err.Error())
				j.EndLine()
				continue
			}
			jsonPartitionStatus(j, r.st)
			j.EndLine()
		}
		errs, warns, failed, size := t.counts()
		if t.logDir {
			j.BeginLine("logDirStatus")
			j.Str("logDir", t.path)
			j.Int("partitions", int64(len(t.rows)))
			j.Int("unreadable", int64(failed))
			j.Int("size", size)
			j.Int("errors", int64(errs))
			j.Int("warnings", int64(warns))
			j.Bool("healthy", errs == 0 && failed == 0)
			j.EndLine()
		}
		for _, f := range findingsOf(t.rows) {
			brokerview.JSONFinding(j, f)
		}
		if _, err := p.s.Out.Write(j.B); err != nil {
			return err
		}
	}
	return nil
}

// jsonPartitionStatus writes one partition's status fields.
func jsonPartitionStatus(j *ui.JSONWriter, s *status.Partition) {
	e, wn := s.Count()
	j.Str("topic", s.Topic)
	j.OptInt("partitionId", int64(s.Partition), s.Topic != "")
	j.Str("topicId", s.TopicID)
	j.Int("size", s.Size)
	j.Int("files", int64(s.Files))
	j.Int("segments", int64(s.Segments))
	j.Int("logBytes", s.LogBytes)
	j.LogOffsets(s.LogStartOffset, s.LogEndOffset, s.HighWatermark, s.LastStableOffset)
	j.Int("batches", s.Batches)
	j.Int("records", s.Records)
	j.Int("legacyEntries", s.LegacyEntries)
	j.OptInt("firstTimestamp", s.FirstTimestamp, s.FirstTimestamp >= 0)
	j.OptInt("lastTimestamp", s.LastTimestamp, s.LastTimestamp >= 0)
	j.Int("producers", int64(s.Producers))
	j.Bool("rebuildSkipped", s.RebuildSkipped)
	ui.Objects(j, "openTransactions", s.OpenTransactions, func(o *psm.Txn) {
		j.Int("producerId", o.ProducerID)
		j.Int("firstOffset", o.FirstOffset)
	})
	j.OptInt("lastSnapshot", s.LastSnapshot, s.LastSnapshot >= 0)
	j.OptInt("snapshotLoaded", s.SnapshotLoaded, s.SnapshotLoaded >= 0)
	j.OptInt("leaderEpoch", int64(s.LeaderEpoch), s.LeaderEpoch >= 0)
	j.OptInt("leaderEpochStartOffset", s.LeaderEpochStart, s.LeaderEpoch >= 0)
	j.Int("errors", int64(e))
	j.Int("warnings", int64(wn))
	j.Bool("healthy", e == 0)
}
