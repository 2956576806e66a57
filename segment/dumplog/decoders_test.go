package dumplog

import (
	"encoding/base64"
	"encoding/binary"
	"github.com/kseg/kseg/segment/scan"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
)

// Wire helpers, written out by hand so that the records below do not
// come from kseg's own encoder.
func be16(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func str(s string) []byte { return append(be16(int16(len(s))), s...) }
func cstr(s string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(s)+1)), s...)
}
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
func uuid(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		panic(s)
	}
	return b
}

// kafkaParse is what DumpLogSegments' MessageParser.parse returns for a
// record at offset 0 under decoder flag topic: the key and payload
// strings, "" for an absent part.
func kafkaParse(t *testing.T, topic string, key, value []byte) (string, string) {
	t.Helper()
	o := &Options{}
	rv := &scan.RecordView{Record: &decode.Record{Offset: 0, Key: key, Value: value}}
	d, err := schema.DecodeInternal(topic, key, value)
	rv.Internal, rv.InternalErr = d, err
	if d == nil {
		rv.Internal = &schema.Decoded{Topic: topic}
	}
	k, p := Contents(o, rv)
	return string(k), string(p)
}

// TestKafkaDecodersMatchDumpLogSegmentsTest replays the expectations of
// Kafka's own DumpLogSegmentsTest (testOffsetsMessageParser,
// testShareGroupStateMessageParser, the remote-log-metadata tests) against
// the kafka output's decoders, string for string.
func TestKafkaDecodersMatchDumpLogSegmentsTest(t *testing.T) {
	cgKey := cat(be16(3), str("group"))
	cgValue := cat(be16(0), be32(10), []byte{0}) // ConsumerGroupMetadataValue v0: epoch 10, no tags

	// The consumer protocol as ConsumerProtocol.serializeSubscription /
	// serializeAssignment write it (version 3).
	sub := cat(be16(3), be32(1), str("foo"), be32(-1), be32(1), str("foo"), be32(1), be32(0), be32(0), str("rack"))
	asg := cat(be16(3), be32(1), str("foo"), be32(1), be32(0), be32(-1))
	group := func(sub, asg []byte) []byte {
		cbytes := func(b []byte) []byte { return append(binary.AppendUvarint(nil, uint64(len(b)+1)), b...) }
		return cat(be16(4), cstr("consumer"), be32(10), cstr("range"), cstr("member"), be64(-1),
			[]byte{2}, // one member
			cstr("member"), cstr("instance"), cstr("client"), cstr("host"), be32(1000), be32(100),
			cbytes(sub), cbytes(asg), []byte{0}, // member tags
			[]byte{0}) // tags
	}
	gKey := cat(be16(2), str("group"))
	// An empty ConsumerGroupMemberMetadataValue, read as the value of a
	// ConsumerGroupMetadataKey.
	memberValue := cat(be16(0), []byte{1, 1, 1, 1, 1, 1}, be32(-1), []byte{1, 0})

	shareKey := func(typ int16) []byte {
		return cat(be16(typ), str("gs1"), uuid("Uj5wn_FqTXirEASvVZRY1w"), be32(0))
	}
	batch := cat([]byte{2}, be64(0), be64(4), []byte{2}, be16(1), []byte{0})
	// Kafka 4.1+ layouts (KIP-932 left preview): snapshotEpoch is an
	// int32, and a snapshot carries createTimestamp and writeTimestamp.
	const ts = 1700000000000
	snapValue := cat(be16(0), be32(0), be32(0), be32(0), be64(0), be64(ts), be64(ts), batch, []byte{0})
	updValue := cat(be16(0), be32(0), be32(0), be64(0), batch, []byte{0})
	nullBatchesSnapValue := cat(be16(0), be32(0), be32(0), be32(0), be64(0), be64(ts), be64(ts), []byte{0}, []byte{0})

	for _, c := range []struct {
		name, topic  string
		key, value   []byte
		wantKey, pay string
	}{
		{"valid", schema.ConsumerOffsets, cgKey, cgValue,
			`{"type":"3","data":{"groupId":"group"}}`, `{"version":"0","data":{"epoch":10}}`},
		// KIP-1101's MetadataHash (tag 0) and KIP-1282's CreationTimeMs
		// (tag 1), tagged fields Kafka 4.1+ writes.
		{"tagged fields", schema.ConsumerOffsets, cgKey,
			cat(be16(0), be32(10), []byte{2, 0, 8}, be64(77), []byte{1, 8}, be64(1700000000000)),
			`{"type":"3","data":{"groupId":"group"}}`,
			`{"version":"0","data":{"epoch":10,"metadataHash":77,"creationTimeMs":1700000000000}}`},
		// CoordinatorRecordSerde (Kafka 4.2+) refuses a value version the
		// schema does not have.
		{"unknown value version", schema.ConsumerOffsets, cgKey, cat(be16(1), be32(10), []byte{0}),
			"Error at offset 0, skipping. Found an unknown record version 1 for 3 type", ""},
		{"consumer protocol parsed", schema.ConsumerOffsets, gKey, group(sub, asg),
			`{"type":"2","data":{"group":"group"}}`,
			`{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",` +
				`"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",` +
				`"groupInstanceId":"instance","clientId":"client","clientHost":"host",` +
				`"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],` +
				`"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],` +
				`"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":` +
				`[{"topic":"foo","partitions":[0]}],"userData":null}}]}}`},
		{"consumer protocol malformed", schema.ConsumerOffsets, gKey, group([]byte("Subscription"), []byte("Assignment")),
			`{"type":"2","data":{"group":"group"}}`,
			`{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",` +
				`"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",` +
				`"groupInstanceId":"instance","clientId":"client","clientHost":"host",` +
				`"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",` +
				`"assignment":"QXNzaWdubWVudA=="}]}}`},
		{"tombstone", schema.ConsumerOffsets, cgKey, nil, `{"type":"3","data":{"groupId":"group"}}`, "<DELETE>"},
		{"unknown type", schema.ConsumerOffsets, cat(be16(32767), str("group")), cgValue,
			"Unknown record type 32767 at offset 0, skipping.", ""},
		{"parse error", schema.ConsumerOffsets, cgKey, memberValue,
			"Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: " +
				"Error reading byte array of 536870911 byte(s): only 1 byte(s) available.", ""},
		{"missing key", schema.ConsumerOffsets, nil, cgValue,
			"Failed to decode message at offset 0 using the specified decoder (message had a missing key)", ""},
		{"share snapshot", schema.ShareGroupState, shareKey(0), snapValue,
			`{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,"createTimestamp":1700000000000,"writeTimestamp":1700000000000,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"share update", schema.ShareGroupState, shareKey(1), updValue,
			`{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"share tombstone", schema.ShareGroupState, shareKey(0), nil,
			`{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`, "<DELETE>"},
		{"share parse error", schema.ShareGroupState, shareKey(0), nullBatchesSnapValue,
			"Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: " +
				"non-nullable field stateBatches was serialized as null.", ""},
		// formats.md §9.8: the Java port prints the transaction log in the
		// same form.
		{"transaction log", schema.TransactionState, cat(be16(0), str("txnId")),
			cat(be16(0), be64(1000), be16(2), be32(60000), []byte{4}, be32(0), be64(5), be64(3)),
			`{"type":"0","data":{"transactionalId":"txnId"}}`,
			`{"version":"0","data":{"producerId":1000,"producerEpoch":2,"transactionTimeoutMs":60000,"transactionStatus":4,"transactionPartitions":[],"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":3}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, p := kafkaParse(t, c.topic, c.key, c.value)
			if k != c.wantKey || p != c.pay {
				t.Errorf("key\n got %s\nwant %s\npayload\n got %s\nwant %s", k, c.wantKey, p, c.pay)
			}
		})
	}
}

// TestKafkaRemoteLogMetadataDecoder checks the toString() forms of
// DumpLogSegmentsTest's remote-log-metadata tests.
func TestKafkaRemoteLogMetadataDecoder(t *testing.T) {
	topicID, segID := "Uj5wn_FqTXirEASvVZRY1w", "AAECAwQFBgcICQoLDA0ODw"
	tip := cat(cstr("foo"), uuid(topicID), be32(0), []byte{0}) // TopicIdPartitionEntry: name, id, partition
	frame := func(apiKey byte) []byte { return []byte{1, apiKey, 0} }
	del := cat(frame(2), tip, be32(0), be64(0), []byte{0}, []byte{0})
	upd := cat(frame(1), tip, uuid(segID), []byte{0}, be32(0), be64(0), []byte{5, 0, 1, 2, 3}, []byte{1}, []byte{0})
	for _, c := range []struct {
		value []byte
		want  string
	}{
		{del, "RemotePartitionDeleteMetadata{topicPartition=" + topicID + ":foo-0, state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}"},
		{upd, "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=" + topicID +
			":foo-0, id=" + segID + "}, customMetadata=Optional[CustomMetadata{4 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=0, brokerId=0}"},
	} {
		k, p := kafkaParse(t, schema.RemoteLogMetadata, nil, c.value)
		if k != "" || p != c.want {
			t.Errorf("key %q payload\n got %s\nwant %s", k, p, c.want)
		}
	}
}

// TestKafkaClusterMetadataDecoder: ClusterMetadataLogMessageParser prints
// no key and {"type":<MetadataRecordType>,"version":N,"data":{…}}.
func TestKafkaClusterMetadataDecoder(t *testing.T) {
	topic := cat([]byte{1, 2, 0}, cstr("foo"), uuid("Uj5wn_FqTXirEASvVZRY1w"), []byte{0})
	k, p := kafkaParse(t, schema.ClusterMetadata, nil, topic)
	if want := `{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"Uj5wn_FqTXirEASvVZRY1w"}}`; k != "" || p != want {
		t.Errorf("got %q %q, want %q", k, p, want)
	}
	_, p = kafkaParse(t, schema.ClusterMetadata, nil, append(topic, 0))
	if want := "Error at 0, skipping. Found 1 byte(s) of garbage after 2"; p != want {
		t.Errorf("got %q, want %q", p, want)
	}
	_, p = kafkaParse(t, schema.ClusterMetadata, nil, []byte{1, 99, 0})
	if !strings.HasPrefix(p, "Error at 0, skipping. ") || !strings.Contains(p, "Unknown metadata id 99") {
		t.Errorf("unknown apiKey: %q", p)
	}
	_, p = kafkaParse(t, schema.ClusterMetadata, nil, []byte{0, 2, 0})
	if !strings.Contains(p, "frame version 0") {
		t.Errorf("frame version 0: %q", p)
	}
}

// TestKafkaRemoteLogMetadataInvalid: where RemoteLogMetadataSerde's
// transforms and the storage API's constructors throw, the Java port
// prints "Error at offset <o>, skipping. <getMessage()>"; an epoch listed
// twice keeps its last offset (HashMap.put, then a TreeMap).
func TestKafkaRemoteLogMetadataInvalid(t *testing.T) {
	topicID, segID := "Uj5wn_FqTXirEASvVZRY1w", "AAECAwQFBgcICQoLDA0ODw"
	tip := cat(cstr("foo"), uuid(topicID), be32(0), []byte{0})
	segIDEntry := cat(tip, uuid(segID), []byte{0})
	epoch := func(e int32, off int64) []byte { return cat(be32(e), be64(off), []byte{0}) }
	// RemoteLogSegmentMetadataRecord v0: remoteLogSegmentId, startOffset,
	// endOffset, brokerId, maxTimestampMs, eventTimestampMs,
	// segmentLeaderEpochs, segmentSizeInBytes, customMetadata (null),
	// remoteLogSegmentState, tags.
	segment := func(start, end int64, epochs [][]byte, state byte) []byte {
		return cat([]byte{1, 0, 0}, segIDEntry, be64(start), be64(end), be32(0), be64(5), be64(6),
			[]byte{byte(len(epochs) + 1)}, cat(epochs...), be32(100), []byte{0}, []byte{state}, []byte{0})
	}
	del := func(state byte) []byte { return cat([]byte{1, 2, 0}, tip, be32(0), be64(0), []byte{state}, []byte{0}) }
	one := [][]byte{epoch(0, 10)}
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"valid", segment(10, 20, [][]byte{epoch(3, 15), epoch(0, 10), epoch(3, 17)}, 1),
			"RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=" + topicID + ":foo-0, id=" + segID +
				"}, startOffset=10, endOffset=20, brokerId=0, maxTimestampMs=5, eventTimestampMs=6, segmentLeaderEpochs={0=10, 3=17}, " +
				"segmentSizeInBytes=100, customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, txnIdxEmpty=false}"},
		{"negative start", segment(-1, 20, one, 1),
			"Error at offset 0, skipping. Unexpected start offset = -1. StartOffset for a remote segment cannot be negative"},
		{"end below start", segment(10, 9, one, 1),
			"Error at offset 0, skipping. Unexpected end offset = 9. EndOffset for a remote segment cannot be less than startOffset = 10"},
		{"no epochs", segment(10, 20, nil, 1), "Error at offset 0, skipping. segmentLeaderEpochs can not be null or empty"},
		{"unknown segment state", segment(10, 20, one, 9), "Error at offset 0, skipping. state can not be null"},
		{"unknown delete state", del(7), "Error at offset 0, skipping. null"},
	} {
		k, p := kafkaParse(t, schema.RemoteLogMetadata, nil, c.value)
		if k != "" || p != c.want {
			t.Errorf("%s: key %q payload\n got %s\nwant %s", c.name, k, p, c.want)
		}
	}
}

// TestDecoderClasses: Kafka's built-in decoders, by value.
func TestDecoderClasses(t *testing.T) {
	for _, c := range []struct {
		class string
		in    []byte
		want  string
	}{
		{"org.apache.kafka.tools.api.IntegerDecoder", []byte{0xff, 0xff, 0xff, 0xfe}, "-2"},
		{"IntegerDecoder", []byte{0, 0, 1, 0, 9}, "256"}, // getInt reads the first four bytes
		{"kafka.serializer.LongDecoder", []byte{0, 0, 0, 0, 0, 0, 0x30, 0x39}, "12345"},
		{"LongDecoder", []byte{1, 2}, "java.nio.BufferUnderflowException"},
		{"StringDecoder", []byte{'a', 0xff, 'b'}, "a\uFFFDb"},
		{"", []byte("plain"), "plain"},
	} {
		d, err := ParseDecoder(c.class)
		if err != nil {
			t.Fatalf("%s: %v", c.class, err)
		}
		if got := string(d.appendDecoded(nil, c.in)); got != c.want {
			t.Errorf("%s(%x) = %q, want %q", c.class, c.in, got, c.want)
		}
	}
	d, _ := ParseDecoder("DefaultDecoder")
	a, b := string(d.appendDecoded(nil, []byte("x"))), string(d.appendDecoded(nil, []byte("y")))
	if !strings.HasPrefix(a, "[B@") || a == b {
		t.Errorf("DefaultDecoder: %q %q", a, b)
	}
	if _, err := ParseDecoder("com.example.Custom"); err == nil {
		t.Error("a custom class was accepted")
	}
}
