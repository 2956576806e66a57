package edit

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"testing"
)

// planJob is a job whose plan is a struct holding its operations, as a
// planner's is.
type planJob struct {
	JobParts
	plan *struct {
		Name string   `json:"name"`
		Ops  []FileOp `json:"ops"`
	}
}

func (j *planJob) Check() (Verdict, error) { return nil, nil }

// TestJournalPlanStreamed is issue 29's item 3 for the journal: a
// mirror's journal was marshalled whole (a million producers' snapshot,
// tens of megabytes, held base64-encoded in memory, the buffer grown by
// doubling, and copied). The plan is written with its file contents
// streamed: the bytes are exactly json.Marshal's, and writing a plan
// with 8 MiB of contents allocates a small part of that.
func TestJournalPlanStreamed(t *testing.T) {
	big := bytes.Repeat([]byte{1, 2, 3, 250, 251, 252, 0}, 8<<20/7)
	plan := &struct {
		Name string   `json:"name"`
		Ops  []FileOp `json:"ops"`
	}{Name: "p", Ops: []FileOp{
		{Name: "00000000000000000000.index", Action: OpCreate, OldSize: -1, NewSize: 3, Content: []byte{1, 2, 3}},
		{Name: "00000000000000000010.snapshot", Action: OpCreate, OldSize: -1, NewSize: int64(len(big)), Content: big},
		{Name: "00000000000000000010.log", Action: OpCreate, OldSize: -1, NewSize: 5, Sources: []SourceRange{{Path: "/a/b-0/0.log", Len: 5}}},
	}}
	job := &planJob{JobParts{FileOps: plan.Ops, Journaled: plan}, plan}
	a := &applier{job: job, ops: job.Ops()}
	want, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := a.writePlan(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the streamed plan differs from json.Marshal's (%d and %d bytes)", got.Len(), len(want))
	}
	if !bytes.Equal(a.ops[1].Content, big) {
		t.Fatal("a placeholder is left on an operation")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := a.writePlan(io.Discard); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(big))/8 {
		t.Fatalf("writing a plan with %d bytes of contents allocated %d bytes: marshalled whole", len(big), n)
	}
}
