package dumplog

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
)

// Printer reproduces kafka-dump-log's output line for line: the
// Java port of DumpLogSegments (KAFKA-14579), which formats.md §9 describes.
// Findings that kafka-dump-log would not print go to stderr, so stdout stays
// diffable against the real tool.
type Printer struct {
	errw io.Writer
	o    *Options
	w    scan.Writer
	buf  []byte
	// sink is set on a worker's fork (Fork).
	sink *scan.Sink
	// gaps are the current batch's record offsets; committed to
	// nonConsecutive in file order (commitGaps).
	gaps scan.OffsetGaps
	// lastRecordOffset implements the Java port's non-consecutive check
	// (lastOffset starts at -1 and every record is checked).
	lastRecordOffset int64
	nonConsecutive   map[string][][2]int64
	nonConsOrder     []string
	curFile          string
	indexReport      indexReport // index.go
	// hold: the current batch is compressed and its record lines wait
	// for the whole batch to decode, since Kafka prints none of them when
	// one fails (RecordsFailed). held collects them on the run's
	// goroutine; a worker's sink keeps them from holdOut/holdErrs on.
	hold              bool
	held              []byte
	holdOut, holdErrs int
}

// NewPrinter is a printer writing kafka-dump-log's stdout to out and its
// stderr to errw.
func NewPrinter(out, errw io.Writer, o *Options) *Printer {
	return &Printer{errw: errw, o: o, w: scan.NewBuffer(out), nonConsecutive: map[string][][2]int64{}}
}

// BeginFile: DumpLogSegments prints "Dumping <file>" for every file it is
// given, before it looks at the name.
func (p *Printer) BeginFile(f scan.File) {
	p.curFile = f.Path
	fmt.Fprintf(p.w, "Dumping %s\n", f.Path)
}

// Unknown: DumpLogSegments prints "Ignoring unknown file" for any suffix
// it does not handle (leader-epoch-checkpoint, partition.metadata, …;
// kafkaDumped).
func (p *Printer) Unknown(f scan.File, _ string) {
	p.w.Flush()
	fmt.Fprintf(p.errw, "Ignoring unknown file %s\n", f.Path)
}

func (p *Printer) LogStart(f scan.File) {
	p.lastRecordOffset = -1
	switch f.Info.Kind {
	case segment.KindBootstrapCheckpoint:
		p.w.WriteString("KRaft bootstrap snapshot\n")
	case segment.KindMetadataSnapshot:
		fmt.Fprintf(p.w, "Snapshot end offset: %d, epoch: %d\n", f.Info.Offset, f.Info.Epoch)
	default:
		fmt.Fprintf(p.w, "Log starting offset: %d\n", f.Info.Offset)
	}
}

func optionalLong(v int64, ok bool) string {
	if !ok {
		return "OptionalLong.empty"
	}
	return "OptionalLong[" + strconv.FormatInt(v, 10) + "]"
}

func (p *Printer) Batch(bv *scan.BatchView) {
	b := bv.Batch
	valid := true
	if bv.CRCValid != nil {
		valid = *bv.CRCValid
	}
	if p.sink == nil {
		p.gaps.Reset()
	}
	// The line of DumpLogSegments, appended with strconv (fmt allocated
	// per batch and record).
	w := p.lineStart()
	if b.IsLegacy() {
		w = appendField(w, "offset: ", b.LastOffset())
	} else {
		dh, ok := b.DeleteHorizonMs()
		w = appendField(w, "baseOffset: ", b.BaseOffset)
		w = appendField(w, " lastOffset: ", b.LastOffset())
		w = appendField(w, " count: ", int64(b.RecordCount))
		w = appendField(w, " baseSequence: ", int64(b.BaseSequence))
		w = appendField(w, " lastSequence: ", int64(b.LastSequence()))
		w = appendField(w, " producerId: ", b.ProducerID)
		w = appendField(w, " producerEpoch: ", int64(b.ProducerEpoch))
		w = appendField(w, " partitionLeaderEpoch: ", int64(b.PartitionLeaderEpoch))
		w = strconv.AppendBool(append(w, " isTransactional: "...), b.IsTransactional())
		w = strconv.AppendBool(append(w, " isControl: "...), b.IsControl())
		w = append(append(w, " deleteHorizonMs: "...), optionalLong(dh, ok)...)
	}
	w = appendField(w, " position: ", bv.Position)
	w = append(append(append(w, ' '), b.TimestampType().String()...), ':')
	w = appendField(w, " ", b.MaxTimestamp)
	w = appendField(w, " size: ", b.Size())
	w = appendField(w, " magic: ", int64(b.Magic))
	w = append(append(w, " compresscodec: "...), b.Compression().String()...)
	w = appendField(w, " crc: ", int64(b.CRC))
	w = strconv.AppendBool(append(w, " isvalid: "...), valid)
	w = append(w, '\n')
	p.hold = false
	p.lineDone(w)
	if p.o.Deep && b.Compression() != decode.CompressionNone {
		p.hold = true
		if p.sink != nil {
			p.holdOut, p.holdErrs = len(p.sink.B.Out), len(p.sink.B.Errs)
		} else {
			p.held = p.held[:0]
		}
	}
}

// Record prints a record line, but only under deep iteration: dump decodes
// control batches always, kafka-dump-log only with --deep-iteration.
func (p *Printer) Record(bv *scan.BatchView, rv *scan.RecordView) {
	if !p.o.Deep {
		return
	}
	b, r := bv.Batch, rv.Record
	// Java port: lastOffset starts at -1 and every record is checked, so a
	// segment whose first offset is not 0 reports "-1 is followed by …".
	// kseg's filters hide records, and the check would report the gaps they
	// make, so it runs only on unfiltered dumps.
	g := &p.gaps
	if p.sink != nil {
		g = &p.sink.B.Gaps // a worker's: committed when its job is emitted
	}
	g.Add(r.Offset, !p.o.Filtered)
	w := p.lineStart()
	first := true
	sep := func() {
		if first {
			w = append(w, "| "...)
			first = false
		} else {
			w = append(w, ' ')
		}
	}
	if !p.o.SkipRecordMetadata {
		w = appendField(w, "| offset: ", r.Offset)
		w = append(append(append(w, ' '), b.TimestampType().String()...), ':')
		w = appendField(w, " ", r.Timestamp)
		w = appendField(w, " keySize: ", int64(r.KeySize()))
		w = appendField(w, " valueSize: ", int64(r.ValueSize()))
		first = false
		if !b.IsLegacy() {
			w = appendField(w, " sequence: ", int64(r.Sequence))
			w = append(w, " headerKeys: ["...)
			// Header.key() is a String decoded from the record's bytes
			// as UTF-8 (DefaultRecord.readHeaders: Utils.utf8), malformed
			// input becoming U+FFFD as for keys and values.
			for i, h := range r.Headers {
				if i > 0 {
					w = append(w, ',')
				}
				w = decode.AppendJavaUTF8(w, h.Key)
			}
			w = append(w, ']')
		} else {
			w = strconv.AppendBool(append(w, " isValid: "...), r.CRCValid)
			w = appendField(w, " crc: ", int64(r.CRC))
		}
		if b.IsControl() {
			w = append(w, controlSuffix(rv)...)
		}
	}
	if p.o.PrintData && !b.IsControl() {
		if rv.Internal == nil && p.o.KeyDecoder == StringDecoder && p.o.ValueDecoder == StringDecoder {
			if r.Key != nil {
				sep()
				w = decode.AppendJavaUTF8(append(w, "key: "...), r.Key)
			}
			if r.Value != nil {
				sep()
				w = decode.AppendJavaUTF8(append(w, "payload: "...), r.Value)
			}
		} else {
			// A decoder flag or class: decoders.go.
			key, payload := Contents(p.o, rv)
			if key != nil {
				sep()
				w = append(append(w, "key: "...), key...)
			}
			if payload != nil {
				sep()
				w = append(append(w, "payload: "...), payload...)
			}
		}
	}
	w = append(w, '\n')
	p.lineDone(w)
}

// controlSuffix is printControlRecord of the Java port of Kafka 4.3.
func controlSuffix(rv *scan.RecordView) string {
	if rv.Control == nil {
		if rv.Record.Key != nil {
			if _, t, err := decode.ParseControlKey(rv.Record.Key); err == nil {
				return fmt.Sprintf(" controlType: %s(%d)", t, int16(t))
			}
		}
		return " controlType: UNKNOWN(-1)"
	}
	c := rv.Control
	switch c.Type {
	case decode.ControlAbort, decode.ControlCommit:
		return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %d", c.Type, c.CoordinatorEpoch)
	case decode.ControlLeaderChange:
		return " LeaderChange: " + c.KafkaJSON()
	case decode.ControlSnapshotHeader:
		return " SnapshotHeader " + c.KafkaJSON()
	case decode.ControlSnapshotFooter:
		return " SnapshotFooter " + c.KafkaJSON()
	case decode.ControlKRaftVersion:
		return " KRaftVersion " + c.KafkaJSON()
	case decode.ControlKRaftVoters:
		return " KRaftVoters " + c.KafkaJSON()
	case decode.ControlMirrorPidReset:
		// Upstream Kafka has no type 7: ControlRecordType.fromTypeId
		// gives UNKNOWN and the tool prints the fallback with the parsed
		// id (barrier.md §4.7). The KIP-1279 fork's " MirrorPidReset {json}"
		// is not in any release; text and json name the barrier.
		return " controlType: UNKNOWN(7)"
	}
	return fmt.Sprintf(" controlType: %s(%d)", c.Type, int16(c.Type))
}

func (p *Printer) EndBatch(*scan.BatchView) {
	if p.hold && p.sink == nil {
		p.w.Write(p.held)
	}
	p.hold = false
	if p.sink == nil {
		p.commitGaps(&p.gaps)
	}
}

// commitGaps adds one batch's non-consecutive offsets, in file order.
func (p *Printer) commitGaps(g *scan.OffsetGaps) {
	if !g.Seen {
		return
	}
	keep := !p.o.Filtered
	if keep && g.First != p.lastRecordOffset+1 {
		p.addGap(p.lastRecordOffset, g.First)
	}
	for _, pr := range g.Pairs {
		p.addGap(pr[0], pr[1])
	}
	p.lastRecordOffset = g.Last
}

func (p *Printer) addGap(from, to int64) {
	if _, ok := p.nonConsecutive[p.curFile]; !ok {
		p.nonConsOrder = append(p.nonConsOrder, p.curFile)
	}
	p.nonConsecutive[p.curFile] = append(p.nonConsecutive[p.curFile], [2]int64{from, to})
}

// CloseUnit is Close without the run-wide reports, which another printer
// absorbs (a unit of a parallel log-directory dump: scan.Units).
func (p *Printer) CloseUnit() error { return scan.ReleaseBuffer(&p.w) }

// Absorb takes over the run-wide reports of another printer, which
// printed the files after this one's.
func (p *Printer) Absorb(other scan.Printer) {
	q := other.(*Printer)
	p.indexReport.absorb(&q.indexReport)
	for _, f := range q.nonConsOrder {
		if _, ok := p.nonConsecutive[f]; !ok {
			p.nonConsOrder = append(p.nonConsOrder, f)
		}
		p.nonConsecutive[f] = append(p.nonConsecutive[f], q.nonConsecutive[f]...)
	}
}

// lineStart and lineDone: see textDumpPrinter.lineStart.
func (p *Printer) lineStart() []byte {
	switch {
	case p.sink != nil:
		return p.sink.B.Out
	case p.hold:
		return p.held
	}
	return p.buf[:0]
}

func (p *Printer) lineDone(w []byte) {
	switch {
	case p.sink != nil:
		p.sink.B.Out = w
	case p.hold:
		p.held = w
	default:
		p.w.Write(w)
		p.buf = w
	}
}

// Fork is a printer for one worker of the engine's pipeline, writing to
// sink.
func (p *Printer) Fork(sink *scan.Sink) scan.Printer {
	return &Printer{errw: sink.Stderr(), o: p.o, w: sink, sink: sink}
}

// Emit writes what a fork rendered for one job, in file order.
func (p *Printer) Emit(b *scan.BatchOut) {
	b.Emit(p.w, p.errw)
	p.commitGaps(&b.Gaps)
}

func (p *Printer) LogEnd(f scan.File, s *scan.LogSummary) {
	if n := s.Tail.InvalidBytes(); n > 0 && !s.MaxBytesLimitApplied && s.Tail.Kind != segment.TailCorrupt {
		fmt.Fprintf(p.w, "Found %d invalid bytes at the end of %s\n", n, filepath.Base(f.Path))
	}
}

func (p *Printer) OffsetIndexEntry(_ scan.File, e segment.IndexEntry) {
	if p.o.VerifyIndex {
		return
	}
	fmt.Fprintf(p.w, "offset: %d position: %d\n", e.Offset, e.Position)
}

func (p *Printer) TimeIndexEntry(_ scan.File, e segment.TimeIndexEntry) {
	if p.o.VerifyIndex {
		return
	}
	fmt.Fprintf(p.w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
}

// IndexNote prints Kafka's notes ("is empty.", "passed sanity check.");
// kseg's "verified against …" has no kafka-dump-log counterpart (Kafka
// prints nothing when every entry matches).
func (p *Printer) IndexNote(f scan.File, note string) {
	if strings.HasPrefix(note, "verified against ") {
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", f.Path, note)
}

// AbortedTxn: AbortedTxn.version() reads only the high byte of the
// stored int16 (buffer.get(0)), and that is what kafka-dump-log prints.
func (p *Printer) AbortedTxn(_ scan.File, e segment.AbortedTxn) {
	fmt.Fprintf(p.w, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
		e.KafkaVersion(), e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
}

// SnapshotEntry is dumpProducerIdSnapshot of the Java port (no trailing
// space when the entry has no batch metadata).
func (p *Printer) SnapshotEntry(_ scan.File, e segment.SnapshotEntry) {
	fmt.Fprintf(p.w, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d",
		e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch, optionalLong(e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0), e.Timestamp)
	if e.LastOffset >= 0 {
		fmt.Fprintf(p.w, " firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
			decode.DecrementSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
	}
	p.w.WriteByte('\n')
}

func (p *Printer) LeaderEpoch(scan.File, segment.EpochEntry)                 {}
func (p *Printer) OffsetCheckpoint(scan.File, segment.OffsetCheckpointEntry) {}
func (p *Printer) PartitionMetadata(scan.File, segment.PartitionMetadata)    {}
func (p *Printer) TextLine(scan.File, string)                                {}

// Finding: kafka-dump-log reports index mismatches in its end-of-run
// summary on stderr; kseg adds its other findings there too, keeping stdout
// identical to the Java tool's.
func (p *Printer) Finding(fd finding.Finding) {
	switch fd.Kind {
	case finding.CRCMismatch, finding.ZeroTail, finding.TornTail:
		// already visible as isvalid: false / "Found N invalid bytes".
		return
	case finding.IndexMismatch, finding.TimeIndexMismatch:
		p.indexReport.other = append(p.indexReport.other, fd.Message)
		return
	}
	p.w.Flush()
	fmt.Fprintf(p.errw, "%s\n", fd.Message)
}

// IndexProblem: kafka-dump-log's end-of-run summary groups index
// mismatches by the check that failed.
func (p *Printer) IndexProblem(fd finding.Finding, pr *segment.IndexProblem) {
	p.indexReport.add(pr, fd.Message)
}

func (p *Printer) EndFile(scan.File) {}

func (p *Printer) Close() error {
	if err := scan.ReleaseBuffer(&p.w); err != nil {
		return err
	}
	p.indexReport.print(p.errw)
	for _, f := range p.nonConsOrder {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		fmt.Fprintf(p.errw, "Non-consecutive offsets in %s\n", abs)
		for _, pr := range p.nonConsecutive[f] {
			fmt.Fprintf(p.errw, "  %d is followed by %d\n", pr[0], pr[1])
		}
	}
	return nil
}

// appendField appends label then v in decimal.
func appendField(dst []byte, label string, v int64) []byte {
	return strconv.AppendInt(append(dst, label...), v, 10)
}
