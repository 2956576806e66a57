package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/segment/finding"
)

// codeWords collects, from the sources, the words a user can meet that are
// not finding kinds: the barrier's shape problem codes (Problem* in
// barrier/batch.go, the codes of malformed-barrier) and the refusal
// reasons (Refuse* constants, the edit engine's in segment/edit and the
// tools'). Finding kinds come from the registry (segment/finding), where
// every kind is minted.
func codeWords(t *testing.T) map[string]string {
	t.Helper()
	words := map[string]string{}
	for _, dir := range []string{filepath.Join("..", "barrier"), filepath.Join("..", "barrier", "mirror"),
		filepath.Join("..", "barrier", "recovery"), filepath.Join("..", "segment", "edit")} {
		for base, f := range sourceFiles(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					bl, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || bl.Kind != token.STRING {
						continue
					}
					if strings.HasPrefix(id.Name, "Problem") && base == "batch.go" || strings.HasPrefix(id.Name, "Refuse") {
						v, _ := strconv.Unquote(bl.Value)
						words[v] = base
					}
				}
				return true
			})
		}
	}
	return words
}

// sourceFiles parses the non-test .go files of the package in dir, keyed
// by file name.
func sourceFiles(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(path)] = f
	}
	return files
}

// TestTroubleshootingCoversEveryKind: docs/troubleshooting.md names every
// finding kind of the registry, every barrier problem code and every
// refusal reason, in backticks; and where a row gives one kind one
// severity, it is the registry's.
func TestTroubleshootingCoversEveryKind(t *testing.T) {
	doc := clitest.RepoFile(t, "docs/troubleshooting.md")
	words := codeWords(t)
	for _, must := range []string{"broker-running", "framing", "extra-records", "topic-id", "offset-overflow", "bad-journal"} {
		if _, ok := words[must]; !ok {
			t.Fatalf("the source scan missed %q: %v", must, words)
		}
	}
	for _, k := range finding.Kinds() {
		words[k.String()] = "segment/finding"
	}
	if len(words) < len(finding.Kinds())+30 {
		t.Fatalf("%d words", len(words))
	}
	var missing []string
	for w, where := range words {
		if !strings.Contains(doc, "`"+w+"`") {
			missing = append(missing, w+" ("+where+")")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/troubleshooting.md does not mention %d words: %s", len(missing), strings.Join(missing, ", "))
	}
	// | `kind` | severity | …
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (error|warning|info) \\|")
	rows := 0
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		k, ok := finding.Lookup(m[1])
		if !ok {
			continue // a refusal reason, a verify-chain status
		}
		rows++
		if k.Severity().String() != m[2] {
			t.Errorf("docs/troubleshooting.md: `%s` is %s, the registry says %s", m[1], m[2], k.Severity())
		}
	}
	if rows < 50 {
		t.Errorf("only %d one-kind rows with a severity", rows)
	}
}

// TestGoldenSeveritiesAreTheRegistrys: every finding the golden files
// record — a JSON object with "kind" and "severity", or a text line
// "SEVERITY kind …" — gives its kind the registry's severity: no kind is
// reported with two severities, by any command, in any output.
func TestGoldenSeveritiesAreTheRegistrys(t *testing.T) {
	jsonPair := regexp.MustCompile(`"kind":"([a-z-]+)","severity":"(error|warning|info)"|"severity":"(error|warning|info)","kind":"([a-z-]+)"`)
	textPair := regexp.MustCompile(`(?m)^\s*(ERROR|WARNING|WARN|INFO|error|warning|info) ([a-z]+(?:-[a-z]+)*) `)
	seen, files := 0, 0
	check := func(path, kind, sev string) {
		k, ok := finding.Lookup(kind)
		if !ok {
			t.Errorf("%s: %s %q is no kind of the registry", path, sev, kind)
			return
		}
		if sev == "warn" {
			sev = "warning"
		}
		seen++
		if k.Severity().String() != sev {
			t.Errorf("%s: %s reported as %s; the registry says %s", path, kind, sev, k.Severity())
		}
	}
	err := filepath.WalkDir(clitest.Testdata("golden"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, m := range jsonPair.FindAllStringSubmatch(string(b), -1) {
			if m[1] != "" {
				check(path, m[1], m[2])
			} else {
				check(path, m[4], m[3])
			}
		}
		for _, m := range textPair.FindAllStringSubmatch(string(b), -1) {
			check(path, m[2], strings.ToLower(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 || seen < 50 {
		t.Fatalf("%d golden files, %d findings: the scan finds nothing", files, seen)
	}
}

// TestFailureModesDocumented: every way the edit engine reports that a
// write did not complete is a typed error of segment/edit (RefusalError,
// UndoneError, HalfAppliedError, FaultError …). docs/troubleshooting.md
// and docs/failover.md name each as `edit.<Type>` and say what the
// partition is then and what to do, so that an engine error added without
// its way out fails here.
func TestFailureModesDocumented(t *testing.T) {
	dir := filepath.Join("..", "segment", "edit")
	var types []string
	for _, f := range sourceFiles(t, dir) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Error") {
					types = append(types, ts.Name.Name)
				}
			}
		}
	}
	if len(types) < 3 {
		t.Fatalf("found only %v in %s", types, dir)
	}
	for _, doc := range []string{"troubleshooting.md", "failover.md"} {
		text := clitest.RepoFile(t, "docs/"+doc)
		for _, ty := range types {
			if !strings.Contains(text, "`edit."+ty+"`") {
				t.Errorf("docs/%s does not describe the failure `edit.%s` (what the partition is then, what to do)", doc, ty)
			}
		}
	}
}
