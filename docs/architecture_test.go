package docs

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite architecture.md's arrows from the tree")

const (
	module       = "github.com/kseg/kseg"
	moduleRoot   = ".."
	architecture = "architecture.md"
	arrowsBegin  = "<!-- arrows:begin -->\n```text\n"
	arrowsEnd    = "```\n<!-- arrows:end -->"
	planned      = "(planned)"
)

// floors ranks the top-level directories: a package imports only packages
// of its own floor or a lower one. testdata's programs sit on top.
var floors = map[string]int{"decode": 0, "docs": 0, "segment": 1, "psm": 2, "barrier": 3, "cmd": 4, ".": 5, "testdata": 6}

// TestArchitecture holds docs/architecture.md to the tree: every package
// of the module is listed in its arrows block with exactly the module
// packages its non-test files import (a line marked "(planned)" may name a
// package that does not exist yet), every listed package has a paragraph
// (a line starting "**`pkg`**"), and every import runs down the floors.
// -update rewrites the block's lines from the tree.
func TestArchitecture(t *testing.T) {
	tree := moduleImports(t)
	b, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := strings.Index(doc, arrowsBegin), strings.Index(doc, arrowsEnd)
	if start < 0 || end < start {
		t.Fatalf("%s: no arrows block (%q … %q)", architecture, arrowsBegin, arrowsEnd)
	}
	listed, order := parseArrows(t, doc[start+len(arrowsBegin):end])
	if *update {
		block := renderArrows(tree, listed, order)
		if err := os.WriteFile(architecture, []byte(doc[:start+len(arrowsBegin)]+block+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		listed, order = parseArrows(t, block)
	}
	for pkg, imports := range tree {
		a, ok := listed[pkg]
		switch {
		case !ok:
			t.Errorf("%s is not in %s's arrows; its line (-update writes it): %s", pkg, architecture, arrowLine(pkg, imports, false))
		case !slices.Equal(a.imports, imports):
			t.Errorf("%s's arrows in %s are %v, the tree's %v; its line (-update writes it): %s", pkg, architecture, a.imports, imports, arrowLine(pkg, imports, false))
		}
		for _, imp := range imports {
			if floor(imp) > floor(pkg) {
				t.Errorf("%s imports %s, a floor above it: arrows run down (%s)", pkg, imp, architecture)
			}
		}
	}
	for _, pkg := range order {
		if _, ok := tree[pkg]; !ok && !listed[pkg].planned {
			t.Errorf("%s is in %s's arrows but not in the tree (mark it %s if it is coming)", pkg, architecture, planned)
		}
		if !strings.Contains(doc, "\n**`"+pkg+"`**") && !strings.Contains(doc, " **`"+pkg+"`**") {
			t.Errorf("%s has no paragraph in %s (a line or sentence starting **`%s`**)", pkg, architecture, pkg)
		}
	}
}

type arrow struct {
	imports []string
	planned bool
}

// parseArrows reads the block's lines: a package, "(planned)" or not, then
// its imports or "—".
func parseArrows(t *testing.T, block string) (map[string]arrow, []string) {
	t.Helper()
	listed := map[string]arrow{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("%s: arrows line %q has no imports (\"—\" for none)", architecture, line)
		}
		var a arrow
		if f[1] == planned {
			a.planned, f = true, append(f[:1], f[2:]...)
		}
		if len(f) > 1 && f[1] != "—" {
			a.imports = f[1:]
		}
		if _, dup := listed[f[0]]; dup {
			t.Fatalf("%s: %s is listed twice", architecture, f[0])
		}
		listed[f[0]] = a
		order = append(order, f[0])
	}
	return listed, order
}

// renderArrows writes the block from the tree, keeping the order of the
// packages already listed (and planned packages not in the tree yet) and
// adding the others at the end.
func renderArrows(tree map[string][]string, listed map[string]arrow, order []string) string {
	var sb strings.Builder
	for _, pkg := range order {
		if imports, ok := tree[pkg]; ok {
			sb.WriteString(arrowLine(pkg, imports, false) + "\n")
		} else if a := listed[pkg]; a.planned {
			sb.WriteString(arrowLine(pkg, a.imports, true) + "\n")
		}
	}
	var added []string
	for pkg := range tree {
		if _, ok := listed[pkg]; !ok {
			added = append(added, pkg)
		}
	}
	slices.Sort(added)
	for _, pkg := range added {
		sb.WriteString(arrowLine(pkg, tree[pkg], false) + "\n")
	}
	return sb.String()
}

func arrowLine(pkg string, imports []string, isPlanned bool) string {
	rest := "—"
	if len(imports) > 0 {
		rest = strings.Join(imports, " ")
	}
	if isPlanned {
		rest = planned + " " + rest
	}
	return fmt.Sprintf("%-28s %s", pkg, rest)
}

// floor is the rank of pkg's top-level directory.
func floor(pkg string) int {
	top, _, _ := strings.Cut(pkg, "/")
	if f, ok := floors[top]; ok {
		return f
	}
	return floors["."]
}

// moduleImports maps every package directory of the module (relative,
// "." for main.go's) to the module packages its non-test .go files
// import, sorted. Build constraints are ignored: a file for one platform
// counts like the others.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	tree := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != moduleRoot && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(moduleRoot, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := tree[rel]; !ok {
			tree[rel] = nil
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == module {
				p = module + "/."
			}
			if rest, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(tree[rel], rest) {
				tree[rel] = append(tree[rel], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, imports := range tree {
		slices.Sort(imports)
	}
	return tree
}
