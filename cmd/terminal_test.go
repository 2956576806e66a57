package cmd

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColourDoesNotMoveText: styling adds escapes, never columns. The
// label/value blocks of replay-psm and verify-chain and explain's layout
// padded with %-19s, which counts the escape bytes, so with colour on the
// values moved left of their column.
func TestColourDoesNotMoveText(t *testing.T) {
	p := func(name string) string { return clitest.Testdata("partitions/" + name) }
	m := clitest.MirrorCopies(t, 2)
	for _, args := range [][]string{
		{"replay-psm", p("txn-0")},
		{"replay-psm", p("control-0")},
		{"verify-chain", m[0], m[1]},
		{"explain", "5", p("txn-0")},
	} {
		want := clitest.Run(append([]string{"--color", "never"}, args...)...).Stdout
		got := clitest.Run(append([]string{"--color", "always"}, args...)...).Stdout
		if !ansiEscape.MatchString(got) {
			t.Fatalf("%v: --color always printed no escapes", args)
		}
		if stripped := ansiEscape.ReplaceAllString(got, ""); stripped != want {
			t.Errorf("%v: styled output, escapes removed, differs from plain:\n%s\n--- plain:\n%s", args, stripped, want)
		}
	}
}

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
		args := append(append([]string{}, tc.args...), "replay-psm", clitest.Testdata("partitions/txn-0"))
		out := clitest.RunWith(func(s *ui.Streams) {
			s.OutTTY = true
			s.Env = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		}, args...).Stdout
		if got := ansiEscape.MatchString(out); got != tc.want {
			t.Errorf("%v %v: colour %v, want %v", tc.env, tc.args, got, tc.want)
		}
	}
}

// tableCommands are every table of every command.
func tableCommands(t *testing.T) [][]string {
	m := clitest.MirrorCopies(t, 2)
	ld := clitest.Testdata("logdirs/broker-1")
	return [][]string{
		{"dump", "-o", "table", clitest.Testdata("partitions/orders-0")},
		{"dump", "-o", "table", clitest.Testdata("partitions/txn-0")},
		{"dump", "-o", "table", clitest.Testdata("partitions/control-0")},
		{"dump", "-o", "table", "--verify-index", clitest.Testdata("broken/crc-mismatch/events-0")},
		{"dump", "-o", "table", "--deep", "--print-data", clitest.Testdata("partitions/orders-0")},
		{"replay-psm", "-o", "table", clitest.Testdata("partitions/txn-0")},
		{"replay-psm", "-o", "table", clitest.Testdata("partitions")},
		{"groups", "-o", "table", ld},
		{"groups", "-o", "table", "--members", "-v", ld},
		{"groups", "-o", "table", "--state", ld},
		{"groups", "-o", "table", "--list", ld},
		{"txns", "-o", "table", ld},
		{"metadata", "-o", "table", ld},
		{"metadata", "find", "-o", "table", "/image/topics/byName/orders", ld},
		{"status", "-o", "table", ld},
		{"verify-chain", "-o", "table", m[0], m[1]},
		{"inject-barrier", "--dry-run", "-o", "table", "--timestamp", "1700003700000", clitest.Testdata("partitions/txn-0")},
		{"mirror", "--dry-run", "-o", "table", clitest.Testdata("partitions/orders-0"), filepath.Join(t.TempDir(), "orders-0")},
		{"repair", "--dry-run", "-o", "table", clitest.Testdata("broken/crc-mismatch/events-0")},
		{"explain", "-o", "table", "5", clitest.Testdata("partitions/txn-0")},
		{"version", "-o", "table"},
	}
}

// boxDrawing are the characters of a box-drawn table.
const boxDrawing = "─│┌┐└┘├┤┬┴┼═║"

// TestTablesFitTheTerminal: every table of every command is plain columns
// (no box drawing, which a TERM=dumb console and a CI log show as noise),
// fits a terminal of 100, 120 or 160 columns, and under -o wide ignores
// the terminal and shows every cell whole. At 120 columns `kseg groups`
// wrapped ids mid-word inside boxes and `dump -o table` was 166 columns.
func TestTablesFitTheTerminal(t *testing.T) {
	run := func(width int, args []string) string {
		return clitest.RunWith(func(s *ui.Streams) { s.Width = width }, args...).Stdout
	}
	for _, args := range tableCommands(t) {
		natural := run(0, args)
		if strings.ContainsAny(natural, boxDrawing) {
			t.Errorf("%v: box drawing:\n%s", args, natural)
		}
		if !tableHeader.MatchString(natural) {
			t.Errorf("%v printed no table header:\n%s", args, natural)
		}
		naturalLines := map[string]bool{}
		for _, l := range strings.Split(natural, "\n") {
			naturalLines[l] = true
		}
		for _, width := range []int{100, 120, 160} {
			out := run(width, args)
			for _, line := range strings.Split(out, "\n") {
				// A line the width changed is a table line; a header
				// line is one whether changed or not.
				if (!naturalLines[line] || tableHeader.MatchString(line)) && lipgloss.Width(line) > width {
					t.Errorf("%d columns, %v: a %d-column table line:\n%s\n%s", width, args, lipgloss.Width(line), line, out)
				}
			}
		}
		wide := slices.Clone(args)
		wide[slices.Index(wide, "table")] = "wide"
		if got, want := run(80, wide), run(0, wide); got != want {
			t.Errorf("%v at 80 columns differs from its natural width: -o wide must not fit the terminal:\n%s\n--- natural:\n%s", wide, got, want)
		}
	}
}

// tableHeader is a table's header line: upper-case words (CURRENT-OFFSET,
// #PARTITIONS) separated by two spaces or more.
var tableHeader = regexp.MustCompile(`(?m)^ *[A-Z#][A-Z0-9#/-]*( {2,}[A-Z#][A-Z0-9#/-]*)+$`)

// TestLayoutTableKeepsWhatMatters: at any width, a table's numbers are
// whole, its prose is wrapped between words with every word kept in
// order, its identifiers keep their two ends around "…" and are never
// shorter than their floor, and the table fits unless every column that
// may give way is at its floor.
func TestLayoutTableKeepsWhatMatters(t *testing.T) {
	header := []string{"group", "lag", "consumerId", "host", "verdict"}
	rows := [][]string{
		{"flink-group-with-a-long-name", "1234567", "consumer-flink-group-1-5f0c9a7e-3b1d-4c2e-9f6a-0123456789ab", "/10.0.0.7", "behind by 3 records: a consumer resuming there"},
		{"billing", "3", "billing-1-5f0c", "/10.0.0.8", "ok"},
		{"ü漢字-group", "-", "-", "-", "-"},
	}
	for width := 20; width <= 200; width++ {
		lines := ui.LayoutTable(width, header, rows)
		text := strings.Join(lines, "\n")
		if !strings.Contains(text, "1234567") {
			t.Errorf("width %d: the number was cut:\n%s", width, text)
		}
		var words []string
		for _, l := range lines[1:] {
			words = append(words, strings.Fields(l)...)
		}
		joined := strings.Join(words, " ")
		for _, w := range strings.Fields(rows[0][4]) {
			if !strings.Contains(joined, w) {
				t.Errorf("width %d: the word %q of the prose is lost:\n%s", width, w, text)
			}
		}
		for _, id := range []string{rows[0][0], rows[0][2]} {
			if strings.Contains(text, id) {
				continue
			}
			found := false
			for _, f := range strings.Fields(text) {
				if h, tl, ok := strings.Cut(f, "…"); ok && strings.HasPrefix(id, h) && strings.HasSuffix(id, tl) && len(h) > 0 && len(tl) > 0 {
					found = true
				}
			}
			if !found {
				t.Errorf("width %d: %q neither whole nor elided keeping both ends:\n%s", width, id, text)
			}
		}
		fits := true
		for _, l := range lines {
			fits = fits && lipgloss.Width(l) <= width
		}
		if !fits {
			// Everything that may give way is at its floor: the table at
			// width 1 is as narrow.
			floor := ui.LayoutTable(1, header, rows)
			if strings.Join(floor, "\n") != text {
				t.Errorf("width %d: the table does not fit, yet is not at its narrowest:\n%s\n--- narrowest:\n%s", width, text, strings.Join(floor, "\n"))
			}
		}
	}
}

func TestTableHeaders(t *testing.T) {
	for in, want := range map[string]string{
		"logEndOffset": "LOG-END-OFFSET", "LSO": "LSO", "CURRENT-OFFSET": "CURRENT-OFFSET", "#PARTITIONS": "#PARTITIONS",
		"topicId": "TOPIC-ID", "partitionLeaderEpoch": "PARTITION-LEADER-EPOCH", "coordinatorEpoch": "COORDINATOR-EPOCH",
		"snapshots / status": "SNAPSHOTS-/-STATUS", "v2Format": "V2-FORMAT",
	} {
		if got := ui.HeaderText(in); got != want {
			t.Errorf("headerText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestElideMiddle(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"console-consumer-12345", 30, "console-consumer-12345"},
		{"console-consumer-12345", 11, "conso…12345"},
		{"console-consumer-12345", 10, "conso…2345"},
		{"漢字漢字漢字漢字", 7, "漢…字"},
	} {
		got := ui.ElideMiddle(tc.in, tc.width)
		if got != tc.want || lipgloss.Width(got) > tc.width {
			t.Errorf("elideMiddle(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
