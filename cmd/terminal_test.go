package cmd

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColourDoesNotMoveText: styling adds escapes, never columns. The
// label/value blocks of replay-psm and verify-chain and explain's layout
// padded with %-19s, which counts the escape bytes, so with colour on the
// values moved left of their column.
func TestColourDoesNotMoveText(t *testing.T) {
	p := func(name string) string { return filepath.Join("..", "testdata", "partitions", name) }
	m := mirrorCopies(t, 2)
	for _, args := range [][]string{
		{"replay-psm", p("txn-0")},
		{"replay-psm", p("control-0")},
		{"verify-chain", m[0], m[1]},
		{"explain", "5", p("txn-0")},
	} {
		plain, _, _ := TestStreams()
		Run(context.Background(), append([]string{"--color", "never"}, args...), plain)
		styled, _, _ := TestStreams()
		Run(context.Background(), append([]string{"--color", "always"}, args...), styled)
		want := plain.Out.(interface{ String() string }).String()
		got := styled.Out.(interface{ String() string }).String()
		if !ansiEscape.MatchString(got) {
			t.Fatalf("%v: --color always printed no escapes", args)
		}
		if stripped := ansiEscape.ReplaceAllString(got, ""); stripped != want {
			t.Errorf("%v: styled output, escapes removed, differs from plain:\n%s\n--- plain:\n%s", args, stripped, want)
		}
	}
}

// TestTermDumbNoColour: TERM=dumb on a terminal gets no escapes (unless
// --color always or CLICOLOR_FORCE says otherwise).
func TestTermDumbNoColour(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want bool
	}{
		{map[string]string{"TERM": "dumb"}, nil, false},
		{map[string]string{"TERM": "xterm-256color"}, nil, true},
		{map[string]string{"TERM": "dumb", "CLICOLOR_FORCE": "1"}, nil, true},
		{map[string]string{"TERM": "dumb"}, []string{"--color", "always"}, true},
	} {
		s, out, _ := TestStreams()
		s.OutTTY = true
		s.Env = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		args := append(append([]string{}, tc.args...), "replay-psm", filepath.Join("..", "testdata", "partitions", "txn-0"))
		Run(context.Background(), args, s)
		if got := ansiEscape.MatchString(out.String()); got != tc.want {
			t.Errorf("%v %v: colour %v, want %v", tc.env, tc.args, got, tc.want)
		}
	}
}

// TestTablesFitTheTerminal: every table of every command fits a 100- and
// a 160-column terminal, and wraps rather than cuts a cell (tablewriter's
// own WithMaxWidth overshot 100 and cut headers at 160 that had room).
func TestTablesFitTheTerminal(t *testing.T) {
	p := func(parts ...string) string { return filepath.Join(append([]string{"..", "testdata"}, parts...)...) }
	m := mirrorCopies(t, 2)
	cmds := [][]string{
		{"dump", "-o", "table", p("partitions", "txn-0")},
		{"dump", "-o", "table", p("partitions", "control-0")},
		{"dump", "-o", "table", "--verify-index", p("broken", "crc-mismatch", "events-0")},
		{"replay-psm", "-o", "table", p("partitions", "txn-0")},
		{"verify-chain", "-o", "table", m[0], m[1]},
		{"repair", "--dry-run", "-o", "table", p("broken", "crc-mismatch", "events-0")},
		{"explain", "-o", "table", "5", p("partitions", "txn-0")},
	}
	for _, width := range []int{100, 160} {
		for _, args := range cmds {
			s, out, errb := TestStreams()
			s.Width = width
			Run(context.Background(), args, s)
			tables, inHeader := 0, false
			for _, line := range strings.Split(out.String(), "\n") {
				if !strings.ContainsAny(line, "┌│├└") {
					continue
				}
				switch {
				case strings.HasPrefix(line, "┌"):
					tables++
					inHeader = true
				case strings.HasPrefix(line, "├"):
					inHeader = false
				}
				if w := lipgloss.Width(line); w > width {
					t.Errorf("%d columns, %v: a %d-column table line:\n%s", width, args, w, line)
				}
				// (explain's hex cells end in "…" by design; headers never.)
				if inHeader && strings.Contains(line, "…") {
					t.Errorf("%d columns, %v: a header is cut:\n%s", width, args, line)
				}
			}
			if tables == 0 {
				t.Errorf("%v printed no table:\n%s%s", args, out, errb)
			}
		}
	}
}
