package dump

import (
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
)

// jsonDumpPrinter writes JSON lines as documented in docs/json.md: one
// object per line, a "type" discriminator, Kafka's names as keys.
type jsonDumpPrinter struct {
	o *Options
	w scan.Writer
	j ui.JSONWriter // the open batch line (records are appended into it)
	l ui.JSONWriter // every other line; separate so a finding met mid-batch
	//         does not clobber the batch being built
	// inBatch: a batch line is open and its records array is being filled.
	inBatch    bool
	hasRecords bool
	entries    int64
	// file and fileJSON: the path of the batches being printed, and its
	// JSON encoding, made once per file rather than once per batch.
	file     string
	fileJSON []byte
	// sink is set on a worker's fork (see segment/scan/pipeline.go): the batch
	// line is then built in place at the end of the job's output, from
	// batchStart, instead of being copied there when done.
	sink       *scan.Sink
	batchStart int
}

func newJSONDumpPrinter(s *ui.Streams, o *Options) *jsonDumpPrinter {
	return &jsonDumpPrinter{o: o, w: scan.NewBuffer(s.Out)}
}

func (p *jsonDumpPrinter) line(fill func(j *ui.JSONWriter)) {
	p.l.B = p.l.B[:0]
	p.l.Begin()
	fill(&p.l)
	p.l.EndLine()
	if p.sink != nil && p.inBatch {
		// A finding made while the batch line is being built in place:
		// it goes before the line, as the serial printer writes it.
		p.j.B = slices.Insert(p.j.B, p.batchStart, p.l.B...)
		p.batchStart += len(p.l.B)
		return
	}
	p.w.Write(p.l.B)
}

// entry writes one entry of a file's: a line of type typ about f, which
// fill completes, counted among the file's entries.
func (p *jsonDumpPrinter) entry(typ string, f scan.File, fill func(j *ui.JSONWriter)) {
	p.entries++
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", typ)
		j.Str("file", f.Path)
		fill(j)
	})
}

// indexEntry is entry for an entry of an index, which --verify-index
// counts but does not print (it prints the index's verdict).
func (p *jsonDumpPrinter) indexEntry(typ string, f scan.File, fill func(j *ui.JSONWriter)) {
	if p.o.VerifyIndex {
		p.entries++
		return
	}
	p.entry(typ, f, fill)
}

func (p *jsonDumpPrinter) BeginFile(scan.File) { p.entries = 0 }

func (p *jsonDumpPrinter) Unknown(f scan.File, why string) {
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", "note")
		j.Str("file", f.Path)
		j.Str("message", why)
	})
}

func (p *jsonDumpPrinter) LogStart(scan.File) {}

func (p *jsonDumpPrinter) Batch(bv *scan.BatchView) {
	b := bv.Batch
	j := &p.j
	j.B = j.B[:0]
	if p.sink != nil {
		p.batchStart = len(p.sink.B.Out)
		j.B = p.sink.B.Out
	}
	if bv.File != p.file || p.fileJSON == nil {
		p.file, p.fileJSON = bv.File, ui.AppendJSONString(p.fileJSON[:0], bv.File)
	}
	j.B = appendBatchJSON(j.B, p.fileJSON, bv)
	j.First = false
	p.inBatch = true
	p.hasRecords = false
	if p.o.Deep || b.IsControl() {
		j.Key("records")
		j.B = append(j.B, '[')
		p.hasRecords = true
	}
	p.entries++
}

// appendBatchJSON appends a batch line up to its last header field
// (docs/json.md), its object left open: the hottest line of a batch-level
// dump, so each key is one constant append rather than jsonw's quoting of
// it, and numbers go through appendInt.
func appendBatchJSON(b []byte, fileJSON []byte, bv *scan.BatchView) []byte {
	bt := bv.Batch
	b = append(b, `{"type":"batch","file":`...)
	b = append(b, fileJSON...)
	b = append(b, `,"position":`...)
	b = ui.AppendInt(b, bv.Position)
	b = append(b, `,"baseOffset":`...)
	b = ui.AppendInt(b, bt.BaseOffset)
	b = append(b, `,"lastOffset":`...)
	b = ui.AppendInt(b, bt.LastOffset())
	b = append(b, `,"count":`...)
	if bt.IsLegacy() {
		b = append(b, "null"...)
	} else {
		b = ui.AppendInt(b, int64(bt.RecordCount))
	}
	b = append(b, `,"magic":`...)
	b = ui.AppendInt(b, int64(bt.Magic))
	b = append(b, `,"crc":`...)
	b = ui.AppendUint(b, uint64(bt.CRC))
	b = append(b, `,"crcValid":`...)
	switch {
	case bv.CRCValid == nil:
		b = append(b, "null"...)
	case *bv.CRCValid:
		b = append(b, "true"...)
	default:
		b = append(b, "false"...)
	}
	b = append(b, `,"compression":`...)
	b = append(b, quotedCodecs[bt.Compression()]...)
	b = append(b, `,"timestampType":`...)
	b = appendQuotedTimestampType(b, bt.TimestampType())
	b = append(b, `,"isTransactional":`...)
	b = strconv.AppendBool(b, bt.IsTransactional())
	b = append(b, `,"isControl":`...)
	b = strconv.AppendBool(b, bt.IsControl())
	b = append(b, `,"deleteHorizonMs":`...)
	if dh, ok := bt.DeleteHorizonMs(); ok {
		b = ui.AppendInt(b, dh)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"producerId":`...)
	b = ui.AppendInt(b, bt.ProducerID)
	b = append(b, `,"producerEpoch":`...)
	b = ui.AppendInt(b, int64(bt.ProducerEpoch))
	b = append(b, `,"baseSequence":`...)
	b = ui.AppendInt(b, int64(bt.BaseSequence))
	b = append(b, `,"lastSequence":`...)
	b = ui.AppendInt(b, int64(bt.LastSequence()))
	b = append(b, `,"partitionLeaderEpoch":`...)
	b = ui.AppendInt(b, int64(bt.PartitionLeaderEpoch))
	b = append(b, `,"baseTimestamp":`...)
	b = ui.AppendInt(b, bt.BaseTimestamp)
	b = append(b, `,"maxTimestamp":`...)
	b = ui.AppendInt(b, bt.MaxTimestamp)
	b = append(b, `,"size":`...)
	return ui.AppendInt(b, bt.Size())
}

// quotedCodecs and quotedTimestampTypes are the JSON strings of every
// codec (by attribute bits) and timestamp type, made once: the batch line
// needs two per batch.
var (
	quotedCodecs = func() (q [decode.AttrCompressionMask + 1]string) {
		for c := range q {
			q[c] = string(ui.AppendJSONString(nil, decode.Compression(c).String()))
		}
		return q
	}()
	quotedTimestampTypes = func() (q [3]string) {
		for t := range q {
			q[t] = string(ui.AppendJSONString(nil, decode.TimestampType(t-1).String()))
		}
		return q
	}()
)

func appendQuotedTimestampType(b []byte, t decode.TimestampType) []byte {
	if i := int(t) + 1; i >= 0 && i < len(quotedTimestampTypes) {
		return append(b, quotedTimestampTypes[i]...)
	}
	return ui.AppendJSONString(b, t.String())
}

func (p *jsonDumpPrinter) Record(bv *scan.BatchView, rv *scan.RecordView) {
	if !p.hasRecords {
		return
	}
	j := &p.j
	if j.B[len(j.B)-1] != '[' {
		j.B = append(j.B, ',')
	}
	r := rv.Record
	// Constant keys, as in appendBatchJSON: a deep dump writes a record
	// object per record.
	b := append(j.B, `{"offset":`...)
	b = ui.AppendInt(b, r.Offset)
	b = append(b, `,"timestamp":`...)
	b = ui.AppendInt(b, r.Timestamp)
	b = append(b, `,"sequence":`...)
	b = ui.AppendInt(b, int64(r.Sequence))
	b = append(b, `,"keySize":`...)
	b = ui.AppendInt(b, int64(r.KeySize()))
	b = append(b, `,"valueSize":`...)
	b = ui.AppendInt(b, int64(r.ValueSize()))
	if p.o.PrintData || bv.Batch.IsControl() {
		b = append(b, `,"key":`...)
		b = ui.AppendBase64OrNull(b, r.Key)
		b = append(b, `,"value":`...)
		b = ui.AppendBase64OrNull(b, r.Value)
	}
	b = append(b, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = ui.AppendJSONString(b, h.Key)
		if p.o.PrintData {
			b = append(b, `,"value":`...)
			b = ui.AppendBase64OrNull(b, h.Value)
		}
		b = append(b, '}')
	}
	j.B, j.First = append(b, ']'), false
	if bv.Batch.IsLegacy() {
		j.Bool("crcValid", r.CRCValid)
	}
	if bv.Batch.IsControl() {
		j.Key("control")
		j.B = appendControlJSON(j.B, rv)
	}
	if rv.Internal != nil {
		j.Key("decoded")
		writeInternalJSON(j, rv)
	}
	if rv.MM2Topic != "" {
		j.Key("decoded")
		writeMM2JSON(j, rv)
	}
	j.End()
}

// appendControlJSON renders a control record as
// {"type":"COMMIT","typeId":1,"version":0,...type fields}.
func appendControlJSON(b []byte, rv *scan.RecordView) []byte {
	var cj ui.JSONWriter
	cj.B = b
	cj.Begin()
	if rv.Control == nil {
		typeID := int64(-1)
		if rv.Record.Key != nil {
			if _, t, err := decode.ParseControlKey(rv.Record.Key); err == nil {
				typeID = int64(t)
			}
		}
		cj.Str("type", decode.ControlType(typeID).String())
		cj.Int("typeId", typeID)
		if rv.ControlErr != nil {
			cj.Str("error", rv.ControlErr.Error())
		}
		cj.End()
		return cj.B
	}
	c := rv.Control
	cj.Str("type", c.Type.String())
	cj.Int("typeId", int64(c.Type))
	cj.Int("keyVersion", int64(c.KeyVersion))
	switch c.Type {
	case decode.ControlAbort, decode.ControlCommit:
		cj.Int("version", int64(c.Version))
		cj.Int("coordinatorEpoch", int64(c.CoordinatorEpoch))
	case decode.ControlMirrorPidReset:
		cj.Int("version", int64(c.Version))
		if c.SourceClusterID != nil {
			cj.Str("sourceClusterId", *c.SourceClusterID)
		} else {
			cj.Null("sourceClusterId")
		}
	default:
		if body := c.KafkaJSON(); len(body) > 2 {
			// KafkaJSON is {"version":…,…}: splice its fields in.
			cj.B = append(cj.B, ',')
			cj.B = append(cj.B, body[1:len(body)-1]...)
		}
	}
	cj.End()
	return cj.B
}

func (p *jsonDumpPrinter) EndBatch(*scan.BatchView) {
	if !p.inBatch {
		return
	}
	j := &p.j
	if p.hasRecords {
		j.B = append(j.B, ']')
	}
	j.EndLine()
	p.inBatch = false
	if p.sink != nil {
		p.sink.B.Out, j.B = j.B, nil
		return
	}
	p.w.Write(j.B)
}

func (p *jsonDumpPrinter) LogEnd(f scan.File, s *scan.LogSummary) {
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", "summary")
		j.Str("file", f.Path)
		j.Str("kind", f.Info.Kind.String())
		j.Int("batches", s.Batches)
		if p.o.Filtered() {
			j.Int("selectedBatches", s.SelectedBatches)
			j.Int("selectedFirstOffset", s.SelFirst)
			j.Int("selectedLastOffset", s.SelLast)
		}
		j.Int("records", s.Records)
		j.Int("firstOffset", s.FirstOffset)
		j.Int("lastOffset", s.LastOffset)
		j.Int("crcErrors", s.CRCErrors)
		j.Int("validBytes", s.Tail.ValidBytes)
		j.Int("bytesScanned", s.BytesScanned)
		j.Str("tail", s.Tail.Kind.String())
		j.Int("invalidBytes", s.Tail.InvalidBytes())
		j.Key("codecs")
		j.Begin()
		for _, k := range sortedKeys(s.Codecs) {
			j.Int(k, s.Codecs[k])
		}
		j.End()
		j.Key("controlRecords")
		j.Begin()
		for _, k := range sortedKeys(s.ControlByType) {
			j.Int(k, s.ControlByType[k])
		}
		j.End()
	})
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (p *jsonDumpPrinter) OffsetIndexEntry(f scan.File, e segment.IndexEntry) {
	p.indexEntry("index", f, func(j *ui.JSONWriter) {
		j.Int("offset", e.Offset)
		j.Int("position", int64(e.Position))
	})
}

func (p *jsonDumpPrinter) TimeIndexEntry(f scan.File, e segment.TimeIndexEntry) {
	p.indexEntry("timeindex", f, func(j *ui.JSONWriter) {
		j.Int("timestamp", e.Timestamp)
		j.Int("offset", e.Offset)
	})
}

func (p *jsonDumpPrinter) IndexNote(f scan.File, note string) {
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", "note")
		j.Str("file", f.Path)
		j.Str("message", note)
	})
}

func (p *jsonDumpPrinter) AbortedTxn(f scan.File, e segment.AbortedTxn) {
	p.entry("abortedTxn", f, func(j *ui.JSONWriter) {
		j.Int("version", int64(e.Version))
		j.Int("producerId", e.ProducerID)
		j.Int("firstOffset", e.FirstOffset)
		j.Int("lastOffset", e.LastOffset)
		j.Int("lastStableOffset", e.LastStableOffset)
	})
}

func (p *jsonDumpPrinter) SnapshotEntry(f scan.File, e segment.SnapshotEntry) {
	p.entry("producerSnapshotEntry", f, func(j *ui.JSONWriter) {
		j.Int("producerId", e.ProducerID)
		j.Int("producerEpoch", int64(e.ProducerEpoch))
		j.Int("lastSequence", int64(e.LastSequence))
		j.Int("lastOffset", e.LastOffset)
		j.Int("offsetDelta", int64(e.OffsetDelta))
		j.Int("lastTimestamp", e.Timestamp)
		j.Int("coordinatorEpoch", int64(e.CoordinatorEpoch))
		j.OptInt("currentTxnFirstOffset", e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
	})
}

func (p *jsonDumpPrinter) LeaderEpoch(f scan.File, e segment.EpochEntry) {
	p.entry("leaderEpoch", f, func(j *ui.JSONWriter) {
		j.Int("epoch", int64(e.Epoch))
		j.Int("startOffset", e.StartOffset)
	})
}

func (p *jsonDumpPrinter) OffsetCheckpoint(f scan.File, e segment.OffsetCheckpointEntry) {
	p.entry("checkpoint", f, func(j *ui.JSONWriter) {
		j.Str("kind", f.Info.Kind.String())
		j.Str("topic", e.Topic)
		j.Int("partition", int64(e.Partition))
		j.Int("offset", e.Offset)
	})
}

func (p *jsonDumpPrinter) PartitionMetadata(f scan.File, pm segment.PartitionMetadata) {
	p.entry("partitionMetadata", f, func(j *ui.JSONWriter) {
		j.Int("version", int64(pm.Version))
		j.Str("topicId", pm.TopicIDString)
	})
}

func (p *jsonDumpPrinter) TextLine(f scan.File, line string) {
	p.entry("text", f, func(j *ui.JSONWriter) {
		j.Str("kind", f.Info.Kind.String())
		j.Str("line", line)
	})
}

func (p *jsonDumpPrinter) Finding(fd finding.Finding) {
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", "finding")
		j.Str("severity", fd.Severity().String())
		j.Str("kind", fd.Kind.String())
		j.Str("file", fd.File)
		j.OptInt("position", fd.Position, fd.Position >= 0)
		j.OptInt("baseOffset", fd.Offset, fd.Offset >= 0)
		if fd.To > 0 { // skipped-bytes: the range [position, to)
			j.Int("to", fd.To)
			j.Int("bytes", fd.To-fd.Position)
		}
		j.Str("message", fd.Message)
	})
}

func (p *jsonDumpPrinter) EndFile(f scan.File) {
	switch f.Info.Kind {
	case segment.KindLog, segment.KindMetadataSnapshot, segment.KindBootstrapCheckpoint, segment.KindUnknown:
		return // a .log has its own summary
	}
	entries, selected := p.entries, p.entries
	if scan.HasEntries(f.Info.Kind) {
		entries, selected = int64(f.Entries), int64(f.Selected)
	}
	p.line(func(j *ui.JSONWriter) {
		j.Str("type", "summary")
		j.Str("file", f.Path)
		j.Str("kind", f.Info.Kind.String())
		j.Int("entries", entries)
		if p.o.Filtered() {
			j.Int("selectedEntries", selected)
		}
	})
}

func (p *jsonDumpPrinter) Close() error { return scan.ReleaseBuffer(&p.w) }

// resetJob forgets, on a worker's fork, a batch line a failed job left
// open: the next job's output starts clean.
func (p *jsonDumpPrinter) ResetJob() {
	if p.sink != nil {
		p.inBatch, p.j.B = false, nil
	}
}

func (p *jsonDumpPrinter) Fork(sink *scan.Sink) scan.Printer {
	return &jsonDumpPrinter{o: p.o, w: sink, sink: sink}
}

func (p *jsonDumpPrinter) Emit(b *scan.BatchOut) { b.Emit(p.w, io.Discard) }
