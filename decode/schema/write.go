package schema

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Encode writes s as message m at s's version, as the generated
// Message.write does: fields in schema order, then (flexible versions) the
// tagged fields present in s and its unknown tags, ascending by tag.
func Encode(m *Message, s *Struct) ([]byte, error) {
	w := &writer{}
	w.writeStruct(m.Fields, s.version, m.Flexible.Has(s.version), s)
	return w.b, w.err
}

type writer struct {
	b   []byte
	err error
}

func (w *writer) uvarint(v uint32) { w.b = binary.AppendUvarint(w.b, uint64(v)) }

func (w *writer) length(k kind, flexible bool, n int) {
	switch {
	case flexible:
		w.uvarint(uint32(n + 1))
	case k == kString:
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(int16(n)))
	default:
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(int32(n)))
	}
}

func (w *writer) writeStruct(fields []*Field, v int16, flexible bool, s *Struct) {
	type tagged struct {
		tag  uint32
		data []byte
	}
	var tags []tagged
	for _, f := range fields {
		if !f.Versions.Has(v) {
			continue
		}
		var fv *FieldValue
		if s != nil {
			fv, _ = s.lookup(f.Name)
		}
		if f.Tagged.Has(v) {
			if fv == nil {
				continue
			}
			sub := &writer{}
			sub.writeValue(f, f.kind, v, true, true, fv.Value)
			if sub.err != nil && w.err == nil {
				w.err = sub.err
			}
			tags = append(tags, tagged{uint32(f.Tag), sub.b})
			continue
		}
		var val any
		if fv != nil {
			val = fv.Value
		} else {
			val = defaultValue(f)
		}
		w.writeValue(f, f.kind, v, flexible, false, val)
	}
	if !flexible {
		return
	}
	if s != nil {
		for _, u := range s.Unknown {
			tags = append(tags, tagged{u.Tag, u.Data})
		}
	}
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].tag < tags[j].tag })
	w.uvarint(uint32(len(tags)))
	for _, t := range tags {
		w.uvarint(t.tag)
		w.uvarint(uint32(len(t.data)))
		w.b = append(w.b, t.data...)
	}
}

// embedded encodes a decoded consumer-protocol subscription or assignment
// from its tree, as ConsumerProtocol.serializeSubscription writes it:
// int16 version, then the message. Bytes after the message, which
// ConsumerProtocol.deserializeSubscription ignores, are kept from Raw, so
// that the round trip is exact and still goes through every decoded field.
func (w *writer) embedded(f *Field, e *Embedded) []byte {
	if e.Struct == nil || e.Message == nil {
		return e.Raw
	}
	b, err := Encode(e.Message, e.Struct)
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("field %s: %s v%d: %w", f.Name, e.Message.Name, e.Version, err)
		}
		return e.Raw
	}
	out := binary.BigEndian.AppendUint16(nil, uint16(e.Version))
	out = append(out, b...)
	if e.Used >= 0 && 2+e.Used <= len(e.Raw) {
		out = append(out, e.Raw[2+e.Used:]...)
	}
	return out
}

func (w *writer) bad(f *Field, val any) {
	if w.err == nil {
		w.err = fmt.Errorf("field %s (%s): cannot encode %T", f.Name, f.Type, val)
	}
}

func (w *writer) writeValue(f *Field, k kind, v int16, flexible, tagged bool, val any) {
	if w.writeFixed(f, k, val) {
		return
	}
	if val == nil {
		switch {
		case k != kStruct:
			w.length(k, flexible, -1)
		case tagged:
			w.uvarint(0)
		default:
			w.b = append(w.b, 0xff)
		}
		return
	}
	switch k {
	case kString:
		x, ok := val.(string)
		if !ok {
			w.bad(f, val)
		}
		w.length(k, flexible, len(x))
		w.b = append(w.b, x...)
	case kBytes, kRecords:
		var x []byte
		switch y := val.(type) {
		case []byte:
			x = y
		case *Embedded:
			x = w.embedded(f, y)
		default:
			w.bad(f, val)
		}
		w.length(k, flexible, len(x))
		w.b = append(w.b, x...)
	case kStruct:
		x, ok := val.(*Struct)
		if !ok {
			w.bad(f, val)
			return
		}
		if f.Nullable.Has(v) {
			if tagged {
				w.uvarint(1)
			} else {
				w.b = append(w.b, 1)
			}
		}
		w.writeStruct(f.Fields, v, flexible, x)
	case kArray:
		w.writeArray(f, v, flexible, val)
	}
}

// writeFixed writes a fixed-size field (bool, the integers, float64, uuid)
// and reports whether k was one.
func (w *writer) writeFixed(f *Field, k kind, val any) bool {
	switch k {
	case kBool:
		x, ok := val.(bool)
		if !ok {
			w.bad(f, val)
		}
		if x {
			w.b = append(w.b, 1)
		} else {
			w.b = append(w.b, 0)
		}
	case kInt8, kInt16, kUint16, kInt32, kUint32, kInt64:
		n, ok := asInt(val)
		if !ok {
			w.bad(f, val)
		}
		switch k {
		case kInt8:
			w.b = append(w.b, byte(n))
		case kInt16, kUint16:
			w.b = binary.BigEndian.AppendUint16(w.b, uint16(n))
		case kInt32, kUint32:
			w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
		default:
			w.b = binary.BigEndian.AppendUint64(w.b, uint64(n))
		}
	case kFloat64:
		x, ok := val.(float64)
		if !ok {
			w.bad(f, val)
		}
		w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(x))
	case kUUID:
		x, ok := val.(UUID)
		if !ok {
			w.bad(f, val)
		}
		w.b = append(w.b, x[:]...)
	default:
		return false
	}
	return true
}

// writeArray writes an array field's count (compact in flexible versions)
// and its elements; struct elements are never null.
func (w *writer) writeArray(f *Field, v int16, flexible bool, val any) {
	x, ok := val.([]any)
	if !ok {
		w.bad(f, val)
		return
	}
	w.length(kArray, flexible, len(x))
	el := &Field{Name: f.Name, Type: f.Type[2:], kind: f.elem}
	for _, e := range x {
		if f.elem == kStruct {
			st, _ := e.(*Struct)
			w.writeStruct(f.Fields, v, flexible, st)
			continue
		}
		w.writeValue(el, f.elem, v, flexible, false, e)
	}
}
