package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(s *Streams, _ *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kseg's module version and VCS revision",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(s.Out, versionString())
			return nil
		},
	}
}

// versionString reads the module version and VCS stamp the Go toolchain
// embeds (debug.ReadBuildInfo), so no release process has to set it.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "kseg (unknown version)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, t, dirty string
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.time":
			t = st.Value
		case "vcs.modified":
			if st.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	out := "kseg " + v
	if rev != "" {
		out += " revision " + rev + dirty
	}
	if t != "" {
		out += " built from a commit of " + t
	}
	return out + " " + bi.GoVersion
}
