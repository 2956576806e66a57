package version

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/kseg/kseg", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{stamped, "kseg v1.2.3 revision 0123456789abcdef0123456789abcdef01234567 (modified) built from a commit of 2026-01-02T03:04:05Z go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8"}, "kseg (devel) (commit not recorded) go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
			"kseg (devel) revision abc go1.26.8"},
	} {
		if got := FromBuildInfo(tc.bi).String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
