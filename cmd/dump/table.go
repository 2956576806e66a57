package dump

import (
	"fmt"
	"strings"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
)

// tableDumpPrinter renders each file as tables (renderTable): batches, and
// with --deep the records; index, snapshot and checkpoint entries as their
// own tables. Rows are buffered per file, so it suits inspection, not
// multi-gigabyte segments (use json for those).
type tableDumpPrinter struct {
	s        *ui.Streams
	o        *Options
	st       *ui.Styles
	header   []string
	rows     [][]string
	recRows  [][]string
	findings []finding.Finding
	summary  string
}

func newTableDumpPrinter(s *ui.Streams, o *Options) *tableDumpPrinter {
	return &tableDumpPrinter{s: s, o: o, st: s.Styles()}
}

func (p *tableDumpPrinter) BeginFile(f scan.File) {
	p.header, p.rows, p.recRows, p.findings, p.summary = nil, nil, nil, nil, ""
	fmt.Fprintf(p.s.Out, "%s (%s)\n", p.st.Paint(p.st.Title, ui.Esc(f.Path)), f.Info.Kind)
}

func (p *tableDumpPrinter) setHeader(h ...string) {
	if p.header == nil {
		p.header = h
	}
}

func (p *tableDumpPrinter) Unknown(_ scan.File, why string) { p.summary = why }
func (p *tableDumpPrinter) LogStart(scan.File)              {}

func (p *tableDumpPrinter) Batch(bv *scan.BatchView) {
	b := bv.Batch
	crc := "-"
	var flags []string
	if bv.CRCValid != nil {
		crc = "ok"
		if !*bv.CRCValid {
			crc = "INVALID"
			flags = append(flags, "CRC-INVALID")
		}
	}
	count := "-"
	if !b.IsLegacy() {
		count = ui.I64(int64(b.RecordCount))
	}
	if b.IsTransactional() {
		flags = append(flags, "txn")
	}
	if b.IsControl() {
		flags = append(flags, "ctl")
	}
	seq := "-"
	if b.BaseSequence >= 0 {
		seq = ui.I64(int64(b.BaseSequence))
		if last := b.LastSequence(); last != b.BaseSequence {
			seq += ".." + ui.I64(int64(last))
		}
	}
	// The columns a batch is read by fit a 100-column terminal: a CRC
	// that does not match is a flag (and a finding below the table);
	// --output wide adds lastOffset, magic, the timestamp type, the
	// partition leader epoch and the crc column. kafka-dump-log's names,
	// Kafka's tools' style.
	if p.s.Wide {
		p.setHeader("baseOffset", "lastOffset", "count", "position", "size", "magic", "codec", "timestampType", "maxTimestamp",
			"producerId", "producerEpoch", "sequence", "partitionLeaderEpoch", "flags", "crc")
		p.rows = append(p.rows, []string{ui.I64(b.BaseOffset), ui.I64(b.LastOffset()), count, ui.I64(bv.Position), ui.I64(b.Size()),
			ui.I64(int64(b.Magic)), b.Compression().String(), b.TimestampType().String(), ui.I64(b.MaxTimestamp),
			ui.I64(b.ProducerID), ui.I64(int64(b.ProducerEpoch)), seq, ui.I64(int64(b.PartitionLeaderEpoch)), ui.OrDashString(strings.Join(flags, ",")), crc})
		return
	}
	p.setHeader("baseOffset", "count", "position", "size", "codec", "maxTimestamp", "producerId", "epoch", "sequence", "flags")
	p.rows = append(p.rows, []string{ui.I64(b.BaseOffset), count, ui.I64(bv.Position), ui.I64(b.Size()),
		b.Compression().String(), ui.I64(b.MaxTimestamp), ui.I64(b.ProducerID), ui.I64(int64(b.ProducerEpoch)), seq,
		ui.OrDashString(strings.Join(flags, ","))})
}

func (p *tableDumpPrinter) Record(bv *scan.BatchView, rv *scan.RecordView) {
	if !p.o.Deep {
		return
	}
	r := rv.Record
	what := ""
	if bv.Batch.IsControl() {
		what = textControl(&ui.Styles{}, rv)
	} else if p.o.PrintData {
		what = "key " + formatData(r.Key, p.o.KeyFormat) + " value " + formatData(r.Value, p.o.ValueFormat)
	}
	keys := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		keys[i] = string(h.Key)
	}
	p.recRows = append(p.recRows, []string{ui.I64(r.Offset), ui.I64(r.Timestamp), ui.I64(int64(r.Sequence)),
		ui.I64(int64(r.KeySize())), ui.I64(int64(r.ValueSize())), strings.Join(keys, ","), what})
}

func (p *tableDumpPrinter) EndBatch(*scan.BatchView) {}

func (p *tableDumpPrinter) LogEnd(_ scan.File, s *scan.LogSummary) {
	if p.o.quiet {
		return
	}
	if p.o.Filtered() {
		p.summary = logSummaryText(p.o, s, p.st)
		return
	}
	p.summary = fmt.Sprintf("%s, %s, validBytes %d of %d, tail %s, %s",
		ui.Plural(s.Batches, "batch"), ui.Plural(s.Records, "record"), s.Tail.ValidBytes, s.Tail.End, s.Tail.Kind, ui.Plural(s.CRCErrors, "CRC error"))
}

func (p *tableDumpPrinter) OffsetIndexEntry(_ scan.File, e segment.IndexEntry) {
	if p.o.VerifyIndex {
		return
	}
	p.setHeader("offset", "position")
	p.rows = append(p.rows, []string{ui.I64(e.Offset), ui.I64(int64(e.Position))})
}

func (p *tableDumpPrinter) TimeIndexEntry(_ scan.File, e segment.TimeIndexEntry) {
	if p.o.VerifyIndex {
		return
	}
	p.setHeader("timestamp", "offset")
	p.rows = append(p.rows, []string{ui.I64(e.Timestamp), ui.I64(e.Offset)})
}

func (p *tableDumpPrinter) IndexNote(_ scan.File, note string) { p.summary = note }

func (p *tableDumpPrinter) AbortedTxn(_ scan.File, e segment.AbortedTxn) {
	p.setHeader("producerId", "firstOffset", "lastOffset", "lastStableOffset", "version")
	p.rows = append(p.rows, []string{ui.I64(e.ProducerID), ui.I64(e.FirstOffset), ui.I64(e.LastOffset), ui.I64(e.LastStableOffset), ui.I64(int64(e.Version))})
}

func (p *tableDumpPrinter) SnapshotEntry(_ scan.File, e segment.SnapshotEntry) {
	txn := "-"
	if e.CurrentTxnFirstOffset >= 0 {
		txn = ui.I64(e.CurrentTxnFirstOffset)
	}
	// offsetDelta and coordinatorEpoch under --output wide: the rest fits
	// a 100-column terminal.
	if p.s.Wide {
		p.setHeader("producerId", "producerEpoch", "lastSequence", "lastOffset", "offsetDelta", "lastTimestamp", "coordinatorEpoch", "currentTxnFirstOffset")
		p.rows = append(p.rows, []string{ui.I64(e.ProducerID), ui.I64(int64(e.ProducerEpoch)), ui.I64(int64(e.LastSequence)), ui.I64(e.LastOffset),
			ui.I64(int64(e.OffsetDelta)), ui.I64(e.Timestamp), ui.I64(int64(e.CoordinatorEpoch)), txn})
		return
	}
	p.setHeader("producerId", "epoch", "lastSequence", "lastOffset", "lastTimestamp", "txnFirstOffset")
	p.rows = append(p.rows, []string{ui.I64(e.ProducerID), ui.I64(int64(e.ProducerEpoch)), ui.I64(int64(e.LastSequence)), ui.I64(e.LastOffset),
		ui.I64(e.Timestamp), txn})
}

func (p *tableDumpPrinter) LeaderEpoch(_ scan.File, e segment.EpochEntry) {
	p.setHeader("leaderEpoch", "startOffset")
	p.rows = append(p.rows, []string{ui.I64(int64(e.Epoch)), ui.I64(e.StartOffset)})
}

func (p *tableDumpPrinter) OffsetCheckpoint(_ scan.File, e segment.OffsetCheckpointEntry) {
	p.setHeader("topic", "partition", "offset")
	p.rows = append(p.rows, []string{e.Topic, ui.I64(int64(e.Partition)), ui.I64(e.Offset)})
}

func (p *tableDumpPrinter) PartitionMetadata(_ scan.File, pm segment.PartitionMetadata) {
	p.setHeader("version", "topicId")
	p.rows = append(p.rows, []string{ui.I64(int64(pm.Version)), pm.TopicIDString})
}

func (p *tableDumpPrinter) TextLine(_ scan.File, line string) {
	p.setHeader("line")
	p.rows = append(p.rows, []string{line})
}

func (p *tableDumpPrinter) Finding(fd finding.Finding) { p.findings = append(p.findings, fd) }

func (p *tableDumpPrinter) render(header []string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	ui.RenderTable(p.s.Out, p.s.Width, header, rows)
}

func (p *tableDumpPrinter) EndFile(f scan.File) {
	if p.o.Filtered() && scan.HasEntries(f.Info.Kind) && p.summary == "" && !p.o.quiet {
		p.summary = entriesSummary(p.o, f)
	}
	p.render(p.header, p.rows)
	p.render([]string{"offset", "timestamp", "sequence", "keySize", "valueSize", "headerKeys", "data"}, p.recRows)
	for _, fd := range p.findings {
		fmt.Fprintf(p.s.Out, "%s %s %s\n", p.st.Severity(fd.Severity(), fd.Severity().Upper()), fd.Kind, ui.Esc(fd.Message))
	}
	if p.summary != "" {
		fmt.Fprintln(p.s.Out, ui.Esc(p.summary))
	}
}

func (p *tableDumpPrinter) Close() error { return nil }
