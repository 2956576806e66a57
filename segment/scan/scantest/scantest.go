// Package scantest is what the tests of the dump engine (segment/scan)
// and of the commands that drive it share: a generated segment with damage
// spread through it, and a Printer that records every event as a line. It
// is imported by tests only.
package scantest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// DamagedSegment writes a generated segment of about size bytes, as
// <dir>/bench-0/00000000000000000000.log, with damage spread through it:
// CRC mismatches, a compressed batch whose records do not decode (CRC
// recomputed, so only deep decoding finds it) and a jump in offsets (a
// non-consecutive report). It returns the segment's path.
func DamagedSegment(t testing.TB, dir string, size int64) string {
	t.Helper()
	var sb strings.Builder
	if _, err := segtest.LargeSegment(&sb, size, segtest.LargeOptions{Seed: 7}); err != nil {
		t.Fatal(err)
	}
	log := []byte(sb.String())
	be := binary.BigEndian
	var positions []int
	for p := 0; p < len(log); p += decode.LogOverhead + int(be.Uint32(log[p+8:])) {
		positions = append(positions, p)
	}
	n := len(positions)
	for _, i := range []int{n / 7, n / 3, n/2 + 1} { // CRC mismatches
		p := positions[i]
		log[p+decode.RecordBatchOverhead+3] ^= 0x40
	}
	damagedRecords := false
	for _, i := range positions[n/4:] { // a compressed batch with damaged records
		b, err := decode.ParseBatch(log[i:])
		if err != nil {
			t.Fatal(err)
		}
		if b.Compression() == decode.CompressionLZ4 && !b.IsControl() {
			end := i + int(b.Size())
			log[end-6] ^= 0xff // inside the last lz4 block
			be.PutUint32(log[i+17:], decode.CRC32C(log[i+21:end]))
			damagedRecords = true
			break
		}
	}
	if !damagedRecords {
		t.Fatal("no lz4 batch to damage")
	}
	for _, p := range positions[2*n/3:] { // offsets jump by 5 (outside the CRC)
		be.PutUint64(log[p:], be.Uint64(log[p:])+5)
	}
	part := filepath.Join(dir, "bench-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(part, segment.SegmentFileName(0, segment.LogSuffix))
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Recorder is a Printer that records every event as one line, and keeps
// the findings. It is safe for one run at a time.
type Recorder struct {
	mu       sync.Mutex
	Lines    []string
	Findings []finding.Finding
}

func (r *Recorder) add(format string, a ...any) {
	r.mu.Lock()
	r.Lines = append(r.Lines, fmt.Sprintf(format, a...))
	r.mu.Unlock()
}

// String is the recorded lines, one a line.
func (r *Recorder) String() string { return strings.Join(r.Lines, "\n") }

func (r *Recorder) BeginFile(f scan.File)           { r.add("begin %s", f.Path) }
func (r *Recorder) Unknown(f scan.File, why string) { r.add("unknown %s: %s", f.Path, why) }
func (r *Recorder) EndFile(f scan.File) {
	r.add("end %s entries %d selected %d", f.Path, f.Entries, f.Selected)
}
func (r *Recorder) LogStart(f scan.File) { r.add("log %s", f.Path) }
func (r *Recorder) Batch(b *scan.BatchView) {
	crc := "unchecked"
	if b.CRCValid != nil {
		crc = fmt.Sprint(*b.CRCValid)
	}
	r.add("batch %d baseOffset %d lastOffset %d crc %s", b.Position, b.Batch.BaseOffset, b.Batch.LastOffset(), crc)
}
func (r *Recorder) Record(b *scan.BatchView, rv *scan.RecordView) {
	r.add("record %d control %v", rv.Record.Offset, rv.Control != nil)
}
func (r *Recorder) EndBatch(b *scan.BatchView) {}
func (r *Recorder) LogEnd(f scan.File, s *scan.LogSummary) {
	r.add("logend %s batches %d records %d offsets %d..%d crcErrors %d nonConsecutive %d validBytes %d tail %s",
		f.Path, s.Batches, s.Records, s.FirstOffset, s.LastOffset, s.CRCErrors, s.NonConsecutive, s.Tail.ValidBytes, s.Tail.Kind)
}
func (r *Recorder) OffsetIndexEntry(f scan.File, e segment.IndexEntry) {
	r.add("index %d %d", e.Offset, e.Position)
}
func (r *Recorder) TimeIndexEntry(f scan.File, e segment.TimeIndexEntry) {
	r.add("timeindex %d %d", e.Timestamp, e.Offset)
}
func (r *Recorder) IndexNote(f scan.File, note string) { r.add("note %s", note) }
func (r *Recorder) AbortedTxn(f scan.File, e segment.AbortedTxn) {
	r.add("aborted %d %d..%d", e.ProducerID, e.FirstOffset, e.LastOffset)
}
func (r *Recorder) SnapshotEntry(f scan.File, e segment.SnapshotEntry) {
	r.add("producer %d lastOffset %d", e.ProducerID, e.LastOffset)
}
func (r *Recorder) LeaderEpoch(f scan.File, e segment.EpochEntry) {
	r.add("epoch %d %d", e.Epoch, e.StartOffset)
}
func (r *Recorder) OffsetCheckpoint(f scan.File, e segment.OffsetCheckpointEntry) {
	r.add("checkpoint %v %d", e, e.Offset)
}
func (r *Recorder) PartitionMetadata(f scan.File, pm segment.PartitionMetadata) {
	r.add("partition.metadata %v", pm)
}
func (r *Recorder) TextLine(f scan.File, line string) { r.add("text %s", line) }
func (r *Recorder) Finding(fd finding.Finding) {
	r.mu.Lock()
	r.Findings = append(r.Findings, fd)
	r.mu.Unlock()
	r.add("finding %s at %s:%d offset %d: %s", fd.Kind, fd.File, fd.Position, fd.Offset, fd.Message)
}
func (r *Recorder) Close() error { return nil }
