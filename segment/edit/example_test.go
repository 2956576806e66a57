package edit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/segtest"
)

// epochRewrite is a write command in miniature: a job that gives a
// partition's leader-epoch-checkpoint new content. The engine knows it only
// through edit.Job; a real tool (inject-barrier, mirror, repair) plans its
// file operations the same way and hands them over.
type epochRewrite struct {
	dir, logDir string
	ops         []edit.FileOp
}

var rewriteKind = &edit.Kind{Tool: "example rewrite", Noun: "rewrite",
	Decode: func(k *edit.Kind, plan json.RawMessage, dir, logDir string) (edit.Job, error) {
		j := &epochRewrite{dir: dir, logDir: logDir}
		return j, json.Unmarshal(plan, &j.ops)
	}}

func (j *epochRewrite) Kind() *edit.Kind             { return rewriteKind }
func (j *epochRewrite) Dir() string                  { return j.dir }
func (j *epochRewrite) LogDir() string               { return j.logDir }
func (j *epochRewrite) Ops() []edit.FileOp           { return j.ops }
func (j *epochRewrite) CreatesDir() bool             { return false }
func (j *epochRewrite) Plan() any                    { return j.ops }
func (j *epochRewrite) ManifestDetails() any         { return nil }
func (j *epochRewrite) Check() (edit.Verdict, error) { return verdict(true), nil }

type verdict bool

func (v verdict) OK() bool { return bool(v) }

// Apply a job to a copy of testdata/partitions/orders-0: the engine takes
// the log directory's lock, backs the old file up, stages and commits the
// new one under a journal (a crash at any step is finished by a rerun or
// undone by edit.Rollback), then reads the edit back.
func ExampleApply() {
	tmp, err := os.MkdirTemp("", "kseg-edit-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "data", "orders-0")
	if err := segtest.CopyTree("../../testdata/partitions/orders-0", dir); err != nil {
		fmt.Println(err)
		return
	}
	op, err := edit.WriteOp(dir, segment.LeaderEpochCheckpointName, []byte("0\n1\n3 0\n"), "keep only epoch 3")
	if err != nil {
		fmt.Println(err)
		return
	}
	job := &epochRewrite{dir: dir, logDir: segment.LogDirOf(dir), ops: []edit.FileOp{*op}}
	r, err := edit.Apply(job, edit.Options{BackupDir: filepath.Join(tmp, "backup")})
	if err != nil {
		fmt.Println(err)
		return
	}
	now, _ := os.ReadFile(filepath.Join(dir, segment.LeaderEpochCheckpointName))
	old, _ := os.ReadFile(filepath.Join(r.BackupDir, segment.LeaderEpochCheckpointName))
	fmt.Printf("%s: %s, verified %v, journal left %v\n", op.Action, op.Name, r.Verdict.OK(), edit.HasJournal(dir))
	fmt.Printf("now %q, backed up %q\n", now, old)
	// Output:
	// replace: leader-epoch-checkpoint, verified true, journal left false
	// now "0\n1\n3 0\n", backed up "0\n2\n3 0\n5 40\n"
}
