package psm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/segtest"
)

// logBuilder writes v2 batches the way a broker lays them out: offsets
// assigned consecutively, one timestamp per batch (advancing by Step ms
// unless Ts is set), control batches with a single record.
type logBuilder struct {
	t    testing.TB
	buf  []byte
	next int64 // next offset
	Ts   int64 // timestamp of the next batch
	Step int64
}

func newLog(t testing.TB, base int64) *logBuilder {
	return &logBuilder{t: t, next: base, Ts: 1_700_000_000_000, Step: 1000}
}

// following starts the builder of the segment after l's: at l's next
// offset, with l's clock.
func (l *logBuilder) following() *logBuilder {
	n := newLog(l.t, l.next)
	n.Ts = l.Ts
	return n
}

func (l *logBuilder) append(s decode.BatchSpec, recs []decode.RecordSpec) int64 {
	l.t.Helper()
	s.BaseOffset = l.next
	var err error
	l.buf, err = decode.AppendBatch(l.buf, s, recs)
	if err != nil {
		l.t.Fatal(err)
	}
	delta := int64(0)
	if len(recs) > 0 {
		delta = int64(recs[len(recs)-1].OffsetDelta)
	}
	if s.LastOffsetDelta != nil {
		delta = int64(*s.LastOffsetDelta)
	}
	base := l.next
	l.next += delta + 1
	l.Ts += l.Step
	return base
}

func (l *logBuilder) records(n int) []decode.RecordSpec {
	recs := make([]decode.RecordSpec, n)
	for i := range recs {
		recs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: l.Ts, Value: []byte("v")}
	}
	return recs
}

// data appends a data batch of n records and returns its base offset.
func (l *logBuilder) data(pid int64, epoch int16, seq int32, n int, txn bool) int64 {
	l.t.Helper()
	return l.append(decode.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: txn}, l.records(n))
}

// plain appends a batch without producer id (a non-idempotent producer).
func (l *logBuilder) plain(n int) int64 {
	return l.append(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, l.records(n))
}

// marker appends a COMMIT (commit) or ABORT marker.
func (l *logBuilder) marker(pid int64, epoch int16, commit bool, coordEpoch int32) int64 {
	l.t.Helper()
	typ := decode.ControlAbort
	if commit {
		typ = decode.ControlCommit
	}
	rec := decode.RecordSpec{Timestamp: l.Ts, Key: decode.AppendControlKey(nil, typ), Value: decode.AppendEndTxnMarkerValue(nil, coordEpoch)}
	return l.append(decode.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, Transactional: true, Control: true},
		[]decode.RecordSpec{rec})
}

// barrier appends a KIP-1279 MIRROR_PID_RESET batch (producerId -1).
func (l *logBuilder) barrier(src *string) int64 {
	l.t.Helper()
	rec := decode.RecordSpec{Timestamp: l.Ts, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, src)}
	return l.append(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true}, []decode.RecordSpec{rec})
}

// emptyControl appends a control batch whose marker the cleaner removed.
func (l *logBuilder) emptyControl(pid int64, epoch int16) int64 {
	zero := int32(0)
	ts := l.Ts
	return l.append(decode.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, Transactional: true, Control: true,
		LastOffsetDelta: &zero, MaxTimestamp: &ts}, nil)
}

// compactedEmpty appends the empty header the cleaner keeps for a
// producer's last batch (DefaultRecordBatch.writeEmptyHeader).
func (l *logBuilder) compactedEmpty(pid int64, epoch int16, seq int32, lastOffsetDelta int32) int64 {
	ts := l.Ts
	return l.append(decode.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: &lastOffsetDelta, MaxTimestamp: &ts}, nil)
}

// partition is a partition directory being assembled in a temp dir.
type partition struct {
	t   testing.TB
	dir string
}

func newPartition(t testing.TB) *partition {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &partition{t: t, dir: dir}
}

// segment writes a .log named by base.
func (p *partition) segment(base int64, l *logBuilder) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, segment.FormatOffset(base)+".log"), l.buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// snapshot writes N.snapshot.
func (p *partition) snapshot(off int64, entries []segment.SnapshotEntry) string {
	p.t.Helper()
	path := filepath.Join(p.dir, segment.FormatOffset(off)+".snapshot")
	if err := os.WriteFile(path, segment.EncodeProducerSnapshot(entries), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func (p *partition) open() *segment.PartitionDir {
	p.t.Helper()
	pd, err := segment.OpenPartitionDir(p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	return pd
}

func (p *partition) rebuild(opts Options) *Result {
	p.t.Helper()
	r, err := Rebuild(p.open(), opts)
	if err != nil {
		p.t.Fatal(err)
	}
	return r
}

// replayOne writes l as the only segment and replays it from the start.
func replayOne(t testing.TB, l *logBuilder, mod func(*Options)) *Result {
	t.Helper()
	p := newPartition(t)
	p.segment(0, l)
	opts := DefaultOptions()
	opts.FromSnapshot = SnapshotNone
	if mod != nil {
		mod(&opts)
	}
	return p.rebuild(opts)
}

func producer(r *Result, pid int64) *Entry {
	for i := range r.Producers {
		if r.Producers[i].ProducerID == pid {
			return &r.Producers[i]
		}
	}
	return nil
}

func mustProducer(t testing.TB, r *Result, pid int64) *Entry {
	t.Helper()
	e := producer(r, pid)
	if e == nil {
		t.Fatalf("producer %d missing; producers %+v", pid, r.Producers)
	}
	return e
}

func anomalies(r *Result, kind finding.Kind) []finding.Finding {
	var out []finding.Finding
	for _, a := range r.Anomalies {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

// onlyAnomalies fails unless every anomaly is of one of the given kinds.
func onlyAnomalies(t testing.TB, r *Result, kinds ...finding.Kind) {
	t.Helper()
	ok := map[finding.Kind]bool{}
	for _, k := range kinds {
		ok[k] = true
	}
	for _, a := range r.Anomalies {
		if !ok[a.Kind] {
			t.Errorf("unexpected anomaly %s (%s) at %d: %s", a.Kind, a.Severity(), a.Offset, a.Message)
		}
	}
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

// largePartition is a generated partition ("bench-0" of segtest.LogDir)
// of about size bytes of .log, made from seed: several segments, aborted
// transactions and producer snapshots.
func largePartition(t testing.TB, size int64, seed uint64) *segment.PartitionDir {
	t.Helper()
	return segtest.OpenLogDirPartition(t, size, segtest.LargeOptions{Seed: seed})
}
