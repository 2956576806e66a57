package dumplog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment/dumplog"
	"github.com/kseg/kseg/segment/scan"
	"github.com/kseg/kseg/segment/segtest"
)

// The golden files of `kseg dump` (testdata/golden/dump, written by the
// cmd tests: go test ./cmd -run Golden -update) hold what --output kafka
// prints for every fixture. The format is the package's, not the
// command's: the engine driven by a library caller and rendered by
// Printer must print the same bytes, with no command tree in between.

// goldenRun is one recorded `kseg dump --output kafka` run.
type goldenRun struct {
	flags          []string
	path           string
	stdout, stderr string
}

// kafkaRuns reads the --output kafka runs of a golden file.
func kafkaRuns(t *testing.T, file string) []goldenRun {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var runs []goldenRun
	for _, sec := range strings.Split(string(b), "\n=== kseg ")[1:] {
		head, rest, _ := strings.Cut(sec, "\n")
		args := strings.Fields(head)
		if len(args) < 3 || args[0] != "dump" || args[1] != "--output" || args[2] != "kafka" {
			continue
		}
		_, rest, _ = strings.Cut(rest, "--- stdout\n")
		out, errOut, _ := strings.Cut(rest, "--- stderr\n")
		if strings.Contains(out, "(no final newline)") || strings.Contains(errOut, "(no final newline)") {
			continue
		}
		runs = append(runs, goldenRun{flags: args[3 : len(args)-1], path: args[len(args)-1], stdout: out, stderr: errOut})
	}
	return runs
}

// options are the engine's and the printer's options for flags, or false
// for a flag this test does not translate (filters, decoders: the cmd
// tests cover them).
func options(flags []string) (scan.Options, dumplog.Options, bool) {
	so := scan.DefaultOptions()
	so.DumpLogSegments = true
	so.PartitionCheck = psm.CheckLogStart
	var po dumplog.Options
	for _, f := range flags {
		switch f {
		case "--deep":
			so.Deep, po.Deep = true, true
		case "--print-data":
			so.Deep, po.Deep, po.PrintData = true, true, true
		case "--verify-index":
			so.VerifyIndex, po.VerifyIndex = true, true
		case "--index-sanity-check":
			so.IndexSanityCheck = true
		default:
			return so, po, false
		}
	}
	return so, po, true
}

// render runs the engine over path with Printer, as a library caller does.
func render(t *testing.T, so scan.Options, po dumplog.Options, path string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	files, unread, err := scan.Collect([]string{path}, true, nil)
	if err != nil || len(unread) > 0 {
		t.Fatalf("collect %s: %v %v", path, err, unread)
	}
	p := dumplog.NewPrinter(&out, &errOut, &po)
	run := scan.NewRun(p, &so, 1, false)
	defer run.Close()
	run.FileError = func(err error) { fmt.Fprintf(&errOut, "kseg: %v\n", err) }
	if _, err := run.Files(context.Background(), files, 0); err != nil {
		if !scan.IsStop(err) {
			t.Fatalf("%s: %v", path, err)
		}
		err = p.CloseUnit() // a stop: no end-of-run reports
	} else {
		err = p.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

func TestGoldenKafkaOutput(t *testing.T) {
	golden := filepath.Join("..", "..", "testdata", "golden", "dump")
	n := 0
	for _, c := range []struct{ kind, prefix string }{{"partitions", ""}, {"broken", "broken-"}} {
		names := segtest.PartitionNames
		if c.kind == "broken" {
			names = segtest.BrokenNames
		}
		for _, name := range names {
			runs := kafkaRuns(t, filepath.Join(golden, c.prefix+name+".txt"))
			t.Run(c.kind+"/"+name, func(t *testing.T) {
				// The goldens ran from the fixture's parent (paths relative)
				// over a copy in $WORK; nothing here writes.
				t.Chdir(filepath.Join("..", "..", "testdata", c.kind))
				wd, _ := os.Getwd()
				for _, r := range runs {
					so, po, ok := options(r.flags)
					if !ok {
						continue
					}
					n++
					out, errOut := render(t, so, po, r.path)
					errOut = strings.ReplaceAll(errOut, wd, "$WORK")
					if out != r.stdout || errOut != r.stderr {
						t.Errorf("kafka %s %s: differs from the golden\nstdout: %s\nstderr: %s", strings.Join(r.flags, " "), r.path,
							firstDiff(r.stdout, out), firstDiff(r.stderr, errOut))
					}
				}
			})
		}
	}
	if n < 30 {
		t.Errorf("only %d golden runs compared", n)
	}
}

// firstDiff is where got first departs from want, with the bytes around.
func firstDiff(want, got string) string {
	if want == got {
		return "same"
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("at byte %d:\n  want: %q\n  got:  %q", i, want[lo:min(len(want), i+60)], got[lo:min(len(got), i+60)])
}
