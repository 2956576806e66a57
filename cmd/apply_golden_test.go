package cmd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/edit"
)

// Goldens of what the write commands print when they write: the apply
// (text and JSON, each on its own copy), the rerun that has nothing left
// to do, and the rollback of a run interrupted in the middle of its
// commit. The dry runs are TestDryRunGolden's. Regenerate with
//
//	go test ./cmd -run Golden -update

// applyScenarios are one write of each command. The partitions live in
// logs/ and logs-json/ (a log directory each), the backups in backup/,
// outside them.
var applyScenarios = []struct {
	name  string
	about string
	// build copies the fixtures into the log directory ld ("logs" or
	// "logs-json").
	build func(w *clitest.GoldenWork, ld string)
	// args are the command's arguments before the partition(s); dirs the
	// partition arguments, relative to the log directory's parent.
	args []string
	dirs func(ld string) []string
	// interrupt applies the plan with the engine stopped at its first
	// commit step, as a crash there would, leaving the journal.
	interrupt func(dirs []string, o edit.Options) error
}{
	{
		// txn-0's fixed point cuts below a committed transaction: off a
		// terminal the cut of committed records needs --yes.
		name: "inject-barrier", about: "kseg inject-barrier --yes over a copy of testdata/partitions/txn-0: the cut at the last stable offset, then the barrier.",
		build: func(w *clitest.GoldenWork, ld string) { w.CopyFixture("partitions/txn-0", ld+"/txn-0") },
		args:  []string{"inject-barrier", "--yes", "--timestamp", "1700000009000"},
		dirs:  func(ld string) []string { return []string{ld + "/txn-0"} },
		interrupt: func(dirs []string, o edit.Options) error {
			p, err := barrier.PlanInjection(dirs[0], barrier.InjectOptions{Mode: barrier.ModeTruncate, Timestamp: 1700000009000})
			if err != nil {
				return err
			}
			_, err = barrier.ApplyInjection(p, o)
			return err
		},
	},
	{
		name: "mirror", about: "kseg mirror from a copy of testdata/partitions/orders-0 into a new partition directory.",
		build: func(w *clitest.GoldenWork, ld string) {
			w.CopyFixture("partitions/orders-0", "src/orders-0")
			w.Mkdir(ld)
		},
		args: []string{"mirror", "--segment-bytes", "2048"},
		dirs: func(ld string) []string { return []string{"src/orders-0", ld + "/orders-0"} },
		interrupt: func(dirs []string, o edit.Options) error {
			opts := mirror.DefaultOptions()
			opts.SegmentBytes = 2048
			p, err := mirror.PlanMirror(dirs[0], dirs[1], opts)
			if err != nil {
				return err
			}
			_, err = mirror.Apply(p, o)
			return err
		},
	},
	{
		name: "repair", about: "kseg repair over a copy of testdata/broken/torn-tail/events-0.",
		build: func(w *clitest.GoldenWork, ld string) { w.CopyFixture("broken/torn-tail/events-0", ld+"/events-0") },
		args:  []string{"repair"},
		dirs:  func(ld string) []string { return []string{ld + "/events-0"} },
		interrupt: func(dirs []string, o edit.Options) error {
			p, err := recovery.PlanRepair(dirs[0], recovery.Options{})
			if err != nil {
				return err
			}
			_, err = recovery.Apply(p, o)
			return err
		},
	},
}

// errCrash stands in for a crash in the interrupted runs.
var errCrash = errors.New("crash")

// TestApplyGolden records each write command applying (text, then JSON on
// a second copy), rerun with nothing to do, and rolling back a run
// interrupted at its first commit step (text, then JSON).
func TestApplyGolden(t *testing.T) {
	for _, sc := range applyScenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := clitest.NewGoldenWork(t)
			for i, o := range []string{"text", "json"} {
				ld := []string{"logs", "logs-json"}[i]
				sc.build(w, ld)
				args := append(append([]string{"--output", o}, sc.args...), "--backup-dir", "backup/apply-"+o)
				args = append(args, sc.dirs(ld)...)
				if r := w.Run(args...); r.Code != ui.ExitOK {
					t.Fatalf("kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
				}
				if o == "json" {
					clitest.CheckJSONLines(t, w.Res[len(w.Res)-1])
				}
			}
			// A rerun has nothing to do.
			again := append(append([]string{}, sc.args...), "--backup-dir", "backup/again")
			if r := w.Run(append(again, sc.dirs("logs")...)...); r.Code != ui.ExitOK {
				t.Errorf("rerun: exit %d\n%s", r.Code, r.Stderr)
			}
			for _, o := range []string{"text", "json"} {
				ld := "crashed-" + o
				sc.build(w, ld)
				dirs := sc.dirs(ld)
				abs := make([]string, len(dirs))
				for i, d := range dirs {
					abs[i] = filepath.Join(w.Dir, d)
				}
				crashed := false
				err := sc.interrupt(abs, edit.Options{BackupDir: filepath.Join(w.Dir, "backup", "crashed-"+o), FaultAt: func(step string) error {
					if strings.HasPrefix(step, "commit:") && !crashed {
						crashed = true
						return errCrash
					}
					return nil
				}})
				if !errors.Is(err, errCrash) {
					t.Fatalf("the interrupted %s did not stop at a commit step: %v", sc.name, err)
				}
				args := []string{"--output", o, sc.args[0], "--rollback", dirs[len(dirs)-1]}
				if r := w.Run(args...); r.Code != ui.ExitOK {
					t.Errorf("kseg %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
				}
			}
			w.Check(filepath.Join(sc.args[0], sc.name+"-apply.txt"), sc.about,
				"Applied (text and JSON, each on its own copy), rerun, and rolled back after a run stopped at its first commit step.")
		})
	}
}
