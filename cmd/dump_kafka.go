package cmd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// kafkaDumpPrinter reproduces kafka-dump-log's output line for line: the
// Java port of DumpLogSegments (KAFKA-14579), which formats.md §9 describes.
// Findings that kafka-dump-log would not print go to stderr, so stdout stays
// diffable against the real tool.
type kafkaDumpPrinter struct {
	s   *Streams
	o   *dumpOptions
	w   *bufio.Writer
	buf []byte
	// lastRecordOffset implements the Java port's non-consecutive check
	// (lastOffset starts at -1 and every record is checked).
	lastRecordOffset int64
	nonConsecutive   map[string][][2]int64
	nonConsOrder     []string
	curFile          string
	indexMismatches  []string
}

func newKafkaDumpPrinter(s *Streams, o *dumpOptions) *kafkaDumpPrinter {
	return &kafkaDumpPrinter{s: s, o: o, w: bufio.NewWriterSize(s.Out, 256<<10), nonConsecutive: map[string][][2]int64{}}
}

func (p *kafkaDumpPrinter) BeginFile(f dumpFile) {
	p.curFile = f.path
	switch f.info.Kind {
	case segment.KindLog, segment.KindMetadataSnapshot, segment.KindBootstrapCheckpoint, segment.KindIndex,
		segment.KindTimeIndex, segment.KindTxnIndex, segment.KindProducerSnapshot:
		if !f.info.Transient() {
			fmt.Fprintf(p.w, "Dumping %s\n", f.path)
		}
	}
}

// Unknown: DumpLogSegments prints "Ignoring unknown file" for any suffix
// it does not handle (leader-epoch-checkpoint, partition.metadata, …).
func (p *kafkaDumpPrinter) Unknown(f dumpFile, _ string) {
	p.w.Flush()
	fmt.Fprintf(p.s.Err, "Ignoring unknown file %s\n", f.path)
}

func (p *kafkaDumpPrinter) LogStart(f dumpFile) {
	p.lastRecordOffset = -1
	switch f.info.Kind {
	case segment.KindBootstrapCheckpoint:
		p.w.WriteString("KRaft bootstrap snapshot\n")
	case segment.KindMetadataSnapshot:
		fmt.Fprintf(p.w, "Snapshot end offset: %d, epoch: %d\n", f.info.Offset, f.info.Epoch)
	default:
		fmt.Fprintf(p.w, "Log starting offset: %d\n", f.info.Offset)
	}
}

func optionalLong(v int64, ok bool) string {
	if !ok {
		return "OptionalLong.empty"
	}
	return "OptionalLong[" + strconv.FormatInt(v, 10) + "]"
}

func (p *kafkaDumpPrinter) Batch(bv *batchView) {
	b := bv.Batch
	valid := true
	if bv.CRCValid != nil {
		valid = *bv.CRCValid
	}
	w := p.buf[:0]
	if b.IsLegacy() {
		w = fmt.Appendf(w, "offset: %d position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
			b.LastOffset(), bv.Position, b.TimestampType(), b.MaxTimestamp, b.Size(), b.Magic, b.Compression(), b.CRC, valid)
	} else {
		dh, ok := b.DeleteHorizonMs()
		w = fmt.Appendf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
			b.BaseOffset, b.LastOffset(), b.RecordCount, b.BaseSequence, b.LastSequence(), b.ProducerID, b.ProducerEpoch,
			b.PartitionLeaderEpoch, b.IsTransactional(), b.IsControl(), optionalLong(dh, ok), bv.Position,
			b.TimestampType(), b.MaxTimestamp, b.Size(), b.Magic, b.Compression(), b.CRC, valid)
	}
	p.w.Write(w)
	p.buf = w
}

// Record prints a record line, but only under deep iteration: dump decodes
// control batches always, kafka-dump-log only with --deep-iteration.
func (p *kafkaDumpPrinter) Record(bv *batchView, rv *recordView) {
	if !p.o.deep {
		return
	}
	b, r := bv.Batch, rv.Record
	// Java port: lastOffset starts at -1 and every record is checked, so a
	// segment whose first offset is not 0 reports "-1 is followed by …".
	// kseg's filters hide records, and the check would report the gaps they
	// make, so it runs only on unfiltered dumps.
	if r.Offset != p.lastRecordOffset+1 && !p.o.filtered() {
		if _, ok := p.nonConsecutive[p.curFile]; !ok {
			p.nonConsOrder = append(p.nonConsOrder, p.curFile)
		}
		p.nonConsecutive[p.curFile] = append(p.nonConsecutive[p.curFile], [2]int64{p.lastRecordOffset, r.Offset})
	}
	p.lastRecordOffset = r.Offset
	w := p.buf[:0]
	first := true
	sep := func() {
		if first {
			w = append(w, "| "...)
			first = false
		} else {
			w = append(w, ' ')
		}
	}
	if !p.o.skipRecordMeta {
		w = fmt.Appendf(w, "| offset: %d %s: %d keySize: %d valueSize: %d", r.Offset, b.TimestampType(), r.Timestamp, r.KeySize(), r.ValueSize())
		first = false
		if !b.IsLegacy() {
			w = fmt.Appendf(w, " sequence: %d headerKeys: [", r.Sequence)
			for i, h := range r.Headers {
				if i > 0 {
					w = append(w, ',')
				}
				w = append(w, h.Key...)
			}
			w = append(w, ']')
		} else {
			w = fmt.Appendf(w, " isValid: %t crc: %d", r.CRCValid, r.CRC)
		}
		if b.IsControl() {
			w = append(w, kafkaControlSuffix(rv)...)
		}
	}
	if p.o.printData && !b.IsControl() {
		if r.Key != nil {
			sep()
			w = append(w, "key: "...)
			w = append(w, strings.ToValidUTF8(string(r.Key), "\uFFFD")...)
		}
		if r.Value != nil {
			sep()
			w = append(w, "payload: "...)
			w = append(w, strings.ToValidUTF8(string(r.Value), "\uFFFD")...)
		}
	}
	w = append(w, '\n')
	p.w.Write(w)
	p.buf = w
}

// kafkaControlSuffix is printControlRecord of the Java port, with the
// KIP-1279 fork's MirrorPidReset branch (barrier.md §11).
func kafkaControlSuffix(rv *recordView) string {
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
		return " MirrorPidReset " + c.KafkaJSON()
	}
	return fmt.Sprintf(" controlType: %s(%d)", c.Type, int16(c.Type))
}

func (p *kafkaDumpPrinter) EndBatch(*batchView) {}

func (p *kafkaDumpPrinter) LogEnd(f dumpFile, s *logSummary) {
	if n := s.Tail.InvalidBytes(); n > 0 && !s.MaxBytesLimitApplied && s.Tail.Kind != segment.TailCorrupt {
		fmt.Fprintf(p.w, "Found %d invalid bytes at the end of %s\n", n, filepath.Base(f.path))
	}
}

func (p *kafkaDumpPrinter) OffsetIndexEntry(_ dumpFile, e segment.IndexEntry) {
	if p.o.verifyIndex {
		return
	}
	fmt.Fprintf(p.w, "offset: %d position: %d\n", e.Offset, e.Position)
}

func (p *kafkaDumpPrinter) TimeIndexEntry(_ dumpFile, e segment.TimeIndexEntry) {
	if p.o.verifyIndex {
		return
	}
	fmt.Fprintf(p.w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
}

func (p *kafkaDumpPrinter) IndexNote(f dumpFile, note string) {
	fmt.Fprintf(p.w, "%s %s\n", f.path, note)
}

func (p *kafkaDumpPrinter) AbortedTxn(_ dumpFile, e segment.AbortedTxn) {
	fmt.Fprintf(p.w, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
		e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
}

// SnapshotEntry is dumpProducerIdSnapshot of the Java port (no trailing
// space when the entry has no batch metadata).
func (p *kafkaDumpPrinter) SnapshotEntry(_ dumpFile, e segment.SnapshotEntry) {
	fmt.Fprintf(p.w, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d",
		e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch, optionalLong(e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0), e.Timestamp)
	if e.LastOffset >= 0 {
		fmt.Fprintf(p.w, " firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
			decode.DecrementSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
	}
	p.w.WriteByte('\n')
}

func (p *kafkaDumpPrinter) LeaderEpoch(dumpFile, segment.EpochEntry)                 {}
func (p *kafkaDumpPrinter) OffsetCheckpoint(dumpFile, segment.OffsetCheckpointEntry) {}
func (p *kafkaDumpPrinter) PartitionMetadata(dumpFile, segment.PartitionMetadata)    {}
func (p *kafkaDumpPrinter) TextLine(dumpFile, string)                                {}

// Finding: kafka-dump-log reports index mismatches in its end-of-run
// summary on stderr; kseg adds its other findings there too, keeping stdout
// identical to the Java tool's.
func (p *kafkaDumpPrinter) Finding(fd finding) {
	switch fd.Kind {
	case "crc-mismatch", "zero-tail", "torn-tail":
		// already visible as isvalid: false / "Found N invalid bytes".
		return
	case "index-mismatch", "timeindex-mismatch":
		p.indexMismatches = append(p.indexMismatches, fd.Message)
		return
	}
	p.w.Flush()
	fmt.Fprintf(p.s.Err, "%s\n", fd.Message)
}

func (p *kafkaDumpPrinter) EndFile(dumpFile) {}

func (p *kafkaDumpPrinter) Close() error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	for _, m := range p.indexMismatches {
		fmt.Fprintln(p.s.Err, m)
	}
	for _, f := range p.nonConsOrder {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		fmt.Fprintf(p.s.Err, "Non-consecutive offsets in %s\n", abs)
		for _, pr := range p.nonConsecutive[f] {
			fmt.Fprintf(p.s.Err, "  %d is followed by %d\n", pr[0], pr[1])
		}
	}
	return nil
}
