package cmd

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/docs"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// cliDocsDir is the committed CLI reference, from the package directory.
var cliDocsDir = filepath.Join("..", "docs", "cli")

// TestDocsUpToDate regenerates the CLI reference into a temporary
// directory and fails when docs/cli/ differs: a command, flag or help text
// changed without the reference being regenerated.
func TestDocsUpToDate(t *testing.T) {
	s, _, _ := ui.TestStreams()
	tmp := t.TempDir()
	date, _ := time.Parse(time.DateOnly, docs.ManDate)
	if err := docs.Generate(NewRootCmd(s), tmp, date); err != nil {
		t.Fatal(err)
	}
	diff, err := docs.Diff(tmp, cliDocsDir)
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Errorf("docs/cli/ is stale; regenerate it from the repository root with\n\n\tgo run . docs docs/cli\n\nand commit the result.\n%s", diff)
	}
}
