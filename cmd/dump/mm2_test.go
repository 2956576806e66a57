package dump

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode/mm2"
)

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
	src := filepath.Join(clitest.MustAbs(clitest.RealRoot(t)), "rjmfernandes__flink-on-prem", "data", "connect-configs-0")
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
