package decode

import (
	"errors"
	"fmt"
)

// Class sentinels. Every corruption kseg reports wraps exactly one of them,
// so callers can branch with errors.Is without parsing messages.
var (
	// ErrCorrupt is structural damage: a length, count, varint or field
	// value that cannot be what Kafka wrote.
	ErrCorrupt = errors.New("corrupt")
	// ErrCRCMismatch is a stored checksum that does not match the bytes
	// (CRC-32C for v2 batches and snapshots, CRC-32/IEEE for v0/v1 messages).
	ErrCRCMismatch = errors.New("crc mismatch")
	// ErrTruncated is input that ends inside a structure.
	ErrTruncated = errors.New("truncated")
	// ErrTooLarge is a decompressed payload above the caller's cap
	// (a decompression bomb, or a cap set too low).
	ErrTooLarge = errors.New("decompressed size above limit")
	// ErrUnsupported is a well-formed value Kafka itself rejects, such as
	// compression id 5..7 or an LZ4 frame with dependent blocks.
	ErrUnsupported = errors.New("unsupported")
)

// NoBaseOffset marks a CorruptError that is not tied to a batch.
const NoBaseOffset int64 = -1

// CorruptError is the one error type for damaged input. Pos is the byte
// position of the failing field: relative to the slice handed to the decoder
// inside this package, absolute within the file once the segment package has
// rebased it with At. Field names the Kafka field (batchLength, crc,
// recordsCount, keyLength …) so an operator can find it in formats.md.
type CorruptError struct {
	Path       string // file, when known
	Pos        int64  // byte position of the failure
	BaseOffset int64  // baseOffset of the batch, or NoBaseOffset
	Field      string // Kafka field name
	Err        error  // wraps one of the class sentinels
}

func (e *CorruptError) Error() string {
	msg := ""
	if e.Path != "" {
		msg = e.Path + ": "
	}
	if e.BaseOffset != NoBaseOffset {
		msg += fmt.Sprintf("position %d (batch baseOffset %d)", e.Pos, e.BaseOffset)
	} else {
		msg += fmt.Sprintf("position %d", e.Pos)
	}
	if e.Field != "" {
		msg += ": " + e.Field
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *CorruptError) Unwrap() error { return e.Err }

// At returns a copy of e rebased by base bytes and attributed to path. The
// segment package uses it to turn a batch-relative position into a file one.
func (e *CorruptError) At(path string, base int64) *CorruptError {
	c := *e
	if c.Path == "" {
		c.Path = path
	}
	c.Pos += base
	return &c
}

// KafkaError is the Err of a *CorruptError for a condition Kafka itself
// detects and reports with its own exception text. Error() gives kseg's
// wording; Message keeps Kafka's verbatim (the getMessage() of the
// exception its reader or serde throws) so a kafka-dump-log compatible
// front end can print exactly what Kafka prints. The segment files' readers
// and decode/schema's generated-message reader both carry it.
type KafkaError struct {
	Class   error  // one of the class sentinels (ErrCorrupt, ErrCRCMismatch …)
	Detail  string // kseg's description of the problem
	Message string // the message of Kafka's exception, verbatim
}

func (e *KafkaError) Error() string {
	if e.Detail == "" {
		return e.Class.Error()
	}
	return e.Class.Error() + ": " + e.Detail
}

func (e *KafkaError) Unwrap() error { return e.Class }

// KafkaMessage returns the verbatim Kafka exception message carried by err,
// if any of its wrapped errors is a *KafkaError with one.
func KafkaMessage(err error) (string, bool) {
	var ke *KafkaError
	if errors.As(err, &ke) && ke.Message != "" {
		return ke.Message, true
	}
	return "", false
}

// corruptf builds a CorruptError wrapping class with a formatted detail.
func corruptf(pos, baseOffset int64, field string, class error, format string, args ...any) *CorruptError {
	var err error = class
	if format != "" {
		err = fmt.Errorf("%w: %s", class, fmt.Sprintf(format, args...))
	}
	return &CorruptError{Pos: pos, BaseOffset: baseOffset, Field: field, Err: err}
}

// AsCorrupt reports whether err is (or wraps) a *CorruptError and returns it.
func AsCorrupt(err error) (*CorruptError, bool) {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce, true
	}
	return nil, false
}
