package dump

import (
	"testing"

	"github.com/spf13/cobra"
)

// testDumpOptions are dump's options as its flags make them, from args
// (the defaults when none), validated with --output output.
func testDumpOptions(t testing.TB, output string, args ...string) *Options {
	t.Helper()
	o := &Options{}
	c := &cobra.Command{}
	o.AddFlags(c)
	if err := c.Flags().Parse(append([]string{"--output", output}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(c, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	return o
}
