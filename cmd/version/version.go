// Package version is kseg version (and kseg --version): the module
// version and VCS stamp the Go toolchain embeds in the binary.
package version

import (
	"bufio"
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/ui"
)

type versionOptions struct {
	output string
}

func (o *versionOptions) AddFlags(c *cobra.Command) {
	ui.AddOutputFlag(c, &o.output)
}

func (o *versionOptions) Validate(_ *cobra.Command, _ []string) error {
	return ui.ValidateOutput(o.output)
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &versionOptions{}
	c := &cobra.Command{
		Use:   "version",
		Short: "Print kseg's module version and VCS revision",
		Long: `Print the module version, the VCS revision and commit time, and the Go
version kseg was built with, as the Go toolchain recorded them in the binary
(runtime/debug.ReadBuildInfo). kseg is built from a clone: one built with
"go build" or "go install ." there reports the version the toolchain derives from
the commit (Go 1.24 and later): the tag's version when the commit is tagged,
else a pseudo-version (v0.0.0-<commit time>-<12 hex digits of the commit>,
or v1.2.4-0.<commit time>-<…> after a tag v1.2.3), with "+dirty" when the
work tree had changes, followed by the revision, as in

  kseg ` + versionHelpExample + `

and "(modified)" after the revision of a dirty build. "go run" (unless
given -buildvcs=true), -buildvcs=false (on the command line or in GOFLAGS),
a git worktree (its .git is a file, which the toolchain does not look for)
and builds outside a repository record no commit; kseg then says "(devel)
(commit not recorded)".
` + ui.ExitStatusHelp,
		Example: `  kseg version
  kseg version -o json | jq -r .revision`,
		Args: cobra.NoArgs,
	}
	return ui.NewCommand(c, s, o, func(_ context.Context, s *ui.Streams, o *versionOptions, _ []string) error {
		return printVersion(s, o, Read())
	})
}

// versionHelpExample is the line a stamped clone build prints, in the
// help (TestVersionHelpMatchesStampedBuilds renders it from a BuildInfo
// as the toolchain writes one).
const versionHelpExample = "v0.0.0-20260102030405-0123456789ab revision 0123456789abcdef0123456789abcdef01234567 built from a commit of 2026-01-02T03:04:05Z go1.26.8"

// Info is what the toolchain embeds about the build.
type Info struct {
	Version   string // module version: a tag, a pseudo-version, "(devel)" when not stamped
	Revision  string // vcs.revision, "" when not stamped
	Time      string // vcs.time
	Modified  bool   // vcs.modified
	GoVersion string
}

func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo reads the module version and VCS stamp the Go
// toolchain embeds, so no release process has to set them.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	v := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			v.Revision = st.Value
		case "vcs.time":
			v.Time = st.Value
		case "vcs.modified":
			v.Modified = st.Value == "true"
		}
	}
	return v
}

// String is the one-line form: kseg v1.2.3 revision abc… (modified) built
// from a commit of 2026-… go1.26.
func (v Info) String() string {
	out := "kseg " + v.Version
	if v.Revision != "" {
		out += " revision " + v.Revision
		if v.Modified {
			out += " (modified)"
		}
	} else if v.Version == "(devel)" {
		// A checkout build the toolchain did not stamp (go run never
		// does): say so rather than leave the reader looking for a commit.
		out += " (commit not recorded)"
	}
	if v.Time != "" {
		out += " built from a commit of " + v.Time
	}
	if v.GoVersion != "" {
		out += " " + v.GoVersion
	}
	return out
}

// String is the text of `kseg version` and `kseg --version`.
func String() string { return Read().String() }

func printVersion(s *ui.Streams, o *versionOptions, v Info) error {
	w := bufio.NewWriter(s.Out)
	switch o.output {
	case "json":
		var j ui.JSONWriter
		j.BeginLine("version")
		j.Str("version", v.Version)
		for _, kv := range [][2]string{{"revision", v.Revision}, {"time", v.Time}} {
			if kv[1] == "" {
				j.Null(kv[0]) // not stamped (go run, -buildvcs=false)
			} else {
				j.Str(kv[0], kv[1])
			}
		}
		j.Bool("modified", v.Modified)
		j.Str("goVersion", v.GoVersion)
		j.EndLine()
		w.Write(j.B)
	case "table":
		if err := ui.RenderTable(w, s.Width, []string{"field", "value"}, [][]string{
			{"version", v.Version}, {"revision", v.Revision}, {"time", v.Time},
			{"modified", fmt.Sprint(v.Modified)}, {"goVersion", v.GoVersion},
		}); err != nil {
			return err
		}
	default:
		fmt.Fprintln(w, v.String())
	}
	return w.Flush()
}
