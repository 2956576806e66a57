package edit

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/segment/finding"
)

// PendingFinding is the finding for a partition directory that holds
// the journal of an interrupted kseg edit: until it is finished or rolled
// back, each file it names is its old or its new content, so the partition
// as a whole may be neither (a log cut at the last stable offset with no
// barrier yet, say), and dump or replay-psm must not call it clean. ok is
// false when there is no journal.
func PendingFinding(dir string) (f finding.Finding, ok bool) {
	if !HasJournal(dir) {
		return f, false
	}
	tool, path := "kseg inject-barrier, mirror or repair", filepath.Join(dir, JournalName)
	// The tool from the journal's first bytes: a journal is read whole
	// only by the command that finishes or rolls it back.
	if t, p, err := JournalTool(dir); err == nil {
		tool, path = t, p
	}
	f = finding.New(finding.PendingEdit, fmt.Sprintf(
		"%s: an interrupted %s left its journal: the partition may be half edited (each file is its old or its new content); before a broker loads it, rerun the %s command on %s to finish the edit, or add --rollback to undo it",
		filepath.Base(path), tool, tool, dir))
	f.File, f.Position, f.Offset = path, -1, -1
	return f, true
}
