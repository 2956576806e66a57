package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// tableDumpPrinter renders each file as tables (renderTable): batches, and
// with --deep the records; index, snapshot and checkpoint entries as their
// own tables. Rows are buffered per file, so it suits inspection, not
// multi-gigabyte segments (use json for those).
type tableDumpPrinter struct {
	s        *Streams
	o        *dumpOptions
	st       *styles
	header   []string
	rows     [][]string
	recRows  [][]string
	findings []finding.Finding
	summary  string
}

func newTableDumpPrinter(s *Streams, o *dumpOptions) *tableDumpPrinter {
	return &tableDumpPrinter{s: s, o: o, st: s.styles()}
}

func (p *tableDumpPrinter) BeginFile(f dumpFile) {
	p.header, p.rows, p.recRows, p.findings, p.summary = nil, nil, nil, nil, ""
	fmt.Fprintf(p.s.Out, "%s (%s)\n", p.st.paint(p.st.title, esc(f.path)), f.info.Kind)
}

func (p *tableDumpPrinter) setHeader(h ...string) {
	if p.header == nil {
		p.header = h
	}
}

func (p *tableDumpPrinter) Unknown(_ dumpFile, why string) { p.summary = why }
func (p *tableDumpPrinter) LogStart(dumpFile)              {}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func (p *tableDumpPrinter) Batch(bv *batchView) {
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
		count = i64(int64(b.RecordCount))
	}
	if b.IsTransactional() {
		flags = append(flags, "txn")
	}
	if b.IsControl() {
		flags = append(flags, "ctl")
	}
	seq := "-"
	if b.BaseSequence >= 0 {
		seq = i64(int64(b.BaseSequence))
		if last := b.LastSequence(); last != b.BaseSequence {
			seq += ".." + i64(int64(last))
		}
	}
	// The columns a batch is read by fit a 100-column terminal: a CRC
	// that does not match is a flag (and a finding below the table);
	// --output wide adds lastOffset, magic, the timestamp type, the
	// partition leader epoch and the crc column. kafka-dump-log's names,
	// Kafka's tools' style.
	if p.s.wide {
		p.setHeader("baseOffset", "lastOffset", "count", "position", "size", "magic", "codec", "timestampType", "maxTimestamp",
			"producerId", "producerEpoch", "sequence", "partitionLeaderEpoch", "flags", "crc")
		p.rows = append(p.rows, []string{i64(b.BaseOffset), i64(b.LastOffset()), count, i64(bv.Position), i64(b.Size()),
			i64(int64(b.Magic)), b.Compression().String(), b.TimestampType().String(), i64(b.MaxTimestamp),
			i64(b.ProducerID), i64(int64(b.ProducerEpoch)), seq, i64(int64(b.PartitionLeaderEpoch)), orDashString(strings.Join(flags, ",")), crc})
		return
	}
	p.setHeader("baseOffset", "count", "position", "size", "codec", "maxTimestamp", "producerId", "epoch", "sequence", "flags")
	p.rows = append(p.rows, []string{i64(b.BaseOffset), count, i64(bv.Position), i64(b.Size()),
		b.Compression().String(), i64(b.MaxTimestamp), i64(b.ProducerID), i64(int64(b.ProducerEpoch)), seq,
		orDashString(strings.Join(flags, ","))})
}

func (p *tableDumpPrinter) Record(bv *batchView, rv *recordView) {
	if !p.o.deep {
		return
	}
	r := rv.Record
	what := ""
	if bv.Batch.IsControl() {
		what = textControl(&styles{}, rv)
	} else if p.o.printData {
		what = "key " + formatData(r.Key, p.o.keyFormat) + " value " + formatData(r.Value, p.o.valueFormat)
	}
	keys := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		keys[i] = string(h.Key)
	}
	p.recRows = append(p.recRows, []string{i64(r.Offset), i64(r.Timestamp), i64(int64(r.Sequence)),
		i64(int64(r.KeySize())), i64(int64(r.ValueSize())), strings.Join(keys, ","), what})
}

func (p *tableDumpPrinter) EndBatch(*batchView) {}

func (p *tableDumpPrinter) LogEnd(_ dumpFile, s *logSummary) {
	if p.o.quiet {
		return
	}
	p.summary = fmt.Sprintf("%d batches, %d records, validBytes %d of %d, tail %s, %d CRC errors",
		s.Batches, s.Records, s.Tail.ValidBytes, s.Tail.End, s.Tail.Kind, s.CRCErrors)
}

func (p *tableDumpPrinter) OffsetIndexEntry(_ dumpFile, e segment.IndexEntry) {
	if p.o.verifyIndex {
		return
	}
	p.setHeader("offset", "position")
	p.rows = append(p.rows, []string{i64(e.Offset), i64(int64(e.Position))})
}

func (p *tableDumpPrinter) TimeIndexEntry(_ dumpFile, e segment.TimeIndexEntry) {
	if p.o.verifyIndex {
		return
	}
	p.setHeader("timestamp", "offset")
	p.rows = append(p.rows, []string{i64(e.Timestamp), i64(e.Offset)})
}

func (p *tableDumpPrinter) IndexNote(_ dumpFile, note string) { p.summary = note }

func (p *tableDumpPrinter) AbortedTxn(_ dumpFile, e segment.AbortedTxn) {
	p.setHeader("producerId", "firstOffset", "lastOffset", "lastStableOffset", "version")
	p.rows = append(p.rows, []string{i64(e.ProducerID), i64(e.FirstOffset), i64(e.LastOffset), i64(e.LastStableOffset), i64(int64(e.Version))})
}

func (p *tableDumpPrinter) SnapshotEntry(_ dumpFile, e segment.SnapshotEntry) {
	txn := "-"
	if e.CurrentTxnFirstOffset >= 0 {
		txn = i64(e.CurrentTxnFirstOffset)
	}
	// offsetDelta and coordinatorEpoch under --output wide: the rest fits
	// a 100-column terminal.
	if p.s.wide {
		p.setHeader("producerId", "producerEpoch", "lastSequence", "lastOffset", "offsetDelta", "lastTimestamp", "coordinatorEpoch", "currentTxnFirstOffset")
		p.rows = append(p.rows, []string{i64(e.ProducerID), i64(int64(e.ProducerEpoch)), i64(int64(e.LastSequence)), i64(e.LastOffset),
			i64(int64(e.OffsetDelta)), i64(e.Timestamp), i64(int64(e.CoordinatorEpoch)), txn})
		return
	}
	p.setHeader("producerId", "epoch", "lastSequence", "lastOffset", "lastTimestamp", "txnFirstOffset")
	p.rows = append(p.rows, []string{i64(e.ProducerID), i64(int64(e.ProducerEpoch)), i64(int64(e.LastSequence)), i64(e.LastOffset),
		i64(e.Timestamp), txn})
}

func (p *tableDumpPrinter) LeaderEpoch(_ dumpFile, e segment.EpochEntry) {
	p.setHeader("leaderEpoch", "startOffset")
	p.rows = append(p.rows, []string{i64(int64(e.Epoch)), i64(e.StartOffset)})
}

func (p *tableDumpPrinter) OffsetCheckpoint(_ dumpFile, e segment.OffsetCheckpointEntry) {
	p.setHeader("topic", "partition", "offset")
	p.rows = append(p.rows, []string{e.Topic, i64(int64(e.Partition)), i64(e.Offset)})
}

func (p *tableDumpPrinter) PartitionMetadata(_ dumpFile, pm segment.PartitionMetadata) {
	p.setHeader("version", "topicId")
	p.rows = append(p.rows, []string{i64(int64(pm.Version)), pm.TopicIDString})
}

func (p *tableDumpPrinter) TextLine(_ dumpFile, line string) {
	p.setHeader("line")
	p.rows = append(p.rows, []string{line})
}

func (p *tableDumpPrinter) Finding(fd finding.Finding) { p.findings = append(p.findings, fd) }

func (p *tableDumpPrinter) render(header []string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	renderTable(p.s.Out, p.s.Width, header, rows)
}

func (p *tableDumpPrinter) EndFile(dumpFile) {
	p.render(p.header, p.rows)
	p.render([]string{"offset", "timestamp", "sequence", "keySize", "valueSize", "headerKeys", "data"}, p.recRows)
	for _, fd := range p.findings {
		fmt.Fprintf(p.s.Out, "%s %s %s\n", p.st.severity(fd.Severity(), fd.Severity().Upper()), fd.Kind, esc(fd.Message))
	}
	if p.summary != "" {
		fmt.Fprintln(p.s.Out, esc(p.summary))
	}
}

func (p *tableDumpPrinter) Close() error { return nil }
