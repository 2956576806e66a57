package barrier

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
)

// vector44 is the whole batch of barrier.md §4.4.
const vector44 = "00000000000000000000003f0000000002bbdac33c0020000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff000000011a00000008000000070600000000"

func TestBarrierBuildSpecVector(t *testing.T) {
	want, _ := hex.DecodeString(vector44)
	got := Build(Spec{BaseOffset: 0, PartitionLeaderEpoch: 0, Timestamp: 1700000000000})
	if !bytes.Equal(got, want) {
		t.Fatalf("barrier bytes differ from barrier.md §4.4\n got %x\nwant %x", got, want)
	}
	if len(got) != Size {
		t.Fatalf("size %d, want %d", len(got), Size)
	}
	if crc := binary.BigEndian.Uint32(got[17:]); crc != 3151676220 {
		t.Fatalf("crc %d, want 3151676220", crc)
	}
	if ps := ValidateBatch(got); ps != nil {
		t.Fatalf("ValidateBatch: %v", ps)
	}
	b, err := decode.ParseBatch(got)
	if err != nil {
		t.Fatal(err)
	}
	if !Is(&b) {
		t.Fatal("Is = false for the spec vector")
	}
}

func TestBarrierBuildSourceClusterID(t *testing.T) {
	id := "AAAAAAAAAAAAAAAAAAAAAA" // a 22-character base64 cluster id
	got := Build(Spec{Timestamp: 1700000000000, SourceClusterID: &id})
	if len(got) != 98 {
		t.Fatalf("size %d, want 98 (barrier.md §4.3)", len(got))
	}
	if ps := ValidateBatch(got); ps != nil {
		t.Fatalf("ValidateBatch: %v", ps)
	}
	b, _ := decode.ParseBatch(got)
	var d decode.Decoder
	err := d.Records(&b, func(r *decode.Record) error {
		if len(r.Value) != 26 {
			t.Errorf("value %d bytes, want 26", len(r.Value))
		}
		c, err := decode.ParseControl(r.Key, r.Value)
		if err != nil {
			return err
		}
		if c.Type != decode.ControlMirrorPidReset || c.SourceClusterID == nil || *c.SourceClusterID != id {
			t.Errorf("control = %+v", c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBarrierCRCIgnoresOffsetAndEpoch: baseOffset and partitionLeaderEpoch
// lie outside the CRC range (formats.md §2.2), so an offline writer can
// place the same barrier anywhere.
func TestBarrierCRCIgnoresOffsetAndEpoch(t *testing.T) {
	a := Build(Spec{Timestamp: 1700000000000})
	b := Build(Spec{BaseOffset: 123456789, PartitionLeaderEpoch: 42, Timestamp: 1700000000000})
	if !bytes.Equal(a[17:21], b[17:21]) || !bytes.Equal(a[16:], b[16:]) || bytes.Equal(a[:16], b[:16]) {
		t.Fatalf("crc or tail changed with baseOffset/epoch:\n%x\n%x", a, b)
	}
	c := Build(Spec{Timestamp: 1700000000001})
	if bytes.Equal(a[17:21], c[17:21]) {
		t.Fatal("crc did not change with the timestamp")
	}
}

// TestBarrierKmsgParses decodes the barrier with franz-go's kmsg, an
// independent implementation of the wire format, and recomputes the CRC
// over the fields kmsg reports.
func TestBarrierKmsgParses(t *testing.T) {
	id := "q1Sh-9_ISia_zwGINzRvyQ"
	for _, sp := range []Spec{
		{Timestamp: 1700000000000},
		{BaseOffset: 77, PartitionLeaderEpoch: 9, Timestamp: 1712345678901, SourceClusterID: &id},
	} {
		raw := Build(sp)
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		if rb.FirstOffset != sp.BaseOffset || rb.PartitionLeaderEpoch != sp.PartitionLeaderEpoch || rb.Magic != 2 ||
			rb.Attributes != 0x20 || rb.LastOffsetDelta != 0 || rb.FirstTimestamp != sp.Timestamp ||
			rb.MaxTimestamp != sp.Timestamp || rb.ProducerID != -1 || rb.ProducerEpoch != -1 ||
			rb.FirstSequence != -1 || rb.NumRecords != 1 || int(rb.Length) != len(raw)-12 {
			t.Fatalf("kmsg batch = %+v", rb)
		}
		// Re-encode what kmsg reports after the CRC field and checksum it.
		var tail []byte
		tail = binary.BigEndian.AppendUint16(tail, uint16(rb.Attributes))
		tail = binary.BigEndian.AppendUint32(tail, uint32(rb.LastOffsetDelta))
		tail = binary.BigEndian.AppendUint64(tail, uint64(rb.FirstTimestamp))
		tail = binary.BigEndian.AppendUint64(tail, uint64(rb.MaxTimestamp))
		tail = binary.BigEndian.AppendUint64(tail, uint64(rb.ProducerID))
		tail = binary.BigEndian.AppendUint16(tail, uint16(rb.ProducerEpoch))
		tail = binary.BigEndian.AppendUint32(tail, uint32(rb.FirstSequence))
		tail = binary.BigEndian.AppendUint32(tail, uint32(rb.NumRecords))
		tail = append(tail, rb.Records...)
		if got := crc32.Checksum(tail, crc32.MakeTable(crc32.Castagnoli)); got != uint32(rb.CRC) {
			t.Fatalf("kmsg CRC 0x%08x, recomputed 0x%08x", uint32(rb.CRC), got)
		}
		var rec kmsg.Record
		if err := rec.ReadFrom(rb.Records); err != nil {
			t.Fatal(err)
		}
		if rec.Attributes != 0 || rec.TimestampDelta64 != 0 || rec.OffsetDelta != 0 || len(rec.Headers) != 0 {
			t.Fatalf("kmsg record = %+v", rec)
		}
		want := decode.AppendMirrorPidResetValue(nil, sp.SourceClusterID)
		if !bytes.Equal(rec.Key, []byte{0, 0, 0, 7}) || !bytes.Equal(rec.Value, want) {
			t.Fatalf("key %x value %x", rec.Key, rec.Value)
		}
		var key kmsg.ControlRecordKey
		if err := key.ReadFrom(rec.Key); err != nil {
			t.Fatal(err)
		}
		if key.Version != 0 || key.Type != 7 {
			t.Fatalf("control key = %+v", key)
		}
	}
}

func problemCodes(ps []Problem) []string {
	var cs []string
	for _, p := range ps {
		cs = append(cs, p.Code)
	}
	slices.Sort(cs)
	return slices.Compact(cs)
}

func TestBarrierValidateNamesEachDeviation(t *testing.T) {
	ts := int64(1700000000000)
	rec := func(key, value []byte) []decode.RecordSpec {
		return []decode.RecordSpec{{Timestamp: ts, Key: key, Value: value}}
	}
	good := rec(decode.AppendControlKey(nil, decode.ControlMirrorPidReset), decode.AppendMirrorPidResetValue(nil, nil))
	base := decode.BatchSpec{Control: true, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	build := func(s decode.BatchSpec, r []decode.RecordSpec) []byte {
		b, err := decode.AppendBatch(nil, s, r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withCRC := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[17:], decode.CRC32C(b[21:]))
		return b
	}
	cases := []struct {
		name string
		raw  []byte
		want []string
	}{
		{"well-formed", build(base, good), nil},
		{"not control", func() []byte { s := base; s.Control = false; return build(s, good) }(), []string{ProblemNotControl}},
		{"transactional", func() []byte { s := base; s.Transactional = true; return build(s, good) }(), []string{ProblemTransactional}},
		{"producer id", func() []byte { s := base; s.ProducerID, s.ProducerEpoch = 5, 0; return build(s, good) }(),
			[]string{ProblemProducerID, ProblemProducerEpoch}},
		{"base sequence", func() []byte { s := base; s.BaseSequence = 0; return build(s, good) }(), []string{ProblemBaseSequence}},
		{"compressed", func() []byte { s := base; s.Compression = decode.CompressionGzip; return build(s, good) }(), []string{ProblemCompressed}},
		{"two records", build(base, append(good, decode.RecordSpec{OffsetDelta: 1, Timestamp: ts,
			Key: decode.AppendControlKey(nil, 7), Value: []byte{0, 0, 0}})),
			[]string{ProblemLastOffset, ProblemRecordCount, ProblemTrailingRecord}},
		{"bad crc", func() []byte { b := build(base, good); b[20] ^= 1; return b }(), []string{ProblemCRC}},
		{"abort key", build(base, rec(decode.AppendControlKey(nil, decode.ControlAbort), decode.AppendEndTxnMarkerValue(nil, 0))),
			[]string{ProblemKey, ProblemValue}},
		{"value version", build(base, rec(decode.AppendControlKey(nil, 7), []byte{0, 1, 0})), []string{ProblemValue}},
		{"value garbage", build(base, rec(decode.AppendControlKey(nil, 7), []byte{0, 0, 0, 9, 9})), []string{ProblemValue}},
		{"null value", build(base, rec(decode.AppendControlKey(nil, 7), nil)), []string{ProblemValue}},
		{"short key", build(base, rec([]byte{0, 7}, []byte{0, 0, 0})), []string{ProblemKey}},
		{"key version", build(base, rec([]byte{0, 1, 0, 7}, []byte{0, 0, 0})), []string{ProblemKey}},
		{"headers", build(base, []decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, 7), Value: []byte{0, 0, 0},
			Headers: []decode.Header{{Key: []byte("h"), Value: []byte("v")}}}}), []string{ProblemRecord}},
		{"unknown attribute bit", func() []byte { b := build(base, good); b[22] |= 0x80; return withCRC(b) }(), []string{ProblemAttributes}},
		{"legacy", func() []byte {
			var c decode.Codecs
			b, _ := c.AppendLegacy(nil, decode.LegacySpec{Magic: 1, Timestamp: ts, Value: []byte("x")})
			return b
		}(), []string{ProblemMagic}},
		{"torn", build(base, good)[:40], []string{ProblemFraming}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := problemCodes(ValidateBatch(c.raw))
			want := append([]string(nil), c.want...)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("problems %v, want %v (%v)", got, want, ValidateBatch(c.raw))
			}
		})
	}
}

func TestBarrierIs(t *testing.T) {
	marker, _ := decode.AppendBatch(nil, decode.BatchSpec{Control: true, Transactional: true, ProducerID: 1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: 1, Key: decode.AppendControlKey(nil, decode.ControlCommit), Value: decode.AppendEndTxnMarkerValue(nil, 0)}})
	data, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: 1, Key: []byte{0, 0, 0, 7}, Value: []byte{0, 0, 0}}})
	for name, raw := range map[string][]byte{"marker": marker, "data": data} {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		if Is(&b) {
			t.Errorf("%s: Is = true", name)
		}
	}
	if Is(nil) {
		t.Error("Is(nil) = true")
	}
}
