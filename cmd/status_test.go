package cmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestStatusGolden: kseg status on a healthy partition, one with a hanging
// transaction, a torn tail, and a log directory, as text, as a table on a
// 100-column terminal, and as json, against
// testdata/golden/views/status.txt (go test ./cmd -run TestStatusGolden
// -update). Run from a copy's parent, so paths are relative.
func TestStatusGolden(t *testing.T) {
	work := t.TempDir()
	for _, src := range []string{"partitions/orders-0", "partitions/txn-0", "broken/torn-tail/events-0", "logdirs/broker-1"} {
		clitest.CopyTree(t, filepath.Join(clitest.TestdataDir, filepath.FromSlash(src)), filepath.Join(work, filepath.FromSlash(src)))
	}
	t.Chdir(work)
	var b strings.Builder
	for _, tc := range []struct {
		width int
		args  []string
		code  int
	}{
		{0, []string{"status", "partitions/orders-0"}, ui.ExitOK},
		{0, []string{"status", "partitions/txn-0"}, ui.ExitFindings},
		{0, []string{"status", "broken/torn-tail/events-0"}, ui.ExitFindings},
		{0, []string{"status", "logdirs/broker-1"}, ui.ExitOK},
		{100, []string{"status", "logdirs/broker-1"}, ui.ExitOK},
		{100, []string{"status", "-o", "wide", "logdirs/broker-1"}, ui.ExitOK},
		{0, []string{"status", "partitions/orders-0", "partitions/txn-0"}, ui.ExitFindings},
		{0, []string{"status", "-o", "json", "partitions/txn-0", "logdirs/broker-1"}, ui.ExitFindings},
	} {
		var r clitest.Result
		where := "piped"
		if tc.width > 0 {
			r, where = runWidth(tc.width, tc.args...), fmt.Sprintf("a %d-column terminal", tc.width)
		} else {
			r = clitest.Run(tc.args...)
		}
		if r.Code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, r.Code, tc.code, r.Stdout, r.Stderr)
		}
		fmt.Fprintf(&b, "$ kseg %s   # %s\nexit %d\n--- stdout\n%s--- stderr\n%s\n", strings.Join(tc.args, " "), where, r.Code, r.Stdout, r.Stderr)
	}
	clitest.CheckGoldenPath(t, filepath.Join(viewsGoldenAbs, "status.txt"), []byte(b.String()))
}

// viewsGoldenAbs is viewsGoldenDir as an absolute path, resolved before
// any test changes directory.
var viewsGoldenAbs = clitest.MustAbs(viewsGoldenDir)
