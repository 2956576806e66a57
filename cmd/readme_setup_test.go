package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSetUp: the README's set-up says how to build from a clone
// (kseg is not a published module: "go install MODULE@latest" cannot
// work), the Go version go.mod requires, exactly, and what a first run
// with empty caches does (a minute of downloading and compiling).
func TestReadmeSetUp(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	goVersion := string(m[1])
	s := string(readme)
	i := strings.Index(s, "\n## Set-up")
	if i < 0 {
		t.Fatal("README.md has no ## Set-up section")
	}
	setup := s[i:]
	if j := strings.Index(setup[1:], "\n## "); j >= 0 {
		setup = setup[:j+1]
	}
	for _, want := range []string{"go build -o kseg .", "go install .", "Go " + goVersion + " or later", "`go " + goVersion + "`", "go: downloading", "first"} {
		if !strings.Contains(setup, want) {
			t.Errorf("README set-up does not say %q:\n%s", want, setup)
		}
	}
	docs, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	cli, _ := filepath.Glob(filepath.Join("..", "docs", "cli", "*.md"))
	docs = append(docs, cli...)
	for _, p := range append(docs, filepath.Join("..", "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"@latest", "go install github.com/kseg/kseg", "Go ≥"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s says %q: kseg is built from a clone, with the Go version go.mod names (%s)", p, bad, goVersion)
			}
		}
	}
}
