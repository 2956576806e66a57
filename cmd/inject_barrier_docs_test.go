package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestFailoverDocExamples regenerates the worked example of
// docs/failover.md from the barriertest fixture and fails when the
// document drifts from what kseg prints. KSEG_UPDATE_DOCS=1 rewrites the
// blocks. Paths are shown as /var/lib/kafka/data/mirror-0 and
// /srv/kseg-backups/mirror-0.
func TestFailoverDocExamples(t *testing.T) {
	const doc = "../docs/failover.md"
	if _, err := os.Stat(doc); err != nil {
		t.Skipf("%s: %v", doc, err)
	}
	const shownLogDir, shownBackup = "/var/lib/kafka/data", "/srv/kseg-backups/mirror-0"
	run := func(logDir, backup string, args ...string) string {
		t.Helper()
		code, out, stderr := clitest.Exec(t, args...)
		if code != ui.ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		out = strings.ReplaceAll(out, logDir, shownLogDir)
		if backup != "" {
			out = strings.ReplaceAll(out, backup, shownBackup)
		}
		return out
	}
	newDir := func() (string, string) {
		logDir := filepath.Join(t.TempDir(), "data")
		return logDir, barriertest.WritePartition(t, logDir, barriertest.MirrorBatches(t), 400)
	}
	blocks := map[string]string{}
	logDir, dir := newDir()
	// The dry run as an operator's shell runs it: the plan names the
	// default backup folder under the home directory (a dry run creates
	// nothing there).
	{
		r := clitest.RunWith(func(s *ui.Streams) {
			s.Env = func(k string) (string, bool) { return "/home/operator", k == "HOME" }
		}, "inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, dir)
		if r.Code != ui.ExitOK {
			t.Fatalf("dry run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		blocks["dry-run"] = strings.ReplaceAll(r.Stdout, logDir, shownLogDir)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	applied := run(logDir, backup, "inject-barrier", "--timestamp", clitest.InjectTs, "--backup-dir", backup, dir)
	// The plan is printed again first; show what follows it.
	if i := strings.Index(applied, "Backup:"); i >= 0 {
		applied = applied[i:]
	}
	blocks["apply"] = applied
	blocks["dump"] = run(logDir, "", "dump", "--deep", filepath.Join(dir, "00000000000000000006.log"))
	blocks["replay"] = run(logDir, "", "replay-psm", "--from-snapshot", "none", dir)
	logDir, dir = newDir()
	abort := run(logDir, "", "inject-barrier", "--dry-run", "--mode", "abort", "--bump-leader-epoch", "11", "--timestamp", clitest.InjectTs, dir)
	// The excerpt: from "Mode:" to "Files:".
	if i, j := strings.Index(abort, "Mode:"), strings.Index(abort, "Files:"); i >= 0 && j > i {
		abort = abort[i:j]
	}
	blocks["abort"] = abort

	checkDocBlocks(t, doc, blocks)
}
