package repair_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/edit"
)

// repairCase writes a corpus case into a log directory of its own and
// returns the partition directory.
func repairCase(t *testing.T, name string) string {
	t.Helper()
	c := clitest.Corpus(t)
	for i := range c.Cases {
		if c.Cases[i].Name == name {
			return clitest.WriteCorpusCase(t, c, &c.Cases[i], filepath.Join(t.TempDir(), "logs"))
		}
	}
	t.Fatalf("no corpus case %s", name)
	return ""
}

// assertCleanAfterRepair runs what the issue promises after a repair:
// dump --verify-index is clean and replay-psm --check-snapshots matches.
func assertCleanAfterRepair(t *testing.T, dir string) {
	t.Helper()
	code, out, errOut := clitest.Exec(t, "dump", "-o", "json", "--verify-index", "--index-sanity-check", dir)
	if code != ui.ExitOK {
		t.Fatalf("dump --verify-index after the repair: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, `"type":"finding"`) {
		t.Fatalf("dump --verify-index after the repair reports findings:\n%s", out)
	}
	// (Exit 3 may come from anomalies of the data itself, such as txn-0's
	// hanging transaction; the snapshots must match.)
	code, out, errOut = clitest.Exec(t, "replay-psm", "--check-snapshots", dir)
	if (code != ui.ExitOK && code != ui.ExitFindings) || strings.Contains(out, "MISMATCH") || strings.Contains(out, "CORRUPT") ||
		strings.Contains(out, "snapshot-") {
		t.Fatalf("replay-psm --check-snapshots after the repair: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, " MATCH ") {
		t.Fatalf("replay-psm --check-snapshots: no snapshot MATCHes:\n%s", out)
	}
}

// TestRepairCLI walks the command through a corrupt length in the middle
// of a segment and a CRC mismatch in the middle of a multi-segment log:
// the dry run exits 3 and changes nothing, the repair exits 0 and verifies,
// dump and replay-psm are clean afterwards, and a second run is a no-op.
func TestRepairCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cut string
		newEnd    int64
	}{
		{"events-0/length/huge-mid", "cut at position 321 (corrupt-batch", 6},
		{"events-0/torn-tail/40", "cut at position 535 (torn-tail", 10},
		{"txn-0/length/negative-mid", "cut at position 216 (corrupt-batch", 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repairCase(t, tc.name)
			logDir := filepath.Dir(dir)
			before := clitest.WalkState(t, logDir)
			code, out, errOut := clitest.Exec(t, "repair", "--dry-run", dir)
			if code != ui.ExitFindings || !strings.Contains(out, tc.cut) || !strings.Contains(out, "Dry run:") {
				t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
			}
			clitest.AssertSameState(t, before, logDir)

			code, out, _ = clitest.Exec(t, "repair", "--dry-run", "-o", "json", dir)
			var plan struct {
				Type            string `json:"type"`
				Damage          bool   `json:"damage"`
				NewLogEndOffset int64  `json:"newLogEndOffset"`
				Files           []struct {
					Name, Action string
				} `json:"files"`
				Findings []struct {
					Kind     string `json:"kind"`
					Severity string `json:"severity"`
					Position *int64 `json:"position"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &plan); err != nil || code != ui.ExitFindings {
				t.Fatalf("dry run json: exit %d, %v\n%s", code, err, out)
			}
			if plan.Type != "plan" || !plan.Damage || plan.NewLogEndOffset != tc.newEnd || len(plan.Files) == 0 || len(plan.Findings) == 0 {
				t.Fatalf("plan: %+v", plan)
			}
			clitest.AssertSameState(t, before, logDir)

			backup := filepath.Join(t.TempDir(), "backup")
			code, out, errOut = clitest.Exec(t, "repair", "--backup-dir", backup, dir)
			if code != ui.ExitOK || !strings.Contains(out, "Repaired:") || !strings.Contains(out, "Verified:") {
				t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
			}
			assertCleanAfterRepair(t, dir)

			after := clitest.WalkState(t, logDir)
			code, out, _ = clitest.Exec(t, "repair", dir)
			if code != ui.ExitOK || !strings.Contains(out, "Nothing to repair:") {
				t.Fatalf("second run: exit %d\n%s", code, out)
			}
			clitest.AssertSameState(t, after, logDir)
			code, out, _ = clitest.Exec(t, "repair", "--dry-run", "-o", "json", dir)
			if code != ui.ExitOK || !strings.Contains(out, `"nothingToDo":true`) {
				t.Fatalf("second dry run: exit %d\n%s", code, out)
			}
		})
	}
}

// TestRepairCLIMultiSegment: a CRC mismatch in orders-0's second segment;
// the later segment, the snapshots above the cut and a leader epoch go.
func TestRepairCLIMultiSegment(t *testing.T) {
	// A bit of the batch at offsets 36..39 (position 653).
	dir := barriertest.CRCDamagedOrders(t)
	code, out, errOut := clitest.Exec(t, "repair", "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	if code != ui.ExitOK {
		t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
	}
	clitest.MustContain(t, out, "log end 73 -> 36", "cut at position 653 (crc-mismatch", "delete  00000000000000000053.log",
		"delete  00000000000000000073.snapshot", "create  00000000000000000036.snapshot", "leader-epoch-checkpoint")
	assertCleanAfterRepair(t, dir)
}

// TestRepairCLIWarningOnly: a zero-filled (preallocated) tail is cut, as
// recovery does, but it is no damage: the dry run exits 0.
func TestRepairCLIWarningOnly(t *testing.T) {
	t.Parallel()
	dir := repairCase(t, "events-0/zero-tail")
	code, out, _ := clitest.Exec(t, "repair", "--dry-run", dir)
	if code != ui.ExitOK || !strings.Contains(out, "zero-tail") || !strings.Contains(out, "replace 00000000000000000000.log (4742 -> 646 bytes)") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "repair", "--backup-dir", filepath.Join(t.TempDir(), "b"), dir)
	if code != ui.ExitOK {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Exec(t, "dump", dir)
	if code != ui.ExitOK || strings.Contains(out, "zero-tail") {
		t.Fatalf("dump after the repair: exit %d\n%s", code, out)
	}
}

// TestRepairCLIResumeAndRollback: an interrupted repair is finished by a
// rerun, or undone by --rollback.
func TestRepairCLIResumeAndRollback(t *testing.T) {
	t.Parallel()
	for _, rollback := range []bool{false, true} {
		dir := repairCase(t, "events-0/crc-mismatch")
		before := clitest.WalkState(t, dir)
		p, err := recovery.PlanRepair(dir, recovery.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = recovery.Apply(p, clitest.CrashAtCommit(filepath.Join(t.TempDir(), "b")))
		if err == nil || !edit.HasJournal(dir) {
			t.Fatalf("the simulated crash left no journal: %v", err)
		}
		if rollback {
			code, out, errOut := clitest.Exec(t, "repair", "--rollback", dir)
			if code != ui.ExitOK || !strings.Contains(out, "Rolled back:") {
				t.Fatalf("rollback: exit %d\n%s%s", code, out, errOut)
			}
			after := clitest.WalkState(t, dir)
			for k, b := range before {
				if after[k].Sum != b.Sum {
					t.Fatalf("%s not restored", k)
				}
			}
			continue
		}
		code, out, errOut := clitest.Exec(t, "repair", "--all", dir)
		if code != ui.ExitOK || !strings.Contains(out, "Resume:") || !strings.Contains(out, "the interrupted repair") ||
			!strings.Contains(errOut, "ignoring [--all]") {
			t.Fatalf("rerun: exit %d\n%s%s", code, out, errOut)
		}
		assertCleanAfterRepair(t, dir)
	}
}

func TestRepairCLIUsage(t *testing.T) {
	dir := repairCase(t, "events-0/crc-mismatch")
	for _, args := range [][]string{
		{"repair"},
		{"repair", dir, dir},
		{"repair", "-o", "yaml", dir},
		{"repair", "--index-interval-bytes", "-1", dir},
		{"repair", "--rollback", "--all", dir},
		{"repair", "--rollback", "--dry-run", dir},
	} {
		if code, _, errOut := clitest.Exec(t, args...); code != ui.ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut)
		}
	}
	if code, _, errOut := clitest.Exec(t, "repair", "--rollback", dir); code != ui.ExitError || !strings.Contains(errOut, "no interrupted operation") {
		t.Errorf("--rollback without a journal: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := clitest.Exec(t, "repair", filepath.Dir(dir)); code != ui.ExitUsage || !strings.Contains(errOut, "not <topic>-<partition>") {
		t.Errorf("a log directory: exit %d\n%s", code, errOut)
	}
	code, out, _ := clitest.Exec(t, "repair", "--help")
	if code != ui.ExitOK || !strings.Contains(out, "EXIT STATUS") || !strings.Contains(out, "--index-interval-bytes") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestRepairCLITable: --output table renders the plan as tables.
func TestRepairCLITable(t *testing.T) {
	t.Parallel()
	dir := repairCase(t, "events-0/crc-mismatch")
	code, out, _ := clitest.Exec(t, "repair", "--dry-run", "-o", "table", dir)
	if code != ui.ExitFindings || !strings.Contains(out, "crc-mismatch at 321 (325 bytes)") || !strings.Contains(out, "\nreplace  ") {
		t.Fatalf("table: exit %d\n%s", code, out)
	}
}
