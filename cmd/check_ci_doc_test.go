package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScriptCIDoc runs the console examples of docs/ci.md as the README's
// are run (TestScriptReadme).
func TestScriptCIDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, n, err := docScript("docs/ci.md", string(b))
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("docs/ci.md shows %d kseg commands", n)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ci.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, scriptParams(t, dir))
}
