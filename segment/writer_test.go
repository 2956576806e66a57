package segment_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

const t0 = segtest.T0

// v2 builds an uncompressed v2 batch of n records of valueSize bytes each
// at baseOffset, all with timestamp ts.
func v2(t *testing.T, base int64, ple int32, n, valueSize int, ts int64) []byte {
	t.Helper()
	recs := make([]decode.RecordSpec, n)
	for i := range recs {
		recs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: ts, Key: []byte("k"), Value: bytes.Repeat([]byte{'v'}, valueSize)}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: ple, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func segPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, segment.SegmentFileName(base, suffix))
}

// checkSegment runs the checks a writer's output must pass: the indexes
// verify against the log, pass the broker's sanity checks, and equal what
// log recovery rebuilds.
func checkSegment(t *testing.T, dir string, base int64, interval int) (segment.OffsetIndex, segment.TimeIndex) {
	t.Helper()
	logPath := segPath(dir, base, segment.LogSuffix)
	idx, err := segment.ReadOffsetIndex(segPath(dir, base, segment.IndexSuffix), base)
	if err != nil {
		t.Fatal(err)
	}
	tidx, err := segment.ReadTimeIndex(segPath(dir, base, segment.TimeIndexSuffix), base)
	if err != nil {
		t.Fatal(err)
	}
	if err := segment.SanityCheckOffsetIndex(&idx); err != nil {
		t.Errorf("%s: %v", idx.Path, err)
	}
	if err := segment.SanityCheckTimeIndex(&tidx); err != nil {
		t.Errorf("%s: %v", tidx.Path, err)
	}
	if idx.Slots != len(idx.Entries) || tidx.Slots != len(tidx.Entries) {
		t.Errorf("%s: indexes not trimmed: %d/%d and %d/%d", dir, len(idx.Entries), idx.Slots, len(tidx.Entries), tidx.Slots)
	}
	lf := segtest.OpenLog(t, logPath)
	probs, err := segment.VerifyIndexes(lf, &idx, &tidx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("%s", p)
	}
	ri, rt, err := segment.RebuildIndexes(logPath, base, interval)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ri, testkit.ReadFile(t, idx.Path)) {
		t.Errorf("%s: RebuildIndexes gives %x, the appender wrote %x", idx.Path, ri, testkit.ReadFile(t, idx.Path))
	}
	if !bytes.Equal(rt, testkit.ReadFile(t, tidx.Path)) {
		t.Errorf("%s: RebuildIndexes gives %x, the appender wrote %x", tidx.Path, rt, testkit.ReadFile(t, tidx.Path))
	}
	return idx, tidx
}

// TestAppenderIndexInterval pins the index rule: the first batch of a
// segment is never indexed, and a batch is indexed when strictly more than
// index.interval.bytes went by since the last entry, counted before the
// batch itself.
func TestAppenderIndexInterval(t *testing.T) {
	dir := t.TempDir()
	one := v2(t, 0, 0, 1, 20, t0)
	size := len(one)
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{IndexIntervalBytes: size})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if err := a.Append(v2(t, int64(i), 0, 1, 20, t0+int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	idx, tidx := checkSegment(t, dir, 0, size)
	// bytes before batch i since the last entry: 0, S, 2S→entry, S, 2S→entry …
	want := []segment.IndexEntry{{Offset: 2, Position: int32(2 * size)}, {Offset: 4, Position: int32(4 * size)}, {Offset: 6, Position: int32(6 * size)}}
	if !slices.Equal(idx.Entries, want) {
		t.Errorf("index %v, want %v", idx.Entries, want)
	}
	wantT := []segment.TimeIndexEntry{{Timestamp: t0 + 2, Offset: 2}, {Timestamp: t0 + 4, Offset: 4}, {Timestamp: t0 + 6, Offset: 6}}
	if !slices.Equal(tidx.Entries, wantT) {
		t.Errorf("time index %v, want %v", tidx.Entries, wantT)
	}
}

// TestAppenderTimeIndex: the time index records the largest timestamp so
// far with the offset of the batch holding it, only when it grows, plus the
// final entry on close; magic-0 data leaves it empty.
func TestAppenderTimeIndex(t *testing.T) {
	dir := t.TempDir()
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{IndexIntervalBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := []int64{t0 + 50, t0 + 10, t0 + 20, t0 + 100, t0 + 90, t0 + 95}
	for i, v := range ts {
		if err := a.Append(v2(t, int64(i), 0, 1, 10, v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	idx, tidx := checkSegment(t, dir, 0, 1)
	if len(idx.Entries) != 5 {
		t.Errorf("index %v: want every batch but the first", idx.Entries)
	}
	// Entries at batches 1..5: max so far is 50@0 (batches 1, 2), then
	// 100@3 (batches 3..5); only increases are written.
	want := []segment.TimeIndexEntry{{Timestamp: t0 + 50, Offset: 0}, {Timestamp: t0 + 100, Offset: 3}}
	if !slices.Equal(tidx.Entries, want) {
		t.Errorf("time index %v, want %v", tidx.Entries, want)
	}

	// The final entry is added on close even when no index entry was due.
	dir = t.TempDir()
	a, err = segment.OpenAppender(dir, segment.AppenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []int64{t0 + 5, t0 + 7, t0 + 6} {
		if err := a.Append(v2(t, int64(i), 0, 1, 10, v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	idx, tidx = checkSegment(t, dir, 0, segment.DefaultIndexIntervalBytes)
	if len(idx.Entries) != 0 || !slices.Equal(tidx.Entries, []segment.TimeIndexEntry{{Timestamp: t0 + 7, Offset: 1}}) {
		t.Errorf("index %v time index %v", idx.Entries, tidx.Entries)
	}

	// Magic 0 has no timestamps.
	dir = t.TempDir()
	a, err = segment.OpenAppender(dir, segment.AppenderOptions{IndexIntervalBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var c decode.Codecs
	for i := range 3 {
		m, err := c.AppendLegacy(nil, decode.LegacySpec{Offset: int64(i), Magic: 0, Value: []byte("v")})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	idx, tidx = checkSegment(t, dir, 0, 1)
	if len(idx.Entries) != 2 || len(tidx.Entries) != 0 {
		t.Errorf("v0: index %v time index %v", idx.Entries, tidx.Entries)
	}
	if _, err := os.Stat(filepath.Join(dir, segment.LeaderEpochCheckpointName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("v0-only log wrote a leader-epoch-checkpoint: %v", err)
	}
}

// TestAppenderRoll checks roll boundaries: a segment rolls when the next
// entry would take it past segment.bytes, the new segment is named by that
// entry's base offset, OnRoll sees the completed segment before the new
// one exists, and every segment passes the index checks.
func TestAppenderRoll(t *testing.T) {
	dir := t.TempDir()
	batch := v2(t, 0, 0, 2, 100, t0)
	size := int64(len(batch))
	var rolls []int64
	var a *segment.Appender
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{
		SegmentBytes:       3*size + size/2, // three batches fit, a fourth does not
		IndexIntervalBytes: int(size / 2),
		OnRoll: func(newBase int64) error {
			rolls = append(rolls, newBase)
			if _, err := os.Stat(segPath(dir, newBase, segment.LogSuffix)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("OnRoll(%d): new segment already exists (%v)", newBase, err)
			}
			prev := a.ActiveBaseOffset()
			if _, err := os.Stat(segPath(dir, prev, segment.IndexSuffix)); err != nil {
				t.Errorf("OnRoll(%d): previous segment %d not completed: %v", newBase, prev, err)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		// Offsets 0,1 2,3 … with a gap 16..35 (compaction).
		base := int64(2 * i)
		if i >= 8 {
			base += 20
		}
		if err := a.Append(v2(t, base, int32(i/5), 2, 100, t0+int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.LogEndOffset(); got != 40 {
		t.Errorf("log end offset %d, want 40", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantSegs := []int64{0, 6, 12, 38}
	if !slices.Equal(a.Segments(), wantSegs) || !slices.Equal(rolls, wantSegs[1:]) {
		t.Errorf("segments %v rolls %v, want %v", a.Segments(), rolls, wantSegs)
	}
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, sg := range pd.Segments {
		if sg.BaseOffset != wantSegs[i] {
			t.Fatalf("segment %d base %d", i, sg.BaseOffset)
		}
		st, err := os.Stat(sg.Log)
		if err != nil {
			t.Fatal(err)
		}
		wantSize := 3 * size
		if i == 3 {
			wantSize = size
		}
		if st.Size() != wantSize {
			t.Errorf("%s: %d bytes, want %d", sg.Log, st.Size(), wantSize)
		}
		idx, _ := checkSegment(t, dir, sg.BaseOffset, int(size/2))
		if i < 3 && len(idx.Entries) != 2 {
			t.Errorf("%s: %d index entries, want 2", sg.Index, len(idx.Entries))
		}
	}
	epochs, err := segment.ReadLeaderEpochCheckpoint(filepath.Join(dir, segment.LeaderEpochCheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	if want := []segment.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: 10}}; !slices.Equal(epochs, want) {
		t.Errorf("leader epochs %v, want %v", epochs, want)
	}
	if _, err := os.Stat(filepath.Join(dir, segment.PartitionMetadataName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partition.metadata without a topic id: %v", err)
	}
}

// TestAppenderRollByTime: segment.ms is measured from the first batch's
// maxTimestamp.
func TestAppenderRollByTime(t *testing.T) {
	dir := t.TempDir()
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range []int64{t0, t0 + 1000, t0 + 1001, t0 + 5} {
		if err := a.Append(v2(t, int64(i), 0, 1, 1, ts)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 2}; !slices.Equal(a.Segments(), want) {
		t.Errorf("segments %v, want %v", a.Segments(), want)
	}
}

func TestAppenderErrors(t *testing.T) {
	dir := t.TempDir()
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	b0 := v2(t, 0, 0, 2, 10, t0)
	if err := a.Append(append(slices.Clone(b0), b0...)); err == nil {
		t.Error("two entries in one Append accepted")
	}
	if err := a.Append(b0[:len(b0)-1]); err == nil {
		t.Error("a truncated entry accepted")
	}
	if err := a.Append(b0); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(v2(t, 1, 0, 1, 10, t0)); err == nil {
		t.Error("an offset below the log end offset accepted")
	}
	if err := a.Append(v2(t, 2, 0, 1, 2000, t0)); err == nil {
		t.Error("a batch larger than the segment accepted")
	}
	if err := a.AppendAbortedTxn(segment.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 5}); err == nil {
		t.Error("an aborted txn past the log end accepted")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(v2(t, 2, 0, 1, 10, t0)); err == nil {
		t.Error("Append after Close accepted")
	}
	if _, err := segment.OpenAppender(dir, segment.AppenderOptions{}); !errors.Is(err, segment.ErrSegmentsExist) {
		t.Errorf("reopening a written directory: %v", err)
	}
}

// TestAppenderTxnIndexEpochsMetadata: aborted transactions land in the
// active segment's .txnindex (created only when needed), leader epochs
// follow LeaderEpochFileCache.assign, partition.metadata carries the topic
// id.
func TestAppenderTxnIndexEpochsMetadata(t *testing.T) {
	dir := t.TempDir()
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{StartOffset: 100, TopicID: &id})
	if err != nil {
		t.Fatal(err)
	}
	for i, ple := range []int32{-1, 4, 4, 6, 6} {
		if err := a.Append(v2(t, 100+int64(i), ple, 1, 1, t0)); err != nil {
			t.Fatal(err)
		}
	}
	txn := segment.AbortedTxn{ProducerID: 7, FirstOffset: 90, LastOffset: 103, LastStableOffset: 95}
	if err := a.AppendAbortedTxn(txn); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendAbortedTxn(txn); err == nil {
		t.Error("a second entry with the same last offset accepted")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := segment.ReadTxnIndex(segPath(dir, 100, segment.TxnIndexSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Entries, []segment.AbortedTxn{txn}) || segment.SanityCheckTxnIndex(&x, 100) != nil {
		t.Errorf("txnindex %v", x.Entries)
	}
	epochs, err := segment.ReadLeaderEpochCheckpoint(filepath.Join(dir, segment.LeaderEpochCheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	if want := []segment.EpochEntry{{Epoch: 4, StartOffset: 101}, {Epoch: 6, StartOffset: 103}}; !slices.Equal(epochs, want) {
		t.Errorf("leader epochs %v, want %v", epochs, want)
	}
	pm, err := segment.ReadPartitionMetadata(filepath.Join(dir, segment.PartitionMetadataName))
	if err != nil || pm.TopicID != id {
		t.Errorf("partition.metadata %+v %v", pm, err)
	}
	checkSegment(t, dir, 100, segment.DefaultIndexIntervalBytes)
}

// TestRecoverIndexesStopsAtBadBatch: like LogSegment.recover, rebuilding
// stops at the first batch that fails its CRC, and at a torn tail.
func TestRecoverIndexesStopsAtBadBatch(t *testing.T) {
	dir := t.TempDir()
	var log []byte
	for i := range 6 {
		log = append(log, v2(t, int64(i), 0, 1, 50, t0+int64(i))...)
	}
	size := int64(len(log) / 6)
	p := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	bad := slices.Clone(log)
	bad[4*size-2] ^= 1 // inside batch 3
	testkit.WriteFile(t, p, bad)
	r, err := segment.RecoverIndexes(p, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.ValidBytes != 3*size || !errors.Is(r.Stop, decode.ErrCRCMismatch) {
		t.Errorf("validBytes %d stop %v, want %d and a CRC mismatch", r.ValidBytes, r.Stop, 3*size)
	}
	if got := segment.ParseOffsetIndex(r.Index, 0).Entries; len(got) != 2 {
		t.Errorf("index %v, want entries for batches 1 and 2", got)
	}
	if got := segment.ParseTimeIndex(r.TimeIndex, 0).Entries; !slices.Equal(got, []segment.TimeIndexEntry{{Timestamp: t0 + 1, Offset: 1}, {Timestamp: t0 + 2, Offset: 2}}) {
		t.Errorf("time index %v", got)
	}
	testkit.WriteFile(t, p, log[:len(log)-10])
	r, err = segment.RecoverIndexes(p, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.ValidBytes != 5*size || r.Tail.Kind != segment.TailTornBatch || r.Stop == nil {
		t.Errorf("torn: validBytes %d tail %v stop %v", r.ValidBytes, r.Tail.Kind, r.Stop)
	}
	if _, _, err := segment.RebuildIndexes(p, 3, 1); !errors.Is(err, segment.ErrOffsetOverflow) {
		t.Errorf("base offset above the batches: %v", err)
	}
}

// TestGeneratedFixturesIndexes: every segment of every generated fixture
// passes the writer checks, and RebuildIndexes reproduces its indexes byte
// for byte.
func TestGeneratedFixturesIndexes(t *testing.T) {
	out := t.TempDir()
	if err := segtest.Generate(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range segtest.PartitionNames {
		dir := filepath.Join(out, "partitions", name)
		pd, err := segment.OpenPartitionDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(pd.Segments) == 0 {
			t.Fatalf("%s: no segments", name)
		}
		for _, sg := range pd.Segments {
			checkSegment(t, dir, sg.BaseOffset, segtest.IndexIntervals[name])
			if sg.TxnIndex != "" {
				x, err := segment.ReadTxnIndex(sg.TxnIndex)
				if err != nil || segment.SanityCheckTxnIndex(&x, sg.BaseOffset) != nil || len(x.Entries) == 0 {
					t.Errorf("%s: %v %v", sg.TxnIndex, x.Entries, err)
				}
			}
		}
		for _, sn := range pd.Snapshots {
			if _, err := segment.ReadProducerSnapshot(sn.Path); err != nil {
				t.Errorf("%s: %v", sn.Path, err)
			}
		}
	}
	orders, _ := segment.OpenPartitionDir(filepath.Join(out, "partitions", "orders-0"))
	if len(orders.Segments) < 3 || len(orders.Snapshots) != len(orders.Segments) {
		t.Errorf("orders-0: %d segments, %d snapshots", len(orders.Segments), len(orders.Snapshots))
	}
	for i, sn := range orders.Snapshots[:len(orders.Snapshots)-1] {
		if sn.Offset != orders.Segments[i+1].BaseOffset {
			t.Errorf("snapshot %d at %d, want the roll offset %d", i, sn.Offset, orders.Segments[i+1].BaseOffset)
		}
	}
	epochs, _ := segment.ReadLeaderEpochCheckpoint(orders.LeaderEpochCheckpoint)
	if len(epochs) != 2 {
		t.Errorf("orders-0 leader epochs %v, want 2", epochs)
	}
}

// TestRebuildIndexesRealFixtures compares RebuildIndexes (index.interval.bytes
// 4096, the default these brokers ran with) with broker-written indexes.
// What is certain for every file: each real entry is a valid pair — the
// offset-index entry points at the start of the batch ending at its offset,
// the time-index entry names a batch's last offset and its max timestamp —
// and the entry counts are close. Where a segment's whole history was
// single-batch appends (or a recovery rebuild), Kafka's rule reproduces the
// files exactly; those segments are listed as exact. The others were
// partly written by appends of several batches at a time under the
// pre-KAFKA-806 rule (one entry per append), which starts the byte count
// elsewhere (formats.md §7.1), so only part of their entries coincide.
func TestRebuildIndexesRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	cases := []struct {
		dir   string
		base  int64
		exact bool
	}{
		{"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0", 0, false},
		{"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0", 3586, true},
		{"eric-kimm__stock-market-pipeline/kafka/data/testing-0", 0, false},
		{"eric-kimm__stock-market-pipeline/kafka/data/testing-0", 11630, true},
		{"macsakini__KafkaCluster/kafka/data/test-0", 0, true},
		{"macsakini__KafkaCluster/kafka/data/tenitems-0", 0, true},
		{"macsakini__KafkaCluster/kafka/data/quickstart-events-0", 0, true},
		{"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0", 0, true},
		{"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17", 0, true},
		{"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39", 0, true},
	}
	for _, c := range cases {
		dir := filepath.Join(root, c.dir)
		logPath := segPath(dir, c.base, segment.LogSuffix)
		ri, rt, err := segment.RebuildIndexes(logPath, c.base, segment.DefaultIndexIntervalBytes)
		if err != nil {
			t.Errorf("%s: %v", logPath, err)
			continue
		}
		realIdx, err := segment.ReadOffsetIndex(segPath(dir, c.base, segment.IndexSuffix), c.base)
		if err != nil {
			t.Fatal(err)
		}
		realTime, err := segment.ReadTimeIndex(segPath(dir, c.base, segment.TimeIndexSuffix), c.base)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := segment.OpenLog(logPath)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := segment.VerifyIndexes(lf, &realIdx, &realTime)
		lf.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("real entry is not a valid pair: %s", p)
		}
		mine := segment.ParseOffsetIndex(ri, c.base).Entries
		mineT := segment.ParseTimeIndex(rt, c.base).Entries
		same, sameT := reproduced(mine, realIdx.Entries), reproduced(mineT, realTime.Entries)
		t.Logf("%s: index %d/%d real entries reproduced (rebuilt %d); timeindex %d/%d (rebuilt %d)",
			segment.SegmentFileName(c.base, "@"+filepath.Base(c.dir)), same, len(realIdx.Entries), len(mine), sameT, len(realTime.Entries), len(mineT))
		if c.exact {
			if !bytes.Equal(ri, testkit.ReadFile(t, realIdx.Path)) || !bytes.Equal(rt, testkit.ReadFile(t, realTime.Path)) {
				t.Errorf("%s: rebuilt indexes differ from the broker's (%d/%d, %d/%d)", logPath, same, len(realIdx.Entries), sameT, len(realTime.Entries))
			}
			continue
		}
		// The same rule over the same bytes can only drift by the count
		// offset: never by more than a few entries per thousand.
		if d := len(mine) - len(realIdx.Entries); d < -len(mine)/100-2 || d > len(mine)/100+2 {
			t.Errorf("%s: rebuilt %d index entries, the broker wrote %d", logPath, len(mine), len(realIdx.Entries))
		}
	}
}

// reproduced counts the entries of real that mine holds too.
func reproduced[E comparable](mine, real []E) int {
	set := make(map[E]bool, len(mine))
	for _, e := range mine {
		set[e] = true
	}
	n := 0
	for _, e := range real {
		if set[e] {
			n++
		}
	}
	return n
}
