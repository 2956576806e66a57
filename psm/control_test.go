package psm

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// overlongOffsetDelta re-encodes the offsetDelta (0) of the single record
// of the uncompressed control batch raw in six bytes, 80 80 80 80 80 00,
// and fixes batchLength, the record length and the CRC, so that only the
// varint is wrong. It returns the new batch and the position of the varint.
func overlongOffsetDelta(t *testing.T, raw []byte) ([]byte, int) {
	t.Helper()
	const overlong = "\x80\x80\x80\x80\x80\x00"
	recs := raw[decode.RecordBatchOverhead:]
	// DefaultRecord: length (1 byte for a small record), attributes,
	// timestampDelta (0: one byte), offsetDelta (0: one byte) …
	length, n := binary.Varint(recs)
	if n != 1 || recs[2] != 0 || recs[3] != 0 {
		t.Fatalf("unexpected record layout % x", recs[:8])
	}
	rec := decode.AppendVarint(nil, int32(length)+int32(len(overlong))-1)
	if len(rec) != 1 {
		t.Fatalf("record length no longer fits one byte")
	}
	rec = append(rec, recs[1:3]...)
	rec = append(rec, overlong...)
	rec = append(rec, recs[4:]...)
	out := append(append([]byte(nil), raw[:decode.RecordBatchOverhead]...), rec...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-decode.LogOverhead))
	binary.BigEndian.PutUint32(out[17:], decode.CRC32C(out[21:]))
	return out, decode.RecordBatchOverhead + 3
}

// psm used to read a control batch's record with a reader of its own built
// on binary.Varint, which accepts up to ten bytes for any varint. Kafka's
// ByteUtils.readVarint reads at most five and rejects a fifth byte with the
// continuation bit set, so the broker's ProducerAppendInfo.append fails on
// such a marker (InvalidRecordException) and never applies it. psm now
// reads the record through decode.Decoder.FirstRecord: the marker is an
// invalid-control anomaly carrying decode's positioned error, the very
// error decode.Decoder.Records reports for the same bytes, and the
// transaction it would have ended stays open.
func TestControlRecordOverlongVarintRejected(t *testing.T) {
	l := newLog(t, 0)
	l.data(7, 0, 0, 2, true) // offsets 0..1: an open transaction
	at := len(l.buf)
	l.marker(7, 0, false, 5) // offset 2: its ABORT marker
	bad, varintPos := overlongOffsetDelta(t, l.buf[at:])
	l.buf = append(l.buf[:at], bad...)

	b, err := decode.ParseBatch(bad)
	if err != nil {
		t.Fatal(err)
	}
	if !b.CRCValid() {
		t.Fatal("the rewritten marker's CRC does not match")
	}
	// What the old reader accepted: Go's varint takes all six bytes as 0.
	if v, n := binary.Varint(bad[varintPos:]); v != 0 || n != 6 {
		t.Fatalf("binary.Varint = %d, %d; the fixture no longer shows the old leniency", v, n)
	}

	// decode rejects it, at the varint's position in the batch.
	var dec decode.Decoder
	recErr := dec.Records(&b, func(*decode.Record) error { return nil })
	ce, ok := decode.AsCorrupt(recErr)
	if !ok {
		t.Fatalf("Records: %v, want a *CorruptError", recErr)
	}
	if ce.Pos != int64(varintPos) || ce.Field != "offsetDelta" || ce.BaseOffset != 2 || !errors.Is(ce, decode.ErrCorrupt) {
		t.Fatalf("Records: %#v (%v), want offsetDelta at position %d of batch 2", ce, ce, varintPos)
	}

	// psm's control reader reports the same error …
	if _, _, _, err := newControlReader().first(&b); err == nil || err.Error() != recErr.Error() {
		t.Fatalf("control reader: %v, want %v", err, recErr)
	}

	// … and replay treats the marker as the broker would: not applied.
	r := replayOne(t, l, nil)
	inv := anomalies(r, finding.InvalidControl)
	if len(inv) != 1 || inv[0].Offset != 2 || inv[0].ProducerID != 7 || inv[0].Severity() != finding.Error ||
		!strings.Contains(inv[0].Message, recErr.Error()) {
		t.Fatalf("anomalies %+v, want one invalid-control at offset 2 quoting %q", r.Anomalies, recErr)
	}
	if e := mustProducer(t, r, 7); e.CurrentTxnFirstOffset != 0 {
		t.Errorf("producer 7 %+v: the transaction should still be open from offset 0", e)
	}
	if len(r.Aborted) != 0 {
		t.Errorf("aborted %+v: the damaged marker must not abort anything", r.Aborted)
	}
}

// FirstRecord is what Records yields first, for every control batch the
// builders write, with no allocation for an uncompressed one.
func TestControlReaderMatchesRecords(t *testing.T) {
	l := newLog(t, 0)
	l.data(7, 0, 0, 2, true)
	l.marker(7, 0, true, 3)
	src := "src-cluster"
	l.barrier(&src)
	l.barrier(nil)
	cr := newControlReader()
	var dec decode.Decoder
	controls := 0
	for buf := l.buf; len(buf) > 0; {
		b, err := decode.ParseBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[b.Size():]
		if !b.IsControl() {
			continue
		}
		controls++
		var wantKey, wantValue []byte
		var wantTs int64
		if err := dec.Records(&b, func(r *decode.Record) error {
			wantKey, wantValue, wantTs = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...), r.Timestamp
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		k, v, ts, err := cr.first(&b)
		if err != nil || string(k) != string(wantKey) || string(v) != string(wantValue) || ts != wantTs {
			t.Errorf("batch %d: first = %x %x %d %v, Records = %x %x %d", b.BaseOffset, k, v, ts, err, wantKey, wantValue, wantTs)
		}
		if allocs := testing.AllocsPerRun(10, func() { _, _, _, _ = cr.first(&b) }); allocs != 0 {
			t.Errorf("batch %d: %v allocations per control record", b.BaseOffset, allocs)
		}
	}
	if controls != 3 {
		t.Fatalf("%d control batches, want 3", controls)
	}
}

// A MIRROR_PID_RESET record in a control batch that carries a producer id
// is no barrier: a barrier has producerId -1 (barrier.md §4.3), and a
// broker hands a control batch with a producer id to
// ProducerAppendInfo.append, where EndTransactionMarker.deserialize
// rejects type 7 (upstream ControlRecordType.fromTypeId maps it to
// UNKNOWN: IllegalArgumentException), so the log load fails. kseg reports
// invalid-control and leaves the producer map alone; the same record with
// producerId -1 clears it.
func TestMirrorPidResetWithProducerIDIsNoBarrier(t *testing.T) {
	for _, value := range [][]byte{decode.AppendMirrorPidResetValue(nil, nil), {0xff}} {
		l := newLog(t, 0)
		l.data(5, 0, 0, 2, false)
		l.data(6, 0, 0, 1, true)
		rec := decode.RecordSpec{Timestamp: l.Ts, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: value}
		bad := l.append(decode.BatchSpec{ProducerID: 5, ProducerEpoch: 0, BaseSequence: -1, Control: true}, []decode.RecordSpec{rec})
		l.data(5, 0, 2, 1, false)
		r := replayOne(t, l, nil)
		onlyAnomalies(t, r, finding.InvalidControl, finding.OpenTransaction)
		inv := anomalies(r, finding.InvalidControl)
		if len(inv) != 1 || inv[0].Offset != bad || inv[0].ProducerID != 5 || inv[0].Severity() != finding.Error ||
			!strings.Contains(inv[0].Message, "IllegalArgumentException") || !strings.Contains(inv[0].Message, "not applied as a barrier") {
			t.Fatalf("value % x: anomalies %+v, want one invalid-control at %d", value, r.Anomalies, bad)
		}
		if len(r.Barriers) != 0 {
			t.Errorf("value % x: barriers %+v, want none", value, r.Barriers)
		}
		if e := mustProducer(t, r, 5); e.LastSeq() != 2 || len(e.Batches) != 2 {
			t.Errorf("value % x: producer 5 %+v: its history must survive", value, e)
		}
		if e := mustProducer(t, r, 6); e.CurrentTxnFirstOffset != 2 {
			t.Errorf("value % x: producer 6 %+v", value, e)
		}
	}
}
