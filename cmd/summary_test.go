package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
)

// Output that scales (issue 15): the read commands' reports and the write
// commands' plans summarised (summary.go) — the first and last few of a
// long list in text and table, all of it with -v and in json — and the
// write commands' plans as a table.

// replay-psm of a partition written by thousands of producers: the
// producers table shows the first and last few; a sequence gap of many of
// them is grouped as one kind.
func TestReplayPSMManyProducersSummarised(t *testing.T) {
	const producers, gaps = 3000, 40
	dir := filepath.Join(t.TempDir(), "wide-0")
	clitest.Mkdir(t, dir)
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
	testkit.WriteFile(t, filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix)), buf)

	code, out, errs := clitest.Exec(t, "replay-psm", dir)
	if code == ui.ExitError || code == ui.ExitUsage {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	// Producer rows start with the producer id; 1000.. and 3995..3999.
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 9 && f[0] >= "1000" && f[0] <= "3999" {
			rows++
		}
	}
	if rows != ui.ListHead+ui.ListTail {
		t.Errorf("%d producer rows, want %d\n%s", rows, ui.ListHead+ui.ListTail, out)
	}
	clitest.MustContain(t, out, fmt.Sprintf("%d producers,", producers),
		fmt.Sprintf("… %d more producers (%d in all; --verbose lists them) …", producers-ui.ListHead-ui.ListTail, producers),
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
	if n := clitest.CountLines(out, " "+kind+" offset "); n != ui.KindHead {
		t.Errorf("%d %s lines, want %d", n, kind, ui.KindHead)
	}
	clitest.MustContain(t, out, fmt.Sprintf("… and %d more %s findings (--verbose lists them)", gaps-ui.KindHead, kind))

	_, out, _ = clitest.Exec(t, "replay-psm", "--verbose", dir)
	if n := clitest.CountLines(out, " "+kind+" offset "); n != gaps || strings.Contains(out, "more producers") {
		t.Errorf("--verbose: %d %s lines, want %d, and no summary", n, kind, gaps)
	}
	_, out, _ = clitest.Exec(t, "replay-psm", "-o", "json", dir)
	ps := clitest.JSONLine(t, out, "producerState")
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

	code, out, errs := clitest.Exec(t, "metadata", dir)
	if code != ui.ExitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, ui.ExitFindings, out, errs)
	}
	if n := clitest.CountLines(out, "  partition "); n != ui.ListHead+ui.ListTail {
		t.Errorf("%d partition lines, want %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	if n := clitest.CountLines(out, "ERROR missing-replica "); n != ui.KindHead {
		t.Errorf("%d missing-replica lines, want %d\n%s", n, ui.KindHead, out)
	}
	if n := clitest.CountLines(out, "disk wide-"); n != ui.ListHead+ui.ListTail {
		t.Errorf("%d disk lines, want %d", n, ui.ListHead+ui.ListTail)
	}
	clitest.MustContain(t, out,
		fmt.Sprintf("  … %d more partitions of wide (%d in all; --verbose lists them) …", parts-ui.ListHead-ui.ListTail, parts),
		fmt.Sprintf("… and %d more missing-replica findings (--verbose lists them)", parts-ui.KindHead),
		"  partition 119 ")

	code, out, _ = clitest.Exec(t, "metadata", "-o", "table", dir)
	if code != ui.ExitFindings || strings.Count(out, "\nwide ") != ui.ListHead+1+ui.ListTail || clitest.CountLines(out, "ERROR missing-replica ") != ui.KindHead {
		t.Errorf("table: exit %d\n%s", code, out)
	}

	_, out, _ = clitest.Exec(t, "metadata", "-v", dir)
	if clitest.CountLines(out, "  partition ") != parts || clitest.CountLines(out, "ERROR missing-replica ") != parts || strings.Contains(out, "--verbose") {
		t.Errorf("-v: %d partition and %d missing-replica lines, want %d each", clitest.CountLines(out, "  partition "), clitest.CountLines(out, "ERROR missing-replica "), parts)
	}
	_, out, _ = clitest.Exec(t, "metadata", "-o", "json", dir)
	if n := strings.Count(out, `"kind":"missing-replica"`); n != parts {
		t.Errorf("json: %d missing-replica findings, want %d", n, parts)
	}
	im := clitest.JSONLine(t, out, "metadataImage")
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
	code, out, errs := clitest.Exec(t, "groups", dir)
	if code == ui.ExitError || code == ui.ExitUsage {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := clitest.CountLines(out, "  offset wide-"); n != ui.ListHead+ui.ListTail {
		t.Errorf("%d offset lines, want %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	clitest.MustContain(t, out, fmt.Sprintf("  … %d more committed offsets (%d in all; --verbose lists them) …", parts-ui.ListHead-ui.ListTail, parts),
		"  offset wide-59 ")
	if _, out, _ = clitest.Exec(t, "groups", "--verbose", dir); clitest.CountLines(out, "  offset wide-") != parts {
		t.Errorf("--verbose: %d offset lines, want %d", clitest.CountLines(out, "  offset wide-"), parts)
	}
	if _, out, _ = clitest.Exec(t, "groups", "-o", "json", dir); len(clitest.JSONLine(t, out, "group")["offsets"].([]any)) != parts {
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

// A mirror of a partition holding many aborted transactions: its plan
// adds a .txnindex entry for each, and the text plan shows the first and
// last few (issue 15: 573 lines for a 512 MiB partition).
func TestMirrorPlanSummarisesTxnIndex(t *testing.T) {
	const aborted = 300
	var batches [][]byte
	for i := range aborted {
		pid := int64(10000 + i)
		batches = append(batches,
			barriertest.DataBatch(t, int64(2*i), 1, pid, 0, 0, true, 0),
			barriertest.MarkerBatch(t, int64(2*i+1), pid, false, 0))
	}
	src := barriertest.WritePartition(t, filepath.Join(t.TempDir(), "a"), batches, 0)
	dst := filepath.Join(t.TempDir(), barriertest.Topic+"-0") // created by the mirror
	// Small segments: the file list is long too.
	args := []string{"mirror", "--dry-run", "--segment-bytes", "1024", src, dst}

	code, out, errs := clitest.Exec(t, args...)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := clitest.CountLines(out, ".txnindex += "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d .txnindex lines, want %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	clitest.MustContain(t, out,
		fmt.Sprintf("… %d more .txnindex entries (%d in all; --verbose lists them) …", aborted-ui.ListHead-ui.ListTail, aborted),
		"firstOffset 0 lastOffset 1 ", fmt.Sprintf("firstOffset %d lastOffset %d ", 2*aborted-2, 2*aborted-1),
		"more files (", "more …, ") // the file list, and the inline list of new segments
	if n := clitest.CountLines(out, "  create  "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d file lines, want %d", n, ui.ListHead+ui.ListTail)
	}

	code, out, _ = clitest.Exec(t, append([]string{"mirror", "--verbose"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != aborted || strings.Contains(out, "more") {
		t.Errorf("--verbose: exit %d, %d .txnindex lines, want %d and no summary line", code, clitest.CountLines(out, ".txnindex += "), aborted)
	}
	code, out, _ = clitest.Exec(t, append([]string{"mirror", "-o", "table"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != ui.ListHead+ui.ListTail || !strings.Contains(out, "more files (") {
		t.Errorf("table: exit %d\n%s", code, out)
	}

	code, out, _ = clitest.Exec(t, append([]string{"mirror", "-o", "json"}, args[1:]...)...)
	if code != ui.ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	plan := clitest.JSONLine(t, out, "mirror-plan")
	if n := len(plan["abortedTxns"].([]any)); n != aborted {
		t.Errorf("json: %d abortedTxns, want %d", n, aborted)
	}
	if n := len(plan["files"].([]any)); n <= ui.ListWhole {
		t.Errorf("json: %d files; the test wants a file list longer than %d", n, ui.ListWhole)
	}
}

// inject-barrier --mode abort over a partition with many open
// transactions: an ABORT marker (and a .txnindex entry) for each, all
// summarised in text, complete with --verbose and in json.
func TestInjectBarrierAbortPlanSummarised(t *testing.T) {
	const open = 250
	var batches [][]byte
	for i := range open {
		batches = append(batches, barriertest.DataBatch(t, int64(i), 1, int64(20000+i), 0, 0, true, 0))
	}
	dir := barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), batches, 0)
	args := []string{"inject-barrier", "--dry-run", "--mode", "abort", "--timestamp", clitest.InjectTs, dir}

	code, out, errs := clitest.Exec(t, args...)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := clitest.CountLines(out, "  ABORT  "); n > ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d ABORT lines, want at most %d\n%s", n, ui.ListHead+ui.ListTail, out)
	}
	if n := clitest.CountLines(out, ".txnindex += "); n != ui.ListHead+ui.ListTail {
		t.Errorf("text plan: %d .txnindex lines, want %d", n, ui.ListHead+ui.ListTail)
	}
	clitest.MustContain(t, out,
		fmt.Sprintf("%d open transactions: producer 20000 from 0; ", open),
		fmt.Sprintf("(%d in all)\n", open), // the inline list of open transactions
		fmt.Sprintf("more .txnindex entries (%d in all; --verbose lists them) …", open),
		fmt.Sprintf("more batches (%d in all; --verbose lists them) …", open+1)) // the markers and the barrier

	code, out, _ = clitest.Exec(t, append([]string{"inject-barrier", "-v"}, args[1:]...)...)
	if code != ui.ExitOK || clitest.CountLines(out, ".txnindex += ") != open || clitest.CountLines(out, "  ABORT  ") != open ||
		strings.Contains(out, "in all") {
		t.Errorf("-v: exit %d, %d .txnindex and %d ABORT lines, want %d each and no summary\n%s",
			code, clitest.CountLines(out, ".txnindex += "), clitest.CountLines(out, "  ABORT  "), open, out)
	}

	code, out, _ = clitest.Exec(t, append([]string{"inject-barrier", "-o", "json"}, args[1:]...)...)
	if code != ui.ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	plan := clitest.JSONLine(t, out, "plan")
	if len(plan["abortedTxns"].([]any)) != open || len(plan["ongoing"].([]any)) != open || len(plan["appended"].([]any)) != open+1 {
		t.Errorf("json: %d abortedTxns, %d ongoing, %d appended; want %d, %d, %d",
			len(plan["abortedTxns"].([]any)), len(plan["ongoing"].([]any)), len(plan["appended"].([]any)), open, open, open+1)
	}
}

// TestWriteCommandsTableOutput: inject-barrier and mirror render their
// plan's file operations as a table with --output table, and still change
// nothing on a dry run.
func TestWriteCommandsTableOutput(t *testing.T) {
	dir := t.TempDir()
	part := clitest.Fixture(t, "partitions/txn-0", filepath.Join(dir, "txn-0"))
	clitest.Mkdir(t, filepath.Join(dir, "mirror"))
	for _, args := range [][]string{
		{"inject-barrier", "--dry-run", "-o", "table", "--timestamp", "1700003700000", part},
		{"mirror", "--dry-run", "-o", "table", part, filepath.Join(dir, "mirror", "txn-0")},
	} {
		r := clitest.Run(args...)
		if r.Code != ui.ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
		got := r.Stdout
		for _, want := range []string{"ACTION", "FILE", "WHY", "\ncreate  ", "Dry run: nothing was changed"} {
			if !strings.Contains(got, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, got)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mirror", "txn-0")); !os.IsNotExist(err) {
		t.Errorf("mirror --dry-run created its destination: %v", err)
	}
}
