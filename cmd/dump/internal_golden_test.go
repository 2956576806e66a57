package dump

import (
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
)

// Golden dumps of Kafka's internal topics, over real broker data: the
// fixtures in ../shared/fixtures/real (not committed; the test skips
// without them). Each case copies one partition directory (or file) into a
// temporary directory and runs dump from there, in text, json and kafka
// output with kafka-dump-log's decoder flag. Regenerate with
//
//	go test ./cmd -run InternalGolden -update
var internalGoldenDir = clitest.MustAbs(filepath.Join(clitest.TestdataDir, "golden", "internal"))

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
	realFixtures := clitest.MustAbs(clitest.RealRoot(t))
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
