package cmd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment/scan"
)

// decoderOptions are dump's flags for Kafka's internal topics and
// kafka-dump-log's decoders (issue 13). text and json decode the records
// of __consumer_offsets, __transaction_state, __share_group_state,
// __cluster_metadata and __remote_log_metadata partitions on their own
// (the topic comes from the partition directory's name); --output kafka
// decodes only when one of kafka-dump-log's decoder flags says so, and
// then with that decoder whatever the directory, as DumpLogSegments does.
type decoderOptions struct {
	offsets, txnLog, clusterMetadata, remoteLogMetadata, shareGroupState bool
	keyDecoderClass, valueDecoderClass                                   string

	// derived: the topic a decoder flag forces ("" = none), and the
	// --key/--value-decoder-class decoders.
	forced       string
	keyDecoder   kafkaDecoder
	valueDecoder kafkaDecoder
}

func (d *decoderOptions) addFlags(c *cobra.Command, o *dumpOptions) {
	f := c.Flags()
	f.BoolVar(&o.NoDecodeInternal, "no-decode-internal", false, "text/json: show the keys and values of Kafka's and MirrorMaker 2's internal topics as bytes instead of decoding them")
	f.BoolVar(&d.offsets, "offsets-decoder", false, "decode records as __consumer_offsets records, whatever the directory (kafka-dump-log's flag; implies --print-data)")
	f.BoolVar(&d.txnLog, "transaction-log-decoder", false, "decode records as __transaction_state records (implies --print-data)")
	f.BoolVar(&d.clusterMetadata, "cluster-metadata-decoder", false, "decode records as KRaft __cluster_metadata records (implies --print-data)")
	f.BoolVar(&d.remoteLogMetadata, "remote-log-metadata-decoder", false, "decode records as __remote_log_metadata records (implies --print-data)")
	f.BoolVar(&d.shareGroupState, "share-group-state-decoder", false, "decode records as __share_group_state records (implies --print-data)")
	f.StringVar(&d.keyDecoderClass, "key-decoder-class", "", "kafka output: Kafka's key decoder, StringDecoder|IntegerDecoder|LongDecoder|DefaultDecoder (implies --print-data; bare, StringDecoder)")
	f.StringVar(&d.valueDecoderClass, "value-decoder-class", "", "kafka output: Kafka's value decoder, as --key-decoder-class (implies --print-data; bare, StringDecoder)")
	// jopt withOptionalArg: the option alone is StringDecoder, and it
	// still counts as given (shouldPrintDataLog). "--key-decoder-class X"
	// is joined into --key-decoder-class=X before parsing
	// (joinOptionalArgs).
	for _, n := range []string{"key-decoder-class", "value-decoder-class"} {
		f.Lookup(n).NoOptDefVal = stringDecoderClass
	}
}

// stringDecoderClass is the decoder classes' default.
const stringDecoderClass = "org.apache.kafka.tools.api.StringDecoder"

// validate applies kafka-dump-log's rules: any decoder option implies
// --print-data-log (and so deep iteration), and messageParser's precedence
// offsets > transaction log > cluster metadata > remote log metadata >
// share group state > decoder classes.
func (d *decoderOptions) validate(o *dumpOptions) error {
	var err error
	if d.keyDecoder, err = parseKafkaDecoder(d.keyDecoderClass); err != nil {
		return ui.UsageErrorf("--key-decoder-class: %v", err)
	}
	if d.valueDecoder, err = parseKafkaDecoder(d.valueDecoderClass); err != nil {
		return ui.UsageErrorf("--value-decoder-class: %v", err)
	}
	switch {
	case d.offsets:
		d.forced = schema.ConsumerOffsets
	case d.txnLog:
		d.forced = schema.TransactionState
	case d.clusterMetadata:
		d.forced = schema.ClusterMetadata
	case d.remoteLogMetadata:
		d.forced = schema.RemoteLogMetadata
	case d.shareGroupState:
		d.forced = schema.ShareGroupState
	}
	o.ForcedTopic = d.forced
	if d.forced != "" || d.keyDecoderClass != "" || d.valueDecoderClass != "" {
		o.printData, o.Deep = true, true
	}
	return nil
}

// kafkaDecoder is one of Kafka's built-in org.apache.kafka.tools.api
// decoders.
type kafkaDecoder int

const (
	stringDecoder kafkaDecoder = iota
	integerDecoder
	longDecoder
	defaultDecoder
)

// parseKafkaDecoder accepts a decoder class as kafka-dump-log's
// --key-decoder-class takes it: the class name, fully qualified
// (org.apache.kafka.tools.api.*, or kafka.serializer.* of Kafka 3.x and
// earlier) or short.
func parseKafkaDecoder(class string) (kafkaDecoder, error) {
	short := class[strings.LastIndexByte(class, '.')+1:]
	switch short {
	case "", "StringDecoder":
		return stringDecoder, nil
	case "IntegerDecoder":
		return integerDecoder, nil
	case "LongDecoder":
		return longDecoder, nil
	case "DefaultDecoder":
		return defaultDecoder, nil
	}
	return 0, fmt.Errorf("%q is not one of Kafka's decoders (StringDecoder, IntegerDecoder, LongDecoder, DefaultDecoder); kseg cannot load Java classes", class)
}

// appendDecoded renders b as kafka-dump-log's decoder prints it
// (Decoder.fromBytes, then String.valueOf).
func (k kafkaDecoder) appendDecoded(dst, b []byte) []byte {
	switch k {
	case integerDecoder:
		// ByteBuffer.wrap(bytes).getInt(): the first four bytes.
		if len(b) < 4 {
			return append(dst, "java.nio.BufferUnderflowException"...)
		}
		return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(b))), 10)
	case longDecoder:
		if len(b) < 8 {
			return append(dst, "java.nio.BufferUnderflowException"...)
		}
		return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(b)), 10)
	case defaultDecoder:
		// DefaultDecoder returns the byte[] itself, which Java prints
		// as [B@<identity hash>: a number that differs on every run. kseg
		// prints a stable stand-in (the CRC-32 of the bytes) in its place.
		return fmt.Appendf(dst, "[B@%x", crc32.ChecksumIEEE(b))
	}
	return decode.AppendJavaUTF8(dst, b)
}

// textInternal renders a decoded internal record for text output:
//
//	OffsetCommit key {"group":…} value v3 {"offset":…}
//	GroupMetadata key {"group":"g"} tombstone
//	TransactionLog key {…} value v1 {…} state CompleteCommit
//	TOPIC_RECORD v0 {"name":"orders","topicId":"…"}
func textInternal(st *ui.Styles, rv *scan.RecordView) string {
	d := rv.Internal
	if rv.InternalErr != nil {
		return st.Paint(st.Err, "undecodable "+d.Topic+" record: "+rv.InternalErr.Error())
	}
	var b bytes.Buffer
	b.WriteString(st.Paint(st.Title, d.TypeName()))
	if d.Unknown {
		b.WriteString(" (record type not in kseg's schema table)")
		return b.String()
	}
	if d.Key != nil {
		b.WriteString(" key ")
		d.Key.AppendKafkaJSON(&b)
	}
	if d.Tombstone() {
		b.WriteString(" tombstone")
		return b.String()
	}
	if d.Key != nil {
		b.WriteString(" value")
	}
	fmt.Fprintf(&b, " v%d ", d.ValueVersion)
	d.Value.AppendKafkaJSON(&b)
	if d.ValueMessage.Name == "TransactionLogValue" {
		s, _ := d.Value.Int("transactionStatus")
		b.WriteString(" state " + schema.TransactionStateName(s))
	}
	if d.NewerVersion {
		b.WriteString(" (version newer than kseg's schema table: read with its newest layout)")
	}
	return b.String()
}

// appendInternalJSON renders the "decoded" object of a JSON record line
// (docs/json.md).
func appendInternalJSON(dst []byte, rv *scan.RecordView) []byte {
	d := rv.Internal
	var j ui.JSONWriter
	j.B = dst
	j.Begin()
	j.Str("topic", d.Topic)
	if rv.InternalErr != nil {
		j.Str("error", rv.InternalErr.Error())
		j.End()
		return j.B
	}
	j.Str("type", d.TypeName())
	if schema.Coordinator(d.Topic) {
		j.Int("recordType", int64(d.RecordType))
	} else {
		j.Int("apiKey", int64(d.RecordType))
	}
	j.Bool("unknown", d.Unknown)
	if d.Unknown {
		j.End()
		return j.B
	}
	var b bytes.Buffer
	if d.Key != nil {
		j.Int("keyVersion", int64(d.KeyVersion))
		b.Reset()
		d.Key.AppendKafkaJSON(&b)
		j.Raw("key", b.Bytes())
	}
	if d.Tombstone() {
		j.Bool("tombstone", true)
		j.End()
		return j.B
	}
	if !schema.Coordinator(d.Topic) {
		j.Int("frameVersion", int64(d.FrameVersion))
	}
	j.Int("valueVersion", int64(d.ValueVersion))
	b.Reset()
	d.Value.AppendKafkaJSON(&b)
	j.Raw("value", b.Bytes())
	if d.ValueMessage.Name == "TransactionLogValue" {
		s, _ := d.Value.Int("transactionStatus")
		j.Str("state", schema.TransactionStateName(s))
	}
	if d.NewerVersion {
		j.Bool("newerVersion", true)
	}
	j.End()
	return j.B
}

// kafkaContents is what kafka-dump-log prints after key: and payload: for
// a data record (DumpLogSegments' MessageParser.parse); nil means the part
// is absent.
func kafkaContents(o *dumpOptions, rv *scan.RecordView) (key, payload []byte) {
	r := rv.Record
	if rv.Internal == nil {
		if r.Key != nil {
			key = o.dec.keyDecoder.appendDecoded(nil, r.Key)
		}
		if r.Value != nil {
			payload = o.dec.valueDecoder.appendDecoded(nil, r.Value)
		}
		return key, payload
	}
	d := rv.Internal
	internalErr := ""
	if rv.InternalErr != nil {
		internalErr = kafkaErrorMessage(rv.InternalErr)
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

// kafkaErrorMessage is the message Kafka's serde throws for a record
// that does not decode (schema.KafkaMessage), or kseg's own account where
// kseg cannot know Kafka's.
func kafkaErrorMessage(err error) string {
	if m, ok := schema.KafkaMessage(err); ok {
		return m
	}
	return err.Error()
}
