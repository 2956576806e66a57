package dump

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/segment"
)

// TestDumpAgreesWithRecover: where broker recovery cuts a segment is
// written once, in segment.Recover (repair plans from it, inject-barrier
// --repair-tail takes its cut). dump walks on past the cut, but the first
// damage it reports in each .log of every broken fixture is Recover's
// cut: the same kind, at the cut's position (or, for damage inside a
// batch header, naming the cut's validBytes).
func TestDumpAgreesWithRecover(t *testing.T) {
	fixtures, err := filepath.Glob(clitest.Testdata("broken/*/*-0"))
	if err != nil || len(fixtures) < 8 {
		t.Fatalf("broken fixtures: %v %v", fixtures, err)
	}
	cuts := 0
	for _, dir := range fixtures {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		r := clitest.Run("dump", "-o", "json", dir)
		for _, log := range logs {
			fi, _ := segment.ParseFileName(filepath.Base(log))
			rec, err := segment.Recover(log, fi.Offset, segment.RecoverOptions{})
			if err != nil {
				t.Fatalf("%s: %v", log, err)
			}
			var first map[string]any
			for _, m := range clitest.JSONLines(t, r, "finding") {
				if m["file"] != log {
					continue
				}
				if m["kind"] == "skipped-bytes" || m["kind"] == "orphan-index" {
					continue // dump's account of reading past the cut
				}
				first = m
				break
			}
			if rec.Cut == nil {
				if first != nil && first["severity"] == "error" {
					t.Errorf("%s: recovery keeps every byte, dump reports %v", log, first)
				}
				continue
			}
			cuts++
			c := rec.Cut
			if first == nil {
				t.Errorf("%s: recovery cuts at %d (%s), dump reports nothing", log, c.Position, c.Kind)
				continue
			}
			pos, _ := first["position"].(float64)
			msg, _ := first["message"].(string)
			atCut := int64(pos) == c.Position || strings.Contains(msg, fmt.Sprintf("validBytes %d", c.Position))
			if first["kind"] != c.Kind.String() || !atCut {
				t.Errorf("%s: recovery cuts at %d (%s); dump's first finding is %v at %v: %s", log, c.Position, c.Kind, first["kind"], first["position"], msg)
			}
		}
	}
	if cuts < 5 {
		t.Errorf("only %d cuts compared", cuts)
	}
}
