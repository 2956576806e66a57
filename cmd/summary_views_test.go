package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
)

// The read commands' reports summarised (summary.go).

// replay-psm of a partition written by thousands of producers: the
// producers table shows the first and last few; a sequence gap of many of
// them is grouped as one kind.
func TestReplayPSMManyProducersSummarised(t *testing.T) {
	const producers, gaps = 3000, 40
	dir := filepath.Join(t.TempDir(), "wide-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	off := int64(0)
	add := func(pid int64, seq int32) {
		t.Helper()
		var err error
		buf, err = decode.AppendBatch(buf, decode.BatchSpec{BaseOffset: off, ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq},
			[]decode.RecordSpec{{Timestamp: 1_700_000_000_000 + off, Value: []byte("x")}})
		if err != nil {
			t.Fatal(err)
		}
		off++
	}
	for i := range producers {
		add(int64(1000+i), 0)
	}
	for i := range gaps {
		add(int64(1000+i), 5) // sequence 1 expected
	}
	if err := os.WriteFile(filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix)), buf, 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errs := psmRun(t, "replay-psm", dir)
	if code == ExitError || code == ExitUsage {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	// Producer rows start with the producer id; 1000.. and 3995..3999.
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 9 && f[0] >= "1000" && f[0] <= "3999" {
			rows++
		}
	}
	if rows != listHead+listTail {
		t.Errorf("%d producer rows, want %d\n%s", rows, listHead+listTail, out)
	}
	mustContain(t, out, fmt.Sprintf("%d producers,", producers),
		fmt.Sprintf("… %d more producers (%d in all; --verbose lists them) …", producers-listHead-listTail, producers),
		"\n3999 ")
	kind := ""
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && (f[0] == "ERROR" || f[0] == "WARNING") && strings.Contains(l, "producer 1000:") {
			kind = f[1]
		}
	}
	if kind == "" {
		t.Fatalf("no anomaly for producer 1000's sequence gap\n%s", out)
	}
	if n := countLines(out, " "+kind+" offset "); n != kindHead {
		t.Errorf("%d %s lines, want %d", n, kind, kindHead)
	}
	mustContain(t, out, fmt.Sprintf("… and %d more %s findings (--verbose lists them)", gaps-kindHead, kind))

	_, out, _ = psmRun(t, "replay-psm", "--verbose", dir)
	if n := countLines(out, " "+kind+" offset "); n != gaps || strings.Contains(out, "more producers") {
		t.Errorf("--verbose: %d %s lines, want %d, and no summary", n, kind, gaps)
	}
	_, out, _ = psmRun(t, "replay-psm", "-o", "json", dir)
	ps := jsonLine(t, out, "producerState")
	if n := len(ps["producers"].([]any)); n != producers {
		t.Errorf("json: %d producers, want %d", n, producers)
	}
}

// metadata over a log directory whose image assigns one topic many
// partitions on node 1 and whose disk holds none of them: the partitions
// and disk rows are summarised, and the many missing-replica findings
// grouped (issue 15: about fifty separate ERROR lines on the real
// fixtures).
func TestMetadataManyPartitionsSummarised(t *testing.T) {
	const parts = 120
	dir := node1LogDir(t)
	id := schema.UUID{0: 7, 15: 7}
	recs := [][]byte{
		clustertest.Meta("FeatureLevelRecord", map[string]any{"Name": "metadata.version", "FeatureLevel": int16(19)}),
		clustertest.Meta("TopicRecord", map[string]any{"Name": "wide", "TopicId": id}),
	}
	for p := int32(0); p < parts; p++ {
		recs = append(recs, clustertest.Meta("PartitionRecord", map[string]any{"PartitionId": p, "TopicId": id,
			"Replicas": clustertest.Ints(1), "Isr": clustertest.Ints(1), "RemovingReplicas": clustertest.Ints(), "AddingReplicas": clustertest.Ints(),
			"Leader": int32(1), "LeaderEpoch": int32(0), "PartitionEpoch": int32(0)}))
	}
	var batches [][]byte
	for i := 0; i < len(recs); i += 10 {
		batches = append(batches, clustertest.MetaBatch(int64(i), clustertest.T0+int64(i), 1, recs[i:min(i+10, len(recs))]...))
	}
	if _, err := clustertest.WriteMetadata(dir, clustertest.T0, 1, 0, batches...); err != nil {
		t.Fatal(err)
	}

	code, out, errs := injRun(t, "metadata", dir)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitFindings, out, errs)
	}
	if n := countLines(out, "  partition "); n != listHead+listTail {
		t.Errorf("%d partition lines, want %d\n%s", n, listHead+listTail, out)
	}
	if n := countLines(out, "ERROR missing-replica "); n != kindHead {
		t.Errorf("%d missing-replica lines, want %d\n%s", n, kindHead, out)
	}
	if n := countLines(out, "disk wide-"); n != listHead+listTail {
		t.Errorf("%d disk lines, want %d", n, listHead+listTail)
	}
	mustContain(t, out,
		fmt.Sprintf("  … %d more partitions of wide (%d in all; --verbose lists them) …", parts-listHead-listTail, parts),
		fmt.Sprintf("… and %d more missing-replica findings (--verbose lists them)", parts-kindHead),
		"  partition 119 ")

	code, out, _ = injRun(t, "metadata", "-o", "table", dir)
	if code != ExitFindings || strings.Count(out, "\nwide ") != listHead+1+listTail || countLines(out, "ERROR missing-replica ") != kindHead {
		t.Errorf("table: exit %d\n%s", code, out)
	}

	_, out, _ = injRun(t, "metadata", "-v", dir)
	if countLines(out, "  partition ") != parts || countLines(out, "ERROR missing-replica ") != parts || strings.Contains(out, "--verbose") {
		t.Errorf("-v: %d partition and %d missing-replica lines, want %d each", countLines(out, "  partition "), countLines(out, "ERROR missing-replica "), parts)
	}
	_, out, _ = injRun(t, "metadata", "-o", "json", dir)
	if n := strings.Count(out, `"kind":"missing-replica"`); n != parts {
		t.Errorf("json: %d missing-replica findings, want %d", n, parts)
	}
	im := jsonLine(t, out, "metadataImage")
	if n := len(im["topics"].([]any)[0].(map[string]any)["partitions"].([]any)); n != parts {
		t.Errorf("json: %d partitions, want %d", n, parts)
	}
}

// groups of a group that committed offsets for many partitions: its
// offsets are summarised under the group line.
func TestGroupsManyOffsetsSummarised(t *testing.T) {
	const parts = 60
	dir := node1LogDir(t)
	var recs []clustertest.KV
	for p := int32(0); p < parts; p++ {
		recs = append(recs, clustertest.OffsetCommit("wide-group", "wide", p, 7, 0, "", clustertest.T0))
	}
	if _, err := clustertest.WritePartition(dir, "__consumer_offsets", 0, nil, clustertest.Batch(0, clustertest.T0, recs...)); err != nil {
		t.Fatal(err)
	}
	code, out, errs := injRun(t, "groups", dir)
	if code == ExitError || code == ExitUsage {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := countLines(out, "  offset wide-"); n != listHead+listTail {
		t.Errorf("%d offset lines, want %d\n%s", n, listHead+listTail, out)
	}
	mustContain(t, out, fmt.Sprintf("  … %d more committed offsets (%d in all; --verbose lists them) …", parts-listHead-listTail, parts),
		"  offset wide-59 ")
	if _, out, _ = injRun(t, "groups", "--verbose", dir); countLines(out, "  offset wide-") != parts {
		t.Errorf("--verbose: %d offset lines, want %d", countLines(out, "  offset wide-"), parts)
	}
	if _, out, _ = injRun(t, "groups", "-o", "json", dir); len(jsonLine(t, out, "group")["offsets"].([]any)) != parts {
		t.Errorf("json: want %d offsets\n%s", parts, out)
	}
}

// node1LogDir is an empty log directory of node 1.
func node1LogDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := clustertest.WriteMetaProperties(dir, 1, "summary-cluster"); err != nil {
		t.Fatal(err)
	}
	return dir
}
