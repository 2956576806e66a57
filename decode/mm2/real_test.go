package mm2

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest"
)

// realConnectLogs lists the .log files of the Connect topics' partitions
// among the real fixtures, by the kind their names end with
// (connect-configs-0, docker-connect-status-3 …).
func realConnectLogs(t *testing.T) map[Kind][]string {
	return decodetest.RealFiles(t, func(p string) (Kind, bool) {
		dir := filepath.Base(filepath.Dir(p))
		i := strings.LastIndexByte(dir, '-')
		if i < 0 || !strings.HasSuffix(p, ".log") {
			return 0, false
		}
		for _, k := range []Kind{ConnectConfigs, ConnectOffsets, ConnectStatus} {
			if strings.HasSuffix(dir[:i], k.String()) {
				return k, true
			}
		}
		return 0, false
	})
}

// TestRealConnectTopics: every record of the Connect topics of real
// brokers (Kafka Connect clusters of Confluent images; MM2's dedicated
// workers write the same records under mm2-*.internal names) decodes, has
// a known type, and re-encodes to its stored bytes: Connect's JSON is
// compact, so nothing is lost or normalised.
func TestRealConnectTopics(t *testing.T) {
	logs := realConnectLogs(t)
	if len(logs) < 3 {
		t.Fatalf("found Connect logs of %d kinds, want 3", len(logs))
	}
	for kind, paths := range logs {
		n := 0
		types := map[string]int{}
		for _, p := range paths {
			decodetest.EachRecord(t, p, func(rec *decode.Record) {
				key, value := rec.Key, rec.Value
				r, err := Decode(kind, key, value)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				types[r.TypeName()]++
				k, v, err := r.Encode()
				if err != nil || !bytes.Equal(k, key) || !bytes.Equal(v, value) {
					t.Fatalf("%s: %q %q does not round-trip (%q %q)", p, key, value, k, v)
				}
				n++
			})
		}
		if types["unknown"] > 0 || n == 0 {
			t.Errorf("%v: %d records, types %v", kind, n, types)
		}
		t.Logf("%v: %d records in %d logs: %v", kind, n, len(paths), types)
	}
}
