package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/decode/schema/schematest"
)

// Golden dumps of Kafka's internal topics, over real broker data: the
// fixtures in ../shared/fixtures/real (not committed; the test skips
// without them). Each case copies one partition directory (or file) into a
// temporary directory and runs dump from there, in text, json and kafka
// output with kafka-dump-log's decoder flag. Regenerate with
//
//	go test ./cmd -run InternalGolden -update
var internalGoldenDir = clitest.MustAbs(clitest.Testdata("golden/internal"))

type internalCase struct {
	golden string
	src    string   // relative to the real fixtures
	flag   string   // kafka-dump-log's decoder flag
	extra  []string // flags for every run
}

var internalCases = []internalCase{
	// __consumer_offsets of a ZooKeeper-mode Kafka 2.7 broker: offset
	// commits (value v3), group metadata (v3, consumer protocol),
	// tombstones of both.
	{"consumer-offsets-kafka-2.7-17", "DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17", "--offsets-decoder", nil},
	{"consumer-offsets-kafka-2.7-39", "DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39", "--offsets-decoder", nil},
	// __consumer_offsets of a Kafka 2.0-era broker (value v2 commits,
	// group metadata v2), the first 4000 bytes.
	{"consumer-offsets-kafka-2.0-28", "William0423__kafka/kafka-logs/__consumer_offsets-28/00000000000000000000.log", "--offsets-decoder", []string{"--max-bytes", "4000"}},
	// A KRaft controller's first metadata log segment (bootstrap
	// transaction, registrations, features).
	{"cluster-metadata-log", "HastarTara__NE_streaming_project/data/__cluster_metadata-0/00000000000000000000.log", "--cluster-metadata-decoder", nil},
	// KRaft snapshots of two other brokers, and a bootstrap checkpoint.
	{"cluster-metadata-snapshot-a", "eric-kimm__stock-market-pipeline/kafka/data/__cluster_metadata-0/00000000000000083088-0000000007.checkpoint", "--cluster-metadata-decoder", nil},
	{"cluster-metadata-snapshot-b", "KS9602__KASYNO/data/__cluster_metadata-0/00000000000000064833-0000000044.checkpoint", "--cluster-metadata-decoder", nil},
	{"cluster-metadata-bootstrap", "eric-kimm__stock-market-pipeline/kafka/data/bootstrap.checkpoint", "--cluster-metadata-decoder", nil},
}

func TestInternalGolden(t *testing.T) {
	realFixtures := clitest.MustAbs(testkit.RealRootOrSkip(t))
	for _, c := range internalCases {
		t.Run(c.golden, func(t *testing.T) {
			src := filepath.Join(realFixtures, c.src)
			st, err := os.Stat(src)
			if err != nil {
				t.Skipf("fixture absent: %v", err)
			}
			work := t.TempDir()
			// Keep the partition directory's name: it names the topic.
			var arg string
			if st.IsDir() {
				arg = filepath.Base(src)
				clitest.CopyTree(t, src, filepath.Join(work, arg))
			} else {
				dir := filepath.Base(filepath.Dir(src))
				if filepath.Base(src) == "bootstrap.checkpoint" {
					dir = "logdir"
				}
				clitest.CopyTree(t, filepath.Dir(src), filepath.Join(work, dir))
				arg = filepath.Join(dir, filepath.Base(src))
			}
			t.Chdir(work)
			var runs [][]string
			for _, args := range [][]string{
				{"dump", "--output", "text", "--deep"},
				{"dump", "--output", "json", "--deep"},
				{"dump", "--output", "kafka", c.flag},
				{"dump", "--output", "text", "--deep", "--no-decode-internal", "--print-data"},
			} {
				runs = append(runs, append(append(args, c.extra...), arg))
			}
			res := runRecorded(t, runs, false, func(r clitest.Result) { checkInternalRun(t, c, r) })
			clitest.CheckGoldenPath(t, filepath.Join(internalGoldenDir, c.golden+".txt"), renderRecorded("InternalGolden", []string{
				fmt.Sprintf("kseg dump over a copy of ../shared/fixtures/real/%s, run from its parent directory.", c.src)}, res))
		})
	}
}

// checkInternalRun asserts what must hold whatever the golden says: every
// data record line of a decoded run is decoded (no "undecodable", no
// "Error at", no "Unknown record type"), and kafka output's record lines
// carry the decoder's JSON.
func checkInternalRun(t *testing.T, c internalCase, r clitest.Result) {
	t.Helper()
	decoded := !slices.Contains(r.Args, "--no-decode-internal")
	checked := 0
	for _, line := range strings.Split(r.Stdout, "\n") {
		switch {
		case strings.Contains(line, "undecodable") || strings.Contains(line, "Error at") ||
			strings.Contains(line, "Unknown record type") || strings.Contains(line, `"error":`):
			t.Errorf("kseg %s: a record did not decode: %s", strings.Join(r.Args, " "), line)
		case slices.Contains(r.Args, "kafka") && strings.HasPrefix(line, "| offset:") && !strings.Contains(line, "endTxnMarker") &&
			!strings.Contains(line, "Snapshot") && !strings.Contains(line, "LeaderChange") && !strings.Contains(line, "KRaft"):
			if !strings.Contains(line, " payload: {") && !strings.Contains(line, " payload: <DELETE>") &&
				!(c.flag == "--remote-log-metadata-decoder" && strings.Contains(line, " payload: Remote")) {
				t.Errorf("kafka record line without a decoded payload: %s", line)
			}
		case !decoded && strings.Contains(line, " key {"):
			t.Errorf("--no-decode-internal still decoded: %s", line)
		}
		if slices.Contains(r.Args, "kafka") && checkKafkaDecodedLine(t, c.flag, line) {
			checked++
		}
	}
	if slices.Contains(r.Args, "kafka") && checked == 0 {
		t.Errorf("kseg %s: no decoded data record line to check", strings.Join(r.Args, " "))
	}
}

// checkKafkaDecodedLine checks one line of kafka output under a decoder
// flag against kafka-dump-log's documented format (formats.md §9.3, §9.8),
// field by field: batch and record lines carry printBatchLevel's and
// printRecordMetadata's labels in order with values of the right Java
// type, and a data record's contents are the decoder's JSON —
// {"type":"<recordType>","data":{…}} for a coordinator key,
// {"version":"<v>","data":{…}} or <DELETE> for its value,
// {"type":"<NAME>_RECORD","version":<v>,"data":{…}} and no key for a
// cluster metadata record. It reports whether line was a data record's.
func checkKafkaDecodedLine(t *testing.T, flag, line string) bool {
	t.Helper()
	switch {
	case strings.HasPrefix(line, "baseOffset: "):
		checkKafkaLine(t, line, v2BatchLabels)
		return false
	case !strings.HasPrefix(line, "| offset: "):
		return false
	}
	checkKafkaLine(t, line, v2RecordLabels)
	_, rest, ok := strings.Cut(line, " headerKeys: [")
	if _, rest, ok = strings.Cut(rest, "]"); !ok {
		t.Errorf("no headerKeys: %s", line)
		return false
	}
	for _, control := range []string{" endTxnMarker: ", " LeaderChange: ", " SnapshotHeader {", " SnapshotFooter {", " KRaftVersion {", " KRaftVoters {", " controlType: "} {
		if strings.HasPrefix(rest, control) {
			if strings.HasSuffix(control, "{") || control == " LeaderChange: " {
				_, json, _ := strings.Cut(rest, "{")
				if _, _, err := jsonKeys("{" + json); err != nil {
					t.Errorf("control record JSON: %v: %s", err, line)
				}
			}
			return false
		}
	}
	wantInt := func(part, label string, v any, quoted bool) {
		switch x := v.(type) {
		case string:
			if !quoted || !regexp.MustCompile(`^-?[0-9]+$`).MatchString(x) {
				t.Errorf("%s %q is %q: %s", part, label, x, line)
			}
		case float64:
			if quoted {
				t.Errorf("%s %q is a number, Kafka prints a string: %s", part, label, line)
			}
		default:
			t.Errorf("%s %q is %T: %s", part, label, v, line)
		}
	}
	if flag == "--remote-log-metadata-decoder" {
		// RemoteLogMetadataSerde's objects' toString(), no key.
		p, ok := strings.CutPrefix(rest, " payload: ")
		if !ok || strings.Contains(rest, " key: ") || !regexp.MustCompile(`^Remote[A-Za-z]+\{.*\}$`).MatchString(p) {
			t.Errorf("payload is not a RemoteLogMetadata toString(): %s", line)
		}
		return true
	}
	if flag == "--cluster-metadata-decoder" {
		if !strings.Contains(line, " keySize: -1 ") || strings.Contains(rest, " key: ") {
			t.Errorf("a metadata record with a key: %s", line)
		}
		p, ok := strings.CutPrefix(rest, " payload: ")
		keys, vals, err := jsonKeys(p)
		if !ok || err != nil || !slices.Equal(keys, []string{"type", "version", "data"}) {
			t.Errorf("payload is not {type,version,data} (%v): %s", err, line)
			return true
		}
		if typ, _ := vals[0].(string); !regexp.MustCompile(`^[A-Z_]+_RECORD$`).MatchString(typ) {
			t.Errorf("type %v is not a MetadataRecordType name: %s", vals[0], line)
		}
		wantInt("payload", "version", vals[1], false)
		return true
	}
	k, ok := strings.CutPrefix(rest, " key: ")
	k, p, hasPayload := strings.Cut(k, " payload: ")
	keys, vals, err := jsonKeys(k)
	if !ok || err != nil || !slices.Equal(keys, []string{"type", "data"}) {
		t.Errorf("key is not {type,data} (%v): %s", err, line)
		return true
	}
	wantInt("key", "type", vals[0], true)
	if !hasPayload {
		t.Errorf("no payload (a tombstone is <DELETE>): %s", line)
		return true
	}
	if p == "<DELETE>" {
		return true
	}
	if keys, vals, err = jsonKeys(p); err != nil || !slices.Equal(keys, []string{"version", "data"}) {
		t.Errorf("payload is not {version,data} or <DELETE> (%v): %s", err, line)
		return true
	}
	wantInt("payload", "version", vals[0], true)
	return true
}

// jsonKeys parses one JSON object (and nothing after it) and returns its
// top-level keys in order and their values.
func jsonKeys(s string) ([]string, []any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object (%v)", err)
	}
	var keys []string
	var vals []any
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			v = f
		}
		keys = append(keys, tok.(string))
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("text after the object: %q", s[dec.InputOffset():])
	}
	return keys, vals, nil
}

// kv is one record's key and value.
type kv struct{ key, value []byte }

// chdirRecordsPartition changes into a new temporary directory and writes
// there the partition topic-0 holding recs, one single-record batch each
// (record i at offset i, timestamp 1700000000000+i, no producer), in
// partitionLeaderEpoch epoch. It returns the .log's relative path.
func chdirRecordsPartition(t *testing.T, topic string, epoch int32, recs []kv) string {
	t.Helper()
	t.Chdir(t.TempDir())
	dir := topic + "-0"
	clitest.Mkdir(t, dir)
	var raw []byte
	for i, r := range recs {
		var err error
		raw, err = decode.AppendBatch(raw, decode.BatchSpec{BaseOffset: int64(i), PartitionLeaderEpoch: epoch,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]decode.RecordSpec{{Timestamp: 1700000000000 + int64(i), Key: r.key, Value: r.value}})
		if err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(dir, "00000000000000000000.log")
	testkit.WriteFile(t, log, raw)
	return log
}

// runRecorded runs each invocation of a golden of decoded records from
// the working directory and checks what must hold whatever the golden
// says: exit 0, nothing on stderr when quiet, JSON lines from a json run,
// and check's own assertions.
func runRecorded(t *testing.T, runs [][]string, quiet bool, check func(clitest.Result)) []clitest.Result {
	t.Helper()
	work, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var res []clitest.Result
	for _, args := range runs {
		r := clitest.Run(args...)
		placeholdWork(&r, work)
		if r.Code != 0 || quiet && r.Stderr != "" {
			t.Errorf("kseg %s: exit %d\n%s", strings.Join(r.Args, " "), r.Code, r.Stderr)
		}
		if clitest.IsJSONRun(r.Args) {
			clitest.CheckJSONLines(t, r)
		}
		check(r)
		res = append(res, r)
	}
	return res
}

// renderRecorded is clitest.RenderRuns with the regenerate line naming
// the test that writes the golden.
func renderRecorded(test string, header []string, res []clitest.Result) []byte {
	return bytes.Replace(clitest.RenderRuns(header, res), []byte(" -run Golden -update\n"), []byte(" -run "+test+" -update\n"), 1)
}

// decoderFlag is kafka-dump-log's decoder option for each internal topic.
var decoderFlag = map[string]string{
	schema.ConsumerOffsets:   "--offsets-decoder",
	schema.TransactionState:  "--transaction-log-decoder",
	schema.ShareGroupState:   "--share-group-state-decoder",
	schema.ClusterMetadata:   "--cluster-metadata-decoder",
	schema.RemoteLogMetadata: "--remote-log-metadata-decoder",
}

// TestInternalGeneratedGolden: golden dumps of generated segments holding
// one record of every record type of every internal topic at every
// version, and a tombstone of every coordinator record type
// (decode/schema/schematest writes them, every field set, tagged fields
// included). Each segment is dumped as text and json, which decode by the
// partition's name, and as kafka output with the topic's decoder flag;
// every record must decode, re-encode to its bytes, and print in kafka
// output as formats.md §9.3/§9.8 say, field by field. Regenerate with
//
//	go test ./cmd -run InternalGeneratedGolden -update
func TestInternalGeneratedGolden(t *testing.T) {
	for _, topic := range schematest.Topics {
		t.Run(topic, func(t *testing.T) {
			exs, err := schematest.Examples(topic)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]kv, len(exs))
			for i, ex := range exs {
				// The record round-trips before it is dumped.
				d, err := schema.DecodeInternal(topic, ex.Key, ex.Value)
				if err != nil {
					t.Fatalf("%s v%d: %v", ex.Name, ex.Version, err)
				}
				if k, v, err := d.Encode(); err != nil || !bytes.Equal(k, ex.Key) || !bytes.Equal(v, ex.Value) {
					t.Fatalf("%s v%d: round trip (%v)", ex.Name, ex.Version, err)
				}
				recs[i] = kv{ex.Key, ex.Value}
			}
			log := chdirRecordsPartition(t, topic, 1, recs)
			c := internalCase{golden: "generated-" + strings.TrimPrefix(topic, "__"), flag: decoderFlag[topic]}
			res := runRecorded(t, [][]string{
				{"dump", "--output", "text", "--deep", log},
				{"dump", "--output", "json", "--deep", log},
				{"dump", "--output", "kafka", c.flag, log},
			}, true, func(r clitest.Result) {
				checkInternalRun(t, c, r)
				if r.Args[2] == "kafka" {
					if n := strings.Count(r.Stdout, "\n| offset: "); n != len(exs) {
						t.Errorf("kafka output has %d record lines, want %d", n, len(exs))
					}
				}
			})
			// Without the decoder flag kafka output does not decode, as
			// kafka-dump-log does not: keys and values are StringDecoder's.
			r := clitest.Run("dump", "--output", "kafka", "--print-data-log", log)
			if r.Code != 0 || strings.Count(r.Stdout, "\n| offset: ") != len(exs) {
				t.Errorf("kafka output without a decoder flag: exit %d\n%s", r.Code, r.Stderr)
			}
			for _, line := range strings.Split(r.Stdout, "\n") {
				if strings.Contains(line, ` key: {"type":`) || strings.Contains(line, ` payload: {"`) || strings.Contains(line, " payload: Remote") {
					t.Errorf("decoded without the flag: %s", line)
				}
			}
			clitest.CheckGoldenPath(t, filepath.Join(internalGoldenDir, c.golden+".txt"), renderRecorded("InternalGeneratedGolden", []string{
				fmt.Sprintf("kseg dump of a generated %s segment: one record of every record type at every version", topic),
				"(decode/schema/schematest), and a tombstone of every coordinator record type."}, res))
		})
	}
}

// mm2Example is one record of an MM2 topic for the dump goldens: the
// record (nil for raw bytes that do not decode) and its stored bytes.
type mm2Example struct {
	rec        *mm2.Record
	key, value []byte
}

func mm2Encoded(t *testing.T, r *mm2.Record) mm2Example {
	t.Helper()
	k, v, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return mm2Example{r, k, v}
}

// mm2Examples are, per topic, a record of every type at every version
// (OffsetSync has none, Checkpoint and Heartbeat version 0), a version
// Kafka does not define, a tombstone, and bytes that do not decode.
func mm2Examples(t *testing.T) map[string][]mm2Example {
	sync := func(u, d int64) *mm2.Record {
		return &mm2.Record{Kind: mm2.OffsetSyncs, OffsetSync: &mm2.OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: u, DownstreamOffset: d}}
	}
	connect := func(kind mm2.Kind, key, value string) mm2Example {
		var v []byte
		if value != "" {
			v = []byte(value)
		}
		r, err := mm2.Decode(kind, []byte(key), v)
		if err != nil {
			t.Fatal(err)
		}
		return mm2Example{r, []byte(key), v}
	}
	return map[string][]mm2Example{
		"mm2-offset-syncs.B.internal": {
			mm2Encoded(t, sync(0, 0)), mm2Encoded(t, sync(101, 100)), mm2Encoded(t, sync(250, 212)),
			{nil, []byte{0, 6, 'o', 'r'}, make([]byte, 16)},
		},
		"A.checkpoints.internal": {
			mm2Encoded(t, &mm2.Record{Kind: mm2.Checkpoints, Checkpoint: &mm2.Checkpoint{Group: "billing", Topic: "A.orders", Partition: 0, UpstreamOffset: 120, DownstreamOffset: 101, Metadata: ""}}),
			mm2Encoded(t, &mm2.Record{Kind: mm2.Checkpoints, Checkpoint: &mm2.Checkpoint{Group: "audit", Topic: "A.orders", Partition: 0, Version: 1, UpstreamOffset: 7, DownstreamOffset: 7, Metadata: "m\x01"}, NewerVersion: true}),
			mm2Encoded(t, &mm2.Record{Kind: mm2.Checkpoints, Checkpoint: &mm2.Checkpoint{Group: "gone", Topic: "A.orders", Partition: 0}, Tombstone: true}),
		},
		"heartbeats": {
			mm2Encoded(t, &mm2.Record{Kind: mm2.Heartbeats, Heartbeat: &mm2.Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: 1700000000000}}),
			{nil, []byte{0, 1, 'A', 0, 1, 'B'}, []byte{0}},
		},
		"mm2-configs.A.internal": {
			connect(mm2.ConnectConfigs, "connector-MirrorSourceConnector", `{"properties":{"connector.class":"org.apache.kafka.connect.mirror.MirrorSourceConnector","source.cluster.alias":"A","target.cluster.alias":"B","topics":"orders"}}`),
			connect(mm2.ConnectConfigs, "task-MirrorSourceConnector-0", `{"properties":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.assigned.partitions":"orders-0"}}`),
			connect(mm2.ConnectConfigs, "commit-MirrorSourceConnector", `{"tasks":1}`),
			connect(mm2.ConnectConfigs, "connector-Retired", ""),
		},
		"mm2-offsets.A.internal": {
			connect(mm2.ConnectOffsets, `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"orders"}]`, `{"offset":249}`),
			{nil, []byte(`["MirrorSourceConnector",`), []byte(`{}`)},
		},
		"mm2-status.A.internal": {
			connect(mm2.ConnectStatus, "status-task-MirrorSourceConnector-0", `{"state":"RUNNING","trace":null,"worker_id":"10.0.0.5:8083","generation":2}`),
		},
	}
}

// TestDumpMM2Golden: golden dumps of a generated partition of every MM2
// topic (issue 23), in text and json (which decode by the directory's
// name), with --no-decode-internal (bytes), and in kafka output (which
// never decodes them, as kafka-dump-log has no decoder for them). Every
// record that decodes round-trips to its bytes first. Regenerate with
//
//	go test ./cmd -run DumpMM2Golden -update
func TestDumpMM2Golden(t *testing.T) {
	examples := mm2Examples(t)
	topics := make([]string, 0, len(examples))
	for topic := range examples {
		topics = append(topics, topic)
	}
	slices.Sort(topics)
	for _, topic := range topics {
		t.Run(topic, func(t *testing.T) {
			exs := examples[topic]
			recs := make([]kv, len(exs))
			undecodable := 0
			for i, ex := range exs {
				if ex.rec == nil {
					undecodable++
				} else if k, v, err := ex.rec.Encode(); err != nil || !bytes.Equal(k, ex.key) || !bytes.Equal(v, ex.value) {
					t.Fatalf("record %d does not round-trip (%v)", i, err)
				}
				recs[i] = kv{ex.key, ex.value}
			}
			log := chdirRecordsPartition(t, topic, 0, recs)
			res := runRecorded(t, [][]string{
				{"dump", "--output", "text", "--deep", log},
				{"dump", "--output", "json", "--deep", log},
				{"dump", "--output", "text", "--deep", "--no-decode-internal", "--print-data", log},
				{"dump", "--output", "kafka", "--print-data-log", log},
			}, true, func(r clitest.Result) { checkMM2Run(t, r, len(exs), undecodable) })
			clitest.CheckGoldenPath(t, filepath.Join(internalGoldenDir, "mm2-"+mm2.ClassifyTopic(topic).Kind.String()+".txt"), clitest.RenderRuns([]string{
				fmt.Sprintf("kseg dump of a generated %s partition: MM2 records of every type and version,", topic),
				"a tombstone, and bytes that do not decode."}, res))
		})
	}
}

// decodedTextLine is a text record line with a decoded record after the
// sizes ("valueSize 20 OffsetSync key {…}"; --print-data's bytes follow
// the sizes with " key " directly).
var decodedTextLine = regexp.MustCompile(`valueSize -?\d+ (headerKeys \[[^]]*\] )?\S+ key `)

// checkMM2Run asserts what the golden must show whatever it says: text
// and json decode every record (undecodable ones say so), the other runs
// decode none.
func checkMM2Run(t *testing.T, r clitest.Result, records, undecodable int) {
	t.Helper()
	decoded := !slices.Contains(r.Args, "--no-decode-internal") && !slices.Contains(r.Args, "kafka")
	var got, bad int
	for _, line := range strings.Split(r.Stdout, "\n") {
		switch {
		case strings.Contains(line, "undecodable") || strings.Contains(line, `"error":`):
			bad++
		case strings.Contains(line, `"decoded":`) || decodedTextLine.MatchString(line):
			got++
		}
	}
	want, wantBad := records-undecodable, undecodable
	if !decoded {
		want, wantBad = 0, 0
	}
	if got != want || bad != wantBad {
		t.Errorf("kseg %s: %d decoded and %d undecodable records, want %d and %d:\n%s", strings.Join(r.Args, " "), got, bad, want, wantBad, r.Stdout)
	}
}

// TestDumpRealConnectTopic: a Connect cluster's configs topic from a real
// broker (../shared/fixtures/real; skipped without it) decodes record by
// record in text and json: MM2's dedicated workers write the same records
// to mm2-configs.<source>.internal.
func TestDumpRealConnectTopicGolden(t *testing.T) {
	src := filepath.Join(clitest.MustAbs(testkit.RealRootOrSkip(t)), "rjmfernandes__flink-on-prem", "data", "connect-configs-0")
	work := t.TempDir()
	clitest.CopyTree(t, src, filepath.Join(work, "connect-configs-0"))
	t.Chdir(work)
	res := runRecorded(t, [][]string{
		{"dump", "--output", "text", "--deep", "connect-configs-0"},
		{"dump", "--output", "json", "--deep", "connect-configs-0"},
	}, false, func(r clitest.Result) { checkMM2Run(t, r, 18, 0) })
	clitest.CheckGoldenPath(t, filepath.Join(internalGoldenDir, "connect-configs-real.txt"), clitest.RenderRuns([]string{
		"kseg dump over a copy of ../shared/fixtures/real/rjmfernandes__flink-on-prem/data/connect-configs-0."}, res))
}
