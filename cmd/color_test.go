package cmd

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestColorFlagEndToEnd: the resolved colour reaches the output — ANSI
// escapes with --color always even into a buffer, none by default or with
// --color never, on the same data.
func TestColorFlagEndToEnd(t *testing.T) {
	dir := clitest.TestdataDir + "/partitions/orders-0"
	for _, tc := range []struct {
		args []string
		esc  bool
	}{
		{[]string{"dump", dir}, false},
		{[]string{"--color", "never", "dump", dir}, false},
		{[]string{"--color", "always", "dump", dir}, true},
		{[]string{"--color", "always", "dump", "-o", "json", dir}, false}, // JSON is never styled
		{[]string{"--color", "always", "explain", "3", dir}, true},
	} {
		r := clitest.Run(tc.args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, r.Code, r.Stderr)
		}
		if got := strings.Contains(r.Stdout, "\x1b["); got != tc.esc {
			t.Errorf("%v: escape codes %v, want %v", tc.args, got, tc.esc)
		}
	}
}
