package edit_test

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/edit"
)

// TestOpList: the one op collector of every write planner. A write of
// what a file already holds plans nothing; a new directory's writes are
// creations without a look at the disk; a list without its directory
// refuses to plan rather than read the working directory.
func TestOpList(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "a.index"), []byte("same"))
	l := edit.OpList{Dir: dir}
	if changed, err := l.Write("a.index", []byte("same"), "unchanged"); err != nil || changed {
		t.Fatalf("write of the same bytes: changed %v, %v", changed, err)
	}
	if changed, err := l.Write("a.index", []byte("other"), "rebuilt"); err != nil || !changed {
		t.Fatalf("write of new bytes: changed %v, %v", changed, err)
	}
	if changed, err := l.Write("b.index", []byte("new"), "missing"); err != nil || !changed {
		t.Fatalf("write of a missing file: changed %v, %v", changed, err)
	}
	if err := l.Delete(filepath.Join(dir, "a.index"), "gone"); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name   string
		action edit.Action
		old    int64
	}{{"a.index", edit.OpReplace, 4}, {"b.index", edit.OpCreate, -1}, {"a.index", edit.OpDelete, 4}}
	if len(l.List) != len(want) {
		t.Fatalf("ops %+v, want %d", l.List, len(want))
	}
	for i, w := range want {
		if op := l.List[i]; op.Name != w.name || op.Action != w.action || op.OldSize != w.old {
			t.Errorf("op %d = %s %s old %d, want %s %s old %d", i, op.Action, op.Name, op.OldSize, w.action, w.name, w.old)
		}
	}
	created := edit.OpList{Dir: filepath.Join(dir, "new-0"), Create: true}
	if _, err := created.Write("a.index", []byte("x"), "new"); err != nil || created.List[0].Action != edit.OpCreate {
		t.Fatalf("a new directory's write: %+v, %v", created.List, err)
	}
	var none edit.OpList
	if _, err := none.Write("a.index", []byte("x"), "?"); err == nil {
		t.Fatal("an OpList without a directory planned a write")
	}
}
