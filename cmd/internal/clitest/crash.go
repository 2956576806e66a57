package clitest

import (
	"errors"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/recovery"
	"github.com/kseg/kseg/segment/edit"
)

// ErrCrash is what CrashAtCommit stops an edit with.
var ErrCrash = errors.New("simulated crash")

// CrashAtCommit are edit options that stop an edit at its first commit
// step, as a crash would there (its journal left behind), its backup in
// backupDir.
func CrashAtCommit(backupDir string) edit.Options {
	return edit.Options{BackupDir: backupDir, FaultAt: func(step string) error {
		if strings.HasPrefix(step, "commit:") {
			return ErrCrash
		}
		return nil
	}}
}

// InterruptedRepair copies testdata/broken/torn-tail/events-0 to dir and
// leaves a repair of it interrupted at its first commit, its backup in
// backupDir.
func InterruptedRepair(t *testing.T, dir, backupDir string) {
	t.Helper()
	Fixture(t, "broken/torn-tail/events-0", dir)
	p, err := recovery.PlanRepair(dir, recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recovery.Apply(p, CrashAtCommit(backupDir)); !errors.Is(err, ErrCrash) {
		t.Fatalf("the repair was not interrupted: %v", err)
	}
}
