//go:build unix

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestFIFONamedLikeKafkaFile is issue 12's defect 6: a FIFO where a Kafka
// file is expected — the log directory's .lock, checkpoints and
// meta.properties, a partition's segment files, snapshot,
// leader-epoch-checkpoint and partition.metadata — made commands block in
// open(2), or skip it silently. Every command, read-only or writing, now
// fails within a second, naming the file and what it is, and changes
// nothing.
func TestFIFONamedLikeKafkaFile(t *testing.T) {
	t.Parallel()
	healthy := clitest.Testdata("logdirs/healthy")
	if _, err := os.Stat(healthy); err != nil {
		t.Skip("../testdata/logdirs/healthy is absent")
	}
	targets := []string{".lock", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint",
		"cleaner-offset-checkpoint", "meta.properties", "P/00000000000000000000.log", "P/00000000000000000000.index",
		"P/00000000000000000000.timeindex", "P/00000000000000000000.txnindex", "P/00000000000000000001.snapshot",
		"P/leader-epoch-checkpoint", "P/partition.metadata"}
	// Each command over the partition it reads (P), in ld; mirror's
	// source is a copy in src.
	commands := []struct {
		name, part string
		args       func(ld, src, p, file, bk string) []string
	}{
		{"dump", "orders-0", func(ld, _, p, _, _ string) []string { return []string{"dump", filepath.Join(ld, p)} }},
		{"replay-psm", "orders-0", func(ld, _, p, _, _ string) []string { return []string{"replay-psm", filepath.Join(ld, p)} }},
		{"explain", "orders-0", func(ld, _, p, _, _ string) []string { return []string{"explain", "3", filepath.Join(ld, p)} }},
		{"verify-chain", "orders-0", func(ld, src, p, _, _ string) []string {
			return []string{"verify-chain", filepath.Join(src, p), filepath.Join(ld, p)}
		}},
		{"inject-barrier", "orders-0", func(ld, _, p, _, bk string) []string {
			return []string{"inject-barrier", "--backup-dir", bk, filepath.Join(ld, p)}
		}},
		{"inject-barrier --dry-run", "orders-0", func(ld, _, p, _, _ string) []string {
			return []string{"inject-barrier", "--dry-run", filepath.Join(ld, p)}
		}},
		{"mirror", "orders-0", func(ld, src, p, _, bk string) []string {
			return []string{"mirror", "--backup-dir", bk, filepath.Join(src, p), filepath.Join(ld, p)}
		}},
		{"repair", "orders-0", func(ld, _, p, _, bk string) []string {
			return []string{"repair", "--all", "--backup-dir", bk, filepath.Join(ld, p)}
		}},
		{"groups", "__consumer_offsets-5", func(ld, _, _, _, _ string) []string { return []string{"groups", ld} }},
		{"txns", "__transaction_state-0", func(ld, _, _, _, _ string) []string { return []string{"txns", ld} }},
		{"metadata", "__cluster_metadata-0", func(ld, _, _, _, _ string) []string { return []string{"metadata", ld} }},
		{"kafka-dump-log", "orders-0", func(_, _, _, file, _ string) []string { return []string{"kafka-dump-log", "--files", file} }},
	}
	// The source mirror and verify-chain read, never write: one copy for
	// every case. Each case is a parallel subtest with a log directory of
	// its own.
	src := filepath.Join(t.TempDir(), "src")
	clitest.CopyTree(t, healthy, src)
	for _, c := range commands {
		for _, target := range targets {
			t.Run(c.name+" "+target, func(t *testing.T) {
				t.Parallel()
				fifoCase(t, healthy, src, c.name, c.part, target, c.args)
			})
		}
	}
}

// fifoCase is one command of TestFIFONamedLikeKafkaFile with a FIFO at
// target.
func fifoCase(t *testing.T, healthy, src, name, part, target string, argsOf func(ld, src, p, file, bk string) []string) {
	c := struct{ name, part string }{name, part}
	root := t.TempDir()
	ld := filepath.Join(root, "ld")
	clitest.CopyTree(t, healthy, ld)
	file := filepath.Join(ld, strings.Replace(target, "P/", c.part+"/", 1))
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	before := clitest.WalkState(t, ld)
	args := argsOf(ld, src, c.part, file, filepath.Join(t.TempDir(), "b"))
	done := make(chan clitest.Result, 1)
	go func() { done <- clitest.Run(args...) }()
	select {
	case r := <-done:
		if r.Code == ui.ExitOK || !strings.Contains(r.Stderr, file+": a FIFO where a Kafka file is expected") {
			t.Errorf("%s with a FIFO at %s: exit %d\n%s%s", c.name, target, r.Code, r.Stdout, r.Stderr)
		}
	// A command that opens the FIFO blocks for ever; one that
	// refuses it answers in milliseconds (0.23 s at most measured).
	// Ten seconds tells the two apart on a loaded CI machine too.
	case <-time.After(10 * time.Second):
		t.Fatalf("%s with a FIFO at %s: still running after 10 s", c.name, target)
	}
	if diffs := clitest.DiffState(before, clitest.WalkState(t, ld)); len(diffs) > 0 {
		t.Errorf("%s with a FIFO at %s changed the log directory:\n%s", c.name, target, strings.Join(diffs, "\n"))
	}
}
