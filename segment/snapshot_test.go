package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// formats.md §8/§12: one entry pid=1000, epoch=0, lastSeq=9, lastOffset=42,
// offsetDelta=4, ts=1700000000000, coordEpoch=7, no ongoing txn; crc=3727684756.
const snapshotVector = "0001de2ff4940000000100000000000003e8000000000009000000000000002a000000040000018bcfe5680000000007ffffffffffffffff"

var snapshotVectorEntry = SnapshotEntry{
	ProducerID: 1000, ProducerEpoch: 0, LastSequence: 9, LastOffset: 42, OffsetDelta: 4,
	Timestamp: 1700000000000, CoordinatorEpoch: 7, CurrentTxnFirstOffset: -1,
}

func TestProducerSnapshotVector(t *testing.T) {
	b := testkit.MustHex(t, snapshotVector)
	if len(b) != 56 {
		t.Fatalf("vector is %d bytes", len(b))
	}
	es, err := ParseProducerSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(es, []SnapshotEntry{snapshotVectorEntry}) {
		t.Errorf("parsed %+v", es)
	}
	if !es[0].HasBatchMetadata() {
		t.Error("HasBatchMetadata = false")
	}
	if enc := EncodeProducerSnapshot(es); string(enc) != string(b) {
		t.Errorf("re-encoded %x\nwant       %s", enc, snapshotVector)
	}
	if crc := binary.BigEndian.Uint32(b[2:]); crc != 3727684756 {
		t.Errorf("vector crc %d", crc)
	}
}

func TestProducerSnapshotEmptyAndOrder(t *testing.T) {
	// No producers: 10 bytes, CRC over the zero count.
	b := EncodeProducerSnapshot(nil)
	want := append(testkit.MustHex(t, "0001"), binary.BigEndian.AppendUint32(nil, crc32.Checksum([]byte{0, 0, 0, 0}, castagnoli))...)
	want = append(want, 0, 0, 0, 0)
	if string(b) != string(want) {
		t.Fatalf("empty snapshot %x, want %x", b, want)
	}
	es, err := ParseProducerSnapshot(b)
	if err != nil || len(es) != 0 {
		t.Errorf("empty: %v %v", es, err)
	}
	// Order is preserved, including marker-only entries (lastOffset -1).
	in := []SnapshotEntry{
		{ProducerID: 9, ProducerEpoch: 3, LastSequence: -1, LastOffset: -1, OffsetDelta: 0, Timestamp: 5, CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1},
		{ProducerID: 1, ProducerEpoch: -1, LastSequence: 2147483647, LastOffset: 1 << 40, OffsetDelta: 99, Timestamp: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 77},
	}
	got, err := ParseProducerSnapshot(EncodeProducerSnapshot(in))
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("round trip %+v, %v", got, err)
	}
	if got[0].HasBatchMetadata() {
		t.Error("marker-only entry has batch metadata")
	}
}

func withCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

func TestProducerSnapshotCorrupt(t *testing.T) {
	vec := testkit.MustHex(t, snapshotVector)
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), vec...))
	}
	for _, c := range []struct {
		name  string
		in    []byte
		field string
		pos   int64
		class error
		kafka string
	}{
		{"empty file", nil, "version", 0, decode.ErrTruncated, "Snapshot failed schema validation: Buffer underflow"},
		{"one byte", []byte{0}, "version", 0, decode.ErrTruncated, ""},
		{"version 0", mod(func(b []byte) []byte { b[1] = 0; return b }), "version", 0, decode.ErrCorrupt,
			"Snapshot failed schema validation: Snapshot contained an unknown file version 0"},
		{"version 2", mod(func(b []byte) []byte { b[1] = 2; return b }), "version", 0, decode.ErrUnsupported, ""},
		{"version -1", mod(func(b []byte) []byte { b[0], b[1] = 0xff, 0xff; return b }), "version", 0, decode.ErrCorrupt, ""},
		{"torn crc", vec[:5], "crc", 2, decode.ErrTruncated, ""},
		{"torn count", vec[:8], "producerEntries", 6, decode.ErrTruncated, ""},
		{"torn entry", vec[:55], "producerEntries", 6, decode.ErrTruncated,
			"Snapshot failed schema validation: Tried to allocate a collection of size 1, but there are only 45 bytes remaining."},
		{"count too large", mod(func(b []byte) []byte { b[9] = 2; return withCRC(b) }), "producerEntries", 6, decode.ErrTruncated, ""},
		{"count huge", mod(func(b []byte) []byte { b[6], b[7] = 0x7f, 0xff; return b }), "producerEntries", 6, decode.ErrTruncated, ""},
		{"count negative", mod(func(b []byte) []byte { b[6] = 0x80; return withCRC(b) }), "producerEntries", 6, decode.ErrCorrupt,
			"Snapshot failed schema validation: non-nullable field producerEntries was serialized as null"},
		{"crc flipped", mod(func(b []byte) []byte { b[5] ^= 1; return b }), "crc", 2, decode.ErrCRCMismatch,
			"Snapshot is corrupt (CRC is no longer valid). Stored crc: 3727684757. Computed crc: 3727684756"},
		{"entry byte flipped", mod(func(b []byte) []byte { b[20] ^= 0x10; return b }), "crc", 2, decode.ErrCRCMismatch, ""},
		{"trailing garbage", append(append([]byte(nil), vec...), 1, 2, 3), "crc", 2, decode.ErrCRCMismatch, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			es, err := ParseProducerSnapshot(c.in)
			if es != nil {
				t.Errorf("entries returned with error: %v", es)
			}
			ce := wantCorrupt(t, err, c.field, c.pos, c.class)
			if ce.Pos < 0 || ce.Pos > int64(len(c.in)) {
				t.Errorf("Pos %d outside the input (%d bytes)", ce.Pos, len(c.in))
			}
			msg, ok := decode.KafkaMessage(err)
			if !ok {
				t.Error("no Kafka message")
			}
			if c.kafka != "" && msg != c.kafka {
				t.Errorf("Kafka message\n got %q\nwant %q", msg, c.kafka)
			}
		})
	}
	// The brief's message shape for a CRC failure.
	_, err := parseProducerSnapshot(mod(func(b []byte) []byte { b[5] ^= 1; return b }), "00000000000000000000.snapshot")
	if got, want := err.Error(), "00000000000000000000.snapshot: position 2: crc: crc mismatch: stored 0xde2ff495, computed 0xde2ff494"; got != want {
		t.Errorf("Error()\n got %q\nwant %q", got, want)
	}
}

func TestProducerSnapshotTrailingBytesCovered(t *testing.T) {
	// Bytes after the array are covered by the CRC and otherwise ignored.
	b := withCRC(append(testkit.MustHex(t, snapshotVector), 0xde, 0xad))
	es, err := ParseProducerSnapshot(b)
	if err != nil || len(es) != 1 || es[0] != snapshotVectorEntry {
		t.Errorf("parsed %+v, %v", es, err)
	}
}

func TestWriteProducerSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, SegmentFileName(42, SnapshotSuffix))
	in := []SnapshotEntry{snapshotVectorEntry}
	if err := WriteProducerSnapshotFile(p, in, false); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != string(testkit.MustHex(t, snapshotVector)) {
		t.Fatalf("file = %x, %v", got, err)
	}
	es, err := ReadProducerSnapshot(p)
	if err != nil || !reflect.DeepEqual(es, in) {
		t.Errorf("ReadProducerSnapshot = %+v, %v", es, err)
	}
	// Refuses to replace without force, leaving the file untouched.
	err = WriteProducerSnapshotFile(p, nil, false)
	if !errors.Is(err, ErrTargetExists) {
		t.Errorf("overwrite without force: %v", err)
	}
	if got, _ := os.ReadFile(p); len(got) != 56 {
		t.Errorf("file changed to %d bytes", len(got))
	}
	// Replaces a longer file completely with force (no stale tail).
	if err := WriteProducerSnapshotFile(p, nil, true); err != nil {
		t.Fatal(err)
	}
	if es, err := ReadProducerSnapshot(p); err != nil || len(es) != 0 {
		t.Errorf("after force: %v %v", es, err)
	}
	if _, err := os.Stat(p + TempSuffix); !os.IsNotExist(err) {
		t.Errorf("temp file left behind: %v", err)
	}
	// Corrupt file on disk: the error carries the path.
	if err := os.WriteFile(p, []byte{0, 1, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadProducerSnapshot(p)
	if ce, ok := decode.AsCorrupt(err); !ok || ce.Path != p {
		t.Errorf("corrupt read: %v", err)
	}
	if _, err := ReadProducerSnapshot(filepath.Join(dir, "missing.snapshot")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}

// TestProducerSnapshotRealFixtures parses every broker-written .snapshot
// (CRC must match), checks the entry count and leading producer ids from
// the fixtures README, and re-encodes each byte for byte.
func TestProducerSnapshotRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	want := map[string][]int64{ // count is len when no ids are listed beyond it
		"macsakini__KafkaCluster/kafka/data/quickstart-events-0/00000000000000000003.snapshot":                                                              {0},
		"macsakini__KafkaCluster/kafka/data/tenitems-0/00000000000000000009.snapshot":                                                                       {2, 4, 3},
		"macsakini__KafkaCluster/kafka/data/test-0/00000000000000000109.snapshot":                                                                           {},
		"suryavansh__food-ordering-service/kafka/data/_confluent-metrics-4/00000000000000000303.snapshot":                                                   {},
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000002.snapshot": {0},
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000003586.snapshot":                                                          {6000, 6001, 6002, 6003, 6004, 6005},
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000005579.snapshot":                                                          {6000, 8000, 6001, 6002, 6003, 6004},
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011630.snapshot":                                                               {6000, 8000, 6001, 6002, 6003, 6004},
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011655.snapshot":                                                               {8000, 9000, 9001, 9002},
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17/00000000000000000001.snapshot":                                                               {},
		"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000018.snapshot":                                                               {},
		"DonaldY__kafka-2.7.1/kafka-logs/myTopic-0/00000000000000000038.snapshot":                                                                           {4001, 4002, 4003},
	}
	counts := map[string]int{
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000003586.snapshot": 9,
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000005579.snapshot": 10,
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011630.snapshot":      12,
	}
	seen := 0
	perDir := map[string]int{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(d.Name(), SnapshotSuffix) {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		pids, known := want[rel]
		if !known {
			// Second set: the README gives the snapshot count per
			// partition (checked below), not the entries.
			perDir[filepath.ToSlash(filepath.Dir(rel))]++
		}
		seen++
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		es, err := ReadProducerSnapshot(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		n, ok := counts[rel]
		if !ok {
			n = len(pids)
		}
		if known && len(es) != n {
			t.Errorf("%s: %d entries, want %d", rel, len(es), n)
		}
		for i, pid := range pids {
			if i < len(es) && es[i].ProducerID != pid {
				t.Errorf("%s: entry %d pid %d, want %d", rel, i, es[i].ProducerID, pid)
			}
		}
		if enc := EncodeProducerSnapshot(es); string(enc) != string(raw) {
			t.Errorf("%s: re-encoding differs from the file", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	manifest := realManifest(t, root)
	if n := countManifest(manifest, func(n string) bool { return strings.HasSuffix(n, SnapshotSuffix) }); seen != n || n < len(want) {
		t.Errorf("saw %d snapshots, the README lists %d", seen, n)
	}
	second, err := realdata.SecondSet(root)
	if err != nil {
		t.Fatal(err)
	}
	for dir, p := range second {
		if perDir[dir] != p.Snapshots {
			t.Errorf("%s: %d producer snapshots, the README says %d", dir, perDir[dir], p.Snapshots)
		}
		delete(perDir, dir)
	}
	for dir, n := range perDir {
		t.Errorf("%s: %d producer snapshots in a partition neither README table lists", dir, n)
	}
	// myTopic-0 has non-zero offset deltas (README: "non-zero offsetDelta").
	es, err := ReadProducerSnapshot(filepath.Join(root, "DonaldY__kafka-2.7.1", "kafka-logs", "myTopic-0", "00000000000000000038.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	nonZero := false
	for _, e := range es {
		nonZero = nonZero || e.OffsetDelta != 0
	}
	if !nonZero {
		t.Error("myTopic-0 snapshot: no non-zero offsetDelta")
	}
}

// TestSnapshotReaderAgrees: OpenProducerSnapshot checks a file as
// ReadProducerSnapshot does, with the same errors, and Each gives the
// same entries in the same order, for files of every size around its
// buffer and for broken ones.
func TestSnapshotReaderAgrees(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 2, 5699, 5700, 5701, 20000} {
		entries := make([]SnapshotEntry, n)
		for i := range entries {
			entries[i] = SnapshotEntry{ProducerID: int64(i*7 + 1), ProducerEpoch: int16(i % 5), LastSequence: int32(i), LastOffset: int64(i * 3),
				OffsetDelta: int32(i % 3), Timestamp: int64(1700000000000 + i), CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
		}
		good := EncodeProducerSnapshot(entries)
		variants := map[string][]byte{"good": good, "truncated": good[:len(good)-1], "header only": good[:min(len(good), 7)]}
		if n > 0 {
			flipped := bytes.Clone(good)
			flipped[len(flipped)-1] ^= 1
			variants["crc"] = flipped
		}
		for name, b := range variants {
			path := filepath.Join(dir, name+".snapshot")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			want, werr := ReadProducerSnapshot(path)
			sr, gerr := OpenProducerSnapshot(path)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("%d entries, %s: Open %v, Read %v", n, name, gerr, werr)
			}
			if gerr != nil {
				continue
			}
			got, err := sr.Entries()
			sr.Close()
			if err != nil || sr.Len() != len(want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%d entries, %s: %d entries read (%v), want %d", n, name, len(got), err, len(want))
			}
		}
	}
}
