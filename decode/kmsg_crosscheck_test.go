package decode_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// An independent implementation as the oracle: franz-go's kmsg parses the
// same bytes (batch headers, records, legacy messages, control keys and
// values) and its kgo decompressor inflates them; kseg's decoder must agree
// field by field on every batch of the generated fixtures.

var kgoDecompressor = kgo.DefaultDecompressor()

// inflate decompresses with franz-go. kgo reads LZ4 with pierrec's frame
// reader, which verifies the header checksum, so a magic-0 frame (whose
// checksum Kafka computes over the magic bytes too, KAFKA-3160) gets the
// standard checksum patched in first: the only difference between the two.
func inflate(t *testing.T, codec decode.Compression, magic int8, src []byte) []byte {
	t.Helper()
	if codec == decode.CompressionLZ4 && magic == 0 {
		src = slices.Clone(src)
		src[6] = 0x82 // XXH32(FLG BD = 60 40) >> 8
	}
	out, err := kgoDecompressor.Decompress(src, kgo.CompressionCodecType(codec))
	if err != nil {
		t.Fatalf("kgo cannot decompress %s (magic %d): %v", codec, magic, err)
	}
	return out
}

type crossStats struct {
	batches, records, legacy, control int
	codecs                            map[string]int
}

// TestKmsgCrossCheck walks every .log of testdata/partitions.
func TestKmsgCrossCheck(t *testing.T) {
	root := filepath.Join("..", "testdata", "partitions")
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("generated fixtures missing: %v (go run ./testdata/gen)", err)
	}
	st := crossStats{codecs: map[string]int{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, segment.LogSuffix) {
			return err
		}
		lf, err := segment.OpenLog(p)
		if err != nil {
			return err
		}
		defer lf.Close()
		sc := lf.Scanner(segment.ScanOptions{})
		var dec decode.Decoder
		for sc.Next() {
			b := sc.Batch()
			where := fmt.Sprintf("%s@%d", p, sc.Pos())
			st.batches++
			st.codecs[b.Compression().String()]++
			if b.IsLegacy() {
				st.legacy++
				crossLegacy(t, where, &dec, b, &st)
			} else {
				crossV2(t, where, &dec, b, &st)
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if tail := sc.Tail(); tail.Kind != segment.TailClean {
			t.Errorf("%s: tail %v", p, tail.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cross-checked %d batches (%d legacy, %d control records), %d records, codecs %v", st.batches, st.legacy, st.control, st.records, st.codecs)
	// Guard against the walk silently finding nothing.
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if st.codecs[c] == 0 {
			t.Errorf("no %s batch was cross-checked", c)
		}
	}
	if st.legacy == 0 || st.control == 0 || st.records < 100 {
		t.Errorf("too little cross-checked: %+v", st)
	}
}

func crossV2(t *testing.T, where string, dec *decode.Decoder, b *decode.Batch, st *crossStats) {
	t.Helper()
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b.Raw); err != nil {
		t.Errorf("%s: kmsg: %v", where, err)
		return
	}
	type pair struct {
		name      string
		kseg, ref int64
	}
	for _, f := range []pair{
		{"baseOffset", b.BaseOffset, kb.FirstOffset},
		{"batchLength", int64(b.BatchLength), int64(kb.Length)},
		{"partitionLeaderEpoch", int64(b.PartitionLeaderEpoch), int64(kb.PartitionLeaderEpoch)},
		{"magic", int64(b.Magic), int64(kb.Magic)},
		{"crc", int64(b.CRC), int64(uint32(kb.CRC))},
		{"attributes", int64(b.Attributes), int64(kb.Attributes & 0xff)},
		{"lastOffsetDelta", int64(b.LastOffsetDelta), int64(kb.LastOffsetDelta)},
		{"baseTimestamp", b.BaseTimestamp, kb.FirstTimestamp},
		{"maxTimestamp", b.MaxTimestamp, kb.MaxTimestamp},
		{"producerId", b.ProducerID, kb.ProducerID},
		{"producerEpoch", int64(b.ProducerEpoch), int64(kb.ProducerEpoch)},
		{"baseSequence", int64(b.BaseSequence), int64(kb.FirstSequence)},
		{"recordsCount", int64(b.RecordCount), int64(kb.NumRecords)},
	} {
		if f.kseg != f.ref {
			t.Errorf("%s: %s: kseg %d, kmsg %d", where, f.name, f.kseg, f.ref)
		}
	}
	if !b.CRCValid() {
		t.Errorf("%s: CRC invalid", where)
	}
	// The records: kmsg parses the (decompressed) records section one
	// length-prefixed record at a time.
	raw := kb.Records
	if codec := decode.Compression(kb.Attributes & 0x07); codec != decode.CompressionNone && kb.NumRecords > 0 {
		raw = inflate(t, codec, 2, raw)
	}
	var want []kmsg.Record
	for len(raw) > 0 {
		l, n := binary.Varint(raw)
		if n <= 0 || int(l) > len(raw)-n {
			t.Errorf("%s: record %d: bad length prefix", where, len(want))
			return
		}
		var r kmsg.Record
		if err := r.ReadFrom(raw[:n+int(l)]); err != nil {
			t.Errorf("%s: kmsg record %d: %v", where, len(want), err)
			return
		}
		want = append(want, r)
		raw = raw[n+int(l):]
	}
	if len(want) != int(kb.NumRecords) {
		t.Errorf("%s: kmsg found %d records, count says %d", where, len(want), kb.NumRecords)
	}
	i := 0
	err := dec.Records(b, func(r *decode.Record) error {
		defer func() { i++ }()
		if i >= len(want) {
			t.Errorf("%s: kseg yields more than %d records", where, len(want))
			return nil
		}
		w := &want[i]
		st.records++
		ts := kb.FirstTimestamp + w.TimestampDelta64
		if kb.Attributes&0x08 != 0 { // LogAppendTime: every record has maxTimestamp
			ts = kb.MaxTimestamp
		}
		seq := int32(-1)
		if kb.FirstSequence >= 0 {
			seq = int32((int64(kb.FirstSequence) + int64(w.OffsetDelta)) % (1 << 31))
		}
		switch {
		case r.Offset != kb.FirstOffset+int64(w.OffsetDelta):
			t.Errorf("%s: record %d offset %d, kmsg %d", where, i, r.Offset, kb.FirstOffset+int64(w.OffsetDelta))
		case r.Timestamp != ts:
			t.Errorf("%s: record %d timestamp %d, kmsg %d", where, i, r.Timestamp, ts)
		case r.Sequence != seq:
			t.Errorf("%s: record %d sequence %d, kmsg %d", where, i, r.Sequence, seq)
		case r.Attributes != w.Attributes:
			t.Errorf("%s: record %d attributes %d, kmsg %d", where, i, r.Attributes, w.Attributes)
		case !sameBytes(r.Key, w.Key):
			t.Errorf("%s: record %d key %q (nil %v), kmsg %q (nil %v)", where, i, r.Key, r.Key == nil, w.Key, w.Key == nil)
		case !sameBytes(r.Value, w.Value):
			t.Errorf("%s: record %d value %q (nil %v), kmsg %q (nil %v)", where, i, r.Value, r.Value == nil, w.Value, w.Value == nil)
		case len(r.Headers) != len(w.Headers):
			t.Errorf("%s: record %d has %d headers, kmsg %d", where, i, len(r.Headers), len(w.Headers))
		default:
			for h := range r.Headers {
				if string(r.Headers[h].Key) != w.Headers[h].Key || !sameBytes(r.Headers[h].Value, w.Headers[h].Value) {
					t.Errorf("%s: record %d header %d %q=%q, kmsg %q=%q", where, i, h, r.Headers[h].Key, r.Headers[h].Value, w.Headers[h].Key, w.Headers[h].Value)
				}
			}
		}
		if b.IsControl() {
			st.control++
			crossControl(t, fmt.Sprintf("%s record %d", where, i), r.Key, r.Value)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s: kseg: %v", where, err)
	}
	if i != len(want) {
		t.Errorf("%s: kseg yields %d records, kmsg %d", where, i, len(want))
	}
}

// crossControl compares the control record key, and the values kmsg
// knows (EndTxnMarker, LeaderChangeMessage).
func crossControl(t *testing.T, where string, key, value []byte) {
	t.Helper()
	c, err := decode.ParseControl(key, value)
	if err != nil {
		t.Errorf("%s: kseg: %v", where, err)
		return
	}
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(key); err != nil {
		t.Errorf("%s: kmsg key: %v", where, err)
		return
	}
	if int16(c.Type) != int16(k.Type) || c.KeyVersion != k.Version {
		t.Errorf("%s: control key v%d type %d, kmsg v%d type %d", where, c.KeyVersion, c.Type, k.Version, k.Type)
	}
	switch c.Type {
	case decode.ControlAbort, decode.ControlCommit:
		var m kmsg.EndTxnMarker
		if err := m.ReadFrom(value); err != nil {
			t.Errorf("%s: kmsg EndTxnMarker: %v", where, err)
		} else if m.Version != c.Version || m.CoordinatorEpoch != c.CoordinatorEpoch {
			t.Errorf("%s: marker v%d coordinatorEpoch %d, kmsg v%d %d", where, c.Version, c.CoordinatorEpoch, m.Version, m.CoordinatorEpoch)
		}
	case decode.ControlLeaderChange:
		var m kmsg.LeaderChangeMessage
		if err := m.ReadFrom(value); err != nil {
			t.Errorf("%s: kmsg LeaderChangeMessage: %v", where, err)
			return
		}
		ids := func(vs []kmsg.LeaderChangeMessageVoter) []int32 {
			var out []int32
			for _, v := range vs {
				out = append(out, v.VoterID)
			}
			return out
		}
		kids := func(vs []decode.Voter) []int32 {
			var out []int32
			for _, v := range vs {
				out = append(out, v.VoterID)
			}
			return out
		}
		if m.LeaderID != c.LeaderID || !slices.Equal(ids(m.Voters), kids(c.Voters)) || !slices.Equal(ids(m.GrantingVoters), kids(c.GrantingVoters)) {
			t.Errorf("%s: LeaderChange %+v, kmsg %+v", where, c, m)
		}
	}
}

func crossLegacy(t *testing.T, where string, dec *decode.Decoder, b *decode.Batch, st *crossStats) {
	t.Helper()
	type msg struct {
		offset    int64
		size, crc int32
		magic     int8
		attrs     int8
		ts        int64
		key, val  []byte
	}
	parse := func(raw []byte) (msg, error) {
		if raw[16] == 0 {
			var m kmsg.MessageV0
			err := m.ReadFrom(raw)
			return msg{m.Offset, m.MessageSize, m.CRC, m.Magic, m.Attributes, -1, m.Key, m.Value}, err
		}
		var m kmsg.MessageV1
		err := m.ReadFrom(raw)
		return msg{m.Offset, m.MessageSize, m.CRC, m.Magic, m.Attributes, m.Timestamp, m.Key, m.Value}, err
	}
	outer, err := parse(b.Raw)
	if err != nil {
		t.Errorf("%s: kmsg: %v", where, err)
		return
	}
	if outer.offset != b.BaseOffset || outer.size != b.BatchLength || uint32(outer.crc) != b.CRC || outer.magic != b.Magic ||
		int16(outer.attrs) != b.Attributes || (b.Magic == 1 && outer.ts != b.MaxTimestamp) {
		t.Errorf("%s: kseg %+v, kmsg %+v", where, *b, outer)
	}
	if !b.CRCValid() {
		t.Errorf("%s: CRC invalid", where)
	}
	// The records kmsg sees: the message itself, or the inner message set.
	var want []msg
	codec := decode.Compression(outer.attrs & 0x07)
	if codec == decode.CompressionNone {
		want = append(want, outer)
	} else {
		inner := inflate(t, codec, outer.magic, outer.val)
		for len(inner) > 0 {
			if len(inner) < 12 {
				t.Errorf("%s: %d trailing inner bytes", where, len(inner))
				return
			}
			n := 12 + int(int32(binary.BigEndian.Uint32(inner[8:])))
			m, err := parse(inner[:n])
			if err != nil {
				t.Errorf("%s: kmsg inner: %v", where, err)
				return
			}
			want = append(want, m)
			inner = inner[n:]
		}
		// Inner offsets: absolute for v0; relative for v1, based so that
		// the last one is the wrapper's offset.
		if outer.magic == 1 {
			last := want[len(want)-1].offset
			for j := range want {
				want[j].offset += outer.offset - last
			}
		}
		// Inner v1 records of a LogAppendTime wrapper carry its timestamp.
		if outer.magic == 1 && outer.attrs&0x08 != 0 {
			for j := range want {
				want[j].ts = outer.ts
			}
		}
	}
	i := 0
	err = dec.Records(b, func(r *decode.Record) error {
		defer func() { i++ }()
		if i >= len(want) {
			t.Errorf("%s: kseg yields more than %d records", where, len(want))
			return nil
		}
		w := want[i]
		st.records++
		if r.Offset != w.offset || r.Magic != w.magic || r.CRC != uint32(w.crc) || !r.CRCValid ||
			(w.magic == 1 && r.Timestamp != w.ts) || !sameBytes(r.Key, w.key) || !sameBytes(r.Value, w.val) {
			t.Errorf("%s: record %d: kseg offset %d ts %d crc %d key %q value %q; kmsg %+v", where, i, r.Offset, r.Timestamp, r.CRC, r.Key, r.Value, w)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s: kseg: %v", where, err)
	}
	if i != len(want) {
		t.Errorf("%s: kseg yields %d records, kmsg %d", where, i, len(want))
	}
}

// sameBytes compares contents and null-ness.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
