package dump

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/segment/scan/scantest"
	"github.com/kseg/kseg/segment/segtest"
)

// The parallel dump (segment/scan/pipeline.go) must print exactly what the serial
// one prints. The golden tests check whichever path GOMAXPROCS picks;
// these run both on purpose and compare every byte, on the fixtures and on
// a generated segment big enough for many jobs and several mapped windows.

func sameRun(t *testing.T, serial, parallel clitest.Result) {
	t.Helper()
	if serial.Code != parallel.Code || serial.Stdout != parallel.Stdout || serial.Stderr != parallel.Stderr {
		t.Errorf("kseg %s: parallel run differs from the serial one (exit %d vs %d)\nstdout: %s\nstderr: %s",
			strings.Join(parallel.Args, " "), serial.Code, parallel.Code,
			clitest.FirstDiff(serial.Stdout, parallel.Stdout), clitest.FirstDiff(serial.Stderr, parallel.Stderr))
	}
}

func TestDumpParallelMatchesSerialFixtures(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"partitions", "broken"} {
		names := segtest.PartitionNames
		if kind == "broken" {
			names = segtest.BrokenNames
		}
		for _, name := range names {
			t.Run(kind+"/"+name, func(t *testing.T) {
				work := t.TempDir()
				clitest.Fixture(t, kind+"/"+name, filepath.Join(work, name))
				for _, args := range goldenRuns(name, kind == "broken") {
					args = append(slices.Clone(args), filepath.Join(work, name))
					serial := clitest.Run(append([]string{args[0], "--decode-workers", "1"}, args[1:]...)...)
					for _, workers := range []string{"3"} {
						sameRun(t, serial, clitest.Run(append([]string{args[0], "--decode-workers", workers}, args[1:]...)...))
					}
				}
			})
		}
	}
}

func TestDumpParallelMatchesSerialLargeSegment(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 12 MiB segment")
	}
	path := scantest.DamagedSegment(t, t.TempDir(), 12<<20) // more than one 8 MiB mapped window
	for _, flags := range [][]string{
		{"--output", "json"},
		{"--output", "json", "--deep", "--print-data"},
		{"--output", "kafka", "--deep", "--print-data"},
		{"--output", "text", "--deep", "--print-data"},
		{"--output", "json", "--deep", "--offsets", "100000:400000"},
		{"--output", "kafka", "--deep", "--producer-id", "5003"},
		{"--output", "text", "--no-verify-crc", "--control-only"},
		// Batch level: CRCs on workers, printing on the dump goroutine
		// (segment/scan/crc.go), every printer.
		{"--output", "text"},
		{"--output", "table"},
		{"--output", "kafka"},
		{"--output", "json", "--offsets", "100000:400000"},
		{"--output", "kafka", "--control-only"},
	} {
		// Each flag set in a parallel subtest: they read the one segment.
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			t.Parallel()
			largeSegmentRun(t, path, flags)
		})
	}
}

// largeSegmentRun is one flag set of
// TestDumpParallelMatchesSerialLargeSegment: serial, then 2 and 3 decode
// workers, the same output.
func largeSegmentRun(t *testing.T, path string, flags []string) {
	args := append(append([]string{"dump"}, flags...), path)
	serial := clitest.Run(append([]string{"dump", "--decode-workers", "1"}, args[1:]...)...)
	if serial.Code != ui.ExitFindings && !slices.Contains(flags, "--no-verify-crc") {
		t.Errorf("kseg %s: exit %d, want %d (the damage is not reported)\n%s", strings.Join(args, " "), serial.Code, ui.ExitFindings, serial.Stderr)
	}
	for _, want := range map[string][]string{
		"json --deep --print-data": {`"kind":"crc-mismatch"`, `"kind":"corrupt-records"`},
		// kafka-dump-log stops at the batch whose records do not
		// decode, before its end-of-run reports.
		"kafka --deep --print-data": {"isvalid: false", "lz4", "corrupt"},
	}[strings.Join(flags[1:], " ")] {
		if !strings.Contains(serial.Stdout+serial.Stderr, want) {
			t.Errorf("kseg %s: no %q in the output", strings.Join(args, " "), want)
		}
	}
	for _, workers := range []string{"2", "3"} {
		sameRun(t, serial, clitest.Run(append([]string{"dump", "--decode-workers", workers}, args[1:]...)...))
	}
}

// logDirOfFixtures builds a log directory holding every fixture partition
// and every broken sibling (renamed events-1 …), plus the root checkpoint
// files a broker keeps.
func logDirOfFixtures(t *testing.T) string {
	t.Helper()
	ld := t.TempDir()
	for _, name := range segtest.PartitionNames {
		clitest.Fixture(t, "partitions/"+name, filepath.Join(ld, name))
	}
	for i, name := range segtest.BrokenNames {
		clitest.Fixture(t, "broken/"+name+"/"+segtest.BrokenPartition, filepath.Join(ld, fmt.Sprintf("events-%d", i+1)))
	}
	for _, f := range []string{"recovery-point-offset-checkpoint", "log-start-offset-checkpoint"} {
		testkit.WriteFile(t, filepath.Join(ld, f), []byte("0\n2\norders-0 0\ntxn-0 0\n"))
	}
	return ld
}

// TestDumpLogDirJobs: a log directory dumped with a pool of workers prints
// exactly what one worker prints, for every output.
func TestDumpLogDirJobs(t *testing.T) {
	t.Parallel()
	ld := logDirOfFixtures(t)
	for _, o := range outputs {
		for _, extra := range [][]string{nil, {"--deep", "--print-data"}, {"--deep", "--verify-index", "--index-sanity-check"}} {
			args := append(append([]string{"dump", "--output", o}, extra...), ld)
			serial := clitest.Run(append([]string{"dump", "--jobs", "1"}, args[1:]...)...)
			if serial.Code != ui.ExitFindings {
				t.Errorf("kseg %s: exit %d, want %d (the broken partitions)", strings.Join(args, " "), serial.Code, ui.ExitFindings)
			}
			for _, jobs := range []string{"2", "7"} {
				sameRun(t, serial, clitest.Run(append([]string{"dump", "--jobs", jobs}, args[1:]...)...))
			}
		}
	}
}

// TestDumpLogDirBigPartitions: partitions dumped through the batch
// pipeline while other workers dump the rest (what a large partition among
// small ones gets) print what a serial dump prints.
func TestDumpLogDirBigPartitions(t *testing.T) {
	t.Parallel()
	ld := logDirOfFixtures(t)
	for _, o := range outputs {
		for _, extra := range [][]string{nil, {"--deep", "--print-data"}, {"--deep", "--verify-index"}} {
			args := append(append([]string{"dump", "--output", o}, extra...), ld)
			serial := clitest.Run(append([]string{"dump", "--jobs", "1", "--decode-workers", "1"}, args[1:]...)...)
			for _, jobs := range []string{"2", "5"} {
				sameRun(t, serial, clitest.Run(append([]string{"dump", "--jobs", jobs, "--decode-workers", "3", "--unit-pipeline-bytes", "1"}, args[1:]...)...))
			}
		}
	}
}
