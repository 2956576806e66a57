// Package mm2test writes what MirrorMaker 2 leaves on disk, for kseg's
// tests, fixtures and benchmarks: a source partition, and a replica of it
// made the way MirrorSourceTask makes one (with the offset syncs
// OffsetSyncWriter emits and the checkpoints MirrorCheckpointTask emits),
// optionally with one fault planted. Every directory is written by
// segment.Appender, the broker-faithful writer; everything is
// deterministic.
package mm2test

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// T0 is the first record's timestamp.
const T0 = 1700000000000

// SourceOptions describe a source partition.
type SourceOptions struct {
	// Records is how many data records (besides transaction markers).
	Records int
	// Transactions: a transactional producer (200) writes every fifth
	// batch, each its own transaction, committed or (every third)
	// aborted, and the last batch, left open at the end.
	Transactions bool
	// Keys is how many distinct keys records cycle through (0: every
	// record its own key); a compacted copy keeps each key's last record.
	Keys int
	// SegmentBytes is segment.bytes (0: 4096, several segments).
	SegmentBytes int64
	// NoTimestamps writes magic-0 messages (no timestamps) instead of v2
	// batches: what a 0.9 client wrote.
	NoTimestamps bool
}

// Record is a data record of a source.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []decode.Header
}

// SourceRecord is the i-th record WriteSource writes: varied keys (some
// null, unless keys cycle), values (some null: tombstones), headers (some with null values),
// timestamps (some equal, one going back).
func SourceRecord(i, keys int) Record {
	r := Record{Timestamp: T0 + int64(i)*10}
	if i%17 == 5 {
		r.Timestamp -= 25 // a record older than the one before it
	}
	switch {
	case keys > 0: // a compacted topic: every record keyed
		r.Key = fmt.Appendf(nil, "key-%d", i%keys)
	case i%11 == 3:
		r.Key = nil
	default:
		r.Key = fmt.Appendf(nil, "key-%d", i)
	}
	if i%13 != 7 {
		r.Value = fmt.Appendf(nil, `{"order":%d,"amount":%d.%02d,"note":"%s"}`, i, i*37%1000, i%100, "xyzzy"[:i%5])
	}
	switch i % 4 {
	case 1:
		r.Headers = []decode.Header{{Key: []byte("trace"), Value: fmt.Appendf(nil, "t-%d", i)}}
	case 2:
		r.Headers = []decode.Header{{Key: []byte("trace"), Value: nil}, {Key: []byte("origin"), Value: []byte("web")}}
	}
	return r
}

// WriteSource writes a source partition directory: batches of one to six
// records from an idempotent producer (100), codecs in turn (none, gzip,
// lz4, zstd, snappy), and with Transactions a transactional producer's
// batches and markers among them. It returns the records written, in
// offset order (transaction markers excluded).
func WriteSource(dir string, o SourceOptions) ([]Record, error) {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 4096
	}
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentBytes: o.SegmentBytes, IndexIntervalBytes: 512, SegmentMs: -1})
	if err != nil {
		return nil, err
	}
	w := &sourceWriter{a: a, o: o}
	for i, b := 0, 0; i < o.Records; b++ {
		n := min(1+b%6, o.Records-i)
		last := i+n >= o.Records
		txn := o.Transactions && (b%5 == 3 || last) // the last transaction stays open
		if err := w.data(i, n, b, txn); err != nil {
			return nil, err
		}
		i += n
		if txn && !last {
			t := decode.ControlCommit
			if w.txns%3 == 2 {
				t = decode.ControlAbort
			}
			if err := w.marker(t, T0+int64(i)*10); err != nil {
				return nil, err
			}
		}
	}
	if err := a.Close(); err != nil {
		return nil, err
	}
	return w.recs, nil
}

type sourceWriter struct {
	a    *segment.Appender
	o    SourceOptions
	recs []Record
	seq  int32
	tseq int32
	txns int
	// txnFirst is the first offset of the open transaction (-1: none).
	txnFirst int64
}

var codecs = []decode.Compression{decode.CompressionNone, decode.CompressionGzip, decode.CompressionLZ4, decode.CompressionZstd, decode.CompressionSnappy}

func (w *sourceWriter) data(i, n, b int, txn bool) error {
	base := w.a.LogEndOffset()
	if w.o.NoTimestamps {
		for j := range n {
			r := SourceRecord(i+j, w.o.Keys)
			r.Offset, r.Timestamp, r.Headers = base+int64(j), decode.NoTimestamp, nil
			var c decode.Codecs
			raw, err := c.AppendLegacy(nil, decode.LegacySpec{Magic: 0, Offset: r.Offset, Key: r.Key, Value: r.Value})
			if err != nil {
				return err
			}
			if err := w.a.Append(raw); err != nil {
				return err
			}
			w.recs = append(w.recs, r)
		}
		return nil
	}
	specs := make([]decode.RecordSpec, n)
	for j := range n {
		r := SourceRecord(i+j, w.o.Keys)
		r.Offset = base + int64(j)
		specs[j] = decode.RecordSpec{OffsetDelta: int32(j), Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers}
		w.recs = append(w.recs, r)
	}
	spec := decode.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: 3, Compression: codecs[b%len(codecs)],
		ProducerID: 100, ProducerEpoch: 0, BaseSequence: w.seq}
	if txn {
		spec.Transactional, spec.ProducerID, spec.BaseSequence = true, 200, w.tseq
		w.tseq += int32(n)
		w.txnFirst = base
	} else {
		w.seq += int32(n)
	}
	raw, err := decode.AppendBatch(nil, spec, specs)
	if err != nil {
		return err
	}
	return w.a.Append(raw)
}

func (w *sourceWriter) marker(t decode.ControlType, ts int64) error {
	off := w.a.LogEndOffset()
	raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: off, PartitionLeaderEpoch: 3, Transactional: true, Control: true,
		ProducerID: 200, ProducerEpoch: 0, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, t), Value: decode.AppendEndTxnMarkerValue(nil, 4)}})
	if err != nil {
		return err
	}
	if err := w.a.Append(raw); err != nil {
		return err
	}
	w.txns++
	if t == decode.ControlAbort {
		return w.a.AppendAbortedTxn(segment.AbortedTxn{ProducerID: 200, FirstOffset: w.txnFirst, LastOffset: off, LastStableOffset: off + 1})
	}
	return nil
}
