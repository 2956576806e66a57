package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster/clustertest"
)

// scaleLogDir writes a log directory of n partitions of about 2 KiB
// (clustertest.PartitionsLogDir: every partition listed in the log
// directory's checkpoints and committed by a group, with producer
// snapshots).
func scaleLogDir(tb testing.TB, n int) string {
	tb.Helper()
	d := filepath.Join(tb.TempDir(), fmt.Sprintf("p%d", n))
	if err := clustertest.PartitionsLogDir(d, n, 2<<10); err != nil {
		tb.Fatal(err)
	}
	return d
}

// logDirCommands are the commands that take a log directory and read its
// checkpoints for every partition.
var logDirCommands = [][]string{
	{"dump", "--verify-index", "-o", "json"},
	{"replay-psm", "--check-snapshots", "-o", "json"},
	{"groups", "-o", "json"},
	{"txns", "-o", "json"},
	{"status", "-o", "json"},
	{"check", "-o", "json"},
}

// mallocs is the number of heap allocations of one in-process run.
func mallocs(tb testing.TB, args []string) uint64 {
	tb.Helper()
	r, n, _ := clitest.RunAllocs(args...)
	if r.Code != ui.ExitOK {
		tb.Fatalf("%s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return n
}

// TestLogDirCostPerPartitionFlat: every command that takes a log directory
// costs the same per partition directory whether the directory holds 20
// partitions or 80 (issue 29: each partition re-read the log directory's
// checkpoints, which have a line per partition, so the cost per partition
// grew with their number). Measured in heap allocations, which a busy
// machine does not disturb: the allocations the 60 partitions from 20 to
// 80 add, per partition, against those the 15 from 5 to 20 add.
func TestLogDirCostPerPartitionFlat(t *testing.T) {
	dirs := map[int]string{}
	for _, n := range []int{5, 20, 80} {
		dirs[n] = scaleLogDir(t, n)
	}
	for _, c := range logDirCommands {
		t.Run(c[0], func(t *testing.T) {
			run := func(n int) uint64 {
				return mallocs(t, append(append([]string{}, c...), "--jobs", "1", dirs[n]))
			}
			m5, m20, m80 := run(5), run(20), run(80)
			small := float64(m20-m5) / 15
			large := float64(m80-m20) / 60
			t.Logf("%s: %.0f allocations per partition from 5 to 20, %.0f from 20 to 80", c[0], small, large)
			if large > 1.3*small {
				t.Errorf("%s: %.0f allocations per partition from 20 to 80 partitions, %.0f from 5 to 20: the cost per partition grows with their number",
					c[0], large, small)
			}
		})
	}
}

// BenchmarkLogDirPartitions: each log-directory command over 80 and 400
// partitions, with allocations and CPU per partition directory (the
// issue-29 dimension "partitions"; testdata/bench/run.sh -t partitions
// measures 100 to 5,000 against the CRC floor).
func BenchmarkLogDirPartitions(b *testing.B) {
	dirs := map[int]string{}
	for _, n := range []int{80, 400} {
		dirs[n] = scaleLogDir(b, n)
	}
	for _, c := range logDirCommands {
		for _, n := range []int{80, 400} {
			b.Run(fmt.Sprintf("%s/%d", c[0], n), func(b *testing.B) {
				dir := dirs[n]
				args := append(append([]string{}, c...), dir)
				b.ReportAllocs()
				cpu0 := clitest.ProcessCPU()
				for b.Loop() {
					s, _, errb := ui.TestStreams()
					if code := Run(context.Background(), args, s); code != ui.ExitOK {
						b.Fatalf("exit %d: %s", code, errb.String())
					}
				}
				b.ReportMetric(float64(clitest.ProcessCPU()-cpu0)/float64(b.N)/float64(n), "cpu-ns/partition")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/partition")
			})
		}
	}
}
