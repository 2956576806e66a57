package segment

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

func TestOffsetCheckpointParse(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want []OffsetCheckpointEntry
	}{
		{"empty file", "", nil},
		{"version only", "0\n", nil},
		{"version only, no newline", "0", nil},
		{"zero entries", "0\n0\n", nil},
		{"two entries", "0\n2\nfoo 0 5\n__consumer_offsets 49 1234567890123\n",
			[]OffsetCheckpointEntry{{"foo", 0, 5}, {"__consumer_offsets", 49, 1234567890123}}},
		{"no final newline", "0\n1\nfoo 0 5", []OffsetCheckpointEntry{{"foo", 0, 5}}},
		{"CRLF and CR", "0\r\n2\rfoo 0 5\r\nbar 1 -1\r", []OffsetCheckpointEntry{{"foo", 0, 5}, {"bar", 1, -1}}},
		{"runs of whitespace, trailing space", "0\n1\nfoo \t 3\f 9  \n", []OffsetCheckpointEntry{{"foo", 3, 9}}},
		{"signed numbers", "+0\n+1\nfoo +3 +9\n", []OffsetCheckpointEntry{{"foo", 3, 9}}},
	} {
		got, err := ParseOffsetCheckpoint([]byte(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestOffsetCheckpointErrors(t *testing.T) {
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	for _, c := range []struct {
		name  string
		in    string
		field string
		pos   int64
		class error
		kafka string
		line  string
	}{
		{"version not a number", "x\n0\n", "version", 0, decode.ErrCorrupt,
			"Malformed line in checkpoint file [" + abs("cp") + "]: x", "line 1"},
		{"version 1", "1\n0\n", "version", 0, decode.ErrUnsupported,
			"Unrecognised version:1, expected version: 0 in checkpoint file at: " + abs("cp"), "line 1"},
		{"count not a number", "0\nmany\n", "count", 2, decode.ErrCorrupt, "", "line 2"},
		{"count too big for int", "0\n2147483648\n", "count", 2, decode.ErrCorrupt, "", "line 2"},
		{"fewer entries than count", "0\n2\nfoo 0 5\n", "count", 2, decode.ErrCorrupt,
			"Expected [2] entries in checkpoint file [" + abs("cp") + "], but found only [1]", "line 2"},
		{"more entries than count", "0\n0\nfoo 0 5\n", "count", 2, decode.ErrCorrupt, "", "line 2"},
		{"huge count", "0\n2147483647\n", "count", 2, decode.ErrCorrupt, "", "line 2"},
		{"negative count", "0\n-1\n", "count", 2, decode.ErrCorrupt, "", "line 2"},
		{"two fields", "0\n1\nfoo 0\n", "entry", 4, decode.ErrCorrupt,
			"Malformed line in checkpoint file [" + abs("cp") + "]: foo 0", "line 3"},
		{"four fields", "0\n2\nfoo 0 1\nfoo 1 2 3\n", "entry", 12, decode.ErrCorrupt, "", "line 4"},
		{"leading space", "0\n1\n foo 0 5\n", "entry", 4, decode.ErrCorrupt, "", "line 3"},
		{"blank line", "0\n1\n\nfoo 0 5\n", "entry", 4, decode.ErrCorrupt, "", "line 3"},
		{"partition not int32", "0\n1\nfoo 2147483648 5\n", "entry", 4, decode.ErrCorrupt, "", "line 3"},
		{"offset not a number", "0\n1\nfoo 0 5x\n", "entry", 4, decode.ErrCorrupt, "", "line 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readCheckpoint([]byte(c.in), "cp", parseOffsetEntry)
			if got != nil {
				t.Errorf("entries returned with error: %+v", got)
			}
			ce := wantCorrupt(t, err, c.field, c.pos, c.class)
			if ce.Path != "cp" {
				t.Errorf("Path = %q", ce.Path)
			}
			if !strings.Contains(err.Error(), c.line+":") {
				t.Errorf("error %q does not name %s", err, c.line)
			}
			if msg, ok := decode.KafkaMessage(err); !ok || (c.kafka != "" && msg != c.kafka) {
				t.Errorf("Kafka message\n got %q\nwant %q", msg, c.kafka)
			}
		})
	}
}

func TestCheckpointEncoding(t *testing.T) {
	in := []OffsetCheckpointEntry{{"foo", 0, 5}, {"bar", 12, -1}}
	b := EncodeOffsetCheckpoint(in)
	if string(b) != "0\n2\nfoo 0 5\nbar 12 -1\n" {
		t.Errorf("EncodeOffsetCheckpoint = %q", b)
	}
	if got, err := ParseOffsetCheckpoint(b); err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("round trip %+v %v", got, err)
	}
	if b := EncodeOffsetCheckpoint(nil); string(b) != "0\n0\n" {
		t.Errorf("empty = %q", b)
	}
	ep := []EpochEntry{{0, 0}, {24, 11630}}
	b = EncodeLeaderEpochCheckpoint(ep)
	if string(b) != "0\n2\n0 0\n24 11630\n" {
		t.Errorf("EncodeLeaderEpochCheckpoint = %q", b)
	}
	if got, err := ParseLeaderEpochCheckpoint(b); err != nil || !reflect.DeepEqual(got, ep) {
		t.Errorf("round trip %+v %v", got, err)
	}
}

func TestLeaderEpochCheckpointErrors(t *testing.T) {
	for _, in := range []string{"0\n1\n0\n", "0\n1\n0 0 0\n", "0\n1\n2147483648 0\n", "0\n1\nx 0\n"} {
		_, err := ParseLeaderEpochCheckpoint([]byte(in))
		wantCorrupt(t, err, "entry", 4, decode.ErrCorrupt)
	}
	// Negative epochs and offsets parse (Integer.parseInt does).
	got, err := ParseLeaderEpochCheckpoint([]byte("0\n1\n-1 -5\n"))
	if err != nil || !reflect.DeepEqual(got, []EpochEntry{{-1, -5}}) {
		t.Errorf("got %+v %v", got, err)
	}
}

func TestJavaSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a b", []string{"a", "b"}},
		{" a b", []string{"", "a", "b"}},
		{"a b  ", []string{"a", "b"}},
		{"   ", nil},
		{"a\x0bb", []string{"a", "b"}},
	} {
		if got := javaSplit(c.in, whitespaces); len(got) != len(c.want) || len(got) > 0 && !reflect.DeepEqual(got, c.want) {
			t.Errorf("javaSplit(%q, \\s+) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := javaSplit("topic_id: a: b", colonWhitespaces); len(got) != 3 {
		t.Errorf("colon split = %q", got)
	}
	if got := javaSplit("version:0", colonWhitespaces); len(got) != 1 {
		t.Errorf("colon split = %q", got)
	}
}

func TestPartitionMetadata(t *testing.T) {
	const file = "version: 0\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA"
	pm, err := ParsePartitionMetadata([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if pm.Version != 0 || pm.TopicIDString != "RZ9e6ESCRnGbAVQU9j2WXA" {
		t.Errorf("parsed %+v", pm)
	}
	if got := EncodePartitionMetadata(pm); string(got) != file {
		t.Errorf("encoded %q", got)
	}
	// The KRaft metadata topic id is Uuid(0, 1).
	meta, err := ParsePartitionMetadata([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n"))
	if err != nil || meta.TopicID != [16]byte{15: 1} {
		t.Errorf("metadata topic: %+v %v", meta, err)
	}
	// Tolerated as Kafka tolerates them: padding, any key names, extra lines.
	for _, in := range []string{
		"version: 0\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA==",
		"v:  0\nid:\tRZ9e6ESCRnGbAVQU9j2WXA\nextra line\n",
		"version: 0\r\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA\r\n",
	} {
		if got, err := ParsePartitionMetadata([]byte(in)); err != nil || got.TopicID != pm.TopicID {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, c := range []struct {
		in    string
		field string
		pos   int64
		class error
	}{
		{"", "version", 0, decode.ErrTruncated},
		{"version:0\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA", "version", 0, decode.ErrCorrupt},
		{"version: x\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA", "version", 0, decode.ErrCorrupt},
		{"version: 1\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXA", "version", 0, decode.ErrUnsupported},
		{"version: 0\n", "topic_id", 11, decode.ErrTruncated},
		{"version: 0", "topic_id", 10, decode.ErrTruncated},
		{"version: 0\ntopic_id: a: b", "topic_id", 11, decode.ErrCorrupt},
		{"version: 0\ntopic_id: AAAA", "topic_id", 11, decode.ErrCorrupt},
		{"version: 0\ntopic_id: !!!!!!!!!!!!!!!!!!!!!!", "topic_id", 11, decode.ErrCorrupt},
		{"version: 0\ntopic_id: RZ9e6ESCRnGbAVQU9j2WXARZ9e6", "topic_id", 11, decode.ErrCorrupt},
		{"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "topic_id", 11, decode.ErrCorrupt},
	} {
		_, err := ParsePartitionMetadata([]byte(c.in))
		wantCorrupt(t, err, c.field, c.pos, c.class)
	}
	_, err = parsePartitionMetadata([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"), "p/partition.metadata")
	abs, _ := filepath.Abs("p/partition.metadata")
	if msg, _ := decode.KafkaMessage(err); msg != "Invalid topic ID in partition metadata file ("+abs+")" {
		t.Errorf("zero id Kafka message = %q", msg)
	}
	if id, err := ParseTopicID("RZ9e6ESCRnGbAVQU9j2WXA"); err != nil || TopicIDString(id) != "RZ9e6ESCRnGbAVQU9j2WXA" {
		t.Errorf("ParseTopicID round trip: %v", err)
	}
}

func TestCleanShutdown(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CleanShutdown
	}{
		{"", CleanShutdown{Empty: true, Version: -1, BrokerEpoch: -1}},
		{`{"version":0,"brokerEpoch":199070}`, CleanShutdown{Version: 0, BrokerEpoch: 199070}},
		{`{"brokerEpoch":5,"version":0}` + "\n", CleanShutdown{Version: 0, BrokerEpoch: 5}},
		{`{}`, CleanShutdown{Version: -1, BrokerEpoch: -1}},
	} {
		got, err := parseCleanShutdown([]byte(c.in), "x")
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v", c.in, got, err)
		}
	}
	_, err := parseCleanShutdown([]byte(`{"version":0,"brokerEpoch":`), "x")
	wantCorrupt(t, err, "brokerEpoch", 27, decode.ErrCorrupt)
	_, err = parseCleanShutdown([]byte(`{"version":0,"brokerEpoch":"x"}`), "x")
	if _, ok := decode.AsCorrupt(err); !ok {
		t.Errorf("type mismatch: %v", err)
	}
}

func TestProperties(t *testing.T) {
	in := "#\n#Sun Feb 12 10:26:07 UTC 2023\n  ! another comment\n\nbroker.id=1\nversion = 0\ncluster.id:bhKx9kzDTW6IYAX6MriLZQ\n" +
		"spaced value with spaces \n" +
		"long=a\\\n    b\\\n c\n" +
		"esc\\=key=tab\\there\\u0041\\\\\n" +
		"latin1=\xe9\n" +
		"empty=\n" +
		"trailing\\\n"
	got, err := ParseProperties([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"broker.id": "1", "version": "0", "cluster.id": "bhKx9kzDTW6IYAX6MriLZQ",
		"spaced": "value with spaces ", "long": "abc", "esc=key": "tab\there" + "A\\",
		"latin1": "é", "empty": "", "trailing": "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	_, err = ParseProperties([]byte("a=\\u00zz\n"))
	wantCorrupt(t, err, "a", 0, decode.ErrCorrupt)
	_, err = ParseProperties([]byte("x=1\na=\\u00"))
	wantCorrupt(t, err, "a", 4, decode.ErrCorrupt)
}

// reencodes reads the file at p (rel names it) with read and checks that
// encode gives back its bytes, raw; an empty file must read as nothing
// (CheckpointFile.CheckpointReadBuffer.read: no first line), which brokers
// leave (a directory created but never flushed). ok is false when the file
// could not be read.
func reencodes[T any](t *testing.T, rel, p string, raw []byte, read func(string) (T, error), encode func(T) []byte) (v T, ok bool) {
	t.Helper()
	v, err := read(p)
	if err != nil {
		t.Errorf("%s: %v", rel, err)
		return v, false
	}
	var none T
	if got := string(encode(v)); got != string(raw) && (len(raw) != 0 || got != string(encode(none))) {
		t.Errorf("%s: re-encoding differs", rel)
	}
	return v, true
}

// TestCheckpointRealFixtures parses every broker-written text file and
// re-encodes the checkpoints byte for byte.
func TestCheckpointRealFixtures(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	epochs := map[string]int{}
	offsets := map[string]int{}
	metas := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fi, _ := ParseFileName(d.Name())
		raw, _ := os.ReadFile(p)
		switch fi.Kind {
		case KindLeaderEpochCheckpoint:
			if es, ok := reencodes(t, rel, p, raw, ReadLeaderEpochCheckpoint, EncodeLeaderEpochCheckpoint); ok {
				epochs[rel] = len(es)
			}
		case KindRecoveryPointCheckpoint, KindLogStartOffsetCheckpoint, KindReplicationOffsetCheckpoint, KindCleanerOffsetCheckpoint:
			if es, ok := reencodes(t, rel, p, raw, ReadOffsetCheckpoint, EncodeOffsetCheckpoint); ok {
				offsets[rel] = len(es)
			}
		case KindPartitionMetadata:
			if pm, ok := reencodes(t, rel, p, raw, ReadPartitionMetadata, EncodePartitionMetadata); ok {
				metas[rel] = pm.TopicIDString
			}
		case KindMetaProperties:
			props, err := ReadMetaProperties(p)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			if props["version"] == "" || (props["broker.id"] == "" && props["node.id"] == "") {
				t.Errorf("%s: properties %q", rel, props)
			}
		case KindCleanShutdown:
			if _, err := ReadCleanShutdown(p); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	testing0 := filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data", "testing-0", LeaderEpochCheckpointName)
	es, err := ReadLeaderEpochCheckpoint(testing0)
	if err != nil {
		t.Fatal(err)
	}
	wantEpochs := []EpochEntry{{0, 0}, {2, 6}, {8, 42}, {10, 1363}, {12, 1444}, {14, 1616}, {16, 7578}, {18, 7579}, {24, 11630}}
	if !reflect.DeepEqual(es, wantEpochs) {
		t.Errorf("testing-0 leader epochs = %+v", es)
	}
	for rel, n := range map[string]int{
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/leader-epoch-checkpoint":                                                          6,
		"eric-kimm__stock-market-pipeline/kafka/data/__cluster_metadata-0/leader-epoch-checkpoint":                                                    12,
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/leader-epoch-checkpoint": 2,
		"macsakini__KafkaCluster/kafka/data/test-0/leader-epoch-checkpoint":                                                                           1,
		"Niloufar1171__LDI-POC/__cluster_metadata-0/leader-epoch-checkpoint":                                                                          1,
	} {
		if epochs[rel] != n {
			t.Errorf("%s: %d epochs, want %d", rel, epochs[rel], n)
		}
	}
	manifest := realManifest(t, root)
	if want := countManifest(manifest, func(n string) bool { return n == LeaderEpochCheckpointName }); len(epochs) != want || want < 14 {
		t.Errorf("%d leader-epoch checkpoints parsed, the README lists %d", len(epochs), want)
	}
	for rel, n := range map[string]int{
		"macsakini__KafkaCluster/kafka/data/recovery-point-offset-checkpoint":          57,
		"macsakini__KafkaCluster/kafka/data/replication-offset-checkpoint":             1,
		"macsakini__KafkaCluster/kafka/data/cleaner-offset-checkpoint":                 0,
		"macsakini__KafkaCluster/kafka/data/log-start-offset-checkpoint":               0,
		"eric-kimm__stock-market-pipeline/kafka/data/recovery-point-offset-checkpoint": 54,
		"eric-kimm__stock-market-pipeline/kafka/data/replication-offset-checkpoint":    54,
		"eric-kimm__stock-market-pipeline/kafka/data/cleaner-offset-checkpoint":        0,
		"eric-kimm__stock-market-pipeline/kafka/data/log-start-offset-checkpoint":      0,
	} {
		if got, ok := offsets[rel]; !ok || got != n {
			t.Errorf("%s: %d entries (seen %v), want %d", rel, got, ok, n)
		}
	}
	if want := countManifest(manifest, func(n string) bool { return strings.HasSuffix(n, "-offset-checkpoint") }); len(offsets) != want || want < 8 {
		t.Errorf("%d offset checkpoints parsed, the README lists %d", len(offsets), want)
	}
	repl, err := ReadOffsetCheckpoint(filepath.Join(root, "macsakini__KafkaCluster", "kafka", "data", ReplicationOffsetCheckpointName))
	if err != nil || !reflect.DeepEqual(repl, []OffsetCheckpointEntry{{"tesot", 0, 0}}) {
		t.Errorf("replication-offset-checkpoint = %+v %v", repl, err)
	}
	for rel, id := range map[string]string{
		"macsakini__KafkaCluster/kafka/data/quickstart-events-0/partition.metadata":                                                              "ry96JKw2S-modJu4uColiA",
		"macsakini__KafkaCluster/kafka/data/tenitems-0/partition.metadata":                                                                       "KSqXCsh0SDOAYm1yUOQfpQ",
		"macsakini__KafkaCluster/kafka/data/test-0/partition.metadata":                                                                           "68lnE2ctSjaaaSwE1CVEAg",
		"seanorth__kafka-server/kafka-logs/some-topic-0/partition.metadata":                                                                      "vqSmEBIuSwm33bh8npzjMw",
		"Danielowo2000__BigDataTechnologies-Version-2/kafka_data/_confluent-ksql-default__command_topic-0/partition.metadata":                    "DV0cQA9tQEWsXpFSZm34tA",
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/partition.metadata": "TvQoTq0KRHWWLKQ64d1gfw",
		"eric-kimm__stock-market-pipeline/kafka/data/__cluster_metadata-0/partition.metadata":                                                    "AAAAAAAAAAAAAAAAAAAAAQ",
		"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/partition.metadata":                                                          "jI4X6cHZSeqYT3yh6FWfMQ",
		"eric-kimm__stock-market-pipeline/kafka/data/testing-0/partition.metadata":                                                               "RZ9e6ESCRnGbAVQU9j2WXA",
		"Niloufar1171__LDI-POC/TestTopicPatient-0/partition.metadata":                                                                            "B3_HiNPgSQ6oxG9ZZ6ED5A",
		"Niloufar1171__LDI-POC/__cluster_metadata-0/partition.metadata":                                                                          "AAAAAAAAAAAAAAAAAAAAAQ",
	} {
		if metas[rel] != id {
			t.Errorf("%s: topic id %q, want %q", rel, metas[rel], id)
		}
	}
	if want := countManifest(manifest, func(n string) bool { return n == PartitionMetadataName }); len(metas) != want || want < 11 {
		t.Errorf("%d partition.metadata parsed, the README lists %d", len(metas), want)
	}
	data := filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data")
	cs, err := ReadCleanShutdown(filepath.Join(data, CleanShutdownName))
	if err != nil || cs != (CleanShutdown{Version: 0, BrokerEpoch: 199070}) {
		t.Errorf("clean shutdown = %+v %v", cs, err)
	}
	cs, err = ReadCleanShutdown(filepath.Join(root, "macsakini__KafkaCluster", "kafka", "data", CleanShutdownName))
	if err != nil || !cs.Empty || cs.BrokerEpoch != -1 {
		t.Errorf("empty clean shutdown = %+v %v", cs, err)
	}
	props, err := ReadMetaProperties(filepath.Join(data, MetaPropertiesName))
	if err != nil || props["node.id"] != "1" || props["version"] != "1" || props["directory.id"] != "XE2M0goTkGhQgA2Kte9nsA" || len(props) != 4 {
		t.Errorf("meta.properties = %q %v", props, err)
	}
}
