package mm2

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

var realDir = filepath.Join("..", "..", "..", "shared", "fixtures", "real")

// realConnectLogs lists the .log files of the Connect topics' partitions
// among the real fixtures, by the kind their names end with
// (connect-configs-0, docker-connect-status-3 …).
func realConnectLogs(t *testing.T) map[Kind][]string {
	t.Helper()
	if _, err := os.Stat(realDir); err != nil {
		t.Skip("real fixtures absent: ../shared/fixtures/real (relative to the repository root)")
	}
	out := map[Kind][]string{}
	filepath.WalkDir(realDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".log") {
			return nil
		}
		dir := filepath.Base(filepath.Dir(p))
		i := strings.LastIndexByte(dir, '-')
		if i < 0 {
			return nil
		}
		for _, k := range []Kind{ConnectConfigs, ConnectOffsets, ConnectStatus} {
			if strings.HasSuffix(dir[:i], k.String()) {
				out[k] = append(out[k], p)
			}
		}
		return nil
	})
	return out
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
			eachRecord(t, p, func(key, value []byte) {
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

func eachRecord(t *testing.T, path string, fn func(key, value []byte)) {
	t.Helper()
	lf, err := segment.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Path: path})
	defer sc.Close()
	var dec decode.Decoder
	for sc.Next() {
		if sc.Batch().IsControl() {
			continue
		}
		if err := dec.Records(sc.Batch(), func(r *decode.Record) error {
			fn(r.Key, r.Value)
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}
