package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Golden dumps of Kafka's internal topics, over real broker data: the
// fixtures in ../shared/fixtures/real (not committed; the test skips
// without them). Each case copies one partition directory (or file) into a
// temporary directory and runs dump from there, in text, json and kafka
// output with kafka-dump-log's decoder flag. Regenerate with
//
//	go test ./cmd -run InternalGolden -update
var internalGoldenDir = mustAbs(filepath.Join(testdataDir, "golden", "internal"))

// realFixtures is ../shared/fixtures/real from the package directory.
var realFixtures = mustAbs(filepath.Join("..", "..", "shared", "fixtures", "real"))

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
	if _, err := os.Stat(realFixtures); err != nil {
		t.Skip("real fixtures absent: ../shared/fixtures/real (relative to the repository root)")
	}
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
				copyTree(t, src, filepath.Join(work, arg))
			} else {
				dir := filepath.Base(filepath.Dir(src))
				if filepath.Base(src) == "bootstrap.checkpoint" {
					dir = "logdir"
				}
				copyTree(t, filepath.Dir(src), filepath.Join(work, dir))
				arg = filepath.Join(dir, filepath.Base(src))
			}
			t.Chdir(work)
			runs := [][]string{
				{"dump", "--output", "text", "--deep"},
				{"dump", "--output", "json", "--deep"},
				{"dump", "--output", "kafka", c.flag},
				{"dump", "--output", "text", "--deep", "--no-decode-internal", "--print-data"},
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# kseg dump over a copy of ../shared/fixtures/real/%s, run from its parent directory.\n", c.src)
			fmt.Fprintf(&b, "# Regenerate: go test ./cmd -run InternalGolden -update\n")
			for _, args := range runs {
				r := runKseg(append(append(slices.Clone(args), c.extra...), arg)...)
				for _, w := range []string{work} {
					r.stdout = strings.ReplaceAll(r.stdout, w, workPlaceholder)
					r.stderr = strings.ReplaceAll(r.stderr, w, workPlaceholder)
				}
				if r.code != 0 {
					t.Errorf("kseg %s: exit %d\n%s", strings.Join(r.args, " "), r.code, r.stderr)
				}
				if isJSONRun(r.args) {
					checkJSONLines(t, r)
				}
				checkInternalRun(t, c, r)
				fmt.Fprintf(&b, "\n=== kseg %s\n--- exit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
			}
			path := filepath.Join(internalGoldenDir, c.golden+".txt")
			if *update {
				if err := os.MkdirAll(internalGoldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./cmd -run InternalGolden -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the golden file; rerun with -update and review the diff:\n%s", path, firstDiff(string(want), b.String()))
			}
		})
	}
}

// checkInternalRun asserts what must hold whatever the golden says: every
// data record line of a decoded run is decoded (no "undecodable", no
// "Error at", no "Unknown record type"), and kafka output's record lines
// carry the decoder's JSON.
func checkInternalRun(t *testing.T, c internalCase, r runResult) {
	t.Helper()
	decoded := !slices.Contains(r.args, "--no-decode-internal")
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.Contains(line, "undecodable") || strings.Contains(line, "Error at") ||
			strings.Contains(line, "Unknown record type") || strings.Contains(line, `"error":`):
			t.Errorf("kseg %s: a record did not decode: %s", strings.Join(r.args, " "), line)
		case slices.Contains(r.args, "kafka") && strings.HasPrefix(line, "| offset:") && !strings.Contains(line, "endTxnMarker") &&
			!strings.Contains(line, "Snapshot") && !strings.Contains(line, "LeaderChange") && !strings.Contains(line, "KRaft"):
			if !strings.Contains(line, " payload: {") && !strings.Contains(line, " payload: <DELETE>") {
				t.Errorf("kafka record line without a decoded payload: %s", line)
			}
		case !decoded && strings.Contains(line, " key {"):
			t.Errorf("--no-decode-internal still decoded: %s", line)
		}
	}
}
