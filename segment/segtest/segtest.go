// Package segtest builds kseg's committed test fixtures: small Kafka
// partition directories written the way a broker writes them
// (segment.Appender), and broken siblings that each carry exactly one
// defect. testdata/gen is its command-line front end; the package exists so
// that `go test ./...` (which skips testdata/) can regenerate the fixtures
// and check that the committed bytes are reproduced exactly.
//
// Everything is deterministic: fixed timestamps, fixed topic ids, fixed
// content, codecs whose output depends only on their input.
//
//	<out>/partitions/orders-0       v2, every codec, idempotent producers, several segments
//	<out>/partitions/txn-0          committed, aborted (.txnindex) and open transactions
//	<out>/partitions/control-0      every control record type
//	<out>/partitions/compacted-0    what the log cleaner leaves behind
//	<out>/partitions/legacy-v0-0    magic 0 messages and wrappers
//	<out>/partitions/legacy-v1-0    magic 1 messages and wrappers
//	<out>/broken/<defect>/events-0  one defect each (see BrokenNames)
package segtest

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// T0 is the clock every fixture starts from: 2023-11-14T22:13:20Z, the
// timestamp of the worked examples in formats.md.
const T0 int64 = 1700000000000

// PartitionNames are the healthy partitions under <out>/partitions.
var PartitionNames = []string{"orders-0", "txn-0", "control-0", "compacted-0", "legacy-v0-0", "legacy-v1-0"}

// BrokenNames are the broken siblings under <out>/broken; each holds one
// partition directory, BrokenPartition, with one defect.
var BrokenNames = []string{
	"crc-mismatch", "torn-tail", "zero-tail", "bad-magic", "negative-count",
	"huge-length", "bad-varint", "decompression-bomb", "index-past-eof",
}

// IndexIntervals is the index.interval.bytes each fixture was written
// with (RebuildIndexes needs it to reproduce the indexes).
var IndexIntervals = map[string]int{
	"orders-0": 512, "txn-0": 256, "control-0": 128, "compacted-0": 128,
	"legacy-v0-0": 64, "legacy-v1-0": 64, BrokenPartition: 128,
}

// BrokenPartition is the partition directory inside every broken sibling.
const BrokenPartition = "events-0"

// BombSize is what the decompression-bomb batch inflates to: zeros, far
// above the cap the tests pass with --max-decompressed-bytes.
const BombSize = 16 << 20

// Generate writes every fixture under outDir, replacing outDir/partitions
// and outDir/broken (and nothing else).
func Generate(outDir string) error {
	for _, sub := range []string{"partitions", "broken"} {
		if err := os.RemoveAll(filepath.Join(outDir, sub)); err != nil {
			return err
		}
	}
	g := &gen{}
	steps := []struct {
		name string
		fn   func(dir string) error
	}{
		{"orders-0", g.orders},
		{"txn-0", g.txn},
		{"control-0", g.control},
		{"compacted-0", g.compacted},
		{"legacy-v0-0", g.legacyV0},
		{"legacy-v1-0", g.legacyV1},
	}
	for _, s := range steps {
		if err := s.fn(filepath.Join(outDir, "partitions", s.name)); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, name := range BrokenNames {
		if err := g.broken(name, filepath.Join(outDir, "broken", name, BrokenPartition)); err != nil {
			return fmt.Errorf("broken/%s: %w", name, err)
		}
	}
	return nil
}

// gen holds the codecs (their compressors are reused, which does not change
// their output).
type gen struct {
	codecs decode.Codecs
}

// topicID is a fixed, recognisable topic id per fixture.
func topicID(n byte) *[16]byte {
	var id [16]byte
	for i := range id {
		id[i] = byte(0x10*n) + byte(i)
	}
	return &id
}

func s(v string) []byte { return []byte(v) }

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }

// ------------------------------------------------------------ partition

// partition drives an Appender as a partition leader would: it assigns
// base offsets and the leader epoch, appends, tracks producer state and
// writes the .txnindex entries and snapshots the broker would write.
type partition struct {
	g         *gen
	dir       string
	app       *segment.Appender
	next      int64 // the offset the next batch gets
	epoch     int32
	track     *tracker
	snapshots bool
	lastSnap  int64
	err       error
	// noEndSnapshot: close writes no snapshot at the log end (a crash).
	noEndSnapshot bool
	// lastMarker is the offset of the last transaction marker appended.
	lastMarker int64
	// chunk > 1: batches go to the log a chunk of that many at a time, as
	// a follower appends what it fetched (Appender.AppendChunk); pending
	// are those not appended yet.
	chunk   int
	pending [][]byte
}

type partitionOpts struct {
	segmentBytes  int64
	segmentMs     int64
	indexInterval int
	topic         byte // 0: no partition.metadata
	snapshots     bool // producer snapshots at every roll and on close
	noSync        bool // AppenderOptions.NoSync: benchmark data
}

func (g *gen) open(dir string, o partitionOpts) (*partition, error) {
	p := &partition{g: g, dir: dir, track: newTracker(), snapshots: o.snapshots, lastSnap: -1}
	opts := segment.AppenderOptions{SegmentBytes: o.segmentBytes, SegmentMs: o.segmentMs, IndexIntervalBytes: o.indexInterval, NoSync: o.noSync}
	if o.topic != 0 {
		opts.TopicID = topicID(o.topic)
	}
	if o.snapshots {
		opts.OnRoll = p.snapshot
	}
	app, err := segment.OpenAppender(dir, opts)
	if err != nil {
		return nil, err
	}
	p.app = app
	return p, nil
}

// snapshot is ProducerStateManager.takeSnapshot at offset off: written
// only when the state moved past the previous snapshot.
func (p *partition) snapshot(off int64) error {
	if off <= p.lastSnap {
		return nil
	}
	p.lastSnap = off
	path := filepath.Join(p.dir, segment.SegmentFileName(off, segment.SnapshotSuffix))
	return p.app.WriteProducerSnapshotFile(path, p.track.snapshot(), false)
}

// batch builds a v2 batch at the next offset in the current leader epoch
// and appends it.
func (p *partition) batch(spec decode.BatchSpec, recs ...decode.RecordSpec) []byte {
	if p.err != nil {
		return nil
	}
	spec.BaseOffset = p.next
	spec.PartitionLeaderEpoch = p.epoch
	raw, err := p.g.codecs.AppendBatch(nil, spec, recs)
	if err != nil {
		p.err = err
		return nil
	}
	p.raw(raw)
	return raw
}

// raw appends an entry as is.
func (p *partition) raw(raw []byte) {
	if p.err != nil {
		return
	}
	b, err := decode.ParseBatch(raw)
	if err != nil {
		p.err = err
		return
	}
	p.next = b.LastOffset() + 1
	p.pending = append(p.pending, raw)
	if len(p.pending) >= p.chunk {
		p.flush()
	}
}

// flush appends the pending batches (a leader's one, a follower's chunk),
// then follows their producer state and writes the .txnindex entries
// their ABORT markers complete: the state a roll's snapshot takes is the
// one before the chunk.
func (p *partition) flush() {
	if p.err != nil || len(p.pending) == 0 {
		return
	}
	chunk := p.pending
	p.pending = nil
	if err := p.app.AppendChunk(chunk); err != nil {
		p.err = err
		return
	}
	for _, raw := range chunk {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			p.err = err
			return
		}
		if b.IsLegacy() {
			continue
		}
		aborted, err := p.track.apply(&b)
		if err != nil {
			p.err = err
			return
		}
		if aborted != nil {
			if p.err = p.app.AppendAbortedTxn(*aborted); p.err != nil {
				return
			}
		}
	}
}

// legacy appends a v0/v1 message at the next offset(s): an uncompressed
// message takes one offset; a wrapper's inner messages take consecutive
// offsets from p.next, stored absolute (v0) or relative (v1), and the
// wrapper carries the last one.
func (p *partition) legacy(m decode.LegacySpec) {
	if p.err != nil {
		return
	}
	if m.Compression == decode.CompressionNone {
		m.Offset = p.next
	} else {
		for i := range m.Inner {
			m.Inner[i].Offset = int64(i)
			if m.Magic == 0 {
				m.Inner[i].Offset += p.next
			}
		}
		m.Offset = p.next + int64(len(m.Inner)) - 1
	}
	raw, err := p.g.codecs.AppendLegacy(nil, m)
	if err != nil {
		p.err = err
		return
	}
	p.raw(raw)
}

// close finishes the log: the clean-shutdown producer snapshot at the log
// end offset (UnifiedLog.close), then the Appender's Close.
func (p *partition) close() error {
	p.flush()
	if p.err != nil {
		_ = p.app.Close()
		return p.err
	}
	if p.snapshots && !p.noEndSnapshot {
		if err := p.snapshot(p.next); err != nil {
			return err
		}
	}
	return p.app.Close()
}

// rec is a record at offset delta d with timestamp ts.
func rec(d int32, ts int64, key, value []byte, hdrs ...decode.Header) decode.RecordSpec {
	return decode.RecordSpec{OffsetDelta: d, Timestamp: ts, Key: key, Value: value, Headers: hdrs}
}

// hdr is a record header; a nil value is a null header value.
func hdr(k string, v []byte) decode.Header { return decode.Header{Key: []byte(k), Value: v} }

// ------------------------------------------------------------ producer state

// tracker follows producer state batch by batch as ProducerStateManager
// does during log recovery (psm.md §2), as far as the fixtures need: the
// entries a snapshot holds (the last batch of each producer) and the
// aborted transactions the .txnindex records.
type tracker struct {
	entries map[int64]*segment.SnapshotEntry
	order   []int64 // first-insertion order, which HashMap iteration keeps within a bucket
	ongoing []ongoingTxn
	dec     decode.Decoder
	// expireMs, when positive, is producer.id.expiration.ms: the broker's
	// periodic check (every 10 minutes of the clock, the batches' highest
	// maxTimestamp, as kseg's log clock) removes producers idle that long.
	expireMs         int64
	clock, lastCheck int64
}

type ongoingTxn struct {
	pid   int64
	first int64
}

func newTracker() *tracker { return &tracker{entries: map[int64]*segment.SnapshotEntry{}} }

func (t *tracker) entry(pid int64) *segment.SnapshotEntry {
	e, ok := t.entries[pid]
	if !ok {
		// ProducerStateEntry.empty(pid).
		e = &segment.SnapshotEntry{ProducerID: pid, ProducerEpoch: -1, LastSequence: -1, LastOffset: -1,
			Timestamp: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
		t.entries[pid] = e
		t.order = append(t.order, pid)
	}
	return e
}

// setEpoch is maybeUpdateProducerEpoch: any change drops batch metadata.
func setEpoch(e *segment.SnapshotEntry, epoch int16) {
	if e.ProducerEpoch != epoch {
		e.ProducerEpoch = epoch
		e.LastSequence, e.LastOffset, e.OffsetDelta = -1, -1, 0
	}
}

// apply updates the state with one v2 batch and returns the aborted
// transaction it completes, if any.
func (t *tracker) apply(b *decode.Batch) (*segment.AbortedTxn, error) {
	t.advance(b.MaxTimestamp)
	if !b.HasProducerID() {
		// KIP-1279: a MIRROR_PID_RESET barrier drops every producer entry,
		// so snapshots taken after it (control-0's) hold none from before.
		if b.IsControl() && b.RecordCount > 0 {
			barrier := false
			err := t.dec.Records(b, func(r *decode.Record) error {
				if _, typ, err := decode.ParseControlKey(r.Key); err == nil && typ == decode.ControlMirrorPidReset {
					barrier = true
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if barrier {
				clear(t.entries)
				t.order = t.order[:0]
			}
		}
		return nil, nil
	}
	e := t.entry(b.ProducerID)
	if !b.IsControl() {
		// appendDataBatch: addBatch(epoch, lastSeq, lastOffset, delta, maxTimestamp).
		setEpoch(e, b.ProducerEpoch)
		e.LastSequence, e.LastOffset = b.LastSequence(), b.LastOffset()
		e.OffsetDelta = int32(b.LastOffset() - b.BaseOffset)
		e.Timestamp = b.MaxTimestamp
		if b.IsTransactional() && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = b.BaseOffset
			t.ongoing = append(t.ongoing, ongoingTxn{b.ProducerID, b.BaseOffset})
			slices.SortFunc(t.ongoing, func(a, c ongoingTxn) int { return cmp.Compare(a.first, c.first) })
		}
		return nil, nil
	}
	// A control batch: only its first record counts; an empty one (left
	// by the cleaner) changes nothing but still creates the entry.
	var key, value []byte
	var ts int64
	found := false
	err := t.dec.Records(b, func(r *decode.Record) error {
		if !found {
			key, value, ts, found = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...), r.Timestamp, true
		}
		return nil
	})
	if err != nil || !found {
		return nil, err
	}
	c, err := decode.ParseControl(key, value)
	if err != nil {
		return nil, err
	}
	if c.Type != decode.ControlAbort && c.Type != decode.ControlCommit {
		return nil, fmt.Errorf("control batch at %d with producer id %d is a %s, not a transaction marker", b.BaseOffset, b.ProducerID, c.Type)
	}
	// appendEndTxnMarker.
	var aborted *segment.AbortedTxn
	if e.CurrentTxnFirstOffset >= 0 && c.Type == decode.ControlAbort {
		// lastStableOffset(completedTxn): the first ongoing transaction of
		// another producer, else the marker offset + 1.
		lso := b.BaseOffset + 1
		for _, o := range t.ongoing {
			if o.pid != b.ProducerID {
				lso = o.first
				break
			}
		}
		aborted = &segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: b.ProducerID,
			FirstOffset: e.CurrentTxnFirstOffset, LastOffset: b.BaseOffset, LastStableOffset: lso}
	}
	t.ongoing = slices.DeleteFunc(t.ongoing, func(o ongoingTxn) bool { return o.pid == b.ProducerID })
	setEpoch(e, b.ProducerEpoch)
	e.CoordinatorEpoch = c.CoordinatorEpoch
	e.CurrentTxnFirstOffset = -1
	e.Timestamp = ts
	return aborted, nil
}

// advance moves the clock to ts and runs the periodic expiry check
// (ProducerStateManager.removeExpiredProducers) when the check interval
// has passed since the last one.
func (t *tracker) advance(ts int64) {
	if t.expireMs <= 0 || ts < 0 {
		return
	}
	if t.clock == 0 {
		t.clock, t.lastCheck = ts, ts
		return
	}
	t.clock = max(t.clock, ts)
	if t.clock-t.lastCheck < 600_000 {
		return
	}
	t.lastCheck = t.clock
	t.order = slices.DeleteFunc(t.order, func(pid int64) bool {
		e := t.entries[pid]
		if e.CurrentTxnFirstOffset < 0 && t.clock-e.Timestamp >= t.expireMs {
			delete(t.entries, pid)
			return true
		}
		return false
	})
}

// snapshot returns every entry in the order a java.util.HashMap<Long, …>
// iterates them, which is how writeSnapshot orders the file: by bucket
// (Long.hashCode spread as HashMap.hash does, masked by the table size the
// map has grown to), and by insertion within a bucket.
func (t *tracker) snapshot() []segment.SnapshotEntry {
	capacity := 16
	for float64(len(t.order)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	bucket := func(v int64) int {
		h := uint32(uint64(v) ^ uint64(v)>>32)
		return int((h ^ h>>16) & uint32(capacity-1))
	}
	order := slices.Clone(t.order)
	slices.SortStableFunc(order, func(a, b int64) int { return cmp.Compare(bucket(a), bucket(b)) })
	out := make([]segment.SnapshotEntry, 0, len(order))
	for _, pid := range order {
		out = append(out, *t.entries[pid])
	}
	return out
}

// ------------------------------------------------------------ helpers for raw bytes

// setRecords replaces the records section of a v2 batch, fixing
// batchLength and the CRC, to build batches the encoder would refuse.
func setRecords(batch, records []byte) []byte {
	out := append(append([]byte(nil), batch[:decode.RecordBatchOverhead]...), records...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-decode.LogOverhead))
	fixCRC(out)
	return out
}

// fixCRC recomputes a v2 batch's CRC-32C.
func fixCRC(batch []byte) {
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
}

// entries splits a log into its entries (positions and bytes).
func entries(log []byte) ([]int, error) {
	var pos []int
	for p := 0; p < len(log); {
		if len(log)-p < decode.LogOverhead {
			return nil, errors.New("trailing bytes")
		}
		pos = append(pos, p)
		p += decode.LogOverhead + int(binary.BigEndian.Uint32(log[p+8:]))
	}
	return pos, nil
}

// build encodes a v2 batch at the next offset without appending it.
func (p *partition) build(spec decode.BatchSpec, recs ...decode.RecordSpec) []byte {
	spec.BaseOffset = p.next
	spec.PartitionLeaderEpoch = p.epoch
	raw, err := p.g.codecs.AppendBatch(nil, spec, recs)
	if err != nil && p.err == nil {
		p.err = err
	}
	return raw
}

func filepathJoin(elem ...string) string { return filepath.Join(elem...) }

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

// writeFile replaces a fixture file atomically.
func writeFile(p string, b []byte) error { return segment.WriteFileAtomic(p, b, 0o644) }

func segmentRebuild(logPath string) (index, timeindex []byte, err error) {
	return segment.RebuildIndexes(logPath, 0, IndexIntervals[BrokenPartition])
}

// CopyTree copies the directory tree src to dst (created as needed): its
// directories, and its files with mode 0644. Tests copy a fixture before
// anything writes to it; fixtures are never written in place.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
