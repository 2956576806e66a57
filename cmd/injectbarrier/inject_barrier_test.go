package injectbarrier_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// mirrorPartition writes the barriertest mirror fixture (400-byte
// segments) into a fresh log directory and returns the partition dir.
func mirrorPartition(t *testing.T) string {
	t.Helper()
	return barriertest.WritePartition(t, filepath.Join(t.TempDir(), "logs"), barriertest.MirrorBatches(t), 400)
}

func TestInjectBarrierCLITruncate(t *testing.T) {
	dir := mirrorPartition(t)
	logDir := filepath.Dir(dir)
	backup := filepath.Join(t.TempDir(), "backup")
	before := clitest.WalkState(t, logDir)

	code, out, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, dir)
	if code != ui.ExitOK {
		t.Fatalf("dry-run: exit %d\n%s%s", code, out, stderr)
	}
	clitest.MustContain(t, out, "Cut: offset 6", "fixed point: 11, 6", "producer 4004 from offset 6: aborted, its marker at 14 is cut too",
		"MIRROR_PID_RESET", "the barrier clears 2 producers", "Dry run: nothing was changed")
	clitest.AssertSameState(t, before, logDir)

	code, out, stderr = clitest.Exec(t, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", backup, dir)
	if code != ui.ExitOK || !strings.Contains(out, "Verified:") || !strings.Contains(out, "Backup: "+backup) {
		t.Fatalf("inject: exit %d\n%s%s", code, out, stderr)
	}

	// kseg dump shows the barrier by name, and the indexes verify clean.
	code, out, stderr = clitest.Exec(t, "dump", "--deep", dir)
	if code != ui.ExitOK || !strings.Contains(out, "MIRROR_PID_RESET") {
		t.Fatalf("dump: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = clitest.Exec(t, "dump", "--verify-index", "--index-sanity-check", dir)
	if code != ui.ExitOK {
		t.Fatalf("dump --verify-index: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = clitest.Exec(t, "dump", "--output", "kafka", "--deep", filepath.Join(dir, "00000000000000000006.log"))
	// As upstream kafka-dump-log prints a control type it does not know.
	if code != ui.ExitOK || !strings.Contains(out, "controlType: UNKNOWN(7)") {
		t.Fatalf("dump --output kafka: exit %d\n%s%s", code, out, stderr)
	}

	// Producer state: no producer at or after the barrier; it cleared some.
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := psm.DefaultOptions()
	o.FromSnapshot = psm.SnapshotNone
	r, err := psm.Rebuild(pd, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Barriers) != 1 || r.Barriers[0].ProducersCleared <= 0 || len(r.Producers) != 0 || len(r.Ongoing) != 0 {
		t.Fatalf("replay: barriers %+v producers %d ongoing %d", r.Barriers, len(r.Producers), len(r.Ongoing))
	}
	code, out, _ = clitest.Exec(t, "replay-psm", "--from-snapshot", "none", dir)
	if code != ui.ExitOK || !strings.Contains(out, "MIRROR_PID_RESET") && !strings.Contains(out, "barrier") {
		t.Fatalf("replay-psm: exit %d\n%s", code, out)
	}

	// Idempotent: a second run does nothing and exits 0.
	done := clitest.WalkState(t, logDir)
	code, out, _ = clitest.Exec(t, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b2"), dir)
	if code != ui.ExitOK || !strings.Contains(out, "Nothing to do:") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	clitest.AssertSameState(t, done, logDir)

	// --force adds another barrier after the first.
	code, out, stderr = clitest.Exec(t, "inject-barrier", "--force", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b3"), dir)
	if code != ui.ExitOK {
		t.Fatalf("--force: exit %d\n%s%s", code, out, stderr)
	}
	pd, _ = segment.OpenPartitionDir(dir)
	r, err = psm.Rebuild(pd, o)
	if err != nil || len(r.Barriers) != 2 || r.Barriers[1].Offset != 7 {
		t.Fatalf("after --force: %+v %v", r.Barriers, err)
	}
}

func TestInjectBarrierCLIAbort(t *testing.T) {
	dir := mirrorPartition(t)
	code, out, stderr := clitest.Exec(t, "inject-barrier", "--mode", "abort", "--coordinator-epoch", "3", "--bump-leader-epoch", "11",
		"--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = clitest.Exec(t, "dump", "--deep", "--offsets", "18:", dir)
	if code != ui.ExitOK || strings.Count(out, "ABORT") < 2 || !strings.Contains(out, "MIRROR_PID_RESET") {
		t.Fatalf("dump: exit %d\n%s", code, out)
	}
	pd, _ := segment.OpenPartitionDir(dir)
	last := pd.Segments[len(pd.Segments)-1]
	x, err := segment.ReadTxnIndex(last.TxnIndex)
	if err != nil {
		t.Fatal(err)
	}
	n := len(x.Entries)
	if n < 2 || x.Entries[n-2].ProducerID != barriertest.PIDOpenB || x.Entries[n-2].LastOffset != 18 || x.Entries[n-2].LastStableOffset != 15 ||
		x.Entries[n-1].ProducerID != barriertest.PIDOpenE || x.Entries[n-1].LastOffset != 19 || x.Entries[n-1].LastStableOffset != 20 {
		t.Fatalf("txnindex: %+v", x.Entries)
	}
	epochs, _ := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint)
	if len(epochs) != 3 || epochs[2] != (segment.EpochEntry{Epoch: 11, StartOffset: 18}) {
		t.Fatalf("leader-epoch-checkpoint: %v", epochs)
	}
	if code, out, _ := clitest.Exec(t, "dump", "--verify-index", dir); code != ui.ExitOK {
		t.Fatalf("dump --verify-index: exit %d\n%s", code, out)
	}
}

func TestInjectBarrierCLIJSON(t *testing.T) {
	dir := mirrorPartition(t)
	code, out, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", "-o", "json", "--timestamp", clitest.InjectTs, dir)
	if code != ui.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	var plan struct {
		Type          string  `json:"type"`
		Cut           int64   `json:"cut"`
		CutIterations []int64 `json:"cutIterations"`
		DryRun        bool    `json:"dryRun"`
		Files         []struct {
			Name, Action string
		} `json:"files"`
		DroppedTxns []struct {
			ProducerID int64 `json:"producerId"`
		} `json:"droppedTxns"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if plan.Type != "plan" || plan.Cut != 6 || len(plan.CutIterations) != 2 || !plan.DryRun || len(plan.Files) == 0 || len(plan.DroppedTxns) != 4 {
		t.Fatalf("plan: %+v", plan)
	}
	code, out, _ = clitest.Exec(t, "inject-barrier", "-o", "json", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res struct {
		Type         string `json:"type"`
		Applied      bool   `json:"applied"`
		Verification struct {
			OK bool `json:"ok"`
		} `json:"verification"`
	}
	if code != ui.ExitOK || len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &res) != nil || res.Type != "result" || !res.Applied || !res.Verification.OK {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestInjectBarrierCLIResumeAndRollback(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		dir := mirrorPartition(t)
		clean := clitest.WalkState(t, dir)
		p, err := barrier.PlanInjection(dir, barrier.InjectOptions{Timestamp: 1700000060000})
		if err != nil {
			t.Fatal(err)
		}
		crash := errors.New("crash")
		_, err = barrier.ApplyInjection(p, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b"), FaultAt: func(step string) error {
			if step == "commit:00000000000000000006.log" {
				return crash
			}
			return nil
		}})
		if !errors.Is(err, crash) || !edit.HasJournal(dir) {
			t.Fatalf("interrupted run: %v", err)
		}
		code, out, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", dir)
		if code != ui.ExitOK || !strings.Contains(out, "Resume:") {
			t.Fatalf("dry-run of an interrupted dir: exit %d\n%s%s", code, out, stderr)
		}
		// The half-edited partition is not clean to the readers (issue
		// 12, defect 2): a pending-edit finding names the way out.
		for _, args := range [][]string{{"dump", dir}, {"replay-psm", dir}, {"dump", "-o", "json", dir}} {
			code, out, stderr := clitest.Exec(t, args...)
			if code != ui.ExitFindings || !strings.Contains(out+stderr, "pending-edit") || !strings.Contains(out+stderr, "--rollback") ||
				!strings.Contains(out+stderr, "kseg inject-barrier") {
				t.Fatalf("%v over an interrupted injection: exit %d\n%s%s", args, code, out, stderr)
			}
		}
		if rollback {
			code, out, stderr = clitest.Exec(t, "inject-barrier", "--rollback", dir)
			if code != ui.ExitOK || !strings.Contains(out, "Rolled back:") || edit.HasJournal(dir) {
				t.Fatalf("rollback: exit %d\n%s%s", code, out, stderr)
			}
			after := clitest.WalkState(t, dir)
			for k, v := range clean {
				if k != "." && after[k].Sum != v.Sum {
					t.Fatalf("%s differs after rollback", k)
				}
			}
			if len(after) != len(clean) {
				t.Fatalf("%d files after rollback, %d before", len(after), len(clean))
			}
			continue
		}
		code, out, stderr = clitest.Exec(t, "inject-barrier", "--timestamp", "1", dir)
		if code != ui.ExitOK || !strings.Contains(out, "Resumed:") || !strings.Contains(stderr, "ignoring [--timestamp]") || edit.HasJournal(dir) {
			t.Fatalf("resume: exit %d\n%s%s", code, out, stderr)
		}
	}
}

func TestInjectBarrierCLIRefusals(t *testing.T) {
	t.Run("not a partition", func(t *testing.T) {
		d := filepath.Join(t.TempDir(), "notes")
		os.Mkdir(d, 0o755)
		if code, _, stderr := clitest.Exec(t, "inject-barrier", d); code != ui.ExitUsage || !strings.Contains(stderr, "the name is not <topic>-<partition>") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
	t.Run("backup inside the log directory", func(t *testing.T) {
		dir := mirrorPartition(t)
		before := clitest.WalkState(t, dir)
		code, _, stderr := clitest.Exec(t, "inject-barrier", "--backup-dir", filepath.Join(filepath.Dir(dir), "bk"), dir)
		if code != ui.ExitRefused || !strings.Contains(stderr, "inside the log directory") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		clitest.AssertSameState(t, before, dir)
	})
	// The dry run checks --backup-dir exactly as the real run does (issue
	// 12, defect 8), for every write command: inside the log directory,
	// or already holding a file the backup would overwrite.
	t.Run("dry run checks the backup directory", func(t *testing.T) {
		dir := mirrorPartition(t)
		src := mirrorPartition(t)
		dst := filepath.Join(filepath.Dir(dir), "mirror-1")
		used := t.TempDir()
		testkit.WriteFile(t, filepath.Join(used, edit.BackupManifestName), []byte("{}"))
		before := clitest.WalkState(t, filepath.Dir(dir))
		for _, bd := range []string{filepath.Join(filepath.Dir(dir), "bk"), used} {
			for _, args := range [][]string{
				{"inject-barrier", "--dry-run", "--backup-dir", bd, dir},
				{"mirror", "--dry-run", "--backup-dir", bd, src, dst},
			} {
				code, out, stderr := clitest.Exec(t, args...)
				if code != ui.ExitRefused || !strings.Contains(stderr, "refused (backup-dir)") || !strings.Contains(out, "Dry run") {
					t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
				}
			}
		}
		clitest.AssertSameState(t, before, filepath.Dir(dir))
		if code, _, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", "--backup-dir", filepath.Join(t.TempDir(), "fresh"), dir); code != ui.ExitOK {
			t.Fatalf("a usable --backup-dir: exit %d: %s", code, stderr)
		}
	})
	t.Run("corrupt tail", func(t *testing.T) {
		dir := mirrorPartition(t)
		pd, _ := segment.OpenPartitionDir(dir)
		f, _ := os.OpenFile(pd.Segments[len(pd.Segments)-1].Log, os.O_APPEND|os.O_WRONLY, 0)
		f.Write([]byte("0123456789abcdefghijklmnopqrstuvwxyz"))
		f.Close()
		before := clitest.WalkState(t, dir)
		code, _, stderr := clitest.Exec(t, "inject-barrier", dir)
		if code != ui.ExitFindings || !strings.Contains(stderr, "--repair-tail") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		clitest.AssertSameState(t, before, dir)
		code, out, stderr := clitest.Exec(t, "inject-barrier", "--repair-tail", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
		if code != ui.ExitOK || !strings.Contains(out, "Tail repair:") {
			t.Fatalf("--repair-tail: exit %d\n%s%s", code, out, stderr)
		}
	})
	t.Run("usage", func(t *testing.T) {
		dir := mirrorPartition(t)
		for _, args := range [][]string{
			{"--mode", "rewrite", dir},
			{"--output", "yaml", dir},
			{"--coordinator-epoch", "2", dir},
			{"--leader-epoch", "3", "--bump-leader-epoch", "4", dir},
			{"--bump-leader-epoch", "1", dir}, // not above the recorded epoch 1
			{"--rollback", "--dry-run", dir},
			{},
		} {
			if code, _, stderr := clitest.Exec(t, append([]string{"inject-barrier"}, args...)...); code != ui.ExitUsage {
				t.Errorf("%v: exit %d: %s", args, code, stderr)
			}
		}
	})
}

func TestInjectBarrierHelp(t *testing.T) {
	code, out, _ := clitest.Exec(t, "inject-barrier", "--help")
	if code != ui.ExitOK || !strings.Contains(out, "EXIT STATUS") || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "Examples:") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
}

// TestInjectBarrierCommittedDataNeedsYes is issue 12's defect 8: over
// txn-0 the LSO fixed point moves the cut from 8 down to 0, reopening
// producer 2000's transaction committed at 7. The plan names it and the
// records it costs and points to --mode abort; off a terminal the run is
// refused (committed-data, exit 4) with nothing changed unless --yes is
// given; on a terminal it asks, and only "y" goes ahead.
func TestInjectBarrierCommittedDataNeedsYes(t *testing.T) {
	fresh := func() string {
		return clitest.Fixture(t, "partitions/txn-0", filepath.Join(t.TempDir(), "logs", "txn-0"))
	}
	dir := fresh()
	code, out, stderr := clitest.Exec(t, "inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, dir)
	if code != ui.ExitOK || !strings.Contains(out, "committed data lost") || !strings.Contains(out, "producer 2000's transaction from offset 0, 3 records, committed at 7") ||
		!strings.Contains(out, "--mode abort keeps them") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	before := clitest.WalkState(t, filepath.Dir(dir))
	code, out, stderr = clitest.Exec(t, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	if code != ui.ExitRefused || !strings.Contains(stderr, "refused (committed-data)") || !strings.Contains(stderr, "--yes") {
		t.Fatalf("without --yes: exit %d\n%s%s", code, out, stderr)
	}
	clitest.AssertSameState(t, before, filepath.Dir(dir))
	if code, out, stderr := clitest.Exec(t, "inject-barrier", "--yes", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), dir); code != ui.ExitOK {
		t.Fatalf("--yes: exit %d\n%s%s", code, out, stderr)
	}
	// --mode abort removes nothing, so it asks nothing.
	if code, out, stderr := clitest.Exec(t, "inject-barrier", "--mode", "abort", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), fresh()); code != ui.ExitOK {
		t.Fatalf("--mode abort: exit %d\n%s%s", code, out, stderr)
	}
	for answer, want := range map[string]int{"y\n": ui.ExitOK, "n\n": ui.ExitRefused, "": ui.ExitRefused} {
		s, out, errb := ui.TestStreams()
		s.In, s.InTTY, s.ErrTTY = strings.NewReader(answer), true, true
		code := clitest.RunStreams(t.Context(), s, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", filepath.Join(t.TempDir(), "b"), fresh())
		if code != want || !strings.Contains(errb.String(), "Remove them? [y/N]") {
			t.Fatalf("on a terminal, answering %q: exit %d, want %d\n%s%s", answer, code, want, out, errb)
		}
	}
}
