package cmd

import (
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// jsonDumpPrinter writes JSON lines as documented in docs/json.md: one
// object per line, a "type" discriminator, Kafka's names as keys.
type jsonDumpPrinter struct {
	o *dumpOptions
	w outWriter
	j jsonw // the open batch line (records are appended into it)
	l jsonw // every other line; separate so a finding met mid-batch
	//         does not clobber the batch being built
	// inBatch: a batch line is open and its records array is being filled.
	inBatch    bool
	hasRecords bool
	entries    int64
	// file and fileJSON: the path of the batches being printed, and its
	// JSON encoding, made once per file rather than once per batch.
	file     string
	fileJSON []byte
	// sink is set on a worker's fork (see dump_pipeline.go): the batch
	// line is then built in place at the end of the job's output, from
	// batchStart, instead of being copied there when done.
	sink       *batchSink
	batchStart int
}

func newJSONDumpPrinter(s *Streams, o *dumpOptions) *jsonDumpPrinter {
	return &jsonDumpPrinter{o: o, w: newOutBuf(s.Out)}
}

func (p *jsonDumpPrinter) line(fill func(j *jsonw)) {
	p.l.b = p.l.b[:0]
	p.l.begin()
	fill(&p.l)
	p.l.end()
	p.l.b = append(p.l.b, '\n')
	if p.sink != nil && p.inBatch {
		// A finding made while the batch line is being built in place:
		// it goes before the line, as the serial printer writes it.
		p.j.b = slices.Insert(p.j.b, p.batchStart, p.l.b...)
		p.batchStart += len(p.l.b)
		return
	}
	p.w.Write(p.l.b)
}

func (p *jsonDumpPrinter) BeginFile(dumpFile) { p.entries = 0 }

func (p *jsonDumpPrinter) Unknown(f dumpFile, why string) {
	p.line(func(j *jsonw) {
		j.str("type", "note")
		j.str("file", f.path)
		j.str("message", why)
	})
}

func (p *jsonDumpPrinter) LogStart(dumpFile) {}

func (p *jsonDumpPrinter) Batch(bv *batchView) {
	b := bv.Batch
	j := &p.j
	j.b = j.b[:0]
	if p.sink != nil {
		p.batchStart = len(p.sink.b.out)
		j.b = p.sink.b.out
	}
	if bv.File != p.file || p.fileJSON == nil {
		p.file, p.fileJSON = bv.File, appendJSONString(p.fileJSON[:0], bv.File)
	}
	j.b = appendBatchJSON(j.b, p.fileJSON, bv)
	j.first = false
	p.inBatch = true
	p.hasRecords = false
	if p.o.deep || b.IsControl() {
		j.key("records")
		j.b = append(j.b, '[')
		p.hasRecords = true
	}
	p.entries++
}

// appendBatchJSON appends a batch line up to its last header field
// (docs/json.md), its object left open: the hottest line of a batch-level
// dump, so each key is one constant append rather than jsonw's quoting of
// it, and numbers go through appendInt.
func appendBatchJSON(b []byte, fileJSON []byte, bv *batchView) []byte {
	bt := bv.Batch
	b = append(b, `{"type":"batch","file":`...)
	b = append(b, fileJSON...)
	b = append(b, `,"position":`...)
	b = appendInt(b, bv.Position)
	b = append(b, `,"baseOffset":`...)
	b = appendInt(b, bt.BaseOffset)
	b = append(b, `,"lastOffset":`...)
	b = appendInt(b, bt.LastOffset())
	b = append(b, `,"count":`...)
	if bt.IsLegacy() {
		b = append(b, "null"...)
	} else {
		b = appendInt(b, int64(bt.RecordCount))
	}
	b = append(b, `,"magic":`...)
	b = appendInt(b, int64(bt.Magic))
	b = append(b, `,"crc":`...)
	b = appendUint(b, uint64(bt.CRC))
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
		b = appendInt(b, dh)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"producerId":`...)
	b = appendInt(b, bt.ProducerID)
	b = append(b, `,"producerEpoch":`...)
	b = appendInt(b, int64(bt.ProducerEpoch))
	b = append(b, `,"baseSequence":`...)
	b = appendInt(b, int64(bt.BaseSequence))
	b = append(b, `,"lastSequence":`...)
	b = appendInt(b, int64(bt.LastSequence()))
	b = append(b, `,"partitionLeaderEpoch":`...)
	b = appendInt(b, int64(bt.PartitionLeaderEpoch))
	b = append(b, `,"baseTimestamp":`...)
	b = appendInt(b, bt.BaseTimestamp)
	b = append(b, `,"maxTimestamp":`...)
	b = appendInt(b, bt.MaxTimestamp)
	b = append(b, `,"size":`...)
	return appendInt(b, bt.Size())
}

// quotedCodecs and quotedTimestampTypes are the JSON strings of every
// codec (by attribute bits) and timestamp type, made once: the batch line
// needs two per batch.
var (
	quotedCodecs = func() (q [decode.AttrCompressionMask + 1]string) {
		for c := range q {
			q[c] = string(appendJSONString(nil, decode.Compression(c).String()))
		}
		return q
	}()
	quotedTimestampTypes = func() (q [3]string) {
		for t := range q {
			q[t] = string(appendJSONString(nil, decode.TimestampType(t-1).String()))
		}
		return q
	}()
)

func appendQuotedTimestampType(b []byte, t decode.TimestampType) []byte {
	if i := int(t) + 1; i >= 0 && i < len(quotedTimestampTypes) {
		return append(b, quotedTimestampTypes[i]...)
	}
	return appendJSONString(b, t.String())
}

func (p *jsonDumpPrinter) Record(bv *batchView, rv *recordView) {
	if !p.hasRecords {
		return
	}
	j := &p.j
	if j.b[len(j.b)-1] != '[' {
		j.b = append(j.b, ',')
	}
	r := rv.Record
	// Constant keys, as in appendBatchJSON: a deep dump writes a record
	// object per record.
	b := append(j.b, `{"offset":`...)
	b = appendInt(b, r.Offset)
	b = append(b, `,"timestamp":`...)
	b = appendInt(b, r.Timestamp)
	b = append(b, `,"sequence":`...)
	b = appendInt(b, int64(r.Sequence))
	b = append(b, `,"keySize":`...)
	b = appendInt(b, int64(r.KeySize()))
	b = append(b, `,"valueSize":`...)
	b = appendInt(b, int64(r.ValueSize()))
	if p.o.printData || bv.Batch.IsControl() {
		b = append(b, `,"key":`...)
		b = appendBase64OrNull(b, r.Key)
		b = append(b, `,"value":`...)
		b = appendBase64OrNull(b, r.Value)
	}
	b = append(b, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendJSONString(b, h.Key)
		if p.o.printData {
			b = append(b, `,"value":`...)
			b = appendBase64OrNull(b, h.Value)
		}
		b = append(b, '}')
	}
	j.b, j.first = append(b, ']'), false
	if bv.Batch.IsLegacy() {
		j.bool("crcValid", r.CRCValid)
	}
	if bv.Batch.IsControl() {
		j.key("control")
		j.b = appendControlJSON(j.b, rv)
	}
	if rv.Internal != nil {
		j.key("decoded")
		j.b = appendInternalJSON(j.b, rv)
	}
	if rv.MM2Topic != "" {
		j.key("decoded")
		j.b = appendMM2JSON(j.b, rv)
	}
	j.end()
}

// appendControlJSON renders a control record as
// {"type":"COMMIT","typeId":1,"version":0,...type fields}.
func appendControlJSON(b []byte, rv *recordView) []byte {
	var cj jsonw
	cj.b = b
	cj.begin()
	if rv.Control == nil {
		typeID := int64(-1)
		if rv.Record.Key != nil {
			if _, t, err := decode.ParseControlKey(rv.Record.Key); err == nil {
				typeID = int64(t)
			}
		}
		cj.str("type", decode.ControlType(typeID).String())
		cj.int("typeId", typeID)
		if rv.ControlErr != nil {
			cj.str("error", rv.ControlErr.Error())
		}
		cj.end()
		return cj.b
	}
	c := rv.Control
	cj.str("type", c.Type.String())
	cj.int("typeId", int64(c.Type))
	cj.int("keyVersion", int64(c.KeyVersion))
	switch c.Type {
	case decode.ControlAbort, decode.ControlCommit:
		cj.int("version", int64(c.Version))
		cj.int("coordinatorEpoch", int64(c.CoordinatorEpoch))
	case decode.ControlMirrorPidReset:
		cj.int("version", int64(c.Version))
		if c.SourceClusterID != nil {
			cj.str("sourceClusterId", *c.SourceClusterID)
		} else {
			cj.null("sourceClusterId")
		}
	default:
		if body := c.KafkaJSON(); len(body) > 2 {
			// KafkaJSON is {"version":…,…}: splice its fields in.
			cj.b = append(cj.b, ',')
			cj.b = append(cj.b, body[1:len(body)-1]...)
		}
	}
	cj.end()
	return cj.b
}

func (p *jsonDumpPrinter) EndBatch(*batchView) {
	if !p.inBatch {
		return
	}
	j := &p.j
	if p.hasRecords {
		j.b = append(j.b, ']')
	}
	j.end()
	j.b = append(j.b, '\n')
	p.inBatch = false
	if p.sink != nil {
		p.sink.b.out, j.b = j.b, nil
		return
	}
	p.w.Write(j.b)
}

func (p *jsonDumpPrinter) LogEnd(f dumpFile, s *logSummary) {
	p.line(func(j *jsonw) {
		j.str("type", "summary")
		j.str("file", f.path)
		j.str("kind", f.info.Kind.String())
		j.int("batches", s.Batches)
		j.int("records", s.Records)
		j.int("firstOffset", s.FirstOffset)
		j.int("lastOffset", s.LastOffset)
		j.int("crcErrors", s.CRCErrors)
		j.int("validBytes", s.Tail.ValidBytes)
		j.int("bytesScanned", s.BytesScanned)
		j.str("tail", s.Tail.Kind.String())
		j.int("invalidBytes", s.Tail.InvalidBytes())
		j.key("codecs")
		j.begin()
		for _, k := range sortedKeys(s.Codecs) {
			j.int(k, s.Codecs[k])
		}
		j.end()
		j.key("controlRecords")
		j.begin()
		for _, k := range sortedKeys(s.ControlByType) {
			j.int(k, s.ControlByType[k])
		}
		j.end()
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

func (p *jsonDumpPrinter) OffsetIndexEntry(f dumpFile, e segment.IndexEntry) {
	p.entries++
	if p.o.verifyIndex {
		return
	}
	p.line(func(j *jsonw) {
		j.str("type", "index")
		j.str("file", f.path)
		j.int("offset", e.Offset)
		j.int("position", int64(e.Position))
	})
}

func (p *jsonDumpPrinter) TimeIndexEntry(f dumpFile, e segment.TimeIndexEntry) {
	p.entries++
	if p.o.verifyIndex {
		return
	}
	p.line(func(j *jsonw) {
		j.str("type", "timeindex")
		j.str("file", f.path)
		j.int("timestamp", e.Timestamp)
		j.int("offset", e.Offset)
	})
}

func (p *jsonDumpPrinter) IndexNote(f dumpFile, note string) {
	p.line(func(j *jsonw) {
		j.str("type", "note")
		j.str("file", f.path)
		j.str("message", note)
	})
}

func (p *jsonDumpPrinter) AbortedTxn(f dumpFile, e segment.AbortedTxn) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "abortedTxn")
		j.str("file", f.path)
		j.int("version", int64(e.Version))
		j.int("producerId", e.ProducerID)
		j.int("firstOffset", e.FirstOffset)
		j.int("lastOffset", e.LastOffset)
		j.int("lastStableOffset", e.LastStableOffset)
	})
}

func (p *jsonDumpPrinter) SnapshotEntry(f dumpFile, e segment.SnapshotEntry) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "producerSnapshotEntry")
		j.str("file", f.path)
		j.int("producerId", e.ProducerID)
		j.int("producerEpoch", int64(e.ProducerEpoch))
		j.int("lastSequence", int64(e.LastSequence))
		j.int("lastOffset", e.LastOffset)
		j.int("offsetDelta", int64(e.OffsetDelta))
		j.int("lastTimestamp", e.Timestamp)
		j.int("coordinatorEpoch", int64(e.CoordinatorEpoch))
		j.optInt("currentTxnFirstOffset", e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
	})
}

func (p *jsonDumpPrinter) LeaderEpoch(f dumpFile, e segment.EpochEntry) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "leaderEpoch")
		j.str("file", f.path)
		j.int("epoch", int64(e.Epoch))
		j.int("startOffset", e.StartOffset)
	})
}

func (p *jsonDumpPrinter) OffsetCheckpoint(f dumpFile, e segment.OffsetCheckpointEntry) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "checkpoint")
		j.str("file", f.path)
		j.str("kind", f.info.Kind.String())
		j.str("topic", e.Topic)
		j.int("partition", int64(e.Partition))
		j.int("offset", e.Offset)
	})
}

func (p *jsonDumpPrinter) PartitionMetadata(f dumpFile, pm segment.PartitionMetadata) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "partitionMetadata")
		j.str("file", f.path)
		j.int("version", int64(pm.Version))
		j.str("topicId", pm.TopicIDString)
	})
}

func (p *jsonDumpPrinter) TextLine(f dumpFile, line string) {
	p.entries++
	p.line(func(j *jsonw) {
		j.str("type", "text")
		j.str("file", f.path)
		j.str("kind", f.info.Kind.String())
		j.str("line", line)
	})
}

func (p *jsonDumpPrinter) Finding(fd finding.Finding) {
	p.line(func(j *jsonw) {
		j.str("type", "finding")
		j.str("severity", fd.Severity().String())
		j.str("kind", fd.Kind.String())
		j.str("file", fd.File)
		j.optInt("position", fd.Position, fd.Position >= 0)
		j.optInt("baseOffset", fd.Offset, fd.Offset >= 0)
		if fd.To > 0 { // skipped-bytes: the range [position, to)
			j.int("to", fd.To)
			j.int("bytes", fd.To-fd.Position)
		}
		j.str("message", fd.Message)
	})
}

func (p *jsonDumpPrinter) EndFile(f dumpFile) {
	switch f.info.Kind {
	case segment.KindLog, segment.KindMetadataSnapshot, segment.KindBootstrapCheckpoint, segment.KindUnknown:
		return // a .log has its own summary
	}
	p.line(func(j *jsonw) {
		j.str("type", "summary")
		j.str("file", f.path)
		j.str("kind", f.info.Kind.String())
		j.int("entries", p.entries)
	})
}

func (p *jsonDumpPrinter) Close() error { return releaseOutBuf(&p.w) }

// resetJob forgets, on a worker's fork, a batch line a failed job left
// open: the next job's output starts clean.
func (p *jsonDumpPrinter) resetJob() {
	if p.sink != nil {
		p.inBatch, p.j.b = false, nil
	}
}

func (p *jsonDumpPrinter) fork(sink *batchSink) dumpPrinter {
	return &jsonDumpPrinter{o: p.o, w: sink, sink: sink}
}

func (p *jsonDumpPrinter) emit(b *batchOut) { b.emit(p.w, io.Discard) }
