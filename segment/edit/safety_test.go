package edit_test

// Writes that keep the operator's data and say what they did (issue 28,
// items 5, 8 for the journal, 11, 12, 13).

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/barrier/barriertest"
	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// TestEditBackupNeverInsideKafkaDirs is issue 28's item 5: a backup
// directory inside another partition (--backup-dir data2/orders-0 while
// editing data1/txn-0) was accepted and wrote txn-0's segments into
// orders-0, which then showed them as its own; run from another log
// directory, the default backup folder landed in it, and a broker
// refuses to start with it. A backup location is refused (backup-dir)
// inside any directory that is, or looks like, a Kafka log directory or
// partition, not only the one edited, before anything is written; a plain
// folder named like a partition is fine.
func TestEditBackupNeverInsideKafkaDirs(t *testing.T) {
	root := t.TempDir()
	dir := writeFixtureIn(t, filepath.Join(root, "data1"))
	// Another broker's partition, whose files are not named as the
	// backup's (else the backup would be refused for overwriting them).
	other := filepath.Join(root, "data2", "orders-0")
	if _, err := os.Stat(filepath.Join(barriertest.PartitionsDir(), "orders-0")); err != nil {
		t.Skipf("testdata/partitions/orders-0: %v (go run ./testdata/gen)", err)
	}
	barriertest.CopyTree(t, filepath.Join(barriertest.PartitionsDir(), "orders-0"), other)
	data2 := filepath.Dir(other)
	testkit.WriteFile(t, filepath.Join(data2, segment.MetaPropertiesName), []byte("version=1\nnode.id=2\n"))
	// A partition directory outside any directory that says it is a log
	// directory.
	loose := writeFixtureIn(t, filepath.Join(root, "loose"))
	for _, tc := range []struct {
		name       string
		o          edit.Options
		refused    bool
		notCreated string
	}{
		{"another partition", edit.Options{BackupDir: other}, true, ""},
		{"inside another partition", edit.Options{BackupDir: filepath.Join(loose, "bk")}, true, filepath.Join(loose, "bk")},
		{"inside another log directory", edit.Options{BackupDir: filepath.Join(data2, "bk")}, true, filepath.Join(data2, "bk")},
		{"default, from another log directory", edit.Options{BackupRoot: data2}, true, ""},
		{"a folder named like a partition", edit.Options{BackupDir: filepath.Join(root, "backups", "mirror-0")}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world := barriertest.SnapDir(t, root)
			p := mustPlan(t, dir, planOpts())
			errPre := barrier.PreflightInjection(p, tc.o)
			_, err := barrier.ApplyInjection(p, tc.o)
			if !tc.refused {
				if errPre != nil || err != nil {
					t.Fatalf("preflight %v, apply %v", errPre, err)
				}
				return
			}
			for what, err := range map[string]error{"dry run": errPre, "apply": err} {
				var re *edit.RefusalError
				if !errors.As(err, &re) || re.Reason != edit.RefuseBackupDir || !strings.Contains(err.Error(), "a Kafka ") {
					t.Errorf("%s: %v, want a %s refusal", what, err, edit.RefuseBackupDir)
				}
			}
			got := barriertest.SnapDir(t, root)
			for k := range got {
				if strings.HasSuffix(k, ".lock") {
					delete(got, k)
				}
			}
			if d := barriertest.DiffSnaps(world, got, false); len(d) > 0 {
				t.Fatalf("a refusal changed the world: %v", d)
			}
			if tc.notCreated != "" {
				if _, err := os.Lstat(tc.notCreated); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s was created", tc.notCreated)
				}
			}
		})
	}
}

// stopAtJournalRemove applies an injection to a copy of template, stopped
// (as by a crash) after every file was committed and read back, before
// its journal goes; it returns the copy's partition directory and the
// backup directory.
func stopAtJournalRemove(t *testing.T, template string) (dir, bd string, ops []edit.FileOp) {
	t.Helper()
	root := copyWorld(t, filepath.Dir(template))
	dir = filepath.Join(root, filepath.Base(template))
	bd = filepath.Join(t.TempDir(), "b")
	r, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{BackupDir: bd, FaultAt: func(step string) error {
		if step == "journal:remove" {
			return barriertest.ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, barriertest.ErrCrash) || !edit.HasJournal(dir) {
		t.Fatalf("interrupted run: %v", err)
	}
	return dir, bd, r.Plan.Ops
}

// TestEditRollbackChecksEveryFileFirst is issue 28's item 11: after an
// interrupted commit and one file edited by hand, --rollback restored the
// files after it, then refused on the edited one (exit 4): half restored,
// while refusals are documented to change nothing. Every file is checked
// before any is restored: the refusal names the file and nothing changes.
func TestEditRollbackChecksEveryFileFirst(t *testing.T) {
	template := writeFixture(t)
	dir, _, ops := stopAtJournalRemove(t, template)
	// The first file of the plan is the last a rollback restores.
	var first string
	for _, op := range ops {
		if op.Action != edit.OpDelete && op.NewSize > 0 {
			first = op.Name
			break
		}
	}
	flipLastByte(t, filepath.Join(dir, first))
	before := barriertest.SnapDir(t, dir)
	_, err := edit.Rollback(dir, edit.Options{}, kinds...)
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseJournalMismatch || !strings.Contains(err.Error(), first) {
		t.Fatalf("rollback over a hand-edited %s: %v, want a %s refusal naming it", first, err, edit.RefuseJournalMismatch)
	}
	barriertest.AssertUnchanged(t, before, dir)
}

// TestEditRerunChecksDoneSteps is issue 28's item 12: after an
// interrupted run and one file put back by hand from the backup, the rerun
// skipped that file because the journal said it was done, printed Done,
// then Verification failed, and deleted the journal (no rollback possible
// any more), leaving a staged file behind. A step the journal records as
// done is skipped only when its file is its new content: the rerun
// changes the file again and converges to the undisturbed result.
func TestEditRerunChecksDoneSteps(t *testing.T) {
	template := writeFixture(t)
	ref := copyWorld(t, filepath.Dir(template))
	refDir := filepath.Join(ref, filepath.Base(template))
	if _, err := barrier.ApplyInjection(mustPlan(t, refDir, planOpts()), edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")}); err != nil {
		t.Fatal(err)
	}
	after := barriertest.KafkaFiles(t, refDir)
	dir, bd, ops := stopAtJournalRemove(t, template)
	j, err := edit.ReadJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	var restored string
	for _, op := range ops {
		if op.Action == edit.OpReplace {
			restored = op.Name
		}
	}
	if !slicesContains(j.Done, restored) {
		t.Fatalf("the journal does not record %s as done: %v", restored, j.Done)
	}
	b := testkit.ReadFile(t, filepath.Join(bd, restored))
	testkit.WriteFile(t, filepath.Join(dir, restored), b)
	r, err := barrier.ApplyInjection(mustPlan(t, dir, planOpts()), edit.Options{})
	if err != nil || !r.Resumed || !r.Verification.OK() {
		t.Fatalf("rerun: %+v %v", r, err)
	}
	if got := barriertest.ContentOf(barriertest.SnapDir(t, dir)); !maps.Equal(got, after) {
		t.Fatalf("the rerun did not converge (or left kseg files): %v", diffContent(after, got))
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// failingCheck is epochRewrite whose read-back always fails.
type failingCheck struct{ epochRewrite }

var failingKind = &edit.Kind{Tool: "example failing check", Noun: "rewrite",
	Decode: func(k *edit.Kind, plan json.RawMessage, dir, logDir string) (edit.Job, error) {
		j := &failingCheck{epochRewrite{dir: dir, logDir: logDir}}
		return j, json.Unmarshal(plan, &j.ops)
	}}

func (j *failingCheck) Kind() *edit.Kind             { return failingKind }
func (j *failingCheck) Check() (edit.Verdict, error) { return verdict(false), nil }

// TestEditKeepsJournalUntilVerified is issue 28's item 12, its second
// half: a read-back that fails no longer deletes the journal, so that the
// edit can still be rolled back; the rollback restores the partition.
func TestEditKeepsJournalUntilVerified(t *testing.T) {
	dir := writeFixture(t)
	before := barriertest.KafkaFiles(t, dir)
	op, err := edit.WriteOp(dir, segment.LeaderEpochCheckpointName, []byte("0\n1\n0 0\n"), "one epoch")
	if err != nil || op == nil {
		t.Fatalf("%+v %v", op, err)
	}
	job := &failingCheck{epochRewrite{dir: dir, logDir: segment.LogDirOf(dir), ops: []edit.FileOp{*op}}}
	r, err := edit.Apply(job, edit.Options{BackupDir: filepath.Join(t.TempDir(), "b")})
	if err != nil || r.Verdict == nil || r.Verdict.OK() || !r.JournalKept || !edit.HasJournal(dir) {
		t.Fatalf("apply with a failing read-back: %+v %v; journal left %v", r, err, edit.HasJournal(dir))
	}
	if _, err := edit.Rollback(dir, edit.Options{}, failingKind); err != nil {
		t.Fatal(err)
	}
	if got := barriertest.KafkaFiles(t, dir); !maps.Equal(got, before) || edit.HasJournal(dir) {
		t.Fatal("the rollback did not restore the partition")
	}
}

// countingWriter counts the bytes written through it per file.
type countingWriter struct {
	w     io.Writer
	name  string
	bytes map[string]int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.bytes[c.name] += int64(n)
	return n, err
}

// TestEditJournalAppendsRecords is issue 28's item 13 (and issue 29's
// item 2): the whole journal was rewritten after every committed file, so
// a mirror of 28,573 file operations was still committing after 300 s.
// The journal's header (the plan) is written twice (prepared, then
// committing) whatever the number of files, the commit steps are
// appended as records, and what is written to the journal grows linearly
// with the files, not with their square.
func TestEditJournalAppendsRecords(t *testing.T) {
	written := func(segments int) (headers int, journalBytes int64) {
		root := t.TempDir()
		src := writeFixtureIn(t, filepath.Join(root, "a"))
		if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
			t.Fatal(err)
		}
		o := mirrorOpts(-1)
		// The fixture's batches are about 100 bytes: a segment.bytes
		// between one and two of them rolls a segment at every batch.
		o.SegmentBytes = int64(segments)
		counts := map[string]int64{}
		jp := filepath.Join(root, "b", "mirror-0", edit.JournalName)
		eo := edit.Options{BackupDir: filepath.Join(t.TempDir(), "bk"), Writer: func(name string, w io.Writer) io.Writer {
			if name == jp+segment.TempSuffix {
				headers++
			}
			return &countingWriter{w: w, name: name, bytes: counts}
		}}
		p, err := mirror.PlanMirror(src, filepath.Join(root, "b", "mirror-0"), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.SegmentsCreated) < 10 {
			t.Fatalf("only %d segments created", len(p.SegmentsCreated))
		}
		if _, err := mirror.Apply(p, eo); err != nil {
			t.Fatal(err)
		}
		return headers, counts[jp] + counts[jp+segment.TempSuffix]
	}
	h, n := written(120)
	if h != 2 {
		t.Fatalf("the journal's header was written %d times, want 2 (prepared, committing)", h)
	}
	if n == 0 {
		t.Fatal("nothing written to the journal")
	}
}

// TestReadJournalIsBounded is issue 28's item 8 for the journal: an 8 GiB
// .kseg-edit.journal was read whole (killed by a 6 GiB memory limit) by
// dump --verify-index, replay-psm and inject-barrier --dry-run, and a
// bad line was quoted whole in the error. A journal larger than any kseg
// writes is refused unread, the pending-edit finding reads only its first
// bytes, and an error quotes a short prefix of a bad line.
func TestReadJournalIsBounded(t *testing.T) {
	dir := writeFixture(t)
	jp := filepath.Join(dir, edit.JournalName)
	f, err := os.Create(jp)
	if err != nil {
		t.Fatal(err)
	}
	header := `{"version":1,"tool":"kseg inject-barrier","state":"committing","plan":{"ops":[`
	if _, err := f.WriteString(header); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Skipf("no sparse 8 GiB file here: %v", err)
	}
	f.Close()
	start := time.Now()
	_, err = edit.ReadJournal(dir)
	var re *edit.RefusalError
	if !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("ReadJournal of 8 GiB: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	if _, err := barrier.PlanInjection(dir, planOpts()); !errors.As(err, &re) || re.Reason != edit.RefuseJournal {
		t.Fatalf("plan over an 8 GiB journal: %v, want a %s refusal", err, edit.RefuseJournal)
	}
	tool, _, err := edit.JournalTool(dir)
	if err != nil || tool != "kseg inject-barrier" {
		t.Fatalf("JournalTool: %q %v", tool, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("reading an 8 GiB journal's verdict took %v", d)
	}
	// A bad line of 1 MiB is quoted by a short prefix.
	long := append([]byte(`{"version":1,"tool":"x","state":"prepared","plan":{}}`+"\n"), bytes.Repeat([]byte("A"), 1<<20)...)
	testkit.WriteFile(t, jp, append(long, '\n'))
	_, err = edit.ReadJournal(dir)
	if err == nil || len(err.Error()) > 1024 {
		t.Fatalf("a bad record of 1 MiB: an error of %d bytes: %.200v", len(fmtErr(err)), err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
