package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/testdata/house/sizes"
)

// maxFuncLines is the longest a non-test function may be (issue 17): a
// function a reviewer can hold in their head.
const maxFuncLines = 120

// moduleRoot is the module's directory, seen from cmd's tests.
const moduleRoot = ".."

// measureTree is testdata/house/sizes's measure of the module, taken once
// for the tests that hold the tree to its limits.
var measureTree = sync.OnceValues(func() (*sizes.Tree, error) { return sizes.Measure(moduleRoot) })

func measuredTree(t *testing.T) *sizes.Tree {
	t.Helper()
	tree, err := measureTree()
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// eachGoFile calls fn with the path, and the directory relative to the
// module root ("." for main.go's), of every .go file of the module — its
// _test.go files when tests is true, the others when it is not —
// testdata's programs included (hidden folders are skipped).
func eachGoFile(t *testing.T, tests bool, fn func(path, relDir string) error) {
	t.Helper()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != moduleRoot {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") != tests {
			return nil
		}
		rel, err := filepath.Rel(moduleRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		return fn(path, filepath.ToSlash(rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// funcLengths is the length in lines (from func to the closing brace) of
// every function and method declared in the module's non-test,
// non-generated .go files, keyed "path/file.go [Recv.]Name", as
// testdata/house measures them.
func funcLengths(t *testing.T) map[string]int {
	t.Helper()
	tree := measuredTree(t)
	out := map[string]int{}
	for _, fn := range tree.Funcs {
		out[fn.Key()] = fn.Lines
	}
	return out
}

// TestFunctionsFitInAHead: no non-test function is longer than
// maxFuncLines (the write planners, the last above it, are cut into their
// steps).
func TestFunctionsFitInAHead(t *testing.T) {
	lengths := funcLengths(t)
	if len(lengths) < 1000 {
		t.Fatalf("only %d functions found under %s", len(lengths), moduleRoot)
	}
	var long []string
	for fn, n := range lengths {
		if n > maxFuncLines {
			long = append(long, fn+" ("+strconv.Itoa(n)+" lines)")
		}
	}
	slices.Sort(long)
	if len(long) > 0 {
		t.Errorf("%d functions are longer than %d lines; cut them into the steps their comments name:\n  %s",
			len(long), maxFuncLines, strings.Join(long, "\n  "))
	}
}

// readmeLayout is the README's Layout block: each entry (a line that does
// not start with a space) is a folder ("cmd/") or main.go, the root
// package.
func readmeLayout(t *testing.T) []string {
	t.Helper()
	s := clitest.RepoFile(t, "README.md")
	i := strings.Index(s, "\n## Layout\n")
	if i < 0 {
		t.Fatal("README.md has no ## Layout section")
	}
	s = s[i:]
	start := strings.Index(s, "\n```\n")
	if start < 0 {
		t.Fatal("README.md's Layout section has no code block")
	}
	s = s[start+5:]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatal("README.md's Layout block is not closed")
	}
	var entries []string
	for _, line := range strings.Split(s[:end], "\n") {
		if line == "" || strings.HasPrefix(line, " ") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Errorf("README.md Layout: %q has no description", line)
		}
		entries = append(entries, f[0])
	}
	return entries
}

// goDirs are the module's directories that hold non-test .go files,
// relative to the root ("." for main.go's).
func goDirs(t *testing.T) map[string]bool {
	t.Helper()
	dirs := map[string]bool{}
	eachGoFile(t, false, func(_, relDir string) error {
		dirs[relDir] = true
		return nil
	})
	return dirs
}

// TestReadmeLayoutIsTheTree: the README's Layout block lists every
// directory that holds non-test .go files, one line each, and nothing
// that is not there. testdata/ is listed once for everything under it
// (its generator and benchmark programs); a listed folder without Go
// files (docs/, testdata/) must exist.
func TestReadmeLayoutIsTheTree(t *testing.T) {
	entries := readmeLayout(t)
	dirs := goDirs(t)
	if len(dirs) < 15 || len(entries) < 10 {
		t.Fatalf("%d Go directories, %d layout entries", len(dirs), len(entries))
	}
	listed := map[string]bool{}
	for _, e := range entries {
		d := strings.TrimSuffix(e, "/")
		if e == "main.go" {
			d = "."
		} else if !strings.HasSuffix(e, "/") {
			t.Errorf("README.md Layout: %q is neither main.go nor a folder", e)
			continue
		}
		if listed[d] {
			t.Errorf("README.md Layout lists %s twice", e)
		}
		listed[d] = true
		if st, err := os.Stat(filepath.Join(moduleRoot, d)); err != nil || (d != "." && !st.IsDir()) {
			t.Errorf("README.md Layout lists %s, which is not in the tree", e)
		} else if !dirs[d] && d != "docs" && d != "testdata" {
			t.Errorf("README.md Layout lists %s, which holds no Go package", e)
		}
	}
	var missing []string
	for d := range dirs {
		if listed[d] || strings.HasPrefix(d, "testdata/") && listed["testdata"] {
			continue
		}
		missing = append(missing, d+"/")
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("README.md Layout does not list %s", strings.Join(missing, ", "))
	}
}

// libraries are kseg's domain packages, the ones another tool could embed.
var libraries = []string{"decode", "decode/schema", "decode/mm2", "segment", "segment/finding", "segment/edit",
	"psm", "psm/cluster", "barrier", "barrier/mirror", "barrier/recovery", "barrier/mm2"}

// TestLibrariesTeach: every library package has a package comment with
// its place in the flow ("# Place in the flow") and a runnable Example,
// so that go doc teaches it.
func TestLibrariesTeach(t *testing.T) {
	for _, lib := range libraries {
		files, err := filepath.Glob(filepath.Join(moduleRoot, lib, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		doc, example := false, false
		for _, path := range files {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil && strings.Contains(f.Doc.Text(), "Place in the flow") && !strings.HasSuffix(path, "_test.go") {
				doc = true
			}
			if !strings.HasSuffix(path, "_test.go") {
				continue
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") && fd.Body != nil {
					for _, c := range f.Comments {
						if c.Pos() > fd.Body.Lbrace && c.End() < fd.Body.Rbrace && strings.Contains(c.Text(), "Output:") {
							example = true
						}
					}
				}
			}
		}
		if !doc {
			t.Errorf("%s: no package comment with its place in the flow (# Place in the flow)", lib)
		}
		if !example {
			t.Errorf("%s: no runnable Example (an Example with // Output:)", lib)
		}
	}
}
