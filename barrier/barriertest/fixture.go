// Package barriertest builds the partitions the barrier and cmd tests
// inject barriers into: a destination partition as a mirror leaves it,
// with idempotent producers, a committed transaction, transactions still
// open at the end, and an ABORT marker beyond the first LSO cut that
// reopens a transaction (so the cut has to be iterated to a fixed point).
// Only tests (and the program that generates docs/failover.md's example)
// import it.
package barriertest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkatest"
)

const (
	// Topic is the fixture's topic; its partition is 0.
	Topic = "mirror"
	// TS0 is the timestamp of offset 0; offset n is TS0 + n seconds.
	TS0 = int64(1700000000000)
)

// Producers of the mirror fixture.
const (
	PIDIdempotent = 1001 // idempotent, never transactional
	PIDCommitted  = 2002 // commits a transaction at 2..4, aborts one at 9..10
	PIDOpenB      = 3003 // transaction from 11, open at the end
	PIDReopened   = 4004 // transaction from 6 whose ABORT lies at 14, beyond the first cut
	PIDOpenE      = 5005 // transaction from 15, open at the end
)

// TsOf is the fixture's timestamp of an offset.
func TsOf(off int64) int64 { return TS0 + off*1000 }

// DataBatch is a batch of n records at base, offsets base..base+n-1.
func DataBatch(tb testing.TB, base int64, n int, pid int64, epoch int16, seq int32, txn bool, ple int32) []byte {
	tb.Helper()
	var recs []decode.RecordSpec
	for i := 0; i < n; i++ {
		recs = append(recs, decode.RecordSpec{OffsetDelta: int32(i), Timestamp: TsOf(base + int64(i)),
			Key: []byte(fmt.Sprintf("k%d", base+int64(i))), Value: []byte(fmt.Sprintf("value-%04d", base+int64(i)))})
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: ple, Transactional: txn,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// MarkerBatch is a COMMIT or ABORT marker of producer pid (epoch 0,
// coordinator epoch 0) at base.
func MarkerBatch(tb testing.TB, base, pid int64, commit bool, ple int32) []byte {
	tb.Helper()
	t := decode.ControlAbort
	if commit {
		t = decode.ControlCommit
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: ple, Transactional: true,
		Control: true, ProducerID: pid, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: TsOf(base), Key: decode.AppendControlKey(nil, t), Value: decode.AppendEndTxnMarkerValue(nil, 0)}})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// MirrorBatches is a destination partition as a mirror leaves it:
//
//	0-1   idempotent 1001 seq 0-1
//	2-3   txn 2002 (A)
//	4     COMMIT 2002
//	5     idempotent 1001 seq 2
//	6-7   txn 4004 (C) ─────────────┐
//	8     idempotent 1001 seq 3      │  leader epoch 1 from here
//	9     txn 2002 (D)               │
//	10    ABORT 2002 (D)             │
//	11-12 txn 3003 (B, open)         │
//	13    idempotent 1001 seq 4      │
//	14    ABORT 4004 (C) ────────────┘ beyond the first cut (11)
//	15    txn 5005 (E, open)
//	16    txn 3003 (B)
//	17    idempotent 1001 seq 5
//
// The LSO is 11; cutting there removes C's ABORT at 14 and reopens C, so
// the fixed point is 6.
func MirrorBatches(tb testing.TB) [][]byte {
	return [][]byte{
		DataBatch(tb, 0, 2, PIDIdempotent, 0, 0, false, 0),
		DataBatch(tb, 2, 2, PIDCommitted, 0, 0, true, 0),
		MarkerBatch(tb, 4, PIDCommitted, true, 0),
		DataBatch(tb, 5, 1, PIDIdempotent, 0, 2, false, 0),
		DataBatch(tb, 6, 2, PIDReopened, 0, 0, true, 0),
		DataBatch(tb, 8, 1, PIDIdempotent, 0, 3, false, 1),
		DataBatch(tb, 9, 1, PIDCommitted, 0, 2, true, 1),
		MarkerBatch(tb, 10, PIDCommitted, false, 1),
		DataBatch(tb, 11, 2, PIDOpenB, 0, 0, true, 1),
		DataBatch(tb, 13, 1, PIDIdempotent, 0, 4, false, 1),
		MarkerBatch(tb, 14, PIDReopened, false, 1),
		DataBatch(tb, 15, 1, PIDOpenE, 0, 0, true, 1),
		DataBatch(tb, 16, 1, PIDOpenB, 0, 2, true, 1),
		DataBatch(tb, 17, 1, PIDIdempotent, 0, 5, false, 1),
	}
}

// WritePartition lays batches out as <logDir>/mirror-0 with segments of
// segmentBytes (0: the broker's 1 GiB) and an index.interval.bytes of 100,
// as a broker appending them would (segment.Appender: .log, .index,
// .timeindex, .txnindex, leader-epoch-checkpoint), plus the producer
// snapshot a broker takes at every roll, at each segment base after the
// first. It returns the partition directory.
func WritePartition(tb testing.TB, logDir string, batches [][]byte, segmentBytes int64) string {
	tb.Helper()
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	pdir := kafkatest.WritePartitionWith(tb, logDir, Topic, 0, batches,
		segment.AppenderOptions{SegmentBytes: segmentBytes, IndexIntervalBytes: 100})
	pd, err := segment.OpenPartitionDir(pdir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range pd.Segments[1:] {
		o := psm.DefaultOptions()
		o.Upto, o.FromSnapshot = s.BaseOffset, psm.SnapshotNone
		r, err := psm.Rebuild(pd, o)
		if err != nil {
			tb.Fatal(err)
		}
		var entries []segment.SnapshotEntry
		for i := range r.Producers {
			entries = append(entries, psm.SnapshotEntryOf(&r.Producers[i]))
		}
		path := filepath.Join(pdir, segment.SegmentFileName(s.BaseOffset, segment.SnapshotSuffix))
		if err := segment.WriteProducerSnapshotFile(path, entries, false); err != nil {
			tb.Fatal(err)
		}
	}
	return pdir
}
