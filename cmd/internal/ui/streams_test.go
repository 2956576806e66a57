package ui

import (
	"strings"
	"testing"
)

// colorWant is the rule resolveColor implements, written out
// independently: --color always/never win; with auto, NO_COLOR (non-empty)
// turns colour off, else CLICOLOR_FORCE (non-empty, not "0") turns it on,
// else CLICOLOR=0 turns it off, else TERM=dumb turns it off, else colour
// follows whether stdout is a terminal.
func colorWant(mode string, tty bool, noColor, clicolor, force, term string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if noColor != "" {
		return false
	}
	if force != "" && force != "0" {
		return true
	}
	if clicolor == "0" || term == "dumb" {
		return false
	}
	return tty
}

// TestResolveColorEveryCombination runs every combination of --color,
// stdout TTY, NO_COLOR, CLICOLOR, CLICOLOR_FORCE and TERM (unset, empty
// and meaningful values) through resolveColor.
func TestResolveColorEveryCombination(t *testing.T) {
	unset := "<unset>"
	modes := []string{"auto", "always", "never"}
	noColors := []string{unset, "", "1", "0"} // NO_COLOR=0 still means no colour: any non-empty value
	clicolors := []string{unset, "", "0", "1"}
	forces := []string{unset, "", "0", "1", "yes"}
	terms := []string{unset, "xterm-256color", "dumb"}
	n := 0
	for _, mode := range modes {
		for _, tty := range []bool{false, true} {
			for _, nc := range noColors {
				for _, cc := range clicolors {
					for _, cf := range forces {
						for _, tm := range terms {
							env := map[string]string{}
							for k, v := range map[string]string{"NO_COLOR": nc, "CLICOLOR": cc, "CLICOLOR_FORCE": cf, "TERM": tm} {
								if v != unset {
									env[k] = v
								}
							}
							s, _, _ := TestStreams()
							s.OutTTY = tty
							s.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
							s.ResolveColor(mode)
							val := func(v string) string { return strings.ReplaceAll(v, unset, "") }
							want := colorWant(mode, tty, val(nc), val(cc), val(cf), val(tm))
							if s.Color() != want {
								t.Errorf("--color %s, tty %v, NO_COLOR=%q CLICOLOR=%q CLICOLOR_FORCE=%q TERM=%q: colour %v, want %v",
									mode, tty, nc, cc, cf, tm, s.Color(), want)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n != 3*2*4*4*5*3 {
		t.Fatalf("ran %d combinations", n)
	}
}

// TestResolveColorNamedCases pins the cases people ask about, so that a
// change to the rule above shows up as a readable failure.
func TestResolveColorNamedCases(t *testing.T) {
	cases := []struct {
		name string
		mode string
		tty  bool
		env  map[string]string
		want bool
	}{
		{"terminal", "auto", true, nil, true},
		{"piped", "auto", false, nil, false},
		{"NO_COLOR on a terminal", "auto", true, map[string]string{"NO_COLOR": "1"}, false},
		{"empty NO_COLOR is unset", "auto", true, map[string]string{"NO_COLOR": ""}, true},
		{"CLICOLOR=0 on a terminal", "auto", true, map[string]string{"CLICOLOR": "0"}, false},
		{"CLICOLOR=1 when piped", "auto", false, map[string]string{"CLICOLOR": "1"}, false},
		{"CLICOLOR_FORCE when piped", "auto", false, map[string]string{"CLICOLOR_FORCE": "1"}, true},
		{"CLICOLOR_FORCE=0 is not forcing", "auto", false, map[string]string{"CLICOLOR_FORCE": "0"}, false},
		{"CLICOLOR_FORCE beats CLICOLOR=0", "auto", false, map[string]string{"CLICOLOR_FORCE": "1", "CLICOLOR": "0"}, true},
		{"NO_COLOR beats CLICOLOR_FORCE", "auto", true, map[string]string{"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, false},
		{"--color always beats NO_COLOR", "always", false, map[string]string{"NO_COLOR": "1"}, true},
		{"--color never beats CLICOLOR_FORCE", "never", true, map[string]string{"CLICOLOR_FORCE": "1"}, false},
	}
	for _, tc := range cases {
		s, _, _ := TestStreams()
		s.OutTTY = tc.tty
		s.Env = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		s.ResolveColor(tc.mode)
		if s.Color() != tc.want {
			t.Errorf("%s: colour %v, want %v", tc.name, s.Color(), tc.want)
		}
	}
}
