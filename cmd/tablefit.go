package cmd

import (
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Every --output table of every command is rendered here: one table,
// sized to a terminal width columns wide (0: not a terminal, no limit),
// that never loses a character.
//
// tablewriter's own fitting does not serve: WithMaxWidth overshoots the
// limit and truncates headers even when the table fits, and its word wrap
// (WrapNormal) cuts a word longer than its column (producer id 1000 showed
// as "100", group "billing" as "billi"). So the widths are worked out here
// and the cells wrapped here, before tablewriter sees them:
//
//   - a table that fits is left at its natural widths;
//   - one that does not has its widest columns narrowed, one column at a
//     time, first down to their longest word (cells wrap between words),
//     then, if the table is still too wide, down to minTableColumn, and a
//     word longer than its column continues on the next line;
//   - a table that does not fit even then (many columns on a narrow
//     terminal) is wider than the terminal, at the narrowest widths.
//
// Either way every character of every cell and header is printed, in
// order, across the cell's lines.

// minTableColumn is the narrowest a column is made.
const minTableColumn = 3

// renderTable writes header and rows as a table fitted to width.
func renderTable(w io.Writer, width int, header []string, rows [][]string) error {
	header, rows, opts := fitTable(width, header, rows)
	t := tablewriter.NewTable(w, opts...)
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = h
	}
	t.Header(hdr...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// fitTable returns the header, rows and options that render the table
// within width columns where it can: unchanged when it fits (or width is
// 0), else with column widths and every cell wrapped to its column.
func fitTable(width int, header []string, rows [][]string) ([]string, [][]string, []tablewriter.Option) {
	n := len(header)
	if width <= 0 || n == 0 {
		return header, rows, nil
	}
	// Cells as tablewriter shows them: trimmed, headers formatted.
	heads := make([]string, n)
	for i, h := range header {
		heads[i] = headerText(h)
	}
	cells := make([][]string, len(rows))
	for r, row := range rows {
		cells[r] = make([]string, n)
		for i := 0; i < n && i < len(row); i++ {
			cells[r][i] = strings.TrimSpace(row[i])
		}
	}
	widths := make([]int, n) // natural: the longest line
	floors := make([]int, n) // the longest word
	for i := range n {
		widths[i], floors[i] = lineWidth(heads[i]), longestWord(heads[i])
		for r := range cells {
			widths[i] = max(widths[i], lineWidth(cells[r][i]))
			floors[i] = max(floors[i], longestWord(cells[r][i]))
		}
	}
	// "│ a │ b │": each column takes its width plus a space either side and
	// one border; the row one more border.
	budget := width - (3*n + 1)
	sum := 0
	for _, w := range widths {
		sum += w
	}
	if sum <= budget {
		return header, rows, nil
	}
	narrow := func(floor func(i int) int) {
		for sum > budget {
			widest := -1
			for i, w := range widths {
				if w > floor(i) && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				return
			}
			widths[widest]--
			sum--
		}
	}
	narrow(func(i int) int { return floors[i] })
	narrow(func(int) int { return minTableColumn })

	outHeader := make([]string, n)
	for i := range heads {
		outHeader[i] = strings.Join(wrapCell(heads[i], widths[i]), "\n")
	}
	outRows := make([][]string, len(cells))
	for r := range cells {
		outRows[r] = make([]string, n)
		for i := range cells[r] {
			outRows[r][i] = strings.Join(wrapCell(cells[r][i], widths[i]), "\n")
		}
	}
	per := tw.NewMapper[int, int]()
	for i, w := range widths {
		per.Set(i, w+2) // tablewriter counts the padding in a column's width
	}
	return outHeader, outRows, []tablewriter.Option{
		tablewriter.WithColumnWidths(per),
		// The headers are formatted and every line fits already:
		// tablewriter must neither reformat nor re-wrap them.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
}

// wrapCell breaks s into lines of at most width columns, between words
// where it can and inside a word longer than width, dropping no
// character but the spaces it breaks at.
func wrapCell(s string, width int) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if lipgloss.Width(line) <= width {
			out = append(out, line)
			continue
		}
		cur := ""
		for _, word := range strings.Fields(line) {
			if cur != "" && lipgloss.Width(cur)+1+lipgloss.Width(word) <= width {
				cur += " " + word
				continue
			}
			if cur != "" {
				out = append(out, cur)
			}
			for lipgloss.Width(word) > width {
				head, rest := cutWidth(word, width)
				out = append(out, head)
				word = rest
			}
			cur = word
		}
		out = append(out, cur)
	}
	return out
}

// cutWidth splits s after as many runes as fit in width columns (at least
// one).
func cutWidth(s string, width int) (string, string) {
	w := 0
	for i, r := range s {
		rw := lipgloss.Width(string(r))
		if w+rw > width && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// headerText is how tablewriter shows a header: camelCase split into
// words, upper case (its header AutoFormat).
func headerText(h string) string {
	return tw.Title(strings.Join(tw.SplitCamelCase(h), tw.Space))
}

// lineWidth is the width of s's longest line.
func lineWidth(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		m = max(m, lipgloss.Width(l))
	}
	return m
}

func longestWord(s string) int {
	m := 0
	for _, w := range strings.Fields(s) {
		if l := lipgloss.Width(w); l > m {
			m = l
		}
	}
	return m
}
