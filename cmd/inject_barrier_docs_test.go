package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
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
	src, err := os.ReadFile(doc)
	if err != nil {
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
		s, out, errb := ui.TestStreams()
		s.Env = func(k string) (string, bool) { return "/home/operator", k == "HOME" }
		if code := Run(context.Background(), []string{"inject-barrier", "--dry-run", "--timestamp", clitest.InjectTs, dir}, s); code != ui.ExitOK {
			t.Fatalf("dry run: exit %d\n%s%s", code, out, errb)
		}
		blocks["dry-run"] = strings.ReplaceAll(out.String(), logDir, shownLogDir)
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

	re := regexp.MustCompile("(?s)<!-- example:([a-z-]+) -->\n```text\n(.*?)```\n<!-- end -->")
	seen := map[string]bool{}
	var drift []string
	updated := re.ReplaceAllFunc(src, func(m []byte) []byte {
		sm := re.FindSubmatch(m)
		name := string(sm[1])
		seen[name] = true
		want, ok := blocks[name]
		if !ok {
			t.Errorf("unknown example block %q", name)
			return m
		}
		if string(sm[2]) != want {
			drift = append(drift, name)
		}
		return []byte("<!-- example:" + name + " -->\n```text\n" + want + "```\n<!-- end -->")
	})
	for name := range blocks {
		if !seen[name] {
			t.Errorf("%s has no example block %q", doc, name)
		}
	}
	if len(drift) == 0 {
		return
	}
	if os.Getenv("KSEG_UPDATE_DOCS") == "1" && !bytes.Equal(updated, src) {
		if err := os.WriteFile(doc, updated, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %v in %s", drift, doc)
		return
	}
	t.Errorf("%s: example blocks %v differ from kseg's output; run KSEG_UPDATE_DOCS=1 go test ./cmd -run TestFailoverDocExamples", doc, drift)
}
