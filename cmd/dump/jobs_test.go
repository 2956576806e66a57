package dump

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/segtest"
)

// logDirOfFixtures builds a log directory holding every fixture partition
// and every broken sibling (renamed events-1 …), plus the root checkpoint
// files a broker keeps.
func logDirOfFixtures(t *testing.T) string {
	t.Helper()
	ld := t.TempDir()
	for _, name := range segtest.PartitionNames {
		clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, "partitions", name), filepath.Join(ld, name))
	}
	for i, name := range segtest.BrokenNames {
		clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, "broken", name, segtest.BrokenPartition), filepath.Join(ld, fmt.Sprintf("events-%d", i+1)))
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
