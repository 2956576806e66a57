package segment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
)

// TestVerifyTimeIndexWriterOffsets: a .timeindex entry may hold any offset
// one of Kafka's writers hands LogSegment.append as the offset of the max
// timestamp, and nothing else:
//
//   - the batch's lastOffset (compressed batches, followers, recovery, and
//     every leader since KAFKA-16341);
//   - before Kafka 3.8, for an uncompressed batch,
//     LogValidator.assignOffsetsNonCompressed's offset of the FIRST record
//     whose timestamp is the batch's max (record.timestamp() >
//     maxTimestamp), as in rjmfernandes/flink-on-prem connect-status-1;
//   - before Kafka 3.8, for a LogAppendTime batch, the first offset
//     assigned (offsetOfMaxTimestamp = initialOffset).
func TestVerifyTimeIndexWriterOffsets(t *testing.T) {
	const t0 = 1_700_000_000_000
	rec := func(d int32, ts int64) decode.RecordSpec {
		return decode.RecordSpec{OffsetDelta: d, Timestamp: ts, Value: []byte("v")}
	}
	at := func(ts int64) *int64 { return &ts }
	var log []byte
	add := func(spec decode.BatchSpec, recs ...decode.RecordSpec) {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = -1, -1, -1
		var err error
		if log, err = decode.AppendBatch(log, spec, recs); err != nil {
			t.Fatal(err)
		}
	}
	// 0..3 uncompressed: max timestamp t0+5 first at offset 1, again at 3.
	add(decode.BatchSpec{BaseOffset: 0}, rec(0, t0), rec(1, t0+5), rec(2, t0+2), rec(3, t0+5))
	// 4..6 gzip: max t0+9 first at offset 5.
	add(decode.BatchSpec{BaseOffset: 4, Compression: decode.CompressionGzip}, rec(0, t0+6), rec(1, t0+9), rec(2, t0+7))
	// 7..8 LogAppendTime, appended at t0+20.
	add(decode.BatchSpec{BaseOffset: 7, LogAppendTime: true, MaxTimestamp: at(t0 + 20)}, rec(0, t0+10), rec(1, t0+11))
	// 9..10 uncompressed, both records at t0+30.
	add(decode.BatchSpec{BaseOffset: 9}, rec(0, t0+30), rec(1, t0+30))

	dir := t.TempDir()
	logPath := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	lf, err := OpenLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	for _, c := range []struct {
		name   string
		e      TimeIndexEntry
		wantOK bool
	}{
		{"uncompressed, last offset", TimeIndexEntry{t0 + 5, 3}, true},
		{"uncompressed, first record with the max timestamp", TimeIndexEntry{t0 + 5, 1}, true},
		{"uncompressed, another record", TimeIndexEntry{t0 + 5, 2}, false},
		{"uncompressed, the base offset", TimeIndexEntry{t0 + 5, 0}, false},
		{"uncompressed, right offset, wrong timestamp", TimeIndexEntry{t0 + 4, 1}, false},
		{"compressed, last offset", TimeIndexEntry{t0 + 9, 6}, true},
		{"compressed, first record with the max timestamp", TimeIndexEntry{t0 + 9, 5}, false},
		{"LogAppendTime, last offset", TimeIndexEntry{t0 + 20, 8}, true},
		{"LogAppendTime, first offset", TimeIndexEntry{t0 + 20, 7}, true},
		{"equal timestamps, the first", TimeIndexEntry{t0 + 30, 9}, true},
		{"equal timestamps, the last", TimeIndexEntry{t0 + 30, 10}, true},
		{"past the log", TimeIndexEntry{t0 + 40, 11}, false},
	} {
		x := ParseTimeIndex(buildTimeIndex(t, 0, c.e), 0)
		x.Path = "x.timeindex"
		probs, err := VerifyIndexes(lf, nil, &x)
		if err != nil {
			t.Fatal(err)
		}
		if ok := len(probs) == 0; ok != c.wantOK {
			t.Errorf("%s: entry %+v: problems %v, want accepted=%v", c.name, c.e, probs, c.wantOK)
		}
	}

	var dec decode.Decoder
	sc := lf.Scanner(ScanOptions{})
	if !sc.Next() {
		t.Fatal("no batch")
	}
	b := sc.Batch()
	for off, want := range map[int64]bool{-1: false, 0: false, 1: true, 2: false, 3: true, 4: false} {
		if got := TimeIndexOffsetOK(&dec, b, off); got != want {
			t.Errorf("TimeIndexOffsetOK(batch 0..3, %d) = %v, want %v", off, got, want)
		}
	}
}
