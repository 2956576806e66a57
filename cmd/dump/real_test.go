package dump

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// realExpect is one .log/.checkpoint line of fixtures/real/README.md.
type realExpect struct {
	batches, records int64
	// first..last: the README's offsets. For most files they are
	// batch-level (first baseOffset — for legacy entries the wrapper
	// offset — to the last batch's lastOffset); recordLevel marks the
	// segmentio captures, whose README offsets are record offsets.
	first, last int64
	recordLevel bool
	codecs      map[string]int64
	control     map[string]int64
}

func c(kv ...any) map[string]int64 {
	m := map[string]int64{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = int64(kv[i+1].(int))
	}
	return m
}

// realTable hard-codes fixtures/real/README.md. The legacy asayers logs'
// record counts are the line counts of their golden files (5382, 11394).
var realTable = map[string]realExpect{
	"Danielowo2000__BigDataTechnologies-Version-2/kafka_data/_confluent-ksql-default__command_topic-0/00000000000000000000.log":                    {8, 8, 0, 7, false, c("none", 8), c("COMMIT", 4)},
	"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17/00000000000000000000.log":                                                               {1, 1, 0, 0, false, c("none", 1), c()},
	"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-17/00000000000000000001.log":                                                               {2, 2, 1, 2, false, c("none", 2), c()},
	"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000000.log":                                                               {3, 3, 4, 17, false, c("none", 3), c()},
	"DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000018.log":                                                               {1, 2, 18, 19, false, c("none", 1), c()},
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000000.log": {2, 2, 0, 1, false, c("none", 2), c("COMMIT", 1)},
	"Niloufar1171__LDI-POC/TestTopicPatient-0/00000000000000000000.log":                                                                            {3, 3, 0, 2, false, c("none", 3), c()},
	"Niloufar1171__LDI-POC/__cluster_metadata-0/00000000000000000000.log":                                                                          {4814, 4929, 0, 4928, false, c("none", 4814), c("LEADER_CHANGE", 1)},
	"Niloufar1171__LDI-POC/bootstrap.checkpoint":                                                                                                   {3, 3, -1, -1, false, nil, c("SNAPSHOT_HEADER", 1, "SNAPSHOT_FOOTER", 1)},
	"asayers__kafkalite/tests/test-data/fs-data/hamlet-gzip-0/00000000000000000000.log":                                                            {22, 5382, 253, 5381, false, c("gzip", 22), c()},
	"asayers__kafkalite/tests/test-data/fs-data/hamlet-none-0/00000000000000000000.log":                                                            {5382, 5382, 0, 5381, false, c("none", 5382), c()},
	"asayers__kafkalite/tests/test-data/fs-data/hamlet-snappy-0/00000000000000000000.log":                                                          {22, 5382, 253, 5381, false, c("snappy", 22), c()},
	"asayers__kafkalite/tests/test-data/fs-data/numbers-0/00000000000000000000.log":                                                                {11394, 11394, 0, 11393, false, c("none", 11394), c()},
	"eric-kimm__stock-market-pipeline/kafka/data/__cluster_metadata-0/00000000000000083088-0000000007.checkpoint":                                  {3, 66, -1, -1, false, nil, c("SNAPSHOT_HEADER", 1, "SNAPSHOT_FOOTER", 1)},
	"eric-kimm__stock-market-pipeline/kafka/data/__cluster_metadata-0/00000000000000194445-0000000015.checkpoint":                                  {3, 70, -1, -1, false, nil, c("SNAPSHOT_HEADER", 1, "SNAPSHOT_FOOTER", 1)},
	"eric-kimm__stock-market-pipeline/kafka/data/bootstrap.checkpoint":                                                                             {3, 5, -1, -1, false, nil, c("SNAPSHOT_HEADER", 1, "SNAPSHOT_FOOTER", 1)},
	"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000000000.log":                                                          {3550, 3586, 0, 3585, false, c("none", 3550), c()},
	"eric-kimm__stock-market-pipeline/kafka/data/stock-trades-0/00000000000000003586.log":                                                          {1988, 1993, 3586, 5578, false, c("none", 1988), c()},
	"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000000000.log":                                                               {6077, 11630, 0, 11629, false, c("none", 6077), c()},
	"eric-kimm__stock-market-pipeline/kafka/data/testing-0/00000000000000011630.log":                                                               {25, 25, 11630, 11654, false, c("none", 25), c()},
	"macsakini__KafkaCluster/kafka/data/quickstart-events-0/00000000000000000000.log":                                                              {3, 3, 0, 2, false, c("none", 3), c()},
	"macsakini__KafkaCluster/kafka/data/tenitems-0/00000000000000000000.log":                                                                       {9, 9, 0, 8, false, c("none", 9), c()},
	"macsakini__KafkaCluster/kafka/data/test-0/00000000000000000000.log":                                                                           {109, 109, 0, 108, false, c("none", 6, "gzip", 103), c()},
	"seanorth__kafka-server/kafka-logs/some-topic-0/00000000000000000000.log":                                                                      {9, 9, 0, 8, false, c("snappy", 9), c()},
	"suryavansh__food-ordering-service/kafka/data/_confluent-metrics-4/00000000000000000000.log":                                                   {322, 323, 0, 322, false, c("lz4", 322), c()},
	"segmentio__kafka-go/v1-v1/test-edgy-0/00000000000000000000.log":                                                                               {4, 4, 0, 3, true, c("none", 4), c()},
	"segmentio__kafka-go/v1c-v1c/test-gutsy-0/00000000000000000000.log":                                                                            {3, 4, 0, 3, true, c("gzip", 3), c()},
	"segmentio__kafka-go/v1c-v1-v1c/test-breezy-0/00000000000000000000.log":                                                                        {5, 6, 0, 5, true, c("gzip", 3, "none", 2), c()},
	"segmentio__kafka-go/v2-v2/test-lucid-0/00000000000000000000.log":                                                                              {2, 4, 0, 3, true, c("none", 2), c()},
	"segmentio__kafka-go/v2c-v2c/test-oneiric-0/00000000000000000000.log":                                                                          {2, 4, 0, 3, true, c("gzip", 2), c()},
	"segmentio__kafka-go/v2c-v2-v2c/test-natty-0/00000000000000000000.log":                                                                         {3, 6, 0, 5, true, c("gzip", 2, "none", 1), c()},
	"segmentio__kafka-go/v2b-v1/test-feisty-0/00000000000000000000.log":                                                                            {3, 4, 0, 3, true, c("none", 3), c()},
	"segmentio__kafka-go/v2bc-v1/test-hardy-0/00000000000000000000.log":                                                                            {3, 4, 0, 3, true, c("gzip", 1, "none", 2), c()},
	"segmentio__kafka-go/v2bc-v1-v1c/test-hardy-0/00000000000000000000.log":                                                                        {4, 6, 0, 5, true, c("gzip", 2, "none", 2), c()},
	"segmentio__kafka-go/v2bc-v1c/test-karmic-0/00000000000000000000.log":                                                                          {2, 4, 0, 3, true, c("gzip", 2), c()},
	"segmentio__kafka-go/v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc/test-88-0/00000000000000000000.log":                                               {15, 20, 0, 19, true, c("gzip", 7, "none", 8), c()},
}

// realDump is what one deep JSON dump of a file says.
type realDump struct {
	batches, records      int64
	firstBatch, lastBatch int64
	firstRec, lastRec     int64
	codecs, control       map[string]int64
	findings              []string
	values                []recordValue // with --print-data
}

type recordValue struct {
	offset int64
	value  []byte // nil = null
}

// dumpJSON runs `kseg dump --output json --deep [--print-data] path` and
// digests its lines.
func dumpJSON(t *testing.T, path string, printData bool) realDump {
	t.Helper()
	args := []string{"dump", "--output", "json", "--deep"}
	if printData {
		args = append(args, "--print-data")
	}
	r := clitest.Run(append(args, path)...)
	if r.Code != ui.ExitOK {
		t.Errorf("kseg %s: exit %d\n%s", strings.Join(r.Args, " "), r.Code, r.Stderr)
	}
	if r.Stderr != "" {
		t.Errorf("kseg %s: stderr %q", strings.Join(r.Args, " "), r.Stderr)
	}
	d := realDump{firstBatch: -1, lastBatch: -1, firstRec: -1, lastRec: -1, codecs: map[string]int64{}, control: map[string]int64{}}
	type jrec struct {
		Offset  int64   `json:"offset"`
		Value   *string `json:"value"`
		Control *struct {
			Type string `json:"type"`
		} `json:"control"`
	}
	type jline struct {
		Type        string           `json:"type"`
		BaseOffset  int64            `json:"baseOffset"`
		LastOffset  int64            `json:"lastOffset"`
		Compression string           `json:"compression"`
		Records     json.RawMessage  `json:"records"` // an array in a batch, a count in a summary
		Batches     int64            `json:"batches"`
		Message     string           `json:"message"`
		Codecs      map[string]int64 `json:"codecs"`
		Control     map[string]int64 `json:"controlRecords"`
	}
	for _, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
		var l jline
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("kseg %s: bad JSON line %q: %v", strings.Join(r.Args, " "), line, err)
		}
		switch l.Type {
		case "batch":
			var recs []jrec
			if len(l.Records) > 0 {
				if err := json.Unmarshal(l.Records, &recs); err != nil {
					t.Fatalf("records of %q: %v", line, err)
				}
			}
			d.batches++
			if d.firstBatch < 0 {
				d.firstBatch = l.BaseOffset
			}
			d.lastBatch = l.LastOffset
			d.codecs[l.Compression]++
			for _, rec := range recs {
				d.records++
				if d.firstRec < 0 || rec.Offset < d.firstRec {
					d.firstRec = rec.Offset
				}
				d.lastRec = max(d.lastRec, rec.Offset)
				if rec.Control != nil {
					d.control[rec.Control.Type]++
				}
				if printData {
					rv := recordValue{offset: rec.Offset}
					if rec.Value != nil {
						b, err := base64.StdEncoding.DecodeString(*rec.Value)
						if err != nil {
							t.Fatalf("value of record %d is not base64: %v", rec.Offset, err)
						}
						rv.value = b
					}
					d.values = append(d.values, rv)
				}
			}
		case "finding":
			d.findings = append(d.findings, line)
		case "summary":
			// The summary must agree with the lines it sums up.
			n, err := strconv.ParseInt(string(l.Records), 10, 64)
			if err != nil || n != d.records || l.Batches != d.batches || !maps.Equal(l.Codecs, d.codecs) || !maps.Equal(l.Control, d.control) {
				t.Errorf("%s: summary %+v disagrees with %d batches, codecs %v, control %v", path, l, d.batches, d.codecs, d.control)
			}
		}
	}
	return d
}

// TestDumpRealFixtures dumps every .log and .checkpoint written by a real
// broker and requires zero findings and exactly the counts, codecs,
// control records and offsets fixtures/real/README.md lists.
func TestDumpRealFixtures(t *testing.T) {
	t.Parallel()
	root := testkit.RealRootOrSkip(t)
	seen := map[string]bool{}
	var secondSetFiles, files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(p, ".log") && !strings.HasSuffix(p, ".checkpoint") || strings.HasSuffix(p, "offset-checkpoint") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		_, ok := realTable[rel]
		if !ok {
			secondSetFiles = append(secondSetFiles, rel)
			return nil
		}
		seen[rel] = true
		files = append(files, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each file is dumped in a parallel subtest (of one group, so that
	// the checks below come after them all).
	t.Run("files", func(t *testing.T) {
		for _, p := range files {
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				checkRealDump(t, rel, p, realTable[rel])
			})
		}
	})
	for rel := range realTable {
		if !seen[rel] {
			t.Errorf("%s: listed in the README table but not found", rel)
		}
	}
	checkSecondSetDumps(t, root, secondSetFiles)
}

// checkRealDump dumps one real-broker file and compares it with its
// README row: no finding, and exactly the counts, offsets, codecs and
// control records listed.
func checkRealDump(t *testing.T, rel, p string, want realExpect) {
	got := dumpJSON(t, p, false)
	for _, f := range got.findings {
		t.Errorf("%s: finding %s", rel, f)
	}
	first, last := got.firstBatch, got.lastBatch
	if want.recordLevel {
		first, last = got.firstRec, got.lastRec
	}
	if got.batches != want.batches || got.records != want.records {
		t.Errorf("%s: %d batches %d records, README says %d and %d", rel, got.batches, got.records, want.batches, want.records)
	}
	if want.first >= 0 && (first != want.first || last != want.last) {
		t.Errorf("%s: offsets %d..%d, README says %d..%d", rel, first, last, want.first, want.last)
	}
	if want.codecs != nil && !maps.Equal(got.codecs, want.codecs) {
		t.Errorf("%s: codecs %v, README says %v", rel, got.codecs, want.codecs)
	}
	if !maps.Equal(got.control, want.control) {
		t.Errorf("%s: control records %v, README says %v", rel, got.control, want.control)
	}
}

// checkSecondSetDumps compares the dumps of the second set's files with
// its README rows, which sum each partition's segments: batches, records,
// first..last offset, codecs and control records of the .log files, and
// the control records of its KRaft snapshot .checkpoint files. A
// .checkpoint outside any partition (bootstrap.checkpoint) is a KRaft
// snapshot: one SNAPSHOT_HEADER and one SNAPSHOT_FOOTER.
func checkSecondSetDumps(t *testing.T, root string, files []string) {
	t.Helper()
	second, err := realdata.SecondSet(root)
	if err != nil {
		t.Fatal(err)
	}
	type sum struct {
		batches, records, first, last int64
		codecs, control, ckpt         map[string]int64
		ckpts                         int
	}
	got := map[string]*sum{}
	for dir := range second {
		got[dir] = &sum{first: -1, last: -1, codecs: map[string]int64{}, control: map[string]int64{}, ckpt: map[string]int64{}}
	}
	for _, rel := range files {
		d := dumpJSON(t, filepath.Join(root, filepath.FromSlash(rel)), false)
		for _, f := range d.findings {
			t.Errorf("%s: finding %s", rel, f)
		}
		g, ok := got[path.Dir(rel)]
		switch {
		case !ok && strings.HasSuffix(rel, ".checkpoint"):
			if !maps.Equal(d.control, c("SNAPSHOT_HEADER", 1, "SNAPSHOT_FOOTER", 1)) {
				t.Errorf("%s: control records %v, want one snapshot header and footer", rel, d.control)
			}
		case !ok:
			t.Errorf("%s: in no README table", rel)
		case strings.HasSuffix(rel, ".checkpoint"):
			g.ckpts++
			for k, v := range d.control {
				g.ckpt[k] += v
			}
		default:
			g.batches += d.batches
			g.records += d.records
			if d.batches > 0 {
				if g.first < 0 {
					g.first = d.firstBatch
				}
				g.last = d.lastBatch
			}
			for k, v := range d.codecs {
				g.codecs[k] += v
			}
			for k, v := range d.control {
				g.control[k] += v
			}
		}
	}
	for dir, w := range second {
		g := got[dir]
		if g.batches != w.Batches || g.records != w.Records || g.first != w.First || g.last != w.Last {
			t.Errorf("%s: %d batches/%d records, offsets %d..%d; README says %d/%d, %d..%d", dir, g.batches, g.records, g.first, g.last, w.Batches, w.Records, w.First, w.Last)
		}
		if !maps.Equal(g.codecs, w.Codecs) || !maps.Equal(g.control, w.Control) {
			t.Errorf("%s: codecs %v control %v; README says %v %v", dir, g.codecs, g.control, w.Codecs, w.Control)
		}
		if g.ckpts != w.KRaftCheckpoints || !maps.Equal(g.ckpt, w.CheckpointControl) {
			t.Errorf("%s: %d KRaft snapshots with control %v; README says %d, %v", dir, g.ckpts, g.ckpt, w.KRaftCheckpoints, w.CheckpointControl)
		}
	}
}

// TestDumpRealDirectories dumps every real log directory whole (every
// partition's segments, indexes, snapshots and checkpoints, and the
// log-directory files), verifying and sanity-checking the broker's indexes,
// and requires a clean exit without error findings.
func TestDumpRealDirectories(t *testing.T) {
	t.Parallel()
	root := testkit.RealRootOrSkip(t)
	logDirs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && segment.IsPartitionDir(p) {
			logDirs[filepath.Dir(p)] = true
			return fs.SkipDir
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(logDirs) < 10 {
		t.Fatalf("found only %d log directories under %s", len(logDirs), root)
	}
	// The README's second set names the partitions with a true finding:
	// those whose .log files were never committed (indexes without a log,
	// an orphan-index error each).
	second, err := realdata.SecondSet(root)
	if err != nil {
		t.Fatal(err)
	}
	incomplete := map[string]bool{}
	for dir, p := range second {
		if !p.Healthy() {
			incomplete[dir] = true
		}
	}
	if len(incomplete) == 0 {
		t.Fatal("the fixtures README names no incomplete partition")
	}
	flagged := map[string]bool{}
	for _, dir := range slices.Sorted(maps.Keys(logDirs)) {
		r := clitest.Run("dump", "--output", "json", "--verify-index", "--index-sanity-check", dir)
		errs := 0
		for _, line := range strings.Split(r.Stdout, "\n") {
			if !strings.Contains(line, `"type":"finding"`) || !strings.Contains(line, `"severity":"error"`) {
				continue
			}
			var f struct {
				Kind, File string
			}
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, filepath.Dir(f.File))
			rel = filepath.ToSlash(rel)
			if f.Kind == "orphan-index" && incomplete[rel] {
				flagged[rel] = true
				errs++
				continue
			}
			t.Errorf("kseg dump %s: %s", dir, line)
		}
		if want := map[bool]int{true: ui.ExitFindings, false: ui.ExitOK}[errs > 0]; r.Code != want {
			t.Errorf("kseg dump %s: exit %d, want %d\n%s", dir, r.Code, want, r.Stderr)
		}
	}
	for dir := range incomplete {
		if !flagged[dir] {
			t.Errorf("%s: the README says its .log is missing, but dump reports no orphan-index", dir)
		}
	}
}

// haskellShow renders a string as Haskell's show does for the characters
// these files hold (the asayers/kafkalite goldens are Haskell output):
// quoted, with \" \\ \t \n \r escaped and other control or non-ASCII
// characters as decimal escapes.
func haskellShow(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range string(b) {
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r < 0x20 || r >= 0x7f:
			sb.WriteString(`\` + strconv.Itoa(int(r)))
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// TestDumpRealLegacyGoldens: the four magic-0 partitions of
// asayers/kafkalite decode to exactly the expected output committed with
// them, one `offset: "value"` line per record.
func TestDumpRealLegacyGoldens(t *testing.T) {
	t.Parallel()
	root := testkit.RealRootOrSkip(t)
	base := filepath.Join(root, "asayers__kafkalite", "tests", "test-data")
	for _, name := range []string{"hamlet-none-0", "hamlet-gzip-0", "hamlet-snappy-0", "numbers-0"} {
		want := testkit.ReadFile(t, filepath.Join(base, "golden", name))
		d := dumpJSON(t, filepath.Join(base, "fs-data", name, "00000000000000000000.log"), true)
		var got bytes.Buffer
		for _, v := range d.values {
			if v.value == nil {
				t.Fatalf("%s: record %d has a null value; the golden format has no rendering for it", name, v.offset)
			}
			fmt.Fprintf(&got, "%d: %s\n", v.offset, haskellShow(v.value))
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: decoded records differ from the golden file:\n%s", name, clitest.FirstDiff(string(want), got.String()))
		}
	}
}
