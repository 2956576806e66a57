package edit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestJournalKeepsPlanVerbatim: the journal holds the plan as it was
// marshalled (compact), not re-indented at every save (a mirror's plan
// carries index contents of a megabyte or more, and the journal is saved
// at every commit step), and reads back to the same journal.
func TestJournalKeepsPlanVerbatim(t *testing.T) {
	plan := json.RawMessage(`{"ops":[{"name":"00000000000000000000.index","content":"AAAAAQAAAAA="}],"to":18}`)
	j := &Journal{Version: journalVersion, Tool: "kseg mirror", State: JournalCommitting, Started: "2026-12-02T00:00:00Z",
		Dir: "/logs/t-0", BackupDir: "/bk", Done: []string{"a.log"}, Plan: plan}
	b, err := j.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, plan) {
		t.Fatalf("the plan is not in the journal verbatim:\n%s", b)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, JournalName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Plan, plan) || got.State != j.State || got.Tool != j.Tool || got.Done[0] != "a.log" || got.BackupDir != j.BackupDir {
		t.Fatalf("read back %+v", got)
	}
}
