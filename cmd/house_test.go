package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxFuncLines is the longest a non-test function may be (issue 17): a
// function a reviewer can hold in their head.
const maxFuncLines = 120

// longFuncs are the functions still above maxFuncLines: the write
// planners, left for issue 17's phase 2b (they are being changed for
// write safety). The list can only shrink: an entry that no longer
// exceeds the limit, or no longer exists, fails the test until it is
// removed.
var longFuncs = map[string]bool{
	"barrier/plan.go planner.plan":                        true,
	"barrier/planfiles.go planner.planFiles":              true,
	"barrier/repair/repair.go planner.plan":               true,
	"barrier/mirror/mirror.go mirrorPlanner.files":        true,
	"barrier/mirror/mirror.go mirrorPlanner.copyAndFiles": true,
}

// moduleRoot is the module's directory, seen from cmd's tests.
const moduleRoot = ".."

// funcLengths is the length in lines (from func to the closing brace) of
// every function and method declared in the module's non-test .go files,
// testdata's programs included, keyed "path/file.go [Recv.]Name".
func funcLengths(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != moduleRoot {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(moduleRoot, path)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
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
					name = id.Name + "." + name
				}
			}
			out[filepath.ToSlash(rel)+" "+name] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFunctionsFitInAHead: no non-test function is longer than
// maxFuncLines, except the allow-listed write planners, each of which must
// still be that long (remove it from longFuncs once it is cut).
func TestFunctionsFitInAHead(t *testing.T) {
	lengths := funcLengths(t)
	if len(lengths) < 1000 {
		t.Fatalf("only %d functions found under %s", len(lengths), moduleRoot)
	}
	var long []string
	for fn, n := range lengths {
		if n > maxFuncLines && !longFuncs[fn] {
			long = append(long, fn+" ("+strconv.Itoa(n)+" lines)")
		}
	}
	slices.Sort(long)
	if len(long) > 0 {
		t.Errorf("%d functions are longer than %d lines; cut them into the steps their comments name:\n  %s",
			len(long), maxFuncLines, strings.Join(long, "\n  "))
	}
	for fn := range longFuncs {
		n, ok := lengths[fn]
		switch {
		case !ok:
			t.Errorf("longFuncs lists %s, which no longer exists: remove it", fn)
		case n <= maxFuncLines:
			t.Errorf("%s is %d lines now: remove it from longFuncs", fn, n)
		}
	}
}
