package check

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/check/tree"
	"github.com/kseg/kseg/cmd/dump"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// TestCheckOneWalkIsTheCommands: what kseg check reports from its one
// walk per partition — the index verification fed by dump's walk, the
// producer-state replay read back from the recorded walk — is exactly
// what dump --verify-index --index-sanity-check (verifying in a walk of
// its own) and replay-psm --check-snapshots (reading the files) report,
// finding for finding, message for message: over every fixture partition
// and the corruption corpus (every class; one torn tail in 25), where the
// walk meets damaged logs, indexes and snapshots.
func TestCheckOneWalkIsTheCommands(t *testing.T) {
	t.Parallel()
	var dirs []string
	for _, sub := range []string{"partitions", "broken", "logdirs", "mm2"} {
		walked, err := tree.Walk([]string{clitest.Testdata(sub)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range walked.Partitions {
			dirs = append(dirs, p.Path)
		}
	}
	c := clitest.Corpus(t)
	root := t.TempDir()
	torn := 0
	for i := range c.Cases {
		cc := &c.Cases[i]
		if cc.Class == "torn-tail" {
			if torn++; torn%25 != 1 {
				continue
			}
		}
		dirs = append(dirs, clitest.WriteCorpusCase(t, c, cc, filepath.Join(root, strconv.Itoa(i))))
	}
	e, err := newCheckEngine(1, func(string) bool { return true }, segtest.CorpusMaxDecompressed, *TestSnapshots)
	if err != nil {
		t.Fatal(err)
	}
	walk := psm.NewWalk()
	fed := 0
	for _, dir := range dirs {
		pd, err := segment.OpenPartitionDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := scan.PartitionFiles(pd)
		oneWalk, errA := e.dumpFiles(context.Background(), files, true, walk, pd)
		alone, errB := e.dumpFiles(context.Background(), files, true, nil, nil)
		if fmt.Sprint(errA) != fmt.Sprint(errB) || !slices.EqualFunc(oneWalk, alone, sameFinding) {
			t.Errorf("%s: segments from the one walk\n%s%v\ndump's own\n%s%v", dir, findingList(oneWalk), errA, findingList(alone), errB)
		}
		if walk.Len() > 0 {
			fed++
		}
		var a, b checkCase
		e.producerState(&a, pd, walk)
		e.producerState(&b, pd, nil)
		if fmt.Sprint(a.err) != fmt.Sprint(b.err) || a.skip != b.skip || !slices.EqualFunc(a.findings, b.findings, sameFinding) {
			t.Errorf("%s: producer state from the walk\n%s%v\nfrom the files\n%s%v", dir, findingList(a.findings), a.err, findingList(b.findings), b.err)
		}
	}
	if fed < len(dirs)*3/4 {
		t.Errorf("the walk recorded batches for %d partitions of %d", fed, len(dirs))
	}
	t.Logf("%d partitions, %d with a recorded walk", len(dirs), fed)
}

func sameFinding(a, b finding.Finding) bool { return a == b }

func findingList(fs []finding.Finding) string {
	s := ""
	for _, f := range fs {
		s += fmt.Sprintf("  %s %s %d %d %s\n", f.Kind, filepath.Base(f.File), f.Position, f.Offset, f.Message)
	}
	return s
}

// TestCheckWalkBudget: a partition with more batches than the walk may
// record is replayed from its files past the budget, with the same
// result.
func TestCheckWalkBudget(t *testing.T) {
	t.Parallel()
	dir := clitest.Testdata("partitions/orders-0")
	e, err := newCheckEngine(1, func(string) bool { return false }, 1<<20, *TestSnapshots)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := scan.PartitionFiles(pd)
	var want checkCase
	e.producerState(&want, pd, nil)
	// Record with a budget of 5 batches: the first segment is dropped
	// half-way, the others not recorded.
	walk := psm.NewWalk()
	st := scan.NewRun(&findingsPrinter{}, e.scanOpts[0], 1, false)
	cw := newCheckWalk(walk)
	cw.budget = 5
	st.Observer = cw
	if _, err := st.Files(context.Background(), files, 0); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var got checkCase
	e.producerState(&got, pd, walk)
	if !slices.EqualFunc(got.findings, want.findings, sameFinding) || got.err != nil {
		t.Errorf("over the budget:\n%s%v\nwant\n%s", findingList(got.findings), got.err, findingList(want.findings))
	}
	if cw.budget != 0 || !cw.dropped {
		t.Errorf("the budget was not reached (%d left): the test does not test the fallback", cw.budget)
	}
}

// TestCheckRunsDumpsOptions: check reads every partition with the
// engine's options of dump --verify-index --index-sanity-check
// --max-decompressed-bytes N [--deep], built by dump's own flags.
func TestCheckRunsDumpsOptions(t *testing.T) {
	e, err := newCheckEngine(1, func(string) bool { return false }, 1<<20, *TestSnapshots)
	if err != nil {
		t.Fatal(err)
	}
	for i, extra := range [][]string{nil, {"--deep"}} {
		o := &dump.Options{}
		c := &cobra.Command{}
		o.AddFlags(c)
		if err := c.Flags().Parse(append([]string{"--verify-index", "--index-sanity-check", "--max-decompressed-bytes=1048576"}, extra...)); err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(c, []string{"."}); err != nil {
			t.Fatal(err)
		}
		want, got := o.Options, *e.scanOpts[i]
		if want.PartitionCheck == nil || got.PartitionCheck == nil {
			t.Fatalf("%v: no log-start check (dump %v, check %v)", extra, want.PartitionCheck != nil, got.PartitionCheck != nil)
		}
		want.PartitionCheck, got.PartitionCheck = nil, nil
		got.LogDirs, got.Budget = nil, nil // the run's: shared by every partition checked
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%v: check's options\n%+v\ndump's\n%+v", extra, got, want)
		}
	}
}
