package mm2

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// The bytes below are what the Java classes write, worked out from their
// schemas field by field (OffsetSync.serializeKey/serializeValue,
// Checkpoint.serializeKey/serializeValue(0), Heartbeat.…): STRING is an
// int16 length then the UTF-8 bytes, integers big-endian.
var vectors = []struct {
	name       string
	kind       Kind
	key, value string
	keyJSON    string
	valueJSON  string
	version    int16
}{
	{"OffsetSync", OffsetSyncs,
		"0006 6f7264657273 00000003", // "orders", partition 3
		"000000000000002a 0000000000000011",
		`{"topic":"orders","partition":3}`, `{"upstreamOffset":42,"offset":17}`, -1},
	{"Checkpoint", Checkpoints,
		"0007 62696c6c696e67 0008 412e6f7264657273 00000000", // "billing", "A.orders", 0
		"0000 0000000000000064 000000000000005a 0002 6d64",   // v0, 100, 90, "md"
		`{"group":"billing","topic":"A.orders","partition":0}`, `{"upstreamOffset":100,"offset":90,"metadata":"md"}`, 0},
	{"Heartbeat", Heartbeats,
		"0001 41 0001 42", // "A", "B"
		"0000 0000018bcfe56800",
		`{"sourceClusterAlias":"A","targetClusterAlias":"B"}`, `{"timestamp":1700000000000}`, 0},
}

func TestDecodeKafkaBytes(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			key, value := testkit.MustHex(t, v.key), testkit.MustHex(t, v.value)
			r, err := Decode(v.kind, key, value)
			if err != nil {
				t.Fatal(err)
			}
			if r.TypeName() != v.name {
				t.Errorf("TypeName %q, want %q", r.TypeName(), v.name)
			}
			if got := string(r.AppendKeyJSON(nil)); got != v.keyJSON {
				t.Errorf("key %s, want %s", got, v.keyJSON)
			}
			if got := string(r.AppendValueJSON(nil)); got != v.valueJSON {
				t.Errorf("value %s, want %s", got, v.valueJSON)
			}
			ver, ok := r.ValueVersion()
			if ok != (v.version >= 0) || ver != max(v.version, 0) {
				t.Errorf("ValueVersion %d %v, want %d", ver, ok, v.version)
			}
			k2, v2, err := r.Encode()
			if err != nil || !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Errorf("Encode: %x %x %v, want %x %x", k2, v2, err, key, value)
			}
		})
	}
}

// TestRoundTripEveryVersion: every record type at every version Kafka
// defines (OffsetSync has none, Checkpoint and Heartbeat version 0), a
// version Kafka does not define (read with the version-0 schema, as Kafka
// does with assertions off), tombstones, empty and non-UTF-8 strings:
// decode → encode gives the stored bytes back, and decoding those gives
// the same record.
func TestRoundTripEveryVersion(t *testing.T) {
	notUTF8 := "\xff\xfeg\xc3"
	recs := []*Record{
		{Kind: OffsetSyncs, OffsetSync: &OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: 0, DownstreamOffset: 0}},
		{Kind: OffsetSyncs, OffsetSync: &OffsetSync{Topic: notUTF8, Partition: -1, UpstreamOffset: 1<<63 - 1, DownstreamOffset: -1}},
		{Kind: OffsetSyncs, OffsetSync: &OffsetSync{Topic: "t"}, Tombstone: true},
		{Kind: Checkpoints, Checkpoint: &Checkpoint{Group: "g", Topic: "A.orders", Partition: 7, UpstreamOffset: 12, DownstreamOffset: 9, Metadata: ""}},
		{Kind: Checkpoints, Checkpoint: &Checkpoint{Group: notUTF8, Topic: "", Partition: 1, Version: 0, Metadata: strings.Repeat("m", 300)}},
		{Kind: Checkpoints, Checkpoint: &Checkpoint{Group: "g", Topic: "t", Version: 1, UpstreamOffset: 5, DownstreamOffset: 4}, NewerVersion: true},
		{Kind: Checkpoints, Checkpoint: &Checkpoint{Group: "g", Topic: "t", Partition: 2}, Tombstone: true},
		{Kind: Heartbeats, Heartbeat: &Heartbeat{SourceClusterAlias: "us-west", TargetClusterAlias: "us-east", Timestamp: 1700000000000}},
		{Kind: Heartbeats, Heartbeat: &Heartbeat{SourceClusterAlias: "", TargetClusterAlias: notUTF8, Version: -3, Timestamp: -1}, NewerVersion: true},
		{Kind: Heartbeats, Heartbeat: &Heartbeat{SourceClusterAlias: "a", TargetClusterAlias: "b"}, Tombstone: true},
	}
	for _, want := range recs {
		key, value, err := want.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(want.Kind, key, value)
		if err != nil {
			t.Fatalf("%s %x %x: %v", want.TypeName(), key, value, err)
		}
		k2, v2, err := got.Encode()
		if err != nil || !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
			t.Errorf("%s: re-encoded %x %x, want %x %x", want.TypeName(), k2, v2, key, value)
		}
		if got.NewerVersion != want.NewerVersion || got.Tombstone != want.Tombstone {
			t.Errorf("%s: NewerVersion %v Tombstone %v, want %v %v", want.TypeName(), got.NewerVersion, got.Tombstone, want.NewerVersion, want.Tombstone)
		}
		if string(got.AppendKeyJSON(nil)) != string(want.AppendKeyJSON(nil)) || string(got.AppendValueJSON(nil)) != string(want.AppendValueJSON(nil)) {
			t.Errorf("%s: decoded %s %s, want %s %s", want.TypeName(), got.AppendKeyJSON(nil), got.AppendValueJSON(nil), want.AppendKeyJSON(nil), want.AppendValueJSON(nil))
		}
	}
}

func TestNonUTF8RendersAsJava(t *testing.T) {
	r := &Record{Kind: OffsetSyncs, OffsetSync: &OffsetSync{Topic: "a\xffb\n"}}
	if got, want := string(r.AppendKeyJSON(nil)), `{"topic":"a`+"\uFFFD"+`b\n","partition":0}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestTrailingBytesIgnored(t *testing.T) {
	key := append(testkit.MustHex(t, "0001 74 00000000"), 0xee)
	value := append(testkit.MustHex(t, "0000000000000001 0000000000000002"), 1, 2, 3)
	r, err := Decode(OffsetSyncs, key, value)
	if err != nil {
		t.Fatal(err)
	}
	if r.KeyTrailing != 1 || r.ValueTrailing != 3 {
		t.Errorf("trailing %d %d, want 1 3", r.KeyTrailing, r.ValueTrailing)
	}
}

// TestDecodeErrors: Schema.read's failures, with the field, its position
// in the key or value, the class and Kafka's message.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name       string
		kind       Kind
		key, value string
		field      string
		pos        int64
		class      error
		kafka      string
	}{
		{"short key", OffsetSyncs, "00", "", "key.topic", 0, decode.ErrTruncated, "Error reading field 'topic': java.nio.BufferUnderflowException"},
		{"negative string", OffsetSyncs, "fffe", "", "key.topic", 0, decode.ErrCorrupt, "Error reading field 'topic': String length -2 cannot be negative"},
		{"string past end", Checkpoints, "0001 67 0009 41", "", "key.topic", 3, decode.ErrTruncated, "Error reading field 'topic': Error reading string of length 9, only 1 bytes available"},
		{"no partition", OffsetSyncs, "0001 74 0000", "", "key.partition", 3, decode.ErrTruncated, "Error reading field 'partition': java.nio.BufferUnderflowException"},
		{"short value", OffsetSyncs, "0001 74 00000000", "0000000000000001 00", "value.offset", 8, decode.ErrTruncated, "Error reading field 'offset': java.nio.BufferUnderflowException"},
		{"no version", Heartbeats, "0001 41 0001 42", "", "value.version", 0, decode.ErrTruncated, "Error reading field 'version': java.nio.BufferUnderflowException"},
		{"no metadata", Checkpoints, "0001 67 0001 74 00000000", "0000 0000000000000001 0000000000000001", "value.metadata", 18, decode.ErrTruncated, "Error reading field 'metadata': java.nio.BufferUnderflowException"},
	} {
		t.Run(c.name, func(t *testing.T) {
			value := testkit.MustHex(t, c.value)
			if c.value == "" {
				value = []byte{}
			}
			_, err := Decode(c.kind, testkit.MustHex(t, c.key), value)
			ce, ok := decode.AsCorrupt(err)
			if !ok {
				t.Fatalf("error %v, want a *decode.CorruptError", err)
			}
			if ce.Field != c.field || ce.Pos != c.pos || !errors.Is(err, c.class) {
				t.Errorf("got field %s pos %d (%v), want %s %d %v", ce.Field, ce.Pos, err, c.field, c.pos, c.class)
			}
			if m, _ := KafkaMessage(err); m != c.kafka {
				t.Errorf("Kafka's message %q, want %q", m, c.kafka)
			}
		})
	}
	if _, err := Decode(OffsetSyncs, nil, []byte{}); !errors.Is(err, decode.ErrCorrupt) {
		t.Errorf("null key: %v, want corrupt", err)
	}
}

func TestEncodeRefusesLongString(t *testing.T) {
	r := &Record{Kind: OffsetSyncs, OffsetSync: &OffsetSync{Topic: strings.Repeat("x", 0x8000)}}
	if _, _, err := r.Encode(); err == nil {
		t.Error("a 32768-byte topic encoded; Type.STRING.write refuses it")
	}
}

func TestClassifyTopic(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  Kind
		alias string
		sep   string
	}{
		{"mm2-offset-syncs.B.internal", OffsetSyncs, "B", "."},
		{"mm2-offset-syncs_us-east_internal", OffsetSyncs, "us-east", "_"},
		{"mm2-offset-syncs.a.b.internal", OffsetSyncs, "a.b", "."},
		{"A.checkpoints.internal", Checkpoints, "A", "."},
		{"us-west__checkpoints__internal", Checkpoints, "us-west", "__"},
		{"heartbeats", Heartbeats, "", ""},
		{"A.heartbeats", Heartbeats, "A", "."},
		{"B.A.heartbeats", Heartbeats, "B", "."},
		{"mm2-configs.A.internal", ConnectConfigs, "A", "."},
		{"mm2-offsets.A.internal", ConnectOffsets, "A", "."},
		{"mm2-status.A.internal", ConnectStatus, "A", "."},
		{"connect-offsets", ConnectOffsets, "", ""},
		{"orders", NotMM2, "", ""},
		{"A.orders", NotMM2, "", ""},
		{"internal", NotMM2, "", ""},
		{"mm2-offset-syncs.internal", NotMM2, "", ""},
		{".checkpoints.internal", NotMM2, "", ""},
		{"my-heartbeats", NotMM2, "", ""},
		{"__consumer_offsets", NotMM2, "", ""},
	} {
		got := ClassifyTopic(c.name)
		if got.Kind != c.kind || got.Alias != c.alias || got.Separator != c.sep {
			t.Errorf("%s: %v %q %q, want %v %q %q", c.name, got.Kind, got.Alias, got.Separator, c.kind, c.alias, c.sep)
		}
	}
	if got := TopicOf("mm2-offset-syncs.B.internal-0"); got.Kind != OffsetSyncs || got.Name != "mm2-offset-syncs.B.internal" {
		t.Errorf("TopicOf: %+v", got)
	}
	if got := UpstreamTopic("A.orders", "A", "."); got != "orders" {
		t.Errorf("UpstreamTopic %q", got)
	}
	if got := UpstreamTopic("orders", "A", "."); got != "orders" {
		t.Errorf("UpstreamTopic identity %q", got)
	}
}

// TestConnectRecords: the Connect topics' records as Connect writes them
// (compact JSON, Jackson's escapes), typed by their keys; each
// round-trips to its bytes.
func TestConnectRecords(t *testing.T) {
	for _, c := range []struct {
		kind       Kind
		key, value string
		typ, name  string
	}{
		{ConnectConfigs, "connector-mirror-source", `{"properties":{"name":"mirror-source","tasks.max":"1"}}`, "connector", "mirror-source"},
		{ConnectConfigs, "task-mirror-source-0", `{"properties":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask"}}`, "task", "mirror-source-0"},
		{ConnectConfigs, "commit-mirror-source", `{"tasks":1}`, "commit", "mirror-source"},
		{ConnectConfigs, "target-state-mirror-source", `{"state":"STARTED","state.v2":"STARTED"}`, "target-state", "mirror-source"},
		{ConnectConfigs, "session-key", `{"key":"abc=","algorithm":"HmacSHA256","creation-timestamp":1700000000000}`, "session-key", ""},
		{ConnectConfigs, "connector-gone", "", "connector", "gone"},
		{ConnectStatus, "status-task-mirror-source-0", `{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":3}`, "task-status", "mirror-source-0"},
		{ConnectStatus, "status-topic-orders:connector-mirror-source", `{"topic":{"name":"orders","connector":"mirror-source","task":0,"discoverTimestamp":1700000000000}}`, "topic-status", "orders:connector-mirror-source"},
		{ConnectOffsets, `["mirror-source",{"cluster":"A","partition":0,"topic":"orders"}]`, `{"offset":41}`, "source-offset", "mirror-source"},
		{ConnectOffsets, `["mirror-source",{"cluster":"A","partition":1,"topic":"orders"}]`, "", "source-offset", "mirror-source"},
		{ConnectConfigs, "weird", `"a\u0001<b>"`, "unknown", ""},
	} {
		var value []byte
		if c.value != "" {
			value = []byte(c.value)
		}
		r, err := Decode(c.kind, []byte(c.key), value)
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		if r.TypeName() != c.typ || r.Connect.Name != c.name || r.Tombstone != (value == nil) {
			t.Errorf("%s: %s %q tombstone %v, want %s %q", c.key, r.TypeName(), r.Connect.Name, r.Tombstone, c.typ, c.name)
		}
		k, v, err := r.Encode()
		if err != nil || string(k) != c.key || !bytes.Equal(v, value) {
			t.Errorf("%s: re-encoded %s %s", c.key, k, v)
		}
	}
	for _, bad := range []struct{ value string }{{`{"a":`}, {"{\"a\":\"\xff\"}"}} {
		_, err := Decode(ConnectStatus, []byte("status-task-x-0"), []byte(bad.value))
		if !errors.Is(err, decode.ErrCorrupt) {
			t.Errorf("%q: %v, want corrupt", bad.value, err)
		}
	}
	// Whitespace is not Connect's: it is dropped, so such a value does not
	// re-encode to its bytes (which the test over real data would catch).
	r, err := Decode(ConnectConfigs, []byte("commit-x"), []byte(`{ "tasks" : 1 }`))
	if err != nil || string(r.Connect.Value) != `{"tasks":1}` {
		t.Errorf("compacted %s %v", r.Connect.Value, err)
	}
}
