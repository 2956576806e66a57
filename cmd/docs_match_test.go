package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/docs"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
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

// TestSkipMessagesNameRepositoryPaths: a test that skips for want of the
// shared real fixtures names them as a reader of the repository finds
// them, "../shared/fixtures/real" — not as seen from the package directory
// ("../../shared/…", which is what a %s of the path it stats prints), and
// never by an absolute path of one machine.
func TestSkipMessagesNameRepositoryPaths(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	// Tests skip, and so do the helper packages they share (segtest's
	// realdata, decodetest, clitest): walk both kinds of file.
	skips := func(path, relDir string) error {
		if slices.Contains(strings.Split(relDir, "/"), "testdata") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Skip" && sel.Sel.Name != "Skipf") {
				return true
			}
			text := string(src[fset.Position(call.Pos()).Offset:fset.Position(call.End()).Offset])
			about := regexp.MustCompile(`(?i)shared|fixtures`).MatchString(text)
			for _, a := range call.Args {
				if id, ok := a.(*ast.Ident); ok && regexp.MustCompile(`(?i)root|dir`).MatchString(id.Name) {
					about = true // a path variable: prints the package-relative path
				}
			}
			if !about {
				return true
			}
			checked++
			if !namesRepositoryPath(call) {
				t.Errorf("%s: %s: name the fixtures as \"../shared/fixtures/real\", in a literal", fset.Position(call.Pos()), text)
			}
			return true
		})
		return nil
	}
	eachGoFile(t, true, skips)
	eachGoFile(t, false, skips)
	// Most skips live in the shared helpers now (realdata.RootOrSkip,
	// clitest, kafkaoracle), so a handful is what a working walk finds.
	if checked < 3 {
		t.Fatalf("only %d skips about the shared fixtures found: is the walk broken?", checked)
	}
}

// namesRepositoryPath: a skip's message names the shared material as a
// reader of the repository finds it — the fixtures in one literal
// ("../shared/fixtures/real"), or a constant of the same file that holds
// such a path (kafkaoracle's OracleDir, "../shared/kafka-oracle") — never
// a package-relative ("../../") or one machine's absolute path.
func namesRepositoryPath(call *ast.CallExpr) bool {
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || strings.Contains(lit.Value, "../../") || strings.Contains(lit.Value, "/work") {
		return false
	}
	if len(call.Args) == 1 {
		return strings.Contains(lit.Value, "../shared/fixtures/real")
	}
	for _, a := range call.Args[1:] {
		id, ok := a.(*ast.Ident)
		if !ok || id.Obj == nil || id.Obj.Kind != ast.Con {
			return false
		}
		spec, ok := id.Obj.Decl.(*ast.ValueSpec)
		if !ok || len(spec.Values) != 1 {
			return false
		}
		v, ok := spec.Values[0].(*ast.BasicLit)
		if !ok || !strings.HasPrefix(v.Value, `"../shared/`) || strings.Contains(v.Value, "../../") {
			return false
		}
	}
	return true
}

// fuzzTargets maps every Fuzz* function of the module to its package
// directory ("./decode").
func fuzzTargets(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	eachGoFile(t, true, func(path, relDir string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && regexp.MustCompile(`^Fuzz[A-Z0-9]`).MatchString(fn.Name.Name) {
				out[fn.Name.Name] = "./" + relDir
			}
		}
		return nil
	})
	return out
}

// TestFuzzingDocListsEveryTarget: docs/fuzzing.md's table names every fuzz
// target there is and none that is not ("`FuzzDecompressGzip`, `…Snappy`"
// is FuzzDecompressSnappy), and testdata/bench/fuzz.sh fuzzes every package that
// has one (it used to leave psm out).
func TestFuzzingDocListsEveryTarget(t *testing.T) {
	targets := fuzzTargets(t)
	if len(targets) < 10 {
		t.Fatalf("%d fuzz targets found: is the walk broken?", len(targets))
	}
	doc := clitest.RepoFile(t, "docs/fuzzing.md")
	listed := map[string]bool{}
	name := regexp.MustCompile("`(Fuzz[A-Za-z0-9]+|…[A-Za-z0-9]+)`")
	// The targets table: from its "| target | package |" header to the
	// first line that is not a table row.
	table := doc
	if i := strings.Index(table, "| target | package |"); i >= 0 {
		table = table[i:]
	} else {
		t.Fatal("docs/fuzzing.md has no '| target | package |' table")
	}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `Fuzz") || len(cells) < 3 {
			continue
		}
		prefix := ""
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			n := m[1]
			if strings.HasPrefix(n, "…") {
				n = prefix + strings.TrimPrefix(n, "…")
			} else {
				prefix = regexp.MustCompile(`[A-Z][a-z0-9]*$`).ReplaceAllString(n, "")
			}
			listed[n] = true
			if pkg, ok := targets[n]; !ok {
				t.Errorf("docs/fuzzing.md lists %s, which does not exist", n)
			} else if "./"+strings.TrimSpace(cells[2]) != pkg {
				t.Errorf("docs/fuzzing.md puts %s in %s; it is in %s", n, strings.TrimSpace(cells[2]), pkg)
			}
		}
	}
	pkgs := map[string]bool{}
	for n, pkg := range targets {
		pkgs[pkg] = true
		if !listed[n] {
			t.Errorf("docs/fuzzing.md does not list %s (%s)", n, pkg)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to ask testdata/bench/fuzz.sh for its packages")
	}
	cmd := exec.Command("bash", filepath.Join("testdata", "bench", "fuzz.sh"), "--packages")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("testdata/bench/fuzz.sh --packages: %v", err)
	}
	got := strings.Fields(string(out))
	for pkg := range pkgs {
		if !slices.Contains(got, pkg) {
			t.Errorf("testdata/bench/fuzz.sh does not fuzz %s (it fuzzes %v)", pkg, got)
		}
	}
}

// TestDocsPointIntoTheRepository: README.md and docs/*.md send a reader of
// a fresh clone only to what the clone has: no ../shared/spec/… file, and
// the shared fixtures only in a paragraph that says they may be absent;
// every relative link names a file that exists, and a #fragment a heading
// of it.
func TestDocsPointIntoTheRepository(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	docs = append(docs, filepath.Join("..", "README.md"))
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	specPath := regexp.MustCompile("(\\.\\./shared/spec|`spec/)")
	for _, doc := range docs {
		b := testkit.ReadFile(t, doc)
		for _, para := range strings.Split(string(b), "\n\n") {
			if specPath.MatchString(para) {
				t.Errorf("%s points at a spec file a clone does not have:\n%s", doc, para)
			}
			if strings.Contains(para, "../shared/") && (!strings.Contains(para, "../shared/fixtures/real") ||
				!regexp.MustCompile(`present|absent|skip`).MatchString(para)) {
				t.Errorf("%s names ../shared without saying a clone may not have it:\n%s", doc, para)
			}
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, frag := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file := doc
			if target != "" {
				file = filepath.Join(filepath.Dir(doc), target)
			}
			tb, err := os.ReadFile(file)
			if err != nil {
				if st, serr := os.Stat(file); serr == nil && st.IsDir() {
					continue
				}
				t.Errorf("%s links to %s, which does not exist", doc, target)
				continue
			}
			if frag != "" && !slices.Contains(headingSlugs(string(tb)), frag) {
				t.Errorf("%s links to %s#%s: no such heading", doc, target, frag)
			}
		}
	}
}

// headingSlugs are the anchors GitHub gives a Markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens.
func headingSlugs(md string) []string {
	var out []string
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		out = append(out, strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-"))
	}
	return out
}
