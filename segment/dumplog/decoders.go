package dumplog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment/scan"
)

// How kafka-dump-log prints a data record's key and payload: with a
// decoder class (--key-decoder-class, --value-decoder-class), or with the
// parser of an internal topic a decoder flag names (DumpLogSegments'
// MessageParser implementations).

// StringDecoderClass is the decoder classes' default.
const StringDecoderClass = "org.apache.kafka.tools.api.StringDecoder"

// Decoder is one of Kafka's built-in org.apache.kafka.tools.api
// decoders.
type Decoder int

const (
	StringDecoder Decoder = iota
	IntegerDecoder
	LongDecoder
	DefaultDecoder
)

// ParseDecoder accepts a decoder class as kafka-dump-log's
// --key-decoder-class takes it: the class name, fully qualified
// (org.apache.kafka.tools.api.*, or kafka.serializer.* of Kafka 3.x and
// earlier) or short.
func ParseDecoder(class string) (Decoder, error) {
	short := class[strings.LastIndexByte(class, '.')+1:]
	switch short {
	case "", "StringDecoder":
		return StringDecoder, nil
	case "IntegerDecoder":
		return IntegerDecoder, nil
	case "LongDecoder":
		return LongDecoder, nil
	case "DefaultDecoder":
		return DefaultDecoder, nil
	}
	return 0, fmt.Errorf("%q is not one of Kafka's decoders (StringDecoder, IntegerDecoder, LongDecoder, DefaultDecoder); kseg cannot load Java classes", class)
}

// appendDecoded renders b as kafka-dump-log's decoder prints it
// (Decoder.fromBytes, then String.valueOf).
func (k Decoder) appendDecoded(dst, b []byte) []byte {
	switch k {
	case IntegerDecoder:
		// ByteBuffer.wrap(bytes).getInt(): the first four bytes.
		if len(b) < 4 {
			return append(dst, "java.nio.BufferUnderflowException"...)
		}
		return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(b))), 10)
	case LongDecoder:
		if len(b) < 8 {
			return append(dst, "java.nio.BufferUnderflowException"...)
		}
		return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(b)), 10)
	case DefaultDecoder:
		// DefaultDecoder returns the byte[] itself, which Java prints
		// as [B@<identity hash>: a number that differs on every run. kseg
		// prints a stable stand-in (the CRC-32 of the bytes) in its place.
		return fmt.Appendf(dst, "[B@%x", crc32.ChecksumIEEE(b))
	}
	return decode.AppendJavaUTF8(dst, b)
}

// Contents is what kafka-dump-log prints after key: and payload: for
// a data record (DumpLogSegments' MessageParser.parse); nil means the part
// is absent.
func Contents(o *Options, rv *scan.RecordView) (key, payload []byte) {
	r := rv.Record
	if rv.Internal == nil {
		if r.Key != nil {
			key = o.KeyDecoder.appendDecoded(nil, r.Key)
		}
		if r.Value != nil {
			payload = o.ValueDecoder.appendDecoded(nil, r.Value)
		}
		return key, payload
	}
	d := rv.Internal
	internalErr := ""
	if rv.InternalErr != nil {
		internalErr = errorMessage(rv.InternalErr)
	}
	var b bytes.Buffer
	switch {
	case d.Topic == schema.ClusterMetadata:
		// ClusterMetadataLogMessageParser: no key; the value as
		// {"type":<MetadataRecordType>,"version":N,"data":{…}}.
		switch {
		case internalErr != "":
			fmt.Fprintf(&b, "Error at %d, skipping. %s", r.Offset, internalErr)
		case d.Unknown:
			fmt.Fprintf(&b, "Error at %d, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id %d", r.Offset, d.RecordType)
		default:
			b.WriteString(`{"type":` + schema.JSONString(schema.RecordTypeName(d.ValueMessage)) + `,"version":` + strconv.Itoa(int(d.ValueVersion)) + `,"data":`)
			d.Value.AppendKafkaJSON(&b)
			b.WriteByte('}')
		}
		return nil, b.Bytes()
	case d.Topic == schema.RemoteLogMetadata:
		// RemoteMetadataLogMessageParser: no key; the value's toString().
		s, ok, invalid := d.RemoteLogMetadataString()
		switch {
		case internalErr != "":
			fmt.Fprintf(&b, "Error at offset %d, skipping. %s", r.Offset, internalErr)
		case invalid != nil:
			fmt.Fprintf(&b, "Error at offset %d, skipping. %s", r.Offset, invalid)
		case !ok:
			fmt.Fprintf(&b, "Error at offset %d, skipping. Unknown apiKey %d", r.Offset, d.RecordType)
		default:
			b.WriteString(s)
		}
		return nil, b.Bytes()
	}
	// Coordinator topics (OffsetsMessageParser, the transaction log and
	// share group parsers of the Java port): key
	// {"type":"<recordType>","data":{…}}, value
	// {"version":"<v>","data":{…}} or <DELETE>; failures are printed as the
	// key, without a payload.
	switch {
	case r.Key == nil:
		// Kafka throws here and the tool stops; kseg prints its message
		// as the key and reads on (docs/kafka-dump-log.md).
		return fmt.Appendf(nil, "Failed to decode message at offset %d using the specified decoder (message had a missing key)", r.Offset), nil
	case internalErr != "":
		return fmt.Appendf(nil, "Error at offset %d, skipping. %s", r.Offset, internalErr), nil
	case d.Unknown:
		return fmt.Appendf(nil, "Unknown record type %d at offset %d, skipping.", d.RecordType, r.Offset), nil
	case d.NewerVersion && d.Value != nil:
		// CoordinatorRecordSerde of Kafka 4.2+ refuses a value version
		// above the schema's (UnknownRecordVersionException); text and
		// json read it with the newest layout and say so.
		return fmt.Appendf(nil, "Error at offset %d, skipping. %s", r.Offset, schema.UnknownRecordVersion(d.ValueVersion, d.RecordType)), nil
	}
	b.WriteString(`{"type":"` + strconv.Itoa(int(d.RecordType)) + `","data":`)
	d.Key.AppendKafkaJSON(&b)
	b.WriteByte('}')
	key = append([]byte(nil), b.Bytes()...)
	if d.Value == nil {
		return key, []byte("<DELETE>")
	}
	b.Reset()
	b.WriteString(`{"version":"` + strconv.Itoa(int(d.ValueVersion)) + `","data":`)
	d.Value.AppendKafkaJSON(&b)
	b.WriteByte('}')
	return key, b.Bytes()
}

// errorMessage is the message Kafka's serde throws for a record
// that does not decode (decode.KafkaMessage), or kseg's own account where
// kseg cannot know Kafka's.
func errorMessage(err error) string {
	if m, ok := decode.KafkaMessage(err); ok {
		return m
	}
	return err.Error()
}
