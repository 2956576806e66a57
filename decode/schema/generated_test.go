package schema

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// gen builds a random tree for fields at version v: every field that
// exists, nulls where nullable, tagged fields present about half the time
// and then with a non-default value (a default one would be dropped by
// Kafka's writer, not by kseg's).
func gen(rnd *rand.Rand, fields []*Field, v int16) *Struct {
	s := &Struct{version: v, schema: fields}
	for _, f := range fields {
		if !f.Versions.Has(v) {
			continue
		}
		tagged := f.Tagged.Has(v)
		if tagged && rnd.Intn(2) == 0 {
			continue
		}
		var val any
		for i := 0; i < 20; i++ {
			val = genValue(rnd, f, f.kind, v, false)
			if !tagged || !isDefault(f, val) {
				break
			}
		}
		if tagged && isDefault(f, val) {
			continue
		}
		s.Fields = append(s.Fields, FieldValue{Field: f, Value: val})
	}
	return s
}

func genValue(rnd *rand.Rand, f *Field, k kind, v int16, elem bool) any {
	if !elem && k.variableLength() && f.Nullable.Has(v) && rnd.Intn(4) == 0 {
		return nil
	}
	switch k {
	case kBool:
		return rnd.Intn(2) == 1
	case kInt8:
		return int8(rnd.Intn(256) - 128)
	case kInt16:
		return int16(rnd.Intn(65536) - 32768)
	case kUint16:
		return uint16(rnd.Intn(65536))
	case kInt32:
		return int32(rnd.Uint32())
	case kUint32:
		return rnd.Uint32()
	case kInt64:
		return int64(rnd.Uint64())
	case kFloat64:
		return rnd.NormFloat64() * 1e6
	case kUUID:
		var u UUID
		rnd.Read(u[:])
		return u
	case kString:
		b := make([]byte, rnd.Intn(12))
		for i := range b {
			b[i] = byte('a' + rnd.Intn(26))
		}
		return string(b)
	case kBytes, kRecords:
		b := make([]byte, rnd.Intn(12))
		rnd.Read(b)
		return b
	case kStruct:
		return gen(rnd, f.Fields, v)
	case kArray:
		n := rnd.Intn(4)
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			if f.elem == kStruct {
				out = append(out, gen(rnd, f.Fields, v))
			} else {
				out = append(out, genValue(rnd, f, f.elem, v, true))
			}
		}
		return out
	}
	panic(fmt.Sprintf("kind %d", k))
}

// TestGeneratedEveryMessageVersion encodes random records of every message
// at every valid version with the schema table, decodes them with the
// generic reader and encodes the result again: bytes and Kafka JSON must
// be identical, and the reader must consume every byte.
func TestGeneratedEveryMessageVersion(t *testing.T) {
	rnd := rand.New(rand.NewSource(13))
	n := 0
	for _, m := range Messages() {
		for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
			for i := 0; i < 25; i++ {
				s := gen(rnd, m.Fields, v)
				b, err := Encode(m, s)
				if err != nil {
					t.Fatalf("%s v%d: encode: %v", m.Name, v, err)
				}
				got, used, cerr := decodeMessage(m, v, b)
				if cerr != nil {
					t.Fatalf("%s v%d: decode %x: %v", m.Name, v, b, cerr)
				}
				if used != len(b) {
					t.Fatalf("%s v%d: read %d of %d bytes", m.Name, v, used, len(b))
				}
				b2, err := Encode(m, got)
				if err != nil || !bytes.Equal(b, b2) {
					t.Fatalf("%s v%d: re-encode differs (%v)\n got %x\nwant %x", m.Name, v, err, b2, b)
				}
				if s.KafkaJSON() != got.KafkaJSON() {
					t.Fatalf("%s v%d: JSON differs\n got %s\nwant %s", m.Name, v, got.KafkaJSON(), s.KafkaJSON())
				}
				// Every truncation is an error with a position inside
				// the input, never a panic or a silent success.
				if len(b) > 0 {
					cut := rnd.Intn(len(b))
					if _, _, cerr := decodeMessage(m, v, b[:cut]); cerr == nil {
						// A prefix can be complete only if the rest is
						// an all-default tail, which flexible messages never
						// have (the tag count is last).
						if m.Flexible.Has(v) {
							t.Fatalf("%s v%d: truncated to %d of %d bytes decoded without error", m.Name, v, cut, len(b))
						}
					} else if cerr.Pos < 0 || cerr.Pos > int64(cut) {
						t.Fatalf("%s v%d: error position %d outside 0..%d", m.Name, v, cerr.Pos, cut)
					}
				}
				n++
			}
		}
	}
	t.Logf("%d records of %d messages", n, len(Messages()))
}

// TestGeneratedThroughFraming runs generated records of every topic
// through DecodeInternal and Decoded.Encode, framing included.
func TestGeneratedThroughFraming(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	for _, m := range Messages() {
		if m.Topic == consumerProtocol || m.Type == "coordinator-value" || (m.Type == "data" && !isKey(m)) {
			continue
		}
		for i := 0; i < 10; i++ {
			var key, value []byte
			if Coordinator(m.Topic) {
				types := m.recordTypes()
				rt := types[rnd.Intn(len(types))]
				kv := rt
				if m.Type == "coordinator-key" {
					kv = 0
				}
				kb, _ := Encode(m, gen(rnd, m.Fields, kv))
				key = append([]byte{byte(rt >> 8), byte(rt)}, kb...)
				vm := ValueFor(m)
				if vm != nil && rnd.Intn(5) > 0 {
					vv := vm.Valid.Lo + int16(rnd.Intn(int(vm.Valid.Hi-vm.Valid.Lo)+1))
					vb, _ := Encode(vm, gen(rnd, vm.Fields, vv))
					value = append([]byte{byte(vv >> 8), byte(vv)}, vb...)
				}
			} else {
				vv := m.Valid.Lo + int16(rnd.Intn(int(m.Valid.Hi-m.Valid.Lo)+1))
				vb, _ := Encode(m, gen(rnd, m.Fields, vv))
				value = append([]byte{1, byte(m.APIKey), byte(vv)}, vb...)
				if m.APIKey >= 128 {
					t.Fatalf("apiKey %d needs a two-byte varint", m.APIKey)
				}
			}
			d, err := DecodeInternal(m.Topic, key, value)
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			if d.Unknown {
				t.Fatalf("%s: decoded as unknown", m.Name)
			}
			k2, v2, err := d.Encode()
			if err != nil || !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Fatalf("%s: framing round trip (%v)\nkey %x / %x\nvalue %x / %x", m.Name, err, k2, key, v2, value)
			}
			if value == nil && !d.Tombstone() {
				t.Fatalf("%s: null value not reported as a tombstone", m.Name)
			}
		}
	}
}

func isKey(m *Message) bool {
	return m.Type == "coordinator-key" || (len(m.Name) > 3 && m.Name[len(m.Name)-3:] == "Key")
}

// TestUnknownTypes: a record type or apiKey outside the table decodes as
// unknown, never as an error or a crash.
func TestUnknownTypes(t *testing.T) {
	for _, topic := range []string{ConsumerOffsets, TransactionState, ShareGroupState} {
		d, err := DecodeInternal(topic, []byte{0x7f, 0x00, 1, 2, 3}, []byte{0, 0, 9})
		if err != nil || !d.Unknown || d.RecordType != 0x7f00 {
			t.Errorf("%s: got %+v, %v", topic, d, err)
		}
	}
	d, err := DecodeInternal(ClusterMetadata, nil, []byte{1, 0x7f, 0, 1, 2})
	if err != nil || !d.Unknown || d.RecordType != 0x7f {
		t.Errorf("metadata: got %+v, %v", d, err)
	}
	if _, err := DecodeInternal(ClusterMetadata, nil, []byte{0, 2, 0}); err == nil {
		t.Error("frame version 0 accepted")
	}
}
