package replaypsm_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/kafkaoracle"
	"github.com/kseg/kseg/segment/segtest/realdata"
)

// psmCopyPartition copies a partition directory's files and its log
// directory's checkpoint files into a fresh log directory under
// t.TempDir(), keeping the names and making the copies writable (the
// fixtures are read-only), and returns the copy's path.
func psmCopyPartition(t *testing.T, src string) string {
	t.Helper()
	logDir := t.TempDir()
	for _, name := range []string{"replication-offset-checkpoint", "log-start-offset-checkpoint", "recovery-point-offset-checkpoint", segment.CleanShutdownName} {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(src), name)); err == nil {
			testkit.WriteFile(t, filepath.Join(logDir, name), b)
		}
	}
	dst := filepath.Join(logDir, filepath.Base(src))
	clitest.Mkdir(t, dst)
	if err := kafkaoracle.CopyDir(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReplayPSMCheckSnapshotsRealFixtures(t *testing.T) {
	t.Parallel()
	root := testkit.RealRootOrSkip(t)
	matches, checked, skipped := 0, 0, 0
	for _, src := range realdata.SnapshotDirs(t, root) {
		dir := psmCopyPartition(t, src)
		code, out, errs := clitest.Exec(t, "replay-psm", "--check-snapshots", dir)
		if code != ui.ExitOK {
			t.Errorf("%s: exit %d\n%s%s", src, code, out, errs)
		}
		matches += strings.Count(out, " MATCH ")
		if strings.Contains(out, "MISMATCH") {
			t.Errorf("%s:\n%s", src, out)
		}

		// The same as JSON: one object with a snapshots array.
		code, out, _ = clitest.Exec(t, "replay-psm", "--check-snapshots", "-o", "json", dir)
		if code != ui.ExitOK {
			t.Errorf("%s: json exit %d", src, code)
		}
		var v struct {
			Type           string `json:"type"`
			LogStartOffset int64  `json:"logStartOffset"`
			Snapshots      []struct {
				Offset int64  `json:"offset"`
				File   string `json:"file"`
				Match  bool   `json:"match"`
				Status string `json:"status"`
			} `json:"snapshots"`
		}
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v\n%s", src, err, out)
		}
		if dec.More() {
			t.Errorf("%s: more than one JSON value", src)
		}
		if v.Type != "producerState" || len(v.Snapshots) == 0 {
			t.Errorf("%s: %+v", src, v)
		}
		for _, s := range v.Snapshots {
			checked++
			if s.Status == "skipped" && s.Offset <= v.LogStartOffset {
				// truncateAndReload deletes it at load: the README's "one
				// at the log start offset, skipped as the broker skips it".
				skipped++
				continue
			}
			if !s.Match {
				t.Errorf("%s: %s does not match (%s)", src, s.File, s.Status)
			}
		}
	}
	// The fixtures README's SHA-256 lists name the snapshots next to a log.
	want, err := realdata.SnapshotsNextToLog(root)
	if err != nil {
		t.Fatal(err)
	}
	if checked != want || matches != want-skipped {
		t.Errorf("%d snapshots checked, %d MATCH and %d skipped at the log start; the fixtures README lists %d next to a log", checked, matches, skipped, want)
	}
}

func TestReplayPSMSnapshotMismatchExits3(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	dir := psmCopyPartition(t, filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data", "testing-0"))
	snap := filepath.Join(dir, "00000000000000011630.snapshot")
	entries, err := segment.ReadProducerSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	entries[1].ProducerEpoch = 7 // producer 8000
	testkit.WriteFile(t, snap, segment.EncodeProducerSnapshot(entries))
	code, out, _ := clitest.Exec(t, "replay-psm", "--check-snapshots", dir)
	if code != ui.ExitFindings {
		t.Fatalf("exit %d, want %d\n%s", code, ui.ExitFindings, out)
	}
	clitest.MustContain(t, out, "00000000000000011630.snapshot MISMATCH", "producer 8000: producerEpoch rebuilt 0, snapshot 7", "00000000000000011655.snapshot MATCH", "snapshot-mismatch")
	code, out, _ = clitest.Exec(t, "replay-psm", "--check-snapshots", "-o", "json", dir)
	if code != ui.ExitFindings || !strings.Contains(out, `"field":"producerEpoch","rebuilt":0,"snapshot":7`) || !strings.Contains(out, `"match":false`) {
		t.Errorf("json exit %d:\n%s", code, out)
	}
}

func TestReplayPSMRealFixtureJSON(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	dir := psmCopyPartition(t, filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data", "testing-0"))
	code, out, errs := clitest.Exec(t, "replay-psm", "-o", "json", dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"type", "partition", "logStartOffset", "logEndOffset", "highWatermark", "lastStableOffset", "snapshotLoaded",
		"barriers", "producers", "ongoingTransactions", "abortedTransactions", "anomalies"} {
		if _, ok := v[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	if v["snapshotLoaded"] != float64(11655) || v["logEndOffset"] != float64(11655) || v["partition"] != "testing-0" {
		t.Errorf("%v %v %v", v["snapshotLoaded"], v["logEndOffset"], v["partition"])
	}
	producers := v["producers"].([]any)
	if len(producers) != 4 {
		t.Fatalf("%d producers", len(producers))
	}
	p := producers[0].(map[string]any)
	if p["producerId"] != float64(8000) || p["lastSequence"] != float64(4050) || p["currentTxnFirstOffset"] != nil || len(p["batches"].([]any)) != 1 {
		t.Errorf("producer %v", p)
	}

	// From the log, up to the roll: the 12 producers of 11630.snapshot,
	// and snapshotLoaded null.
	code, out, _ = clitest.Exec(t, "replay-psm", "-o", "json", "--from-snapshot", "none", "--upto", "11630", dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d", code)
	}
	v = nil
	json.Unmarshal([]byte(out), &v)
	if v["snapshotLoaded"] != nil || len(v["producers"].([]any)) != 12 || v["logEndOffset"] != float64(11630) {
		t.Errorf("upto 11630: %v producers, snapshotLoaded %v", len(v["producers"].([]any)), v["snapshotLoaded"])
	}
}

func TestReplayPSMWriteSnapshot(t *testing.T) {
	root := testkit.RealRootOrSkip(t)
	dir := psmCopyPartition(t, filepath.Join(root, "eric-kimm__stock-market-pipeline", "kafka", "data", "stock-trades-0"))
	existing := filepath.Join(dir, "00000000000000005579.snapshot")
	orig := testkit.ReadFile(t, existing)
	code, _, errs := clitest.Exec(t, "replay-psm", "--from-snapshot", "none", "--write-snapshot", existing, dir)
	if code != ui.ExitRefused || !strings.Contains(errs, "--force") {
		t.Fatalf("overwrite without --force: exit %d %s", code, errs)
	}
	if now := testkit.ReadFile(t, existing); !bytes.Equal(now, orig) {
		t.Fatal("refused write changed the file")
	}
	out := filepath.Join(t.TempDir(), "rebuilt.snapshot")
	code, _, errs = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", "--write-snapshot", out, dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	got, err := segment.ReadProducerSnapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := segment.ReadProducerSnapshot(existing)
	if len(got) != len(want) {
		t.Fatalf("%d entries written, the broker's file has %d", len(got), len(want))
	}
	code, _, errs = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", "--write-snapshot", existing, "--force", dir)
	if code != ui.ExitOK {
		t.Fatalf("--force: exit %d %s", code, errs)
	}
	code, out2, _ := clitest.Exec(t, "replay-psm", "--check-snapshots", dir)
	if code != ui.ExitOK || strings.Count(out2, " MATCH ") != 2 {
		t.Errorf("after rewriting: exit %d\n%s", code, out2)
	}
}

// A failover without a barrier, and the same with one: the CLI exits 3
// for the pid-collision only when barriers are ignored.
func TestReplayPSMBarrierAndIgnoreBarriers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	clitest.Mkdir(t, dir)
	var buf []byte
	off := int64(0)
	ts := int64(1_700_000_000_000)
	add := func(s decode.BatchSpec, recs ...decode.RecordSpec) {
		t.Helper()
		s.BaseOffset = off
		var err error
		if buf, err = decode.AppendBatch(buf, s, recs); err != nil {
			t.Fatal(err)
		}
		off += int64(len(recs))
		ts += 1000
	}
	rec := func(i int32) decode.RecordSpec {
		return decode.RecordSpec{OffsetDelta: i, Timestamp: ts, Value: []byte("x")}
	}
	add(decode.BatchSpec{ProducerID: 5, ProducerEpoch: 2, BaseSequence: 0}, rec(0), rec(1))
	add(decode.BatchSpec{ProducerID: 5, ProducerEpoch: 2, BaseSequence: 2}, rec(0), rec(1))
	add(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true},
		decode.RecordSpec{Timestamp: ts, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)})
	add(decode.BatchSpec{ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0}, rec(0))
	testkit.WriteFile(t, filepath.Join(dir, segment.FormatOffset(0)+".log"), buf)
	code, out, _ := clitest.Exec(t, "replay-psm", dir)
	if code != ui.ExitOK || !strings.Contains(out, "offset 4: cleared 1 producer") {
		t.Errorf("with the barrier: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "replay-psm", "--ignore-barriers", dir)
	if code != ui.ExitFindings || !strings.Contains(out, "pid-collision offset 5 producer 5") {
		t.Errorf("ignoring the barrier: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "replay-psm", "--output", "table", dir)
	if code != ui.ExitOK || !strings.Contains(out, "PRODUCER-ID  EPOCH") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestReplayPSMUsage(t *testing.T) {
	dir := t.TempDir()
	txn := clitest.Testdata("partitions/txn-0")
	for _, tc := range []struct {
		args []string
		msg  string // what stderr must say, when a test pins it
	}{
		{[]string{"replay-psm"}, ""},
		{[]string{"replay-psm", "--from-snapshot", "sometimes", dir}, ""},
		{[]string{"replay-psm", "--check-snapshots", "--from-snapshot", "latest", dir}, ""},
		{[]string{"replay-psm", "--clock", "yesterday", dir}, ""},
		{[]string{"replay-psm", "-o", "yaml", dir}, ""},
		{[]string{"replay-psm", "--force", dir}, ""},
		{[]string{"replay-psm", dir}, ""}, // no .log in it
		{[]string{"replay-psm", dir, dir}, ""},
		// --jobs -3 and a log start above the log end were accepted
		// silently.
		{[]string{"replay-psm", "--jobs", "-3", txn}, "--jobs"},
		{[]string{"replay-psm", "--log-start-offset", "100", txn}, "above the log end offset 19"},
	} {
		if code, out, errs := clitest.Exec(t, tc.args...); code != ui.ExitUsage || !strings.Contains(errs, tc.msg) || out != "" {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, ui.ExitUsage, out, errs)
		}
	}
	if code, _, errOut := clitest.Exec(t, "replay-psm", "--log-start-offset", "19", txn); code == ui.ExitUsage {
		t.Errorf("a log start at the log end (an empty log) is valid: %s", errOut)
	}
	if code, _, _ := clitest.Exec(t, "replay-psm", filepath.Join(dir, "missing")); code != ui.ExitError {
		t.Errorf("missing dir: exit %d", code)
	}
	code, out, _ := clitest.Exec(t, "replay-psm", "--help")
	if code != ui.ExitOK || !strings.Contains(out, "EXIT STATUS") || !strings.Contains(out, "--check-snapshots") {
		t.Errorf("help: %d\n%s", code, out)
	}
}

// TestReplayPSMSaysWhatTheSnapshotHides: control-0's latest snapshot lies
// past both its barriers; "0 barriers" must not read as "none in the log".
// After a clean shutdown the broker loads it (after an unclean one it
// recovers the log from its start instead).
func TestReplayPSMSaysWhatTheSnapshotHides(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "control-0")
	clitest.Fixture(t, "partitions/control-0", dir)
	testkit.WriteFile(t, filepath.Join(filepath.Dir(dir), segment.CleanShutdownName), nil)
	_, full, _ := clitest.Exec(t, "replay-psm", "--from-snapshot", "none", dir)
	if !strings.Contains(full, ", 2 barriers,") {
		t.Fatalf("the whole log should show 2 barriers:\n%s", full)
	}
	_, out, _ := clitest.Exec(t, "replay-psm", dir)
	if !strings.Contains(out, "0 barriers after the snapshot") || !strings.Contains(out, "--from-snapshot none replays them") {
		t.Errorf("the snapshot's effect is not explained:\n%s", out)
	}
}

// TestReplayPSMHangingSeverityStable: the CLI's verdict on txn-0's open
// transaction is the same from the snapshot and from the log start.
func TestReplayPSMHangingSeverityStable(t *testing.T) {
	dir := clitest.Testdata("partitions/txn-0")
	line := func(args ...string) (int, string) {
		code, out, _ := clitest.Exec(t, append(args, dir)...)
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "hanging-transaction") {
				return code, strings.Fields(l)[0]
			}
		}
		t.Fatalf("%v: no hanging-transaction line:\n%s", args, out)
		return 0, ""
	}
	c1, s1 := line("replay-psm")
	c2, s2 := line("replay-psm", "--from-snapshot", "none")
	if s1 != s2 || c1 != c2 {
		t.Errorf("latest snapshot: %s (exit %d); --from-snapshot none: %s (exit %d)", s1, c1, s2, c2)
	}
}
