package dump

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment/dumplog"
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
	keyDecoder   dumplog.Decoder
	valueDecoder dumplog.Decoder
}

// AddDecoderFlags adds kafka-dump-log's decoder options and
// --no-decode-internal to c.
func (o *Options) AddDecoderFlags(c *cobra.Command) { o.dec.addFlags(c, o) }

func (d *decoderOptions) addFlags(c *cobra.Command, o *Options) {
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
	// (JoinOptionalArgs).
	for _, n := range []string{"key-decoder-class", "value-decoder-class"} {
		f.Lookup(n).NoOptDefVal = dumplog.StringDecoderClass
	}
}

// validate applies kafka-dump-log's rules: any decoder option implies
// --print-data-log (and so deep iteration), and messageParser's precedence
// offsets > transaction log > cluster metadata > remote log metadata >
// share group state > decoder classes.
func (d *decoderOptions) validate(o *Options) error {
	var err error
	if d.keyDecoder, err = dumplog.ParseDecoder(d.keyDecoderClass); err != nil {
		return ui.UsageErrorf("--key-decoder-class: %v", err)
	}
	if d.valueDecoder, err = dumplog.ParseDecoder(d.valueDecoderClass); err != nil {
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
		o.PrintData, o.Deep = true, true
	}
	return nil
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

// writeDecodedJSON writes the "decoded" object of a JSON record line
// (docs/json.md) into j, the record's own writer, after its "decoded"
// key: the record's topic, then the error of a record that does not
// decode (err), or what body writes of one that does. It writes into the
// caller's writer, never a JSONWriter of its own: body is a func value, so
// a local writer handed to it would be moved to the heap, one allocation
// per decoded record of a deep dump.
func writeDecodedJSON(j *ui.JSONWriter, topic string, err error, body func(j *ui.JSONWriter)) {
	j.Begin()
	j.Str("topic", topic)
	if err != nil {
		j.Str("error", err.Error())
	} else {
		body(j)
	}
	j.End()
}

// writeInternalJSON writes the "decoded" object of a JSON record line
// for an internal topic (writeDecodedJSON).
func writeInternalJSON(j *ui.JSONWriter, rv *scan.RecordView) {
	d := rv.Internal
	writeDecodedJSON(j, d.Topic, rv.InternalErr, func(j *ui.JSONWriter) {
		j.Str("type", d.TypeName())
		if schema.Coordinator(d.Topic) {
			j.Int("recordType", int64(d.RecordType))
		} else {
			j.Int("apiKey", int64(d.RecordType))
		}
		j.Bool("unknown", d.Unknown)
		if d.Unknown {
			return
		}
		var b bytes.Buffer
		if d.Key != nil {
			j.Int("keyVersion", int64(d.KeyVersion))
			d.Key.AppendKafkaJSON(&b)
			j.Raw("key", b.Bytes())
		}
		if d.Tombstone() {
			j.Bool("tombstone", true)
			return
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
	})
}
