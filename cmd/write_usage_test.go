package cmd

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestWriteCommandUsage holds the write commands' shared option checks
// (writecmd.CheckIndexInterval, Flags.ValidateOneDir) to their words: each
// is a usage error (2) before anything is read, naming the command and
// what it needs.
func TestWriteCommandUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inject-barrier", "--index-interval-bytes", "-1", "d"}, "--index-interval-bytes must not be negative"},
		{[]string{"repair", "--index-interval-bytes", "-1", "d"}, "--index-interval-bytes must not be negative"},
		{[]string{"mirror", "--index-interval-bytes", "-1", "s", "d"}, "--index-interval-bytes must not be negative"},
		{[]string{"inject-barrier", "a", "b"}, "inject-barrier needs exactly one partition directory"},
		{[]string{"repair"}, "repair needs exactly one partition directory"},
		{[]string{"restore", "a", "b"}, "restore needs exactly one backup folder (the one a write command printed: Backup: DIR)"},
		{[]string{"repair", "--rollback", "--all", "d"}, "--rollback takes no other flag than --output and --backup-dir"},
		{[]string{"restore", "--rollback", "--force", "d"}, "--rollback takes no other flag than --output and --backup-dir"},
	} {
		got := clitest.Run(c.args...)
		if got.Code != ui.ExitUsage || !strings.Contains(got.Stderr, c.want) {
			t.Errorf("kseg %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(c.args, " "), got.Code, got.Stderr, ui.ExitUsage, c.want)
		}
	}
}
