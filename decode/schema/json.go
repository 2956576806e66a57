package schema

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
)

// String renders the UUID as Kafka's Uuid.toString: URL-safe base64
// without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// KafkaJSON renders s as the generated <Name>JsonConverter.write(msg,
// version) serialised by Jackson's ObjectNode.toString: compact, fields in
// schema order under their camelCase names, a tagged field only when it
// differs from its default (FieldSpec.generateNonDefaultValueCheck), int64
// as a number, uuid as Uuid.toString, bytes as standard base64 (Jackson's
// BinaryNode), an embedded message as its own object.
func (s *Struct) KafkaJSON() string {
	var b bytes.Buffer
	s.appendJSON(&b)
	return b.String()
}

// AppendKafkaJSON appends s.KafkaJSON() to b.
func (s *Struct) AppendKafkaJSON(b *bytes.Buffer) { s.appendJSON(b) }

func (s *Struct) appendJSON(b *bytes.Buffer) {
	if s == nil {
		b.WriteString("null")
		return
	}
	b.WriteByte('{')
	first := true
	for _, f := range s.schema {
		if !f.Versions.Has(s.version) {
			continue
		}
		fv, _ := s.lookup(f.Name)
		var val any
		if fv != nil {
			val = fv.Value
		} else {
			val = defaultValue(f)
		}
		if f.Tagged.Has(s.version) && isDefault(f, val) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(JSONString(f.JSONName()))
		b.WriteByte(':')
		appendValue(b, val)
	}
	b.WriteByte('}')
}

// isDefault is FieldSpec.generateNonDefaultValueCheck negated.
func isDefault(f *Field, val any) bool {
	switch f.kind {
	case kArray:
		x, _ := val.([]any)
		if f.Default == "null" {
			return val == nil
		}
		return val != nil && len(x) == 0
	case kBytes, kRecords:
		if f.Default == "null" {
			return val == nil
		}
		switch x := val.(type) {
		case []byte:
			return len(x) == 0
		case *Embedded:
			return len(x.Raw) == 0
		}
		return false
	case kString:
		if f.Default == "null" {
			return val == nil
		}
		x, ok := val.(string)
		return ok && x == defaultValue(f).(string)
	case kStruct:
		return val == nil
	case kUUID:
		return val == defaultValue(f)
	}
	return val == defaultValue(f)
}

func appendValue(b *bytes.Buffer, val any) {
	switch x := val.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		b.WriteString(JavaDouble(x))
	case string:
		b.WriteString(JSONString(x))
	case []byte:
		b.WriteByte('"')
		b.WriteString(base64.StdEncoding.EncodeToString(x))
		b.WriteByte('"')
	case UUID:
		b.WriteByte('"')
		b.WriteString(x.String())
		b.WriteByte('"')
	case *Struct:
		x.appendJSON(b)
	case *Embedded:
		x.Struct.appendJSON(b)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			appendValue(b, e)
		}
		b.WriteByte(']')
	default:
		if n, ok := asInt(val); ok {
			b.WriteString(strconv.FormatInt(n, 10))
			return
		}
		b.WriteString("null")
	}
}

// JSONString quotes s as Jackson writes a JSON string, as
// decode.JSONString does (Kafka holds the string as a Java String decoded
// from UTF-8; malformed input became U+FFFD by the JDK's rules).
func JSONString(s string) string { return decode.JSONString(s) }

// JavaDouble formats f as Java's Double.toString, which Jackson's
// DoubleNode uses: plain notation with at least one decimal for
// 1e-3 <= |f| < 1e7, else computerized scientific notation ("1.0E7").
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
