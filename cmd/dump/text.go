package dump

import (
	"fmt"
	"io"
	"strconv"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
)

// textDumpPrinter is the readable default: one line per batch and record
// with Kafka's field names, defaults left out, findings inline, styled with
// lipgloss only on a terminal.
type textDumpPrinter struct {
	o *Options
	w scan.Writer
	// sink is set on a worker's fork (see segment/scan/pipeline.go).
	sink *scan.Sink
	st   *ui.Styles
	buf  []byte
	n    int64
}

func newTextDumpPrinter(s *ui.Streams, o *Options) *textDumpPrinter {
	return &textDumpPrinter{o: o, w: scan.NewBuffer(s.Out), st: s.Styles()}
}

func (p *textDumpPrinter) BeginFile(f scan.File) {
	p.n = 0
	fmt.Fprintf(p.w, "%s %s (%s)\n", p.st.Paint(p.st.Title, "==="), p.st.Paint(p.st.Title, ui.Esc(f.Path)), f.Info.Kind)
}

func (p *textDumpPrinter) Unknown(_ scan.File, why string) {
	fmt.Fprintf(p.w, "  %s\n", p.st.Paint(p.st.Dim, ui.Esc(why)))
}

func (p *textDumpPrinter) LogStart(scan.File) {}

// Batch and Record run once per batch and record: they append with
// strconv rather than fmt (fmt's reflection and boxing allocated per call
// and led the deep dump's profile), producing the same bytes.
func (p *textDumpPrinter) Batch(bv *scan.BatchView) {
	b := bv.Batch
	w := p.lineStart()
	var tmp [48]byte
	off := strconv.AppendInt(tmp[:0], b.BaseOffset, 10)
	if b.LastOffset() != b.BaseOffset {
		off = strconv.AppendInt(append(off, ".."...), b.LastOffset(), 10)
	}
	if b.IsLegacy() {
		w = append(w, "offset "...)
		w = p.st.AppendPaint(w, p.st.Offset, off)
		w = appendField(w, " position ", bv.Position)
		w = appendField(w, " size ", b.Size())
		w = appendField(w, " magic ", int64(b.Magic))
		w = append(append(w, ' '), b.Compression().String()...)
		if b.Magic == 1 {
			w = append(append(w, ' '), b.TimestampType().String()...)
			w = appendField(w, " ", b.MaxTimestamp)
		}
	} else {
		w = append(w, "baseOffset "...)
		w = p.st.AppendPaint(w, p.st.Offset, off)
		w = appendField(w, " count ", int64(b.RecordCount))
		w = appendField(w, " position ", bv.Position)
		w = appendField(w, " size ", b.Size())
		w = append(append(append(w, " magic 2 "...), b.Compression().String()...), ' ')
		w = append(w, b.TimestampType().String()...)
		w = appendField(w, " ", b.MaxTimestamp)
		if b.HasProducerID() || b.ProducerEpoch != -1 {
			w = append(w, " producerId "...)
			w = p.st.AppendPaint(w, p.st.Pid, strconv.AppendInt(tmp[:0], b.ProducerID, 10))
			w = appendField(w, " producerEpoch ", int64(b.ProducerEpoch))
		}
		if b.BaseSequence != decode.NoSequence {
			w = appendField(w, " sequence ", int64(b.BaseSequence))
			w = appendField(w, "..", int64(b.LastSequence()))
		}
		w = appendField(w, " partitionLeaderEpoch ", int64(b.PartitionLeaderEpoch))
		if b.IsTransactional() {
			w = append(w, " transactional"...)
		}
		if b.IsControl() {
			w = append(w, " control"...)
		}
		if dh, ok := b.DeleteHorizonMs(); ok {
			w = appendField(w, " deleteHorizonMs ", dh)
		}
		if b.RecordCount == 0 {
			w = append(w, " empty"...)
		}
	}
	w = appendField(w, " crc ", int64(b.CRC))
	if bv.CRCValid != nil {
		if *bv.CRCValid {
			w = p.st.AppendPaint(w, p.st.OK, []byte(" valid"))
		} else {
			w = p.st.AppendPaint(w, p.st.Err, []byte(" INVALID"))
		}
	}
	w = append(w, '\n')
	p.lineDone(w)
}

func (p *textDumpPrinter) Record(bv *scan.BatchView, rv *scan.RecordView) {
	b, r := bv.Batch, rv.Record
	w := p.lineStart()
	var tmp [24]byte
	w = append(w, "  | offset "...)
	w = p.st.AppendPaint(w, p.st.Offset, strconv.AppendInt(tmp[:0], r.Offset, 10))
	if b.Magic > 0 {
		w = append(append(w, ' '), b.TimestampType().String()...)
		w = appendField(w, " ", r.Timestamp)
	}
	if r.Sequence != decode.NoSequence {
		w = appendField(w, " sequence ", int64(r.Sequence))
	}
	if b.IsLegacy() && !r.CRCValid {
		w = p.st.AppendPaint(w, p.st.Err, []byte(" crc INVALID"))
	}
	if b.IsControl() {
		w = append(w, ' ')
		w = append(w, textControl(p.st, rv)...)
	} else {
		w = appendField(w, " keySize ", int64(r.KeySize()))
		w = appendField(w, " valueSize ", int64(r.ValueSize()))
		if len(r.Headers) > 0 {
			w = append(w, " headerKeys ["...)
			for i, h := range r.Headers {
				if i > 0 {
					w = append(w, ',')
				}
				w = ui.AppendEsc(w, h.Key)
			}
			w = append(w, ']')
		}
		if rv.Internal != nil {
			w = append(append(w, ' '), textInternal(p.st, rv)...)
		} else if rv.MM2Topic != "" {
			w = append(append(w, ' '), textMM2(p.st, rv)...)
		} else if p.o.PrintData {
			w = appendData(append(w, " key "...), r.Key, p.o.KeyFormat)
			w = appendData(append(w, " value "...), r.Value, p.o.ValueFormat)
		}
	}
	w = append(w, '\n')
	p.lineDone(w)
}

// textControl names a control record and its fields.
func textControl(st *ui.Styles, rv *scan.RecordView) string {
	if rv.Control == nil {
		msg := "control record (undecodable)"
		if rv.ControlErr != nil {
			msg += ": " + rv.ControlErr.Error()
		}
		return st.Paint(st.Err, msg)
	}
	c := rv.Control
	name := st.Paint(st.Title, c.Type.String())
	switch c.Type {
	case decode.ControlAbort, decode.ControlCommit:
		return fmt.Sprintf("%s coordinatorEpoch %d", name, c.CoordinatorEpoch)
	case decode.ControlMirrorPidReset:
		s := name + " (KIP-1279 barrier: producer state is cleared here)"
		if c.SourceClusterID != nil {
			s += " sourceClusterId " + *c.SourceClusterID
		}
		return s
	}
	if !c.Type.Known() {
		return fmt.Sprintf("%s(%d)", name, int16(c.Type))
	}
	return name + " " + c.KafkaJSON()
}

func (p *textDumpPrinter) EndBatch(*scan.BatchView) {}

func (p *textDumpPrinter) LogEnd(_ scan.File, s *scan.LogSummary) {
	if p.o.quiet {
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", p.st.Paint(p.st.Dim, "summary:"), logSummaryText(p.o, s, p.st))
}

func (p *textDumpPrinter) OffsetIndexEntry(_ scan.File, e segment.IndexEntry) {
	p.n++
	if !p.o.VerifyIndex {
		fmt.Fprintf(p.w, "offset %s position %d\n", p.st.Paint(p.st.Offset, fmt.Sprint(e.Offset)), e.Position)
	}
}

func (p *textDumpPrinter) TimeIndexEntry(_ scan.File, e segment.TimeIndexEntry) {
	p.n++
	if !p.o.VerifyIndex {
		fmt.Fprintf(p.w, "timestamp %d offset %s\n", e.Timestamp, p.st.Paint(p.st.Offset, fmt.Sprint(e.Offset)))
	}
}

func (p *textDumpPrinter) IndexNote(_ scan.File, note string) { fmt.Fprintf(p.w, "%s\n", note) }

func (p *textDumpPrinter) AbortedTxn(_ scan.File, e segment.AbortedTxn) {
	p.n++
	fmt.Fprintf(p.w, "abortedTxn producerId %s firstOffset %d lastOffset %d lastStableOffset %d version %d\n",
		p.st.Paint(p.st.Pid, fmt.Sprint(e.ProducerID)), e.FirstOffset, e.LastOffset, e.LastStableOffset, e.Version)
}

func (p *textDumpPrinter) SnapshotEntry(_ scan.File, e segment.SnapshotEntry) {
	p.n++
	line := fmt.Sprintf("producerId %s producerEpoch %d coordinatorEpoch %d lastTimestamp %d",
		p.st.Paint(p.st.Pid, fmt.Sprint(e.ProducerID)), e.ProducerEpoch, e.CoordinatorEpoch, e.Timestamp)
	if e.CurrentTxnFirstOffset >= 0 {
		line += fmt.Sprintf(" currentTxnFirstOffset %d", e.CurrentTxnFirstOffset)
	}
	if e.LastOffset >= 0 {
		line += fmt.Sprintf(" sequence %d..%d lastOffset %d offsetDelta %d",
			decode.DecrementSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta)
	} else {
		line += " (no batch metadata)"
	}
	fmt.Fprintln(p.w, line)
}

func (p *textDumpPrinter) LeaderEpoch(_ scan.File, e segment.EpochEntry) {
	p.n++
	fmt.Fprintf(p.w, "leaderEpoch %d startOffset %d\n", e.Epoch, e.StartOffset)
}

func (p *textDumpPrinter) OffsetCheckpoint(_ scan.File, e segment.OffsetCheckpointEntry) {
	p.n++
	fmt.Fprintf(p.w, "%s-%d %d\n", e.Topic, e.Partition, e.Offset)
}

func (p *textDumpPrinter) PartitionMetadata(_ scan.File, pm segment.PartitionMetadata) {
	fmt.Fprintf(p.w, "version %d topicId %s\n", pm.Version, pm.TopicIDString)
}

func (p *textDumpPrinter) TextLine(_ scan.File, line string) { fmt.Fprintln(p.w, ui.Esc(line)) }

func (p *textDumpPrinter) Finding(fd finding.Finding) {
	fmt.Fprintf(p.w, "%s %s %s\n", p.st.Severity(fd.Severity(), fd.Severity().Upper()), fd.Kind, ui.Esc(fd.Message))
}

func (p *textDumpPrinter) EndFile(f scan.File) {
	switch f.Info.Kind {
	case segment.KindIndex, segment.KindTimeIndex, segment.KindTxnIndex, segment.KindProducerSnapshot,
		segment.KindLeaderEpochCheckpoint, segment.KindRecoveryPointCheckpoint, segment.KindLogStartOffsetCheckpoint,
		segment.KindReplicationOffsetCheckpoint, segment.KindCleanerOffsetCheckpoint:
		if p.o.quiet {
			return
		}
		fmt.Fprintf(p.w, "%s %s\n", p.st.Paint(p.st.Dim, "summary:"), entriesSummary(p.o, f))
	}
}

func (p *textDumpPrinter) Close() error { return scan.ReleaseBuffer(&p.w) }

func (p *textDumpPrinter) Fork(sink *scan.Sink) scan.Printer {
	return &textDumpPrinter{o: p.o, w: sink, st: p.st, sink: sink}
}

// lineStart and lineDone bracket appending one line: to the printer's
// scratch buffer, written out at lineDone, or on a worker straight to the
// job's output, which saves copying every rendered byte once more.
func (p *textDumpPrinter) lineStart() []byte {
	if p.sink != nil {
		return p.sink.B.Out
	}
	return p.buf[:0]
}

func (p *textDumpPrinter) lineDone(w []byte) {
	if p.sink != nil {
		p.sink.B.Out = w
		return
	}
	p.w.Write(w)
	p.buf = w
}

func (p *textDumpPrinter) Emit(b *scan.BatchOut) { b.Emit(p.w, io.Discard) }
