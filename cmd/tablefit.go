package cmd

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/lipgloss"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// tableOptions sizes a tablewriter table to a terminal width columns wide
// (0: not a terminal, no limit). tablewriter's WithMaxWidth alone
// overshoots the limit and truncates headers even when the table fits, so
// the widths are worked out here: a table that fits is left at its
// natural widths; one that does not has its widest columns narrowed, one
// column at a time, until border and all fit, and their cells (headers
// included) wrap instead of being cut.
func tableOptions(width int, header []string, rows [][]string) []tablewriter.Option {
	if width <= 0 || len(header) == 0 {
		return nil
	}
	n := len(header)
	widths := make([]int, n)
	for i, h := range header {
		widths[i] = longestWord(headerText(h))
		if w := lipgloss.Width(headerText(h)); w > widths[i] {
			widths[i] = w
		}
	}
	for _, r := range rows {
		for i := 0; i < n && i < len(r); i++ {
			if w := lipgloss.Width(r[i]); w > widths[i] {
				widths[i] = w
			}
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
		return nil
	}
	const minCol = 3
	for sum > budget {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minCol {
			break // cannot fit: narrowest sensible table
		}
		widths[widest]--
		sum--
	}
	per := tw.NewMapper[int, int]()
	for i, w := range widths {
		per.Set(i, w+2) // tablewriter counts the padding in a column's width
	}
	return []tablewriter.Option{
		tablewriter.WithColumnWidths(per),
		tablewriter.WithHeaderAutoWrap(tw.WrapNormal),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
	}
}

// headerText is how tablewriter shows a header: camelCase split into
// words, upper case.
func headerText(h string) string {
	var b strings.Builder
	rs := []rune(h)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]) {
			b.WriteRune(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
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
