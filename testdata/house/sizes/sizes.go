// Package sizes measures the module's Go code as issue 26 sets its limits:
// the lines of every file, of every function (go/ast, from `func` to the
// closing brace) and of every package, test files and generated files
// (a `// Code generated ... DO NOT EDIT.` line, go/ast.IsGenerated) told
// apart. testdata/house prints the measures; cmd's house size test holds
// the tree to the limits below.
package sizes

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The limits of issue 26 for non-test, non-generated Go code.
const (
	MaxFileLines    = 600  // a file
	MaxFuncLines    = 80   // a function or method
	MaxCmdPkgLines  = 2500 // a package under cmd/
	MaxCmdRootLines = 1500 // the root package cmd, which only assembles the tree
)

// File is one .go file of the module.
type File struct {
	Path      string // slash-separated, relative to the module root
	Dir       string // its package's directory, "." for the root
	Lines     int
	Test      bool // a _test.go file
	Generated bool // it carries a `// Code generated ... DO NOT EDIT.` line
}

// Counted says whether the limits apply to f: not a test, not generated.
func (f File) Counted() bool { return !f.Test && !f.Generated }

// Func is one function or method declared in a counted file.
type Func struct {
	File  string // File.Path
	Name  string // [Recv.]Name
	Line  int    // where it starts
	Lines int    // from `func` to the closing brace
}

// Key names fn uniquely enough for an allow-list: "dir/file.go Recv.Name".
func (fn Func) Key() string { return fn.File + " " + fn.Name }

// Tree is the measure of a module.
type Tree struct {
	Files []File
	Funcs []Func
}

// Measure walks the module at root: every .go file outside hidden folders
// (testdata's programs included), longest first.
func Measure(root string) (*Tree, error) {
	t := &Tree{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return t.add(fset, p, filepath.ToSlash(rel))
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(t.Files, func(a, b File) int { return cmp.Or(b.Lines-a.Lines, strings.Compare(a.Path, b.Path)) })
	slices.SortStableFunc(t.Funcs, func(a, b Func) int { return cmp.Or(b.Lines-a.Lines, strings.Compare(a.Key(), b.Key())) })
	return t, nil
}

// add parses the file at p (rel from the module root) into t.
func (t *Tree) add(fset *token.FileSet, p, rel string) error {
	src, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	file := File{Path: rel, Dir: path.Dir(rel), Lines: fset.File(f.Pos()).LineCount(),
		Test: strings.HasSuffix(rel, "_test.go"), Generated: ast.IsGenerated(f)}
	t.Files = append(t.Files, file)
	if !file.Counted() {
		return nil
	}
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
			start := fset.Position(fd.Pos()).Line
			t.Funcs = append(t.Funcs, Func{File: rel, Name: FuncName(fd), Line: start,
				Lines: fset.Position(fd.End()).Line - start + 1})
		}
	}
	return nil
}

// FuncName is fd's name as the size report gives it: "Name", or
// "Recv.Name" for a method (the receiver's type without its pointer or
// type parameters). cmd's house tests name functions the same way.
func FuncName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// Package is the counted lines of one package's directory.
type Package struct {
	Dir   string
	Files int
	Lines int // counted files only
	Tests int // lines of its _test.go files
}

// Packages sums the files of each directory, largest first.
func (t *Tree) Packages() []Package {
	by := map[string]*Package{}
	for _, f := range t.Files {
		p := by[f.Dir]
		if p == nil {
			p = &Package{Dir: f.Dir}
			by[f.Dir] = p
		}
		switch {
		case f.Test:
			p.Tests += f.Lines
		case !f.Generated:
			p.Files++
			p.Lines += f.Lines
		}
	}
	var out []Package
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Package) int { return cmp.Or(b.Lines-a.Lines, strings.Compare(a.Dir, b.Dir)) })
	return out
}

// Limit is the most lines a package may hold, 0 for no limit: the root
// package cmd MaxCmdRootLines, any other package under cmd/
// MaxCmdPkgLines.
func (p Package) Limit() int {
	switch {
	case p.Dir == "cmd":
		return MaxCmdRootLines
	case strings.HasPrefix(p.Dir, "cmd/"):
		return MaxCmdPkgLines
	}
	return 0
}

// Over is what exceeds a limit, keyed as an allow-list names it: a file's
// path, a function's Key, a package's directory followed by "/"; the value
// is its size and its limit.
func (t *Tree) Over() map[string][2]int {
	over := map[string][2]int{}
	for _, f := range t.Files {
		if f.Counted() && f.Lines > MaxFileLines {
			over[f.Path] = [2]int{f.Lines, MaxFileLines}
		}
	}
	for _, fn := range t.Funcs {
		if fn.Lines > MaxFuncLines {
			over[fn.Key()] = [2]int{fn.Lines, MaxFuncLines}
		}
	}
	for _, p := range t.Packages() {
		if l := p.Limit(); l > 0 && p.Lines > l {
			over[p.Dir+"/"] = [2]int{p.Lines, l}
		}
	}
	return over
}
