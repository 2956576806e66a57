package mm2

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kseg/kseg/decode"
)

// wireError is a failure to read an MM2 record, worded as Kafka's
// Schema.read words the SchemaException it throws ("Error reading field
// 'topic': …"), under one of decode's class sentinels.
type wireError struct {
	class error
	msg   string
}

func (e *wireError) Error() string { return e.class.Error() + ": " + e.msg }
func (e *wireError) Unwrap() error { return e.class }

// KafkaMessage is what Kafka's deserializer says for a failure Decode
// reports (the SchemaException's message); ok is false for other errors.
func KafkaMessage(err error) (string, bool) {
	var we *wireError
	if errors.As(err, &we) {
		return we.msg, true
	}
	return "", false
}

// underflowName is BufferUnderflowException's class name, which
// Schema.read prints for it (its message is null).
const underflowName = "java.nio.BufferUnderflowException"

// reader reads the protocol types of an old-style Schema from one key or
// value: big-endian INT16/INT32/INT64 and STRING (int16 length, UTF-8
// bytes). The first failure sticks, with the field's name and position.
type reader struct {
	b    []byte
	p    int
	part string // "key" or "value", the prefix of every field name
	err  *decode.CorruptError
}

func (r *reader) fail(field string, pos int, class error, format string, args ...any) {
	if r.err == nil {
		r.err = &decode.CorruptError{Pos: int64(pos), BaseOffset: decode.NoBaseOffset, Field: r.part + "." + field,
			Err: &wireError{class: class, msg: fmt.Sprintf("Error reading field '%s': ", field) + fmt.Sprintf(format, args...)}}
	}
}

// need reports whether n more bytes exist, failing as ByteBuffer.getX does
// when they do not.
func (r *reader) need(field string, n int) bool {
	if r.err != nil {
		return false
	}
	if len(r.b)-r.p < n {
		r.fail(field, r.p, decode.ErrTruncated, "%s", underflowName)
		return false
	}
	return true
}

// take returns the next n bytes, or nil (the failure recorded) when they
// are not there.
func (r *reader) take(field string, n int) []byte {
	if !r.need(field, n) {
		return nil
	}
	b := r.b[r.p : r.p+n]
	r.p += n
	return b
}

func (r *reader) int16(field string) int16 {
	if b := r.take(field, 2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32(field string) int32 {
	if b := r.take(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(field string) int64 {
	if b := r.take(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// string reads Type.STRING: the bytes are kept as they are stored (Java
// decodes them as UTF-8, replacing malformed input; the JSON renderings
// do the same), so that Encode gives the stored bytes back.
func (r *reader) string(field string) string {
	at := r.p
	n := int(r.int16(field))
	switch {
	case r.err != nil:
		return ""
	case n < 0:
		r.fail(field, at, decode.ErrCorrupt, "String length %d cannot be negative", n)
		return ""
	case n > len(r.b)-r.p:
		r.fail(field, at, decode.ErrTruncated, "Error reading string of length %d, only %d bytes available", n, len(r.b)-r.p)
		return ""
	}
	s := string(r.b[r.p : r.p+n])
	r.p += n
	return s
}

// left is how many bytes follow the last field read (Schema.read ignores
// them).
func (r *reader) left() int { return len(r.b) - r.p }

// errOrNil returns the sticky failure as an error (nil when none).
func (r *reader) errOrNil() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

// appendString writes Type.STRING. A string longer than Short.MAX_VALUE
// bytes cannot be written (Type.STRING.write throws).
func appendString(dst []byte, s string) ([]byte, error) {
	if len(s) > 0x7fff {
		return nil, fmt.Errorf("String length %d is larger than the maximum string length.", len(s))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...), nil
}
