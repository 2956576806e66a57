package dump

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
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
