// Package rules is the help of kseg check's SARIF rules, one per finding
// kind, read from docs/troubleshooting.md as the binary embeds it.
package rules

import (
	"regexp"
	"strings"
	"sync"

	"github.com/kseg/kseg/docs"
	"github.com/kseg/kseg/segment/finding"
)

// The help of kseg check's SARIF rules, one per finding kind, read from
// docs/troubleshooting.md as the binary embeds it (package docs): every
// table row whose first cell names the kind, under the heading of its
// section, each cell with its column's header. A test checks that every
// kind of the registry gets help this way.

// Rule is the documentation of one finding kind.
type Rule struct {
	kind finding.Kind
	// short is the first sentence of what it means; full all of it.
	Short, Full string
	// markdown and text are every row about the kind.
	Markdown, Text string
	// anchor is the troubleshooting.md section of its first row.
	Anchor string
}

var (
	checkRulesOnce sync.Once
	checkRulesMap  map[finding.Kind]*Rule
)

// checkRules parses the embedded troubleshooting.md once.
func Rules() map[finding.Kind]*Rule {
	checkRulesOnce.Do(func() { checkRulesMap = parseCheckRules(docs.Troubleshooting) })
	return checkRulesMap
}

var (
	tableSep = regexp.MustCompile(`^\|[-| :]+\|$`)
	backtick = regexp.MustCompile("`([a-z0-9-]+)`")
)

// parseCheckRules reads the rows of every table in doc.
func parseCheckRules(doc string) map[finding.Kind]*Rule {
	rules := map[finding.Kind]*Rule{}
	var section, anchor string
	var header []string
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### "):
			title := strings.TrimLeft(line, "# ")
			section = strings.ReplaceAll(title, "`", "")
			if strings.HasPrefix(line, "## ") {
				anchor = MarkdownAnchor(title)
			}
			header = nil
		case !strings.HasPrefix(line, "|"):
			header = nil
		case tableSep.MatchString(line):
		case i+1 < len(lines) && tableSep.MatchString(lines[i+1]):
			header = TableCells(line)
		case header != nil:
			cells := TableCells(line)
			for _, m := range backtick.FindAllStringSubmatch(cells[0], -1) {
				k, ok := finding.Lookup(m[1])
				if !ok {
					continue
				}
				r := rules[k]
				if r == nil {
					r = &Rule{kind: k, Anchor: anchor}
					rules[k] = r
				}
				r.addRow(section, header, cells)
			}
		}
	}
	return rules
}

// addRow adds one table row about the rule's kind.
func (r *Rule) addRow(section string, header, cells []string) {
	var md, txt strings.Builder
	md.WriteString("**" + section + "**\n\n")
	txt.WriteString(section + ":\n")
	for j := 1; j < len(cells) && j < len(header); j++ {
		h, c := header[j], cells[j]
		if c == "" || h == "severity" || h == "exit" {
			continue
		}
		md.WriteString("- *" + h + "*: " + c + "\n")
		txt.WriteString("  " + h + ": " + plainMarkdown(c) + "\n")
		if r.Full == "" && (h == "what it means" || strings.HasPrefix(h, "what ")) {
			r.Full = plainMarkdown(c)
			r.Short = firstSentence(r.Full)
		}
	}
	if r.Markdown != "" {
		r.Markdown += "\n"
		r.Text += "\n"
	}
	r.Markdown += md.String()
	r.Text += txt.String()
}

// tableCells splits a Markdown table row on its unescaped pipes.
func TableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// plainMarkdown drops the emphasis and code marks of s.
func plainMarkdown(s string) string {
	return strings.NewReplacer("**", "", "`", "", "*", "").Replace(s)
}

// firstSentence is s up to its first ". " (or all of it).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// markdownAnchor is the anchor GitHub gives a heading: lower case,
// punctuation but '-' dropped, spaces as '-'.
func MarkdownAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
