package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// TestOversizedSmallFiles: a file a broker keeps small (the log
// directory's checkpoints and meta.properties, a partition's
// leader-epoch-checkpoint, partition.metadata, a .txnindex) grown huge —
// here sparse, as `truncate -s` makes them, so the test costs no disk —
// is refused or read in part, at once: every command stays within a few
// MiB of allocation, and no message quotes more than a short prefix of a
// bad line (issue 28: a sparse 64 MiB leader-epoch-checkpoint took dump
// 17 s and 1.7 GB, a 1 GiB partition.metadata 6.2 GB, a 1 GiB .txnindex
// 3.4 GB in dump and inject-barrier --dry-run; a 10 MiB bad line became a
// 42 MB message).
func TestOversizedSmallFiles(t *testing.T) {
	sparse := func(t *testing.T, path string, size int64) {
		t.Helper()
		testkit.WriteFile(t, path, nil)
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, ld string)
		args  []string // the partition (or log directory) is appended
		dir   string   // "" : the log directory
		want  string   // in stdout or stderr
	}{
		{"leader-epoch-checkpoint 64 MiB", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "orders-0", "leader-epoch-checkpoint"), 64<<20)
		}, []string{"dump", "-o", "json"}, "orders-0", "more than"},
		{"partition.metadata 1 GiB", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "orders-0", "partition.metadata"), 1<<30)
		}, []string{"dump", "-o", "json"}, "orders-0", "partition.metadata"},
		{"log-start-offset-checkpoint 256 MiB", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "log-start-offset-checkpoint"), 256<<20)
		}, []string{"replay-psm"}, "orders-0", "more than"},
		{"a 10 MiB line in replication-offset-checkpoint", func(t *testing.T, ld string) {
			line := "0\n1\n" + strings.Repeat("x", 10<<20) + " 0 5\n"
			testkit.WriteFile(t, filepath.Join(ld, "replication-offset-checkpoint"), []byte(line))
		}, []string{"replay-psm"}, "orders-0", "malformed"},
		{"meta.properties 64 MiB", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "meta.properties"), 64<<20)
		}, []string{"groups"}, "", "meta.properties"},
		{".txnindex 1 GiB, dump", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "txn-0", "00000000000000000011.txnindex"), 1<<30)
		}, []string{"dump", "-o", "json"}, "txn-0", "more than"},
		{".txnindex 1 GiB, inject-barrier --dry-run", func(t *testing.T, ld string) {
			sparse(t, filepath.Join(ld, "txn-0", "00000000000000000011.txnindex"), 1<<30)
		}, []string{"inject-barrier", "--dry-run", "--mode", "abort"}, "txn-0", "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ld := clitest.Fixture(t, "partitions", t.TempDir())
			c.setup(t, ld)
			r, _, alloc := clitest.RunAllocs(append(c.args, filepath.Join(ld, c.dir))...)
			code, all := r.Code, r.Stdout+r.Stderr
			if alloc > 48<<20 {
				t.Errorf("exit %d after allocating %d MiB", code, alloc>>20)
			}
			for _, line := range strings.Split(all, "\n") {
				if len(line) > 4<<10 {
					t.Errorf("a line of %d bytes: %.200s…", len(line), line)
				}
			}
			if !strings.Contains(all, c.want) {
				t.Errorf("exit %d; the output does not say %q:\n%.3000s", code, c.want, all)
			}
			t.Logf("exit %d, %d MiB allocated", code, alloc>>20)
		})
	}
}
