package dump

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/decode/schema/schematest"
)

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
			t.Chdir(t.TempDir())
			dir := topic + "-0"
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var raw []byte
			for i, ex := range exs {
				// The record round-trips before it is dumped.
				d, err := schema.DecodeInternal(topic, ex.Key, ex.Value)
				if err != nil {
					t.Fatalf("%s v%d: %v", ex.Name, ex.Version, err)
				}
				if k, v, err := d.Encode(); err != nil || !bytes.Equal(k, ex.Key) || !bytes.Equal(v, ex.Value) {
					t.Fatalf("%s v%d: round trip (%v)", ex.Name, ex.Version, err)
				}
				raw, err = decode.AppendBatch(raw, decode.BatchSpec{BaseOffset: int64(i), PartitionLeaderEpoch: 1,
					ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
					[]decode.RecordSpec{{Timestamp: 1700000000000 + int64(i), Key: ex.Key, Value: ex.Value}})
				if err != nil {
					t.Fatal(err)
				}
			}
			log := filepath.Join(dir, "00000000000000000000.log")
			if err := os.WriteFile(log, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			c := internalCase{golden: "generated-" + strings.TrimPrefix(topic, "__"), flag: decoderFlag[topic]}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# kseg dump of a generated %s segment: one record of every record type at every version\n", topic)
			fmt.Fprintf(&b, "# (decode/schema/schematest), and a tombstone of every coordinator record type.\n")
			fmt.Fprintf(&b, "# Regenerate: go test ./cmd -run InternalGeneratedGolden -update\n")
			for _, args := range [][]string{
				{"dump", "--output", "text", "--deep", log},
				{"dump", "--output", "json", "--deep", log},
				{"dump", "--output", "kafka", c.flag, log},
			} {
				r := clitest.Run(args...)
				if r.Code != 0 || r.Stderr != "" {
					t.Errorf("kseg %s: exit %d\n%s", strings.Join(r.Args, " "), r.Code, r.Stderr)
				}
				if clitest.IsJSONRun(r.Args) {
					clitest.CheckJSONLines(t, r)
				}
				checkInternalRun(t, c, r)
				if args[2] == "kafka" {
					if n := strings.Count(r.Stdout, "\n| offset: "); n != len(exs) {
						t.Errorf("kafka output has %d record lines, want %d", n, len(exs))
					}
				}
				fmt.Fprintf(&b, "\n=== kseg %s\n--- exit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
			}
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
			path := filepath.Join(internalGoldenDir, c.golden+".txt")
			if *clitest.Update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./cmd -run InternalGeneratedGolden -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the golden file; rerun with -update and review the diff:\n%s", path, clitest.FirstDiff(string(want), b.String()))
			}
		})
	}
}
