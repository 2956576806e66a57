package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// brokerLog writes v2 batches as a broker lays them out, one segment of a
// partition directory in a log directory of its own.
type brokerLog struct {
	t    *testing.T
	buf  []byte
	next int64
	ts   int64
}

func newBrokerLog(t *testing.T) *brokerLog {
	return &brokerLog{t: t, ts: 1_700_000_000_000}
}

// data appends a batch of n records of producer pid (pid -1: none) and
// returns its base offset.
func (l *brokerLog) data(pid int64, epoch int16, seq int32, n int, txn bool) int64 {
	l.t.Helper()
	recs := make([]decode.RecordSpec, n)
	for i := range recs {
		recs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: l.ts, Value: []byte("v")}
	}
	base := l.next
	var err error
	l.buf, err = decode.AppendBatch(l.buf, decode.BatchSpec{BaseOffset: base, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: txn}, recs)
	if err != nil {
		l.t.Fatal(err)
	}
	l.next += int64(n)
	l.ts += 1000
	return base
}

// partition writes the log as orders-0/00000000000000000000.log in a new
// log directory holding the given files (name → content) and returns the
// partition directory.
func (l *brokerLog) partition(logDirFiles map[string]string) string {
	l.t.Helper()
	logDir := l.t.TempDir()
	dir := filepath.Join(logDir, "orders-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix)), l.buf, 0o644); err != nil {
		l.t.Fatal(err)
	}
	// A broker's segment has its .index (empty below index.interval.bytes):
	// without one, LogLoader.loadSegmentFiles recovers the segment even
	// after a clean shutdown.
	if err := os.WriteFile(filepath.Join(dir, segment.SegmentFileName(0, segment.IndexSuffix)), nil, 0o644); err != nil {
		l.t.Fatal(err)
	}
	for name, content := range logDirFiles {
		if err := os.WriteFile(filepath.Join(logDir, name), []byte(content), 0o644); err != nil {
			l.t.Fatal(err)
		}
	}
	return dir
}

// checkpoint is an offset checkpoint file with one entry for orders-0.
func checkpoint(offset int64) string { return "0\n1\norders 0 " + strconv.FormatInt(offset, 10) + "\n" }

func replayJSON(t *testing.T, args ...string) (clitest.Result, map[string]any) {
	t.Helper()
	r := clitest.Run(append([]string{"replay-psm", "-o", "json"}, args...)...)
	var v map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("replay-psm %v: exit %d %v\n%s%s", args, r.Code, err, r.Stdout, r.Stderr)
	}
	return r, v
}

func anomalyKinds(v map[string]any) map[string]string {
	out := map[string]string{}
	for _, a := range v["anomalies"].([]any) {
		m := a.(map[string]any)
		out[m["kind"].(string)] = m["severity"].(string)
	}
	return out
}

type dryRunPlan struct {
	Files []struct {
		Name, Action string
	} `json:"files"`
	Findings []struct {
		Kind, Severity, File, Message string
	} `json:"findings"`
}

func repairDryRun(t *testing.T, dir string) (clitest.Result, dryRunPlan) {
	t.Helper()
	return repairDryRunWith(t, dir)
}

// repairDryRunAll is repair --all --dry-run.
func repairDryRunAll(t *testing.T, dir string) (clitest.Result, dryRunPlan) {
	t.Helper()
	return repairDryRunWith(t, dir, "--all")
}

func repairDryRunWith(t *testing.T, dir string, flags ...string) (clitest.Result, dryRunPlan) {
	t.Helper()
	r := clitest.Run(append(append([]string{"repair", "--dry-run", "-o", "json"}, flags...), dir)...)
	var p dryRunPlan
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		t.Fatalf("repair --dry-run: exit %d %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return r, p
}

// A clean shutdown (.kafka_cleanshutdown) with no producer snapshot: the
// broker's UnifiedLog.rebuildProducerState skips the log scan and starts
// with no producer state (empty snapshots, LSO = high watermark). replay-psm
// shows that state and the clean-shutdown-no-snapshot error; repair
// reports the same kind and severity and writes the snapshot the broker
// will load instead; afterwards replay-psm sees the log's state.
func TestReplayPSMAndRepairAgreeOnCleanShutdownWithoutSnapshot(t *testing.T) {
	l := newBrokerLog(t)
	l.data(1, 0, 0, 2, false)
	open := l.data(2, 0, 0, 1, true)
	l.data(1, 0, 2, 1, false)
	dir := l.partition(map[string]string{segment.CleanShutdownName: "", "replication-offset-checkpoint": checkpoint(l.next)})

	r, v := replayJSON(t, dir)
	if r.Code != ui.ExitFindings || v["rebuildSkipped"] != true || len(v["producers"].([]any)) != 0 || len(v["ongoingTransactions"].([]any)) != 0 ||
		v["lastStableOffset"] != v["highWatermark"] || v["highWatermark"] != float64(l.next) {
		t.Fatalf("replay-psm: exit %d %s", r.Code, r.Stdout)
	}
	if k := anomalyKinds(v); k["clean-shutdown-no-snapshot"] != "error" || len(k) != 1 {
		t.Fatalf("replay-psm anomalies %v", k)
	}
	text := clitest.Run("replay-psm", dir)
	if !strings.Contains(text.Stdout, "replay              none: .kafka_cleanshutdown and no producer snapshot") {
		t.Errorf("text:\n%s", text.Stdout)
	}
	if r, v := replayJSON(t, "--check-snapshots", dir); r.Code != ui.ExitFindings || anomalyKinds(v)["clean-shutdown-no-snapshot"] != "error" {
		t.Errorf("--check-snapshots: exit %d %v", r.Code, anomalyKinds(v))
	}

	rr, plan := repairDryRun(t, dir)
	snap := segment.SegmentFileName(l.next, segment.SnapshotSuffix)
	found := false
	for _, f := range plan.Findings {
		if f.Kind == "clean-shutdown-no-snapshot" && f.Severity == "error" && f.File == snap {
			found = true
		}
	}
	writes := false
	for _, f := range plan.Files {
		writes = writes || (f.Name == snap && f.Action == "create")
	}
	if rr.Code != ui.ExitFindings || !found || !writes {
		t.Fatalf("repair --dry-run: exit %d %+v", rr.Code, plan)
	}
	if ap := clitest.Run("repair", "--backup-dir", t.TempDir(), dir); ap.Code != ui.ExitOK || !strings.Contains(ap.Stdout, "Verified:") {
		t.Fatalf("repair: exit %d\n%s%s", ap.Code, ap.Stdout, ap.Stderr)
	}
	r, v = replayJSON(t, dir)
	if r.Code != ui.ExitOK || v["rebuildSkipped"] != nil || len(v["producers"].([]any)) != 2 || v["lastStableOffset"] != float64(open) {
		t.Errorf("after repair: exit %d %s", r.Code, r.Stdout)
	}
}

// The broker starts the partition's high watermark at its
// replication-offset-checkpoint entry, or at 0 without one
// (Partition.createLog: getOrElse(0L)), raised to the log start offset by
// UnifiedLog.updateHighWatermark; the LSO cannot pass it. kseg used to
// take the log end.
func TestReplayPSMHighWatermarkAsTheBrokerStartsIt(t *testing.T) {
	l := newBrokerLog(t)
	l.data(1, 0, 0, 2, false)
	l.data(1, 0, 2, 2, false)
	l.data(1, 0, 4, 2, false)
	for _, c := range []struct {
		name    string
		files   map[string]string
		args    []string
		hw, lso float64
	}{
		{"no checkpoint", nil, nil, 0, 0},
		{"no entry, log start 2", map[string]string{"log-start-offset-checkpoint": checkpoint(2)}, nil, 2, 2},
		{"an entry", map[string]string{"replication-offset-checkpoint": checkpoint(4)}, nil, 4, 4},
		{"an entry past the log end", map[string]string{"replication-offset-checkpoint": checkpoint(99)}, nil, 6, 6},
		{"--high-watermark", nil, []string{"--high-watermark", "5"}, 5, 5},
	} {
		dir := l.partition(c.files)
		r, v := replayJSON(t, append(c.args, dir)...)
		if r.Code != ui.ExitOK || v["highWatermark"] != c.hw || v["lastStableOffset"] != c.lso {
			t.Errorf("%s: exit %d, highWatermark %v, lastStableOffset %v; want %v, %v", c.name, r.Code, v["highWatermark"], v["lastStableOffset"], c.hw, c.lso)
		}
	}
	text := clitest.Run("replay-psm", l.partition(nil))
	if !strings.Contains(text.Stdout, "high watermark      0 (no replication-offset-checkpoint entry: a broker starts at the log start offset") {
		t.Errorf("text:\n%s", text.Stdout)
	}
}

// A log-start-offset-checkpoint entry above the log end: a broker deletes
// the whole log at load (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd).
// replay-psm and dump both report log-start-above-log-end (exit 3), and
// the high watermark never lies above the log end.
func TestLogStartAboveLogEndIsAFinding(t *testing.T) {
	l := newBrokerLog(t)
	l.data(1, 0, 0, 3, false)
	dir := l.partition(map[string]string{"log-start-offset-checkpoint": checkpoint(50), "replication-offset-checkpoint": checkpoint(60)})
	r, v := replayJSON(t, dir)
	if r.Code != ui.ExitFindings || anomalyKinds(v)["log-start-above-log-end"] != "error" {
		t.Fatalf("replay-psm: exit %d %s", r.Code, r.Stdout)
	}
	if hw, end := v["highWatermark"].(float64), v["logEndOffset"].(float64); hw > end || end != 3 {
		t.Errorf("high watermark %v above the log end %v", hw, end)
	}
	d := clitest.Run("dump", dir)
	if d.Code != ui.ExitFindings || !strings.Contains(d.Stdout, "ERROR log-start-above-log-end orders-0: the log start offset 50") {
		t.Errorf("dump: exit %d\n%s", d.Code, d.Stdout)
	}
	if d := clitest.Run("dump", "-o", "json", filepath.Dir(dir)); d.Code != ui.ExitFindings || !strings.Contains(d.Stdout, `"kind":"log-start-above-log-end"`) {
		t.Errorf("dump of the log directory: exit %d\n%s", d.Code, d.Stdout)
	}
	// Within the log: nothing to say.
	ok := l.partition(map[string]string{"log-start-offset-checkpoint": checkpoint(3)})
	if d := clitest.Run("dump", ok); d.Code != ui.ExitOK {
		t.Errorf("dump with the log start at the log end: exit %d\n%s", d.Code, d.Stdout)
	}
}

// Snapshots the broker wrote that differ from kseg's rebuild only in ways
// the broker's own code explains are MATCHes, and repair leaves them be:
// one written after DeleteRecords moved the log start inside the segment
// (the broker keeps those producers: onLogStartOffsetIncremented), one
// written by log recovery (loadProducersFromRecords never expires).
func TestRepairKeepsSnapshotsTheBrokerWrote(t *testing.T) {
	check := func(t *testing.T, dir, reason string) {
		t.Helper()
		c := clitest.Run("replay-psm", "--check-snapshots", dir)
		if c.Code != ui.ExitOK || !strings.Contains(c.Stdout, "MATCH (") || !strings.Contains(c.Stdout, reason) {
			t.Fatalf("--check-snapshots: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
		}
		r, plan := repairDryRun(t, dir)
		for _, f := range plan.Files {
			if strings.HasSuffix(f.Name, segment.SnapshotSuffix) {
				t.Errorf("repair --dry-run plans %s %s", f.Action, f.Name)
			}
		}
		if r.Code != ui.ExitOK {
			t.Errorf("repair --dry-run: exit %d %+v", r.Code, plan.Findings)
		}
		if _, v := replayJSON(t, dir); anomalyKinds(v)["stale-snapshot"] != "" || anomalyKinds(v)["snapshot-mismatch"] != "" {
			t.Errorf("default run: %v", anomalyKinds(v))
		}
	}
	t.Run("delete-records", func(t *testing.T) {
		l := newBrokerLog(t)
		l.data(1, 0, 0, 2, false)
		l.data(2, 0, 0, 2, false)
		l.data(2, 0, 2, 2, false)
		dir := l.partition(map[string]string{"log-start-offset-checkpoint": checkpoint(3)})
		if w := clitest.Run("replay-psm", "--from-snapshot", "none", "--log-start-offset", "0", "--write-snapshot", dir, dir); w.Code != ui.ExitOK {
			t.Fatalf("write: %d %s", w.Code, w.Stderr)
		}
		check(t, dir, "below the log start offset 3")
	})
	t.Run("recovery-never-expires", func(t *testing.T) {
		l := newBrokerLog(t)
		l.data(1, 0, 0, 1, false)
		l.ts += 3 * 86400000
		l.data(2, 0, 0, 1, false)
		dir := l.partition(nil)
		if w := clitest.Run("replay-psm", "--from-snapshot", "none", "--producer-id-expiration-ms", "4611686018427387904", "--write-snapshot", dir, dir); w.Code != ui.ExitOK {
			t.Fatalf("write: %d %s", w.Code, w.Stderr)
		}
		check(t, dir, "loadProducersFromRecords")
	})
}
