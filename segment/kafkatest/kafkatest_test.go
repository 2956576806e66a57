package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

const topic = "orders"

// batchInfo is what the tests check of one raw batch.
type batchInfo struct {
	base, last int64
	attrs      int16
	pid        int64
	epoch      int16
	control    bool
	marker     decode.ControlType // for control batches
}

func (b batchInfo) String() string {
	s := fmt.Sprintf("[%d..%d] attrs=%#x pid=%d epoch=%d", b.base, b.last, b.attrs, b.pid, b.epoch)
	if b.control {
		s += " " + b.marker.String()
	}
	return s
}

// parseAll parses every raw batch with decode.ParseBatch, asserts a valid
// CRC and contiguous offsets, and decodes the control record of control
// batches.
func parseAll(t *testing.T, raws [][]byte) []batchInfo {
	t.Helper()
	var (
		out  []batchInfo
		dec  decode.Decoder
		next int64
	)
	for i, raw := range raws {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			t.Fatalf("batch %d: ParseBatch: %v", i, err)
		}
		if !b.CRCValid() {
			t.Fatalf("batch %d at %d: CRC mismatch (stored %#x, computed %#x)", i, b.BaseOffset, b.CRC, b.ComputeCRC())
		}
		if int(b.Size()) != len(raw) {
			t.Fatalf("batch %d: size %d, raw entry %d bytes", i, b.Size(), len(raw))
		}
		if b.BaseOffset != next {
			t.Fatalf("batch %d: base offset %d, want %d (contiguous)", i, b.BaseOffset, next)
		}
		next = b.NextOffset()
		bi := batchInfo{base: b.BaseOffset, last: b.LastOffset(), attrs: b.Attributes, pid: b.ProducerID, epoch: b.ProducerEpoch, control: b.IsControl()}
		if bi.control {
			n := 0
			err := dec.Records(&b, func(r *decode.Record) error {
				n++
				_, typ, err := decode.ParseControlKey(r.Key)
				bi.marker = typ
				return err
			})
			if err != nil || n != 1 {
				t.Fatalf("batch %d: control batch with %d records: %v", i, n, err)
			}
		}
		out = append(out, bi)
	}
	return out
}

// want describes an expected batch: data (control=false) or a marker.
type want struct {
	base, last int64
	control    bool
	marker     decode.ControlType
	pid        int64
	epoch      int16
}

func check(t *testing.T, got []batchInfo, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d batches, want %d:\n%v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		wantAttrs := int16(decode.AttrTransactional)
		if w.control {
			wantAttrs |= decode.AttrControl
		}
		if g.base != w.base || g.last != w.last || g.control != w.control || g.marker != w.marker ||
			g.pid != w.pid || g.epoch != w.epoch || g.attrs != wantAttrs {
			t.Errorf("batch %d: got %v, want %+v attrs=%#x", i, g, w, wantAttrs)
		}
	}
}

// TestTxnProducerIDSameAcrossClusters: kfake derives a transactional
// producer id from the transactional id alone (FNV-64), with epoch 0, so two
// independent clusters give "orders-tx" the same (id, epoch).
func TestTxnProducerIDSameAcrossClusters(t *testing.T) {
	pid := TxnProducerID("orders-tx")
	for _, name := range []string{"A", "B"} {
		c := NewCluster(t)
		c.CreateTopic(t, topic, 1)
		c.ProduceIdempotent(t, topic, 0, 2) // an idempotent producer first does not change it
		c.Transact(t, "orders-tx", topic, 0, 3, Commit)
		got := parseAll(t, c.RawBatches(t, topic, 0))
		if len(got) != 3 {
			t.Fatalf("cluster %s: %d batches, want 3: %v", name, len(got), got)
		}
		check(t, got[1:], []want{
			{base: 2, last: 4, pid: pid, epoch: 0},
			{base: 5, last: 5, control: true, marker: decode.ControlCommit, pid: pid, epoch: 0},
		})
	}
}

// TestIdempotentProducerIDs: kfake gives idempotent producers random ids,
// so two clusters' first producers differ; PinIdempotentProducerIDs makes
// them equal (and the data batches byte-identical).
func TestIdempotentProducerIDs(t *testing.T) {
	first := func(pin bool) ([]byte, decode.Batch) {
		c := NewCluster(t)
		c.CreateTopic(t, topic, 1)
		if pin {
			c.PinIdempotentProducerIDs(1000)
		}
		c.ProduceIdempotentBatches(t, [][]*kgo.Record{FixedTimestamps(Records(topic, 0, 3, nil), time.UnixMilli(1_700_000_000_000))})
		c.ProduceIdempotent(t, topic, 0, 2)
		c.Transact(t, "orders-tx", topic, 0, 1, Commit) // pinning leaves transactional ids alone
		raws := c.RawBatches(t, topic, 0)
		got := parseAll(t, raws)
		if len(got) != 4 || got[2].pid != TxnProducerID("orders-tx") {
			t.Fatalf("batches: %v", got)
		}
		if pin && (got[0].pid != 1000 || got[1].pid != 1001 || got[0].epoch != 0 || got[1].epoch != 0) {
			t.Fatalf("pinned ids: got %v and %v, want pids 1000 and 1001 at epoch 0", got[0], got[1])
		}
		b, _ := decode.ParseBatch(raws[0])
		if b.BaseSequence != 0 || b.RecordCount != 3 || b.IsTransactional() {
			t.Fatalf("first batch: %+v", b)
		}
		return raws[0], b
	}

	_, a := first(false)
	_, b := first(false)
	if a.ProducerID == b.ProducerID {
		t.Errorf("unpinned: both clusters gave producer id %d; kfake's ids are supposed to be random", a.ProducerID)
	}

	rawA, a := first(true)
	rawB, b := first(true)
	if a.ProducerID != b.ProducerID || a.ProducerEpoch != b.ProducerEpoch {
		t.Errorf("pinned: producer %d/%d vs %d/%d", a.ProducerID, a.ProducerEpoch, b.ProducerID, b.ProducerEpoch)
	}
	if !bytes.Equal(rawA, rawB) {
		t.Errorf("pinned: first data batches differ:\n%x\n%x", rawA, rawB)
	}
}

// TestTxnMarkers: commit and abort write COMMIT/ABORT control batches
// (attributes 0x30) at the next offset; an open transaction leaves its data
// batches without a marker until the transactional id initializes again,
// which aborts it. Also pins down the epochs each Transact call uses.
func TestTxnMarkers(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 1)
	pid := TxnProducerID("orders-tx")

	c.Transact(t, "orders-tx", topic, 0, 2, Commit)
	c.Transact(t, "orders-tx", topic, 0, 3, Abort)
	c.Transact(t, "orders-tx", topic, 0, 2, Open)
	check(t, parseAll(t, c.RawBatches(t, topic, 0)), []want{
		{base: 0, last: 1, pid: pid, epoch: 0},
		{base: 2, last: 2, control: true, marker: decode.ControlCommit, pid: pid, epoch: 0},
		{base: 3, last: 5, pid: pid, epoch: 2},
		{base: 6, last: 6, control: true, marker: decode.ControlAbort, pid: pid, epoch: 2},
		{base: 7, last: 8, pid: pid, epoch: 4}, // open: no marker
	})

	// The next InitProducerID for the id aborts the open transaction.
	c.Transact(t, "orders-tx", topic, 0, 1, Commit)
	check(t, parseAll(t, c.RawBatches(t, topic, 0))[5:], []want{
		{base: 9, last: 9, control: true, marker: decode.ControlAbort, pid: pid, epoch: 4},
		{base: 10, last: 10, pid: pid, epoch: 5},
		{base: 11, last: 11, control: true, marker: decode.ControlCommit, pid: pid, epoch: 5},
	})
}

// TestMultiBatchTxn: each inner slice of TransactBatches is one batch,
// sequences continue, and one marker ends them all.
func TestMultiBatchTxn(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 2)
	c.TransactBatches(t, "multi", [][]*kgo.Record{
		Records(topic, 1, 2, nil),
		Records(topic, 1, 3, func(i int) ([]byte, []byte) { return nil, []byte{byte(i)} }),
	}, Commit)
	raws := c.RawBatches(t, topic, 1)
	pid := TxnProducerID("multi")
	check(t, parseAll(t, raws), []want{
		{base: 0, last: 1, pid: pid},
		{base: 2, last: 4, pid: pid},
		{base: 5, last: 5, control: true, marker: decode.ControlCommit, pid: pid},
	})
	b, _ := decode.ParseBatch(raws[1])
	if b.BaseSequence != 2 {
		t.Errorf("second batch base sequence %d, want 2", b.BaseSequence)
	}
	if got := c.RawBatches(t, topic, 0); len(got) != 0 {
		t.Errorf("partition 0: %d batches, want none", len(got))
	}
}

// TestFailoverScenario is the shape of a failover fixture: cluster A's
// "orders-tx" commits one transaction and leaves a second open; A's log
// becomes a partition directory; cluster B's "orders-tx" (a fresh cluster,
// as after a failover to a mirror) commits a transaction with the same
// producer id, at a lower epoch than A's open transaction.
func TestFailoverScenario(t *testing.T) {
	a := NewCluster(t)
	a.CreateTopic(t, topic, 1)
	a.Transact(t, "orders-tx", topic, 0, 3, Commit)
	a.Transact(t, "orders-tx", topic, 0, 2, Open)
	rawA := a.RawBatches(t, topic, 0)
	gotA := parseAll(t, rawA)

	dir := t.TempDir()
	pdir := WritePartition(t, dir, topic, 0, rawA)
	if pdir != filepath.Join(dir, "orders-0") {
		t.Fatalf("partition dir %q", pdir)
	}
	d, err := segment.OpenPartitionDir(pdir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topic != topic || d.Partition != 0 || len(d.Segments) != 1 || d.Segments[0].BaseOffset != 0 ||
		d.Segments[0].Index == "" || d.Segments[0].TimeIndex == "" || d.Segments[0].TxnIndex != "" ||
		d.LeaderEpochCheckpoint == "" || len(d.Other) != 0 || len(d.Transient) != 0 {
		t.Fatalf("partition dir: %+v", d)
	}
	logBytes, err := os.ReadFile(filepath.Join(pdir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(logBytes, bytes.Join(rawA, nil)) {
		t.Errorf(".log is not the raw batches back to back")
	}
	var fromLog [][]byte
	for rest := logBytes; len(rest) > 0; {
		b, err := decode.ParseBatch(rest)
		if err != nil {
			t.Fatal(err)
		}
		fromLog = append(fromLog, rest[:b.Size()])
		rest = rest[b.Size():]
	}
	parseAll(t, fromLog)
	epochs, err := segment.ReadLeaderEpochCheckpoint(d.LeaderEpochCheckpoint)
	if err != nil || len(epochs) != 1 || epochs[0] != (segment.EpochEntry{Epoch: 0, StartOffset: 0}) {
		t.Errorf("leader-epoch-checkpoint: %v %v", epochs, err)
	}

	b := NewCluster(t)
	b.CreateTopic(t, topic, 1)
	b.Transact(t, "orders-tx", topic, 0, 1, Commit)
	gotB := parseAll(t, b.RawBatches(t, topic, 0))

	pid := TxnProducerID("orders-tx")
	check(t, gotA, []want{
		{base: 0, last: 2, pid: pid, epoch: 0},
		{base: 3, last: 3, control: true, marker: decode.ControlCommit, pid: pid, epoch: 0},
		{base: 4, last: 5, pid: pid, epoch: 2}, // open
	})
	check(t, gotB, []want{
		{base: 0, last: 0, pid: pid, epoch: 0},
		{base: 1, last: 1, control: true, marker: decode.ControlCommit, pid: pid, epoch: 0},
	})
}

// TestWritePartitionEpochs: the checkpoint gets one line per leader epoch
// change and the segment is named after the first base offset.
func TestWritePartitionEpochs(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 1)
	c.ProduceIdempotent(t, topic, 0, 1)
	c.ProduceIdempotent(t, topic, 0, 1)
	c.ProduceIdempotent(t, topic, 0, 1)
	raws := c.RawBatches(t, topic, 0)
	// Rewrite the leader epochs (outside the CRC) and the base offsets.
	for i, e := range []int32{3, 3, 5} {
		raws[i][12], raws[i][13], raws[i][14], raws[i][15] = byte(e>>24), byte(e>>16), byte(e>>8), byte(e)
		raws[i][7] += 40
	}
	pdir := WritePartition(t, t.TempDir(), topic, 7, raws)
	if _, err := os.Stat(filepath.Join(pdir, "00000000000000000040.log")); err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(pdir, "leader-epoch-checkpoint"))
	if err != nil || string(cp) != "0\n2\n3 40\n5 42\n" {
		t.Errorf("leader-epoch-checkpoint %q %v", cp, err)
	}
}

// TestAbortedTxnIndex: WritePartition writes the .txnindex entries of ABORT
// markers with Kafka's first offset and last stable offset.
func TestAbortedTxnIndex(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 1)
	c.Transact(t, "tx-a", topic, 0, 2, Open)   // 0-1, left open
	c.Transact(t, "tx-b", topic, 0, 1, Abort)  // 2, ABORT at 3 while tx-a is open
	c.Transact(t, "tx-a", topic, 0, 1, Commit) // ABORT of the open one at 4, then 5 + COMMIT at 6
	raws := c.RawBatches(t, topic, 0)
	a, b := TxnProducerID("tx-a"), TxnProducerID("tx-b")
	check(t, parseAll(t, raws), []want{
		{base: 0, last: 1, pid: a, epoch: 0},
		{base: 2, last: 2, pid: b, epoch: 0},
		{base: 3, last: 3, control: true, marker: decode.ControlAbort, pid: b, epoch: 0},
		{base: 4, last: 4, control: true, marker: decode.ControlAbort, pid: a, epoch: 0},
		{base: 5, last: 5, pid: a, epoch: 1},
		{base: 6, last: 6, control: true, marker: decode.ControlCommit, pid: a, epoch: 1},
	})
	wantTxns := []segment.AbortedTxn{
		{ProducerID: b, FirstOffset: 2, LastOffset: 3, LastStableOffset: 0},
		{ProducerID: a, FirstOffset: 0, LastOffset: 4, LastStableOffset: 5},
	}
	got, err := AbortedTxns(raws)
	if err != nil || !slices.Equal(got, wantTxns) {
		t.Fatalf("AbortedTxns: %v %v, want %v", got, err, wantTxns)
	}
	pdir := WritePartition(t, t.TempDir(), topic, 0, raws)
	x, err := segment.ReadTxnIndex(filepath.Join(pdir, "00000000000000000000.txnindex"))
	if err != nil || !slices.Equal(x.Entries, wantTxns) {
		t.Fatalf(".txnindex: %v %v, want %v", x.Entries, err, wantTxns)
	}
}

// TestWritePartitionSegments: with a small segment size the Appender rolls,
// and every segment still holds whole batches in order.
func TestWritePartitionSegments(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 1)
	now := time.Now()
	for range 4 { // same-sized batches
		c.ProduceIdempotentBatches(t, [][]*kgo.Record{FixedTimestamps(Records(topic, 0, 2, nil), now)})
	}
	raws := c.RawBatches(t, topic, 0)
	pdir := WritePartitionWith(t, t.TempDir(), topic, 0, raws, segment.AppenderOptions{SegmentBytes: int64(2*len(raws[0]) + 1)})
	d, err := segment.OpenPartitionDir(pdir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	var all []byte
	for _, s := range d.Segments {
		bases = append(bases, s.BaseOffset)
		b, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !slices.Equal(bases, []int64{0, 4}) || !bytes.Equal(all, bytes.Join(raws, nil)) {
		t.Errorf("segments %v; logs equal to the batches: %v", bases, bytes.Equal(all, bytes.Join(raws, nil)))
	}
}

// TestRawBatchesAfterDeleteRecords: RawBatches starts at the log start
// offset, and WritePartition names the segment after it.
func TestRawBatchesAfterDeleteRecords(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 1)
	for range 3 {
		c.ProduceIdempotent(t, topic, 0, 2)
	}
	if err := c.Fake.DeleteRecords(topic, 0, 2); err != nil {
		t.Fatal(err)
	}
	raws := c.RawBatches(t, topic, 0)
	if len(raws) != 2 {
		t.Fatalf("%d batches, want 2", len(raws))
	}
	b, err := decode.ParseBatch(raws[0])
	if err != nil || b.BaseOffset != 2 {
		t.Fatalf("first batch at %d (%v), want 2", b.BaseOffset, err)
	}
	pdir := WritePartition(t, t.TempDir(), topic, 0, raws)
	if _, err := os.Stat(filepath.Join(pdir, "00000000000000000002.log")); err != nil {
		t.Fatal(err)
	}
}

// TestClient: Client's defaults route records by Record.Partition.
func TestClient(t *testing.T) {
	c := NewCluster(t)
	c.CreateTopic(t, topic, 3)
	cl := c.Client(t)
	if err := cl.ProduceSync(context.Background(), Records(topic, 2, 1, nil)...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if n0, n2 := len(c.RawBatches(t, topic, 0)), len(c.RawBatches(t, topic, 2)); n0 != 0 || n2 != 1 {
		t.Fatalf("batches: partition 0 %d, partition 2 %d", n0, n2)
	}
}
