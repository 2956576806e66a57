package cmd

// The static half of the read-only guarantee (see readonly_test.go): the
// kseg packages are type-checked from source, a call graph is built from
// every reference to a function or method, and no path may lead from a
// reading command's constructor to a call that can write to a file. This
// covers code the fixtures never reach (error paths, flags the dynamic
// test does not pass).
//
// Calls through interfaces (io.Writer.Write on the output streams) are not
// followed: their targets are only known at run time. Every kseg value
// that reaches a reading command through an interface would have to be
// built by code the graph does see, so a writer constructed on that path
// would still show up as a reference.

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/kseg/kseg"

// readOnlyCommands are the constructors of the commands that must never
// write ("package.Func", the package relative to the module), with the
// writers each may reach behind an explicit write flag.
var readOnlyCommands = map[string]map[string]string{
	"cmd/dump.NewCmd":         {},
	"cmd/kafkadumplog.NewCmd": {},
	"cmd/replaypsm.NewCmd": {
		// --write-snapshot PATH writes a new snapshot file, atomically and
		// never over an existing one without --force; never the partition's
		// own files unless PATH says so.
		modulePath + "/segment.WriteProducerSnapshotFile": "--write-snapshot",
	},
	"cmd/verifychain.NewCmd": {
		// A digest on stdin ("-") is spooled to a temporary file in $TMPDIR
		// (verify-chain reads a node more than once), removed at the end.
		modulePath + "/cmd/internal/chainnode.spoolStdin":  "-",
		modulePath + "/cmd/internal/chainnode.removeSpool": "-",
	},
	"cmd/explain.NewCmd": {},
	// kseg digest reads the partition; it writes only its digest: stdout,
	// or --out FILE through a temporary file renamed over it (--out DIR
	// for a log directory, created).
	"cmd/digest.NewCmd": {
		modulePath + "/cmd/digest.writeDigestOut": "--out",
		modulePath + "/cmd/digest.makeDigestDir":  "--out",
	},
	"cmd/groups.NewCmd":   {},
	"cmd/txns.NewCmd":     {},
	"cmd/metadata.NewCmd": {},
	"cmd/status.NewCmd":   {},
}

// writeAllowedFiles are the only non-test files of decode/ and segment/
// that may call a write primitive: the atomic temp-file protocol and the
// broker-faithful partition writer (Appender, used by generators, tests and
// writing commands; that no reading command reaches them is the
// reachability check's job). New writing code in these packages belongs in
// a file listed here, added deliberately.
var writeAllowedFiles = []string{"segment/atomic.go", "segment/writer.go", "segment/resume.go"}

// listedPackage is the part of `go list -json` the check uses.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

// loadPackages type-checks the kseg packages cmd depends on from source,
// importing everything else from the export data `go list -export` points
// to (the build cache, filled by building this test).
func loadPackages(t *testing.T) (*token.FileSet, []*checkedPackage) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list packages: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-export", "-json", ".").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var listed []listedPackage
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, p) // -deps lists dependencies first
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f := exports[path]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	}).(types.ImporterFrom)
	own := map[string]*types.Package{}
	imp := importerFunc(func(path, dir string, mode types.ImportMode) (*types.Package, error) {
		if p, ok := own[path]; ok {
			return p, nil
		}
		return gc.ImportFrom(path, dir, mode)
	})
	var pkgs []*checkedPackage
	for _, lp := range listed {
		if lp.ImportPath != modulePath && !strings.HasPrefix(lp.ImportPath, modulePath+"/") {
			continue
		}
		cp := &checkedPackage{path: lp.ImportPath, dir: lp.Dir}
		for _, name := range lp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(lp.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			cp.files = append(cp.files, f)
		}
		cp.info = &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		pkg, err := conf.Check(lp.ImportPath, fset, cp.files, cp.info)
		if err != nil {
			t.Fatalf("type-checking %s: %v", lp.ImportPath, err)
		}
		cp.pkg = pkg
		own[lp.ImportPath] = pkg
		pkgs = append(pkgs, cp)
	}
	return fset, pkgs
}

type importerFunc func(path, dir string, mode types.ImportMode) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path, "", 0) }
func (f importerFunc) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	return f(path, dir, mode)
}

type checkedPackage struct {
	path  string
	dir   string
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
}

// writeCall is a call site of a write primitive.
type writeCall struct {
	pos  token.Position
	what string
}

// callGraph maps each kseg function to the functions it references and
// the write primitives it calls.
type callGraph struct {
	edges  map[*types.Func][]*types.Func
	writes map[*types.Func][]writeCall
}

// Write primitives: functions that create, remove, rename, truncate or
// change files or their metadata, by package and name. os.OpenFile,
// syscall/unix Open and Mmap are judged by their flags (isWriteCall).
var writePrimitives = map[string][]string{
	"os": {"Create", "CreateTemp", "WriteFile", "Mkdir", "MkdirAll", "MkdirTemp", "Remove", "RemoveAll",
		"Rename", "Chmod", "Chown", "Lchown", "Chtimes", "Truncate", "Link", "Symlink", "OpenFile", "NewFile"},
	"os.File":   {"Write", "WriteAt", "WriteString", "Truncate", "Chmod", "Chown", "ReadFrom"},
	"io/ioutil": {"WriteFile", "TempFile", "TempDir"},
	"syscall": {"Open", "Openat", "Creat", "Mkdir", "Mkdirat", "Unlink", "Unlinkat", "Rmdir", "Rename", "Renameat",
		"Truncate", "Ftruncate", "Chmod", "Fchmod", "Fchmodat", "Chown", "Fchown", "Lchown", "Fchownat", "Utimes",
		"UtimesNano", "Futimes", "Futimesat", "Link", "Linkat", "Symlink", "Symlinkat", "Fallocate", "Pwrite", "Write", "Mmap"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2", "Creat", "Mkdir", "Mkdirat", "Unlink", "Unlinkat", "Rmdir",
		"Rename", "Renameat", "Renameat2", "Truncate", "Ftruncate", "Chmod", "Fchmod", "Fchmodat", "Chown", "Fchown",
		"Lchown", "Fchownat", "Utimes", "UtimesNano", "UtimesNanoAt", "Futimes", "Futimesat", "Link", "Linkat",
		"Symlink", "Symlinkat", "Fallocate", "Pwrite", "Pwritev", "Write", "Writev", "Mmap", "Msync", "CopyFileRange"},
}

// primitiveName returns "pkg.Name" (or "os.File.Name") when fn is a write
// primitive candidate.
func primitiveName(fn *types.Func) (string, bool) {
	if fn.Pkg() == nil {
		return "", false
	}
	key := fn.Pkg().Path()
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		rt := sig.Recv().Type()
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		n, ok := rt.(*types.Named)
		if !ok {
			return "", false
		}
		key += "." + n.Obj().Name()
	}
	if slices.Contains(writePrimitives[key], fn.Name()) {
		return key + "." + fn.Name(), true
	}
	return "", false
}

// isWriteCall judges a call of a primitive by its arguments where the
// primitive can also read: os.OpenFile, syscall/unix Open/Openat with a
// constant read-only flag, Mmap with a constant protection without
// PROT_WRITE. Anything not constant counts as a write.
func isWriteCall(info *types.Info, name string, call *ast.CallExpr) bool {
	arg := func(i int) (int64, bool) {
		if call == nil || i >= len(call.Args) {
			return 0, false
		}
		tv, ok := info.Types[call.Args[i]]
		if !ok || tv.Value == nil {
			return 0, false
		}
		return constant.Int64Val(constant.ToInt(tv.Value))
	}
	const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND
	switch name {
	case "os.OpenFile", "syscall.Open", "golang.org/x/sys/unix.Open":
		flag, ok := arg(1)
		return !ok || flag&int64(writeFlags) != 0
	case "syscall.Openat", "golang.org/x/sys/unix.Openat":
		flag, ok := arg(2)
		return !ok || flag&int64(writeFlags) != 0
	case "syscall.Mmap", "golang.org/x/sys/unix.Mmap":
		const protWrite = 0x2 // PROT_WRITE on every Unix
		prot, ok := arg(3)
		return !ok || prot&protWrite != 0
	}
	return true
}

// buildCallGraph records, for every function and method declared in pkgs,
// the kseg functions it references (calls, method values, function
// values; closures count for their enclosing declaration) and the write
// primitives it calls.
func buildCallGraph(fset *token.FileSet, pkgs []*checkedPackage) *callGraph {
	g := &callGraph{edges: map[*types.Func][]*types.Func{}, writes: map[*types.Func][]writeCall{}}
	for _, cp := range pkgs {
		for _, f := range cp.files {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				self, _ := cp.info.Defs[fd.Name].(*types.Func)
				if self == nil {
					continue
				}
				calls := map[*ast.Ident]*ast.CallExpr{}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						switch fun := ast.Unparen(call.Fun).(type) {
						case *ast.Ident:
							calls[fun] = call
						case *ast.SelectorExpr:
							calls[fun.Sel] = call
						case *ast.IndexExpr: // generic instantiation
							if id, ok := fun.X.(*ast.Ident); ok {
								calls[id] = call
							}
						}
					}
					id, ok := n.(*ast.Ident)
					if !ok {
						return true
					}
					fn, ok := cp.info.Uses[id].(*types.Func)
					if !ok {
						return true
					}
					fn = fn.Origin()
					if name, ok := primitiveName(fn); ok {
						if isWriteCall(cp.info, name, calls[id]) {
							g.writes[self] = append(g.writes[self], writeCall{fset.Position(id.Pos()), name})
						}
						return true
					}
					if fn.Pkg() != nil && strings.HasPrefix(fn.Pkg().Path(), modulePath) {
						g.edges[self] = append(g.edges[self], fn)
					}
					return true
				})
			}
		}
	}
	return g
}

// TestReadOnlyCommandsStatic: nothing a reading command can reach calls a
// write primitive (except the flag-guarded writers listed in
// readOnlyCommands), and only the allowed files of decode/ and segment/
// call write primitives at all.
func TestReadOnlyCommandsStatic(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("type-checks the module; skipped with -short")
	}
	fset, pkgs := loadPackages(t)
	g := buildCallGraph(fset, pkgs)

	byPath := map[string]*checkedPackage{}
	for _, cp := range pkgs {
		byPath[cp.path] = cp
	}
	checked := 0
	for ctor, allowed := range readOnlyCommands {
		pkg, name, _ := strings.Cut(ctor, ".")
		cp := byPath[modulePath+"/"+pkg]
		if cp == nil {
			t.Errorf("%s: package %s is not loaded (moved? update readOnlyCommands)", ctor, pkg)
			continue
		}
		root, ok := cp.pkg.Scope().Lookup(name).(*types.Func)
		if !ok {
			t.Errorf("%s does not exist: its command is not checked (moved or renamed? update readOnlyCommands)", ctor)
			continue
		}
		checked++
		// Breadth-first, remembering how each function was reached.
		parent := map[*types.Func]*types.Func{root: nil}
		queue := []*types.Func{root}
		for len(queue) > 0 {
			fn := queue[0]
			queue = queue[1:]
			for _, w := range g.writes[fn] {
				var path []string
				for p := fn; p != nil; p = parent[p] {
					path = append(path, p.FullName())
				}
				slices.Reverse(path)
				t.Errorf("%s can write: %s calls %s at %s\n  via %s", ctor, fn.FullName(), w.what, w.pos, strings.Join(path, "\n   -> "))
			}
			for _, next := range g.edges[fn] {
				if _, seen := parent[next]; seen {
					continue
				}
				if _, ok := allowed[next.FullName()]; ok {
					continue
				}
				parent[next] = fn
				queue = append(queue, next)
			}
		}
		if len(parent) < 5 {
			t.Errorf("%s reaches only %d functions: the call graph is broken", ctor, len(parent))
		}
	}
	if checked == 0 {
		t.Fatal("no reading command found")
	}

	// decode/ and segment/ write only in the allowed files.
	var stray []string
	for _, cp := range pkgs {
		if cp.path != modulePath+"/decode" && cp.path != modulePath+"/segment" {
			continue
		}
		for fn, ws := range g.writes {
			if fn.Pkg() != cp.pkg {
				continue
			}
			for _, w := range ws {
				rel, _ := filepath.Rel(filepath.Dir(cp.dir), w.pos.Filename)
				if !slices.Contains(writeAllowedFiles, filepath.ToSlash(rel)) {
					stray = append(stray, fmt.Sprintf("%s: %s calls %s", w.pos, fn.FullName(), w.what))
				}
			}
		}
	}
	sort.Strings(stray)
	for _, s := range stray {
		t.Errorf("write primitive outside %v: %s (decode never writes; segment writes only in designated writer files: if this is one, add it to writeAllowedFiles)", writeAllowedFiles, s)
	}
}
