package cmd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/segment/segtest"
)

// logDirOfFixtures builds a log directory holding every fixture partition
// and every broken sibling (renamed events-1 …), plus the root checkpoint
// files a broker keeps.
func logDirOfFixtures(t *testing.T) string {
	t.Helper()
	ld := t.TempDir()
	for _, name := range segtest.PartitionNames {
		copyTree(t, filepath.Join(testdataDir, "partitions", name), filepath.Join(ld, name))
	}
	for i, name := range segtest.BrokenNames {
		copyTree(t, filepath.Join(testdataDir, "broken", name, segtest.BrokenPartition), filepath.Join(ld, fmt.Sprintf("events-%d", i+1)))
	}
	for _, f := range []string{"recovery-point-offset-checkpoint", "log-start-offset-checkpoint"} {
		if err := os.WriteFile(filepath.Join(ld, f), []byte("0\n2\norders-0 0\ntxn-0 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ld
}

// TestDumpLogDirJobs: a log directory dumped with a pool of workers prints
// exactly what one worker prints, for every output.
func TestDumpLogDirJobs(t *testing.T) {
	ld := logDirOfFixtures(t)
	for _, o := range outputs {
		for _, extra := range [][]string{nil, {"--deep", "--print-data"}, {"--deep", "--verify-index", "--index-sanity-check"}} {
			args := append(append([]string{"dump", "--output", o}, extra...), ld)
			serial := runKseg(append([]string{"dump", "--jobs", "1"}, args[1:]...)...)
			if serial.code != ExitFindings {
				t.Errorf("kseg %s: exit %d, want %d (the broken partitions)", strings.Join(args, " "), serial.code, ExitFindings)
			}
			for _, jobs := range []string{"2", "7"} {
				sameRun(t, serial, runKseg(append([]string{"dump", "--jobs", jobs}, args[1:]...)...))
			}
		}
	}
}

// TestOrderedOutput: units writing concurrently, some past the buffer
// limit, come out in unit order with each unit's stdout and stderr writes
// in their own order.
func TestOrderedOutput(t *testing.T) {
	var out, errb bytes.Buffer
	const units = 40
	o := newOrderedOutput(&out, &errb, units)
	o.limit = 64
	var wantOut, wantErr strings.Builder
	for i := range units {
		for k := range 1 + i%7 {
			fmt.Fprintf(&wantOut, "unit %d line %d: %s\n", i, k, strings.Repeat("x", i))
			if k%3 == 2 {
				fmt.Fprintf(&wantErr, "unit %d warning %d\n", i, k)
			}
		}
	}
	var wg sync.WaitGroup
	next := make(chan int, units)
	for i := range units {
		next <- i
	}
	close(next)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := o.slot(i)
				r := rand.New(rand.NewPCG(uint64(i), 0))
				for k := range 1 + i%7 {
					fmt.Fprintf(s.writer(false), "unit %d line %d: %s\n", i, k, strings.Repeat("x", i))
					if k%3 == 2 {
						fmt.Fprintf(s.writer(true), "unit %d warning %d\n", i, k)
					}
					if r.IntN(4) == 0 {
						runtime.Gosched()
					}
				}
				s.finish()
			}
		}()
	}
	wg.Wait()
	if out.String() != wantOut.String() {
		t.Errorf("stdout out of order:\n%s", firstDiff(wantOut.String(), out.String()))
	}
	if errb.String() != wantErr.String() {
		t.Errorf("stderr out of order:\n%s", firstDiff(wantErr.String(), errb.String()))
	}
}
