package mirror

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// walkedEnd walks a cursor over dir to its end and returns End.
func walkedEnd(t *testing.T, dir string) (int64, bool) {
	t.Helper()
	c, err := openCursor(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for c.Next() {
	}
	return c.End()
}

func wantLogEnd(t *testing.T, dir string) int64 {
	t.Helper()
	pd := segtest.OpenDir(t, dir)
	end, err := logEnd(pd)
	if err != nil {
		t.Fatal(err)
	}
	return end
}

// TestCursorEndIsLogEnd: a cursor that walked the whole log knows its end
// as logEnd computes it (the last segment's batches, or its base offset
// when it is empty, a zero-filled tail ignored), so a full mirror's plan
// need not walk the last segment's headers first; after a damaged tail it
// does not claim to know it.
func TestCursorEndIsLogEnd(t *testing.T) {
	src := writeFixtureSeg(t, mirrorBatches(t), 400)
	pd := segtest.OpenDir(t, src)
	if len(pd.Segments) < 3 {
		t.Fatalf("the fixture has %d segments, want several", len(pd.Segments))
	}
	last := pd.Segments[len(pd.Segments)-1]
	check := func(what string, wantOK bool) {
		t.Helper()
		end, ok := walkedEnd(t, src)
		if ok != wantOK {
			t.Fatalf("%s: End ok = %v, want %v", what, ok, wantOK)
		}
		if want := wantLogEnd(t, src); ok && end != want {
			t.Fatalf("%s: End = %d, logEnd = %d", what, end, want)
		}
	}
	check("the fixture", true)

	// A zero-filled tail (a preallocated segment) on the last segment.
	f, err := os.OpenFile(last.Log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	check("a zero-filled tail", true)

	// An empty segment after it (a roll with nothing appended yet): the
	// end is its base offset when that is above the batches.
	empty := filepath.Join(src, segment.SegmentFileName(last.BaseOffset+1000, segment.LogSuffix))
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("an empty last segment", true)
	if end, _ := walkedEnd(t, src); end != last.BaseOffset+1000 {
		t.Fatalf("with an empty last segment End = %d, want its base %d", end, last.BaseOffset+1000)
	}
	if err := os.Remove(empty); err != nil {
		t.Fatal(err)
	}

	// A torn tail: the cursor stops there and leaves the end to logEnd.
	if err := os.Truncate(last.Log, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last.Log, []byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	check("a torn tail", false)
}

// TestMirrorPlanEndOutOfOrderSegments: when a segment holds offsets above
// the next one's (a log the walk cannot bound by itself), the plan is the
// one made with the log end found first: the copy stops before the first
// batch ending beyond it, whether or not the cursor found the end itself.
func TestMirrorPlanEndOutOfOrderSegments(t *testing.T) {
	src := writeFixtureSeg(t, mirrorBatches(t), 400)
	pd := segtest.OpenDir(t, src)
	// Swap the first and last segments' contents: the log starts with the
	// highest offsets.
	first, last := pd.Segments[0], pd.Segments[len(pd.Segments)-1]
	a, err := os.ReadFile(first.Log)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(last.Log)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pd.Segments {
		for _, p := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
			if p != "" {
				os.Remove(p)
			}
		}
	}
	if err := os.WriteFile(first.Log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last.Log, a, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "mirror-0")
	lazy, lerr := PlanMirror(src, dst, DefaultOptions())
	o := DefaultOptions()
	o.Upto = 1 << 40 // a bound: the log end is found first
	eager, eerr := PlanMirror(src, dst, o)
	if (lerr == nil) != (eerr == nil) || (lerr != nil && lerr.Error() != eerr.Error()) {
		t.Fatalf("plan to the end: %v; with the end found first: %v", lerr, eerr)
	}
	if lerr != nil {
		return
	}
	if lazy.SrcLog != eager.SrcLog || lazy.To != eager.To || lazy.Copied != eager.Copied || lazy.NothingToDo != eager.NothingToDo {
		t.Fatalf("plan to the end: srcLog %+v, to %d, copied %+v; with the end found first: srcLog %+v, to %d, copied %+v",
			lazy.SrcLog, lazy.To, lazy.Copied, eager.SrcLog, eager.To, eager.Copied)
	}
	if want := wantLogEnd(t, src); lazy.SrcLog.End != want {
		t.Fatalf("srcLog.end = %d, logEnd = %d", lazy.SrcLog.End, want)
	}
}

// memFault stands for the runtime error of a memory fault
// (debug.SetPanicOnFault), which has an Addr method.
type memFault struct{}

func (memFault) Error() string { return "unexpected fault address 0x1" }
func (memFault) Addr() uintptr { return 1 }
func (memFault) RuntimeError() {}

// TestChangedWhileRead: a memory fault met reading mapped segments (one
// truncated under the read) becomes the error naming both partitions;
// any other panic is not swallowed.
func TestChangedWhileRead(t *testing.T) {
	read := func(e any) (err error) {
		defer changedWhileRead(&err, "up-0", "down-0")
		panic(e)
	}
	if err := read(memFault{}); err == nil || err.Error() != "up-0 or down-0 changed while it was read (truncated by a broker?): unexpected fault address 0x1" {
		t.Fatalf("a fault: %v", err)
	}
	defer func() {
		if e := recover(); e != "not a fault" {
			t.Fatalf("another panic recovered as %v", e)
		}
	}()
	read("not a fault")
	t.Fatal("another panic swallowed")
}
