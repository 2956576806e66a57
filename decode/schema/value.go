package schema

import (
	"strconv"
	"strings"
)

// UUID is a Kafka Uuid; String renders it as Uuid.toString does.
type UUID [16]byte

// Struct is one decoded message or struct: its fields in schema order.
// A tagged field appears only when it was present on the wire; Get and the
// typed accessors return its default when it was not.
//
// Field values are, by Kafka type: bool; int8; int16; uint16; int32;
// uint32; int64; float64; string; []byte (bytes, records); UUID; *Struct;
// []any (arrays, elements typed as above); *Embedded (a bytes field whose
// content was decoded, e.g. a consumer subscription). A null is a nil any.
type Struct struct {
	Fields []FieldValue
	// Unknown holds tagged fields whose tag the schema does not know, in
	// wire order, so that Encode reproduces them.
	Unknown []RawTag

	version int16
	schema  []*Field
}

// FieldValue is one field of a Struct.
type FieldValue struct {
	Field *Field
	Value any
}

// RawTag is an unknown tagged field.
type RawTag struct {
	Tag  uint32
	Data []byte
}

// Embedded is a bytes field whose content is itself a versioned message
// (the classic consumer protocol's subscription and assignment inside
// GroupMetadataValue members): int16 version, then the message. Raw keeps
// the bytes; Encode writes the message from Struct and keeps only the bytes
// after it (Raw[2+Used:]) from Raw, so a round trip checks the decoding.
type Embedded struct {
	Raw     []byte
	Message *Message
	Version int16
	Struct  *Struct
	// Used is how many bytes after the version the message took.
	Used int
}

// Version is the version the struct was decoded at.
func (s *Struct) Version() int16 { return s.version }

func (s *Struct) lookup(name string) (*FieldValue, *Field) {
	if s == nil {
		return nil, nil
	}
	for i := range s.Fields {
		if strings.EqualFold(s.Fields[i].Field.Name, name) {
			return &s.Fields[i], s.Fields[i].Field
		}
	}
	for _, f := range s.schema {
		if strings.EqualFold(f.Name, name) && f.Versions.Has(s.version) {
			return nil, f
		}
	}
	return nil, nil
}

// Get returns a field's value by name (Kafka's "PartitionId" or the JSON
// "partitionId"), the schema default for an absent tagged field, and false
// when the field does not exist at this version.
func (s *Struct) Get(name string) (any, bool) {
	fv, f := s.lookup(name)
	if fv != nil {
		return fv.Value, true
	}
	if f == nil {
		return nil, false
	}
	return defaultValue(f), true
}

// Has reports whether the field exists at this version (tagged fields:
// whether it was present on the wire).
func (s *Struct) Has(name string) bool {
	fv, _ := s.lookup(name)
	return fv != nil
}

// Int returns an integer field (any width) as int64.
func (s *Struct) Int(name string) (int64, bool) {
	v, ok := s.Get(name)
	if !ok {
		return 0, false
	}
	return asInt(v)
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// String returns a string field; ok is false for a null or missing one.
func (s *Struct) String(name string) (string, bool) {
	v, _ := s.Get(name)
	x, ok := v.(string)
	return x, ok
}

// Bool returns a bool field.
func (s *Struct) Bool(name string) (bool, bool) {
	v, _ := s.Get(name)
	x, ok := v.(bool)
	return x, ok
}

// Bytes returns a bytes field (the raw bytes of an Embedded one).
func (s *Struct) Bytes(name string) ([]byte, bool) {
	v, _ := s.Get(name)
	switch x := v.(type) {
	case []byte:
		return x, true
	case *Embedded:
		return x.Raw, true
	}
	return nil, false
}

// UUID returns a uuid field.
func (s *Struct) UUID(name string) (UUID, bool) {
	v, _ := s.Get(name)
	x, ok := v.(UUID)
	return x, ok
}

// Struct returns a struct field (the decoded message of an Embedded one).
func (s *Struct) Struct(name string) *Struct {
	v, _ := s.Get(name)
	switch x := v.(type) {
	case *Struct:
		return x
	case *Embedded:
		return x.Struct
	}
	return nil
}

// Array returns an array field's elements; ok is false for a null or
// missing array.
func (s *Struct) Array(name string) ([]any, bool) {
	v, _ := s.Get(name)
	x, ok := v.([]any)
	return x, ok
}

// Int32s returns an []int32-like array field as int64s.
func (s *Struct) Ints(name string) ([]int64, bool) {
	a, ok := s.Array(name)
	if !ok {
		return nil, false
	}
	out := make([]int64, 0, len(a))
	for _, e := range a {
		n, _ := asInt(e)
		out = append(out, n)
	}
	return out, true
}

// Structs returns a []struct array field.
func (s *Struct) Structs(name string) []*Struct {
	a, _ := s.Array(name)
	out := make([]*Struct, 0, len(a))
	for _, e := range a {
		if st, ok := e.(*Struct); ok {
			out = append(out, st)
		}
	}
	return out
}

// defaultValue is the field's default as Kafka's FieldSpec.fieldDefault
// computes it: numbers parse the "default" (0 when absent), strings take
// it verbatim ("" when absent), "null" is nil, arrays default to empty.
func defaultValue(f *Field) any {
	d := f.Default
	if d == "null" {
		return nil
	}
	switch f.kind {
	case kBool:
		return d == "true"
	case kInt8, kInt16, kUint16, kInt32, kUint32, kInt64:
		n, _ := strconv.ParseInt(strings.TrimSpace(d), 0, 64)
		switch f.kind {
		case kInt8:
			return int8(n)
		case kInt16:
			return int16(n)
		case kUint16:
			return uint16(n)
		case kInt32:
			return int32(n)
		case kUint32:
			return uint32(n)
		}
		return n
	case kFloat64:
		x, _ := strconv.ParseFloat(d, 64)
		return x
	case kString:
		return d
	case kBytes, kRecords:
		return []byte{}
	case kUUID:
		return UUID{}
	case kArray:
		return []any{}
	}
	return nil // struct
}
