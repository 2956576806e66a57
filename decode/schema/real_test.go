package schema

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest"
)

// realFiles lists the .log and .checkpoint files of internal-topic
// partitions under the real fixtures.
func realFiles(t *testing.T) map[string][]string {
	return decodetest.RealFiles(t, func(p string) (string, bool) {
		if !strings.HasSuffix(p, ".log") && !strings.HasSuffix(p, ".checkpoint") {
			return "", false
		}
		topic := TopicOf(filepath.Base(filepath.Dir(p)))
		if topic == "" && filepath.Base(p) == "bootstrap.checkpoint" {
			topic = ClusterMetadata
		}
		return topic, topic != ""
	})
}

type rec struct{ key, value []byte }

// records returns copies of every record of the segment at path.
func records(t *testing.T, path string) []rec {
	var out []rec
	decodetest.EachRecord(t, path, func(r *decode.Record) { out = append(out, rec{clone(r.Key), clone(r.Value)}) })
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// TestRealFixturesRoundTrip decodes every record of every internal-topic
// segment and KRaft snapshot in the real fixtures and re-encodes it: the
// bytes must come back identical, so no field was skipped or misread.
func TestRealFixturesRoundTrip(t *testing.T) {
	files := realFiles(t)
	seen := map[string]int{}
	embedded := 0
	for topic, paths := range files {
		for _, p := range paths {
			for i, r := range records(t, p) {
				d, err := DecodeInternal(topic, r.key, r.value)
				if err != nil {
					t.Errorf("%s record %d: %v", p, i, err)
					continue
				}
				if d.Unknown {
					t.Errorf("%s record %d: unknown record type %d", p, i, d.RecordType)
					continue
				}
				seen[topic+" "+d.TypeName()]++
				embedded += countEmbedded(d.Value)
				k, v, err := d.Encode()
				if err != nil {
					t.Fatalf("%s record %d: encode: %v", p, i, err)
				}
				if d.KeyTrailing == 0 && !bytes.Equal(k, r.key) {
					t.Errorf("%s record %d (%s): key round trip\n got %x\nwant %x", p, i, d.TypeName(), k, r.key)
				}
				if d.ValueTrailing == 0 && !bytes.Equal(v, r.value) {
					t.Errorf("%s record %d (%s v%d): value round trip\n got %x\nwant %x", p, i, d.TypeName(), d.ValueVersion, v, r.value)
				}
			}
		}
	}
	var names []string
	for k, n := range seen {
		names = append(names, k)
		_ = n
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("%6d %s", seen[k], k)
	}
	// The consumer protocol inside GroupMetadataValue is re-encoded from
	// its decoded tree too (Embedded), so these round trips cover it.
	t.Logf("%6d embedded consumer-protocol subscriptions and assignments", embedded)
	if embedded == 0 {
		t.Error("no consumer-protocol subscription or assignment decoded from the real fixtures")
	}
	for _, want := range []string{"__consumer_offsets OffsetCommit", "__consumer_offsets GroupMetadata",
		"__cluster_metadata TOPIC_RECORD", "__cluster_metadata PARTITION_RECORD", "__cluster_metadata FEATURE_LEVEL_RECORD"} {
		if seen[want] == 0 {
			t.Errorf("no %s record decoded from the real fixtures", want)
		}
	}
}

// countEmbedded counts the decoded consumer-protocol messages in s.
func countEmbedded(s *Struct) int {
	n := 0
	if s == nil {
		return 0
	}
	for _, fv := range s.Fields {
		switch x := fv.Value.(type) {
		case *Embedded:
			if x.Struct != nil {
				n++
			}
		case *Struct:
			n += countEmbedded(x)
		case []any:
			for _, e := range x {
				if st, ok := e.(*Struct); ok {
					n += countEmbedded(st)
				}
			}
		}
	}
	return n
}
