package version_test

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/version"
)

// TestVersionCommand runs `kseg version` in every output: the test binary
// has build info (module version "(devel)" or empty, the Go version).
func TestVersionCommand(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info in this binary")
	}
	r := clitest.Run("version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "kseg ") || !strings.Contains(r.Stdout, bi.GoVersion) || r.Stderr != "" {
		t.Errorf("version: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if v := clitest.Run("--version"); v.Stdout != r.Stdout {
		t.Errorf("--version %q differs from version %q", v.Stdout, r.Stdout)
	}
	j := clitest.Run("version", "-o", "json")
	var m map[string]any
	if err := json.Unmarshal([]byte(j.Stdout), &m); err != nil || j.Code != 0 {
		t.Fatalf("version -o json: exit %d, %v: %q", j.Code, err, j.Stdout)
	}
	if m["type"] != "version" || m["goVersion"] != bi.GoVersion || m["version"] == "" {
		t.Errorf("version -o json: %v", m)
	}
	if _, ok := m["revision"]; !ok {
		t.Errorf("version -o json has no revision key (null when unstamped): %v", m)
	}
	tb := clitest.Run("version", "-o", "table")
	if tb.Code != 0 || !strings.Contains(tb.Stdout, "goVersion") || !strings.Contains(tb.Stdout, bi.GoVersion) {
		t.Errorf("version -o table: %q", tb.Stdout)
	}
}

// TestVersionHelpMatchesUnstampedBuilds: the help says which builds carry
// no commit, and such a build says so (it used to promise "(devel) and
// the commit", which go run never gives).
func TestVersionHelpMatchesUnstampedBuilds(t *testing.T) {
	h := clitest.Run("version", "--help")
	clitest.MustContain(t, h.Stdout, "go run", "-buildvcs=false", "(commit not recorded)")
	unstamped := version.FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}).String()
	if !strings.Contains(unstamped, "(commit not recorded)") {
		t.Errorf("an unstamped checkout build prints %q", unstamped)
	}
}

// TestVersionHelpMatchesStampedBuilds: what the help says a build in a git
// clone prints is what kseg prints from the BuildInfo Go 1.24+ writes for
// one: a pseudo-version (not "(devel)", as the help used to promise) and
// the revision; "+dirty" and "(modified)" for a dirty work tree.
func TestVersionHelpMatchesStampedBuilds(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	clone := func(version, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/kseg/kseg",
			Main: debug.Module{Path: "github.com/kseg/kseg", Version: version},
			Settings: []debug.BuildSetting{
				{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
				{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: modified},
			}}
	}
	h := clitest.Run("version", "--help").Stdout
	clean := version.FromBuildInfo(clone("v0.0.0-20260102030405-0123456789ab", "false")).String()
	if !strings.Contains(h, "  "+clean+"\n") {
		t.Errorf("version --help does not show what a clone build prints, %q:\n%s", clean, h)
	}
	dirty := version.FromBuildInfo(clone("v0.0.0-20260102030405-0123456789ab+dirty", "true")).String()
	if !strings.Contains(dirty, "+dirty revision "+rev+" (modified)") {
		t.Errorf("a dirty clone build prints %q", dirty)
	}
	clitest.MustContain(t, h, "pseudo-version", "+dirty", "(modified)", "tag")
	if strings.Contains(h, "(devel) and the commit") {
		t.Errorf("version --help still promises \"(devel) and the commit\", which a Go 1.24+ clone build does not print")
	}
}
