package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestDocsCommand runs `kseg docs DIR` twice: pages for every command,
// Markdown and man, no generation date, identical on the second run; a
// page of a command that no longer exists is removed, other files stay.
func TestDocsCommand(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "kseg_gone.md")
	other := filepath.Join(dir, "README.md")
	os.WriteFile(stale, []byte("old"), 0o644)
	os.WriteFile(other, []byte("mine"), 0o644)
	r := clitest.Run("docs", dir)
	if r.Code != 0 || r.Stdout != "" {
		t.Fatalf("docs: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for _, f := range []string{"kseg.md", "kseg_dump.md", "kseg_explain.md", "kseg_version.md", "kseg_docs.md",
		"kseg_completion_bash.md", "man/kseg.1", "man/kseg-dump.1", "man/kseg-completion-zsh.1"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.Contains(string(b), "Auto generated") {
			t.Errorf("%s carries a generation stamp", f)
		}
		if !strings.Contains(string(b), "EXIT STATUS") {
			t.Errorf("%s has no EXIT STATUS", f)
		}
	}
	man, _ := os.ReadFile(filepath.Join(dir, "man", "kseg-dump.1"))
	if !strings.Contains(string(man), `.TH "KSEG-DUMP" "1" "Jan 2026" "kseg" "kseg manual"`) {
		t.Errorf("man header: %q", strings.SplitN(string(man), "\n", 3)[:2])
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the page of a removed command is still there")
	}
	if b, _ := os.ReadFile(other); string(b) != "mine" {
		t.Errorf("docs touched a file it does not own")
	}
	again := clitest.Run("docs", dir)
	if again.Code != 0 || !strings.Contains(again.Stderr, "(0 changed)") {
		t.Errorf("second run: exit %d, stderr %q; want nothing changed", again.Code, again.Stderr)
	}
	if q := clitest.Run("-q", "docs", dir); q.Stderr != "" {
		t.Errorf("-q docs: stderr %q", q.Stderr)
	}
}
