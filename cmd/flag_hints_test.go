package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// flagRE is a command-line flag inside a message: "--align".
var flagRE = regexp.MustCompile(`(^|[\s(` + "`" + `])--[a-z]`)

// domainDirs are the library packages: they name no flag.
func isDomainDir(rel string) bool {
	for _, p := range []string{"decode", "segment", "psm", "barrier"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return !strings.HasSuffix(rel, "test") && !strings.Contains(rel, "test/")
		}
	}
	return false
}

// TestDomainErrorsNameNoFlag: no error a domain package makes names a
// command-line flag (issue 17 item 8): not a refusal (Refuse), an option
// error (OptionError), fmt.Errorf or errors.New, nor the text of an
// Error method. A refusal carries an edit.Remedy instead, and cmd names
// its flag (remedyHints).
func TestDomainErrorsNameNoFlag(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	eachGoFile(t, false, func(path, relDir string) error {
		if !isDomainDir(relDir) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		literals := func(n ast.Node, what string) {
			ast.Inspect(n, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					checked++
					if flagRE.MatchString(s) {
						t.Errorf("%s: %s names a flag: %q", fset.Position(lit.Pos()), what, s)
					}
				}
				return true
			})
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				if x.Name.Name == "Error" && x.Recv != nil && x.Body != nil {
					literals(x.Body, "an Error method")
				}
			case *ast.CallExpr:
				switch name := callName(x.Fun); name {
				case "Refuse", "edit.Refuse", "fmt.Errorf", "errors.New":
					for _, a := range x.Args {
						literals(a, name)
					}
				}
			case *ast.CompositeLit:
				if n := callName(x.Type); n == "OptionError" || n == "edit.OptionError" {
					literals(x, n)
				}
			}
			return true
		})
		return nil
	})
	if checked < 200 {
		t.Fatalf("only %d error strings checked", checked)
	}
}

// callName is "pkg.Name" or "Name" for an identifier or selector.
func callName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
	}
	return ""
}

// TestCLINamesTheFlag: where a domain error's way out is a flag, the CLI
// names it, in the words the domain packages used to (they name none now).
func TestCLINamesTheFlag(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	torn := clitest.Fixture(t, "broken/torn-tail/events-0", filepath.Join(root, "logs", "events-0"))
	a, b := filepath.Join(root, "a", "orders-0"), filepath.Join(root, "b", "orders-0")
	clitest.Fixture(t, "partitions/orders-0", a)
	clitest.Mkdir(t, filepath.Dir(b))
	bk := t.TempDir()
	for _, args := range [][]string{
		{"mirror", "--backup-dir", filepath.Join(bk, "1"), "--upto", "30", a, b},
		{"inject-barrier", "--backup-dir", filepath.Join(bk, "2"), "--timestamp", "1700000009000", b},
	} {
		if r := clitest.Run(args...); r.Code != ui.ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
	}
	// An interrupted repair of the torn partition, for inject-barrier to
	// find pending.
	pending := filepath.Join(root, "logs2", "events-0")
	clitest.InterruptedRepair(t, pending, filepath.Join(bk, "3"))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inject-barrier", "--dry-run", torn}, ui.ExitFindings, " (rerun with --repair-tail to cut it as broker recovery would)\n"},
		{[]string{"mirror", "--dry-run", a, b}, ui.ExitFindings, " (rerun with --align to truncate it there first, as failback does)\n"},
		{[]string{"repair", "--backup-dir", filepath.Join(root, "logs", "backup"), torn}, ui.ExitRefused, "a folder there that is not a partition; pass --backup-dir outside every Kafka log directory\n"},
		{[]string{"inject-barrier", "--dry-run", pending}, ui.ExitRefused, "rerun it to finish it, or roll it back with --rollback\n"},
	} {
		r := clitest.Run(tc.args...)
		if r.Code != tc.code || !strings.HasSuffix(r.Stderr, tc.want) {
			t.Errorf("kseg %s: exit %d, want %d ending %q:\n%s", strings.Join(tc.args, " "), r.Code, tc.code, tc.want, r.Stderr)
		}
	}
}
