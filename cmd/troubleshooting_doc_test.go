package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// findingKinds collects, from the sources of the packages that report
// findings, every kind a user can meet:
//
//   - cmd: the Kind of every finding literal and the kind argument of
//     reportCorrupt;
//   - psm: the Kind* constants (replay-psm anomalies);
//   - psm/broker: the Kind* constants of the whole-broker views (groups,
//     txns, metadata), and any literal Kind of a Finding there;
//   - barrier and its rooms: the Finding* (verify-chain, repair), Problem*
//     (barrier shape) and Refuse* (refusal reasons) constants (the edit
//     engine's too, in segment/edit), and the kinds repair reports (find
//     calls);
//   - segment: the kinds of the cuts broker recovery makes (CutKind's
//     String), which dump, repair and inject-barrier report.
func findingKinds(t *testing.T) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	add := func(where, v string) {
		if v != "" {
			kinds[v] = where
		}
	}
	str := func(e ast.Expr) string {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			v, _ := strconv.Unquote(bl.Value)
			return v
		}
		return ""
	}
	brokerDir := filepath.Join("..", "psm", "broker")
	for _, dir := range []string{".", filepath.Join("..", "psm"), brokerDir, filepath.Join("..", "barrier"), filepath.Join("..", "barrier", "mirror"),
		filepath.Join("..", "barrier", "repair"), filepath.Join("..", "segment"), filepath.Join("..", "segment", "edit")} {
		pkgFiles, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range pkgFiles {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(path)
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Name.Name != "String" || n.Recv == nil || base != "recover.go" {
						return true
					}
					ast.Inspect(n.Body, func(m ast.Node) bool {
						if r, ok := m.(*ast.ReturnStmt); ok && len(r.Results) == 1 && str(r.Results[0]) != "none" {
							add(base, str(r.Results[0]))
						}
						return true
					})
				case *ast.CompositeLit:
					id, ok := n.Type.(*ast.Ident)
					if !ok || !(id.Name == "finding" && dir == "." || id.Name == "Finding" && dir == brokerDir) {
						return true
					}
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Kind" {
								add(base, str(kv.Value))
							}
						}
					}
				case *ast.CallExpr:
					name := ""
					switch fn := n.Fun.(type) {
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					case *ast.Ident:
						name = fn.Name
					}
					switch {
					case name == "reportCorrupt" && len(n.Args) > 0:
						add(base, str(n.Args[0]))
					case name == "find" && base == "repair.go" && len(n.Args) > 0:
						add(base, str(n.Args[0]))
					}
				case *ast.AssignStmt:
					// kind := "index-mismatch" (dump's index verification)
					for i, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == "kind" && i < len(n.Rhs) && dir == "." {
							add(base, str(n.Rhs[i]))
						}
					}
				case *ast.ValueSpec:
					for i, id := range n.Names {
						if i >= len(n.Values) {
							continue
						}
						switch {
						case dir != "." && strings.HasPrefix(id.Name, "Kind") && strings.HasSuffix(path, "types.go"),
							dir == brokerDir && strings.HasPrefix(id.Name, "Kind"),
							strings.HasPrefix(id.Name, "Finding") && (base == "chain.go" || base == "repair.go"),
							strings.HasPrefix(id.Name, "Problem") && base == "batch.go",
							strings.HasPrefix(id.Name, "Refuse"):
							add(base, str(n.Values[i]))
						}
					}
				}
				return true
			})
		}
	}
	return kinds
}

// TestTroubleshootingCoversEveryKind: docs/troubleshooting.md names every
// finding kind, anomaly kind, barrier problem code and refusal reason the
// code can report, in backticks.
func TestTroubleshootingCoversEveryKind(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := findingKinds(t)
	for _, must := range []string{"crc-mismatch", "corrupt-batch", "skipped-bytes", "pid-collision", "hanging-transaction", "broker-running", "index-rebuilt", "index-mismatch", "timeindex-mismatch",
		"offset-below-log-start", "coordinator-partitions-missing", "orphan-partition", "leader-epoch-ahead", "invalid-marker", "torn-tail", "topic-id", "index-zero-tail"} {
		if _, ok := kinds[must]; !ok {
			t.Fatalf("the source scan missed %q: %v", must, kinds)
		}
	}
	var missing []string
	for k, where := range kinds {
		if !strings.Contains(string(doc), "`"+k+"`") {
			missing = append(missing, k+" ("+where+")")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/troubleshooting.md does not mention %d kinds: %s", len(missing), strings.Join(missing, ", "))
	}
}
