// Package schematest writes example records of Kafka's internal topics for
// tests: one for every message and version in decode/schema's table, with
// every field that exists at that version set, tagged fields included.
//
// It writes the wire format from the table's field descriptions on its own,
// as Kafka's generated Message.write does (MessageDataGenerator), without
// decode/schema's encoder, so that "decode, encode, compare bytes" checks
// kseg's reader and writer against an independent writer rather than
// against each other. Values are deterministic and readable: a counter for
// numbers, the field's name for strings.
package schematest

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kseg/kseg/decode/schema"
)

// Example is one generated record: what a broker would store as the key
// and value of a record of Topic, and what it is.
type Example struct {
	Topic      string
	Name       string // the value message's name (TopicRecord, OffsetCommitValue …)
	RecordType int16  // coordinator record type or metadata apiKey
	Version    int16  // the value's version
	Key, Value []byte // nil = null (a coordinator tombstone has a nil Value)
}

// Topics are the internal topics Examples covers, in kseg's order.
var Topics = []string{schema.ConsumerOffsets, schema.TransactionState, schema.ShareGroupState,
	schema.ClusterMetadata, schema.RemoteLogMetadata}

// Examples returns one record for every value message of topic at every
// valid version and, for a coordinator topic, one tombstone per record
// type, in the table's order.
func Examples(topic string) ([]Example, error) {
	var out []Example
	for _, m := range schema.Messages() {
		if m.Topic != topic {
			continue
		}
		switch {
		case schema.Coordinator(topic) && m.Type == "coordinator-key":
			vm := schema.ValueFor(m)
			key := binary.BigEndian.AppendUint16(nil, uint16(m.APIKey))
			kb, err := Write(m, 0)
			if err != nil {
				return nil, err
			}
			key = append(key, kb...)
			for v := vm.Valid.Lo; vm != nil && v <= vm.Valid.Hi; v++ {
				vb, err := Write(vm, v)
				if err != nil {
					return nil, err
				}
				value := append(binary.BigEndian.AppendUint16(nil, uint16(v)), vb...)
				out = append(out, Example{topic, vm.Name, m.APIKey, v, key, value})
			}
			out = append(out, Example{Topic: topic, Name: m.Name, RecordType: m.APIKey, Key: key})
		case !schema.Coordinator(topic) && m.Type == "metadata":
			for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
				vb, err := Write(m, v)
				if err != nil {
					return nil, err
				}
				// AbstractApiMessageSerde: frame version 1, apiKey, version.
				value := binary.AppendUvarint([]byte{1}, uint64(m.APIKey))
				value = binary.AppendUvarint(value, uint64(v))
				out = append(out, Example{topic, m.Name, m.APIKey, v, nil, append(value, vb...)})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no message of %s in the table", topic)
	}
	return out, nil
}

// Write encodes an example of m at version v.
func Write(m *schema.Message, v int16) ([]byte, error) {
	if !m.Valid.Has(v) {
		return nil, fmt.Errorf("%s has no version %d", m.Name, v)
	}
	w := &writer{msg: m.Name, v: v, flexible: m.Flexible.Has(v)}
	w.structFields(m.Fields)
	return w.b, w.err
}

type writer struct {
	msg      string
	v        int16
	flexible bool
	n        int64 // the counter values are drawn from
	b        []byte
	err      error
}

func (w *writer) next() int64 { w.n++; return w.n }

func (w *writer) uvarint(n int) { w.b = binary.AppendUvarint(w.b, uint64(n)) }

// length writes a string, bytes or array length: compact (n+1 as uvarint)
// in flexible versions, else int16 for strings and int32 for the rest.
func (w *writer) length(isString bool, n int) {
	switch {
	case w.flexible:
		w.uvarint(n + 1)
	case isString:
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(n))
	default:
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	}
}

// structFields writes the fields of one struct at w.v: regular fields in
// order, then (flexible) the tagged ones ascending by tag, each as tag,
// size, data.
func (w *writer) structFields(fields []*schema.Field) {
	type tagged struct {
		tag  int32
		data []byte
	}
	var tags []tagged
	for _, f := range fields {
		if !f.Versions.Has(w.v) {
			continue
		}
		if f.Tagged.Has(w.v) {
			outer := w.b
			w.b = nil
			w.value(f, f.Type)
			tags = append(tags, tagged{f.Tag, w.b})
			w.b = outer
			continue
		}
		w.value(f, f.Type)
	}
	if !w.flexible {
		return
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].tag < tags[j].tag })
	w.uvarint(len(tags))
	for _, t := range tags {
		w.uvarint(int(t.tag))
		w.uvarint(len(t.data))
		w.b = append(w.b, t.data...)
	}
}

// value writes one value of type typ for field f, never the field's
// default, which Kafka's writer leaves out of a tagged field.
func (w *writer) value(f *schema.Field, typ string) {
	switch typ {
	case "bool":
		w.b = append(w.b, 1) // true: never a tagged default (false)
	case "int8":
		w.b = append(w.b, byte(w.small(f)))
	case "int16", "uint16":
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(w.number(f)))
	case "int32", "uint32":
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(w.number(f)))
	case "int64":
		w.b = binary.BigEndian.AppendUint64(w.b, uint64(1700000000000+w.number(f)))
	case "float64":
		w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(float64(w.next())+0.5))
	case "uuid":
		n := w.next()
		var u [16]byte
		for i := range u {
			u[i] = byte(n*31 + int64(i)*7)
		}
		w.b = append(w.b, u[:]...)
	case "string":
		s := fmt.Sprintf("%s-%d", f.JSONName(), w.next())
		if w.msg == "GroupMetadataValue" && f.Name == "protocolType" {
			s = "consumer" // ConsumerProtocol.PROTOCOL_TYPE: members' bytes are decoded
		}
		w.length(true, len(s))
		w.b = append(w.b, s...)
	case "bytes", "records":
		b := w.bytes(f)
		w.length(false, len(b))
		w.b = append(w.b, b...)
	default:
		if elem, ok := strings.CutPrefix(typ, "[]"); ok {
			n := 2
			w.length(false, n)
			for i := 0; i < n; i++ {
				if len(f.Fields) > 0 {
					w.structFields(f.Fields)
				} else {
					w.value(f, elem)
				}
			}
			return
		}
		// A struct: a presence byte when nullable (in a tagged field
		// written as a uvarint, which is the same byte for 1), then its
		// fields.
		if f.Nullable.Has(w.v) {
			w.b = append(w.b, 1)
		}
		w.structFields(f.Fields)
	}
}

// number is the next counter value, moved off the field's default.
func (w *writer) number(f *schema.Field) int64 {
	n := w.next()
	if fmt.Sprint(n) == f.Default {
		n = w.next()
	}
	return n
}

// small is an int8 that names something valid where the field is an enum
// Kafka's printers look up: a transaction state (TransactionState 0-7), a
// remote segment (0-3) or partition deletion state (0-2).
func (w *writer) small(f *schema.Field) int64 {
	v := w.next() % 3
	if fmt.Sprint(v) == f.Default {
		v = (v + 1) % 3
	}
	return v
}

// bytes is a bytes field's content: a consumer-protocol subscription or
// assignment where a GroupMetadataValue member carries one (int16 version,
// then the message, at the highest version not above the value's, as the
// classic consumer writes it), else a few bytes that are not UTF-8.
func (w *writer) bytes(f *schema.Field) []byte {
	if w.msg == "GroupMetadataValue" && (f.Name == "subscription" || f.Name == "assignment") {
		name := "ConsumerProtocolSubscription"
		if f.Name == "assignment" {
			name = "ConsumerProtocolAssignment"
		}
		m := schema.Lookup(name)
		v := min(w.v, m.Valid.Hi)
		b, err := Write(m, v)
		if err != nil && w.err == nil {
			w.err = err
		}
		return append(binary.BigEndian.AppendUint16(nil, uint16(v)), b...)
	}
	n := byte(w.next())
	return []byte{0xff, n, 0xfe}
}
