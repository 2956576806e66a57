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

// TestTablesFitTheTerminal: every table of every command, at 80, 100 and
// 160 columns, fits the terminal (or, with more columns than it can hold,
// is no wider than its narrowest rendering) and never loses a character:
// each column's text, read down its wrapped lines, is the text of the same
// column rendered at its natural width, header and body. tablewriter's own
// WithMaxWidth overshot 100 and cut headers at 160 that had room, and its
// word wrap cut words longer than the column (dump showed producer id
// 1000 as "100" at 100 columns, groups "billing" as "billi").
func TestTablesFitTheTerminal(t *testing.T) {
	p := func(parts ...string) string { return filepath.Join(append([]string{"..", "testdata"}, parts...)...) }
	m := mirrorCopies(t, 2)
	ld := p("logdirs", "broker-1")
	cmds := [][]string{
		{"dump", "-o", "table", p("partitions", "orders-0")},
		{"dump", "-o", "table", p("partitions", "txn-0")},
		{"dump", "-o", "table", p("partitions", "control-0")},
		{"dump", "-o", "table", "--verify-index", p("broken", "crc-mismatch", "events-0")},
		{"dump", "-o", "table", "--deep", "--print-data", p("partitions", "orders-0")},
		{"replay-psm", "-o", "table", p("partitions", "txn-0")},
		{"replay-psm", "-o", "table", p("partitions")},
		{"groups", "-o", "table", ld},
		{"txns", "-o", "table", ld},
		{"metadata", "-o", "table", ld},
		{"verify-chain", "-o", "table", m[0], m[1]},
		{"inject-barrier", "--dry-run", "-o", "table", p("partitions", "txn-0")},
		{"mirror", "--dry-run", "-o", "table", p("partitions", "orders-0"), filepath.Join(t.TempDir(), "orders-0")},
		{"repair", "--dry-run", "-o", "table", p("broken", "crc-mismatch", "events-0")},
		{"explain", "-o", "table", "5", p("partitions", "txn-0")},
		{"version", "-o", "table"},
	}
	run := func(width int, args []string) string {
		s, out, _ := TestStreams()
		s.Width = width
		Run(context.Background(), args, s)
		return out.String()
	}
	for _, args := range cmds {
		natural := parseTables(run(0, args))
		if len(natural) == 0 {
			t.Errorf("%v printed no table", args)
			continue
		}
		for _, width := range []int{80, 100, 160} {
			out := run(width, args)
			got := parseTables(out)
			if len(got) != len(natural) {
				t.Errorf("%d columns, %v: %d tables, %d at natural width", width, args, len(got), len(natural))
				continue
			}
			for k, tb := range got {
				nat := natural[k]
				if len(tb.header) != len(nat.header) {
					t.Errorf("%d columns, %v, table %d: %d columns, %d at natural width", width, args, k, len(tb.header), len(nat.header))
					continue
				}
				// Too many columns for the terminal: at most the
				// narrowest table (each column minTableColumn wide).
				limit := max(width, len(tb.header)*(minTableColumn+3)+1)
				for _, line := range tb.lines {
					if w := lipgloss.Width(line); w > limit {
						t.Errorf("%d columns, %v: a %d-column table line (limit %d):\n%s", width, args, w, limit, line)
					}
				}
				for j := range tb.header {
					if tb.header[j] != nat.header[j] {
						t.Errorf("%d columns, %v, table %d: header %d reads %q, at natural width %q", width, args, k, j, tb.header[j], nat.header[j])
					}
					if tb.body[j] != nat.body[j] {
						t.Errorf("%d columns, %v, table %d: column %q reads\n%q\nat natural width\n%q\n%s", width, args, k, nat.header[j], tb.body[j], nat.body[j], out)
					}
				}
			}
		}
	}
}

// renderedTable is one table of a command's output: every line of it, and
// per column the text of the header and of the body read down the column,
// spaces removed (wrapping moves them).
type renderedTable struct {
	lines        []string
	header, body []string
}

// parseTables finds the box-drawn tables in out.
func parseTables(out string) []renderedTable {
	var tables []renderedTable
	var cur *renderedTable
	inHeader := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "┌"):
			tables = append(tables, renderedTable{})
			cur, inHeader = &tables[len(tables)-1], true
		case cur == nil:
			continue
		case strings.HasPrefix(line, "├"):
			inHeader = false
		case strings.HasPrefix(line, "└"):
			cur.lines = append(cur.lines, line)
			cur = nil
			continue
		case strings.HasPrefix(line, "│"):
			cells := strings.Split(line, "│")
			cells = cells[1 : len(cells)-1]
			if cur.header == nil {
				cur.header, cur.body = make([]string, len(cells)), make([]string, len(cells))
			}
			for j := 0; j < len(cells) && j < len(cur.header); j++ {
				text := strings.Join(strings.Fields(cells[j]), "")
				if inHeader {
					cur.header[j] += text
				} else {
					cur.body[j] += text
				}
			}
		}
		cur.lines = append(cur.lines, line)
	}
	return tables
}

// TestWrapCellLosesNothing: a cell wrapped to any width keeps every
// character but the spaces it breaks at, and no line is wider than asked.
func TestWrapCellLosesNothing(t *testing.T) {
	for _, cell := range []string{"1000", "billing", "CreateTime 1700000000000", "a b  c", "node 1: recreated; node 1: missing", "", "ü漢字x y"} {
		for width := 1; width <= 12; width++ {
			lines := wrapCell(cell, width)
			if got, want := strings.Join(strings.Fields(strings.Join(lines, " ")), ""), strings.Join(strings.Fields(cell), ""); got != want {
				t.Errorf("wrapCell(%q, %d) = %q: %q, want %q", cell, width, lines, got, want)
			}
			for _, l := range lines {
				if lipgloss.Width(l) > max(width, 2) { // a wide rune is 2 columns
					t.Errorf("wrapCell(%q, %d): line %q is wider", cell, width, l)
				}
			}
		}
	}
}
