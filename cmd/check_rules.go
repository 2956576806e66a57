package cmd

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

// checkRule is the documentation of one finding kind.
type checkRule struct {
	kind finding.Kind
	// short is the first sentence of what it means; full all of it.
	short, full string
	// markdown and text are every row about the kind.
	markdown, text string
	// anchor is the troubleshooting.md section of its first row.
	anchor string
}

var (
	checkRulesOnce sync.Once
	checkRulesMap  map[finding.Kind]*checkRule
)

// checkRules parses the embedded troubleshooting.md once.
func checkRules() map[finding.Kind]*checkRule {
	checkRulesOnce.Do(func() { checkRulesMap = parseCheckRules(docs.Troubleshooting) })
	return checkRulesMap
}

var (
	tableSep = regexp.MustCompile(`^\|[-| :]+\|$`)
	backtick = regexp.MustCompile("`([a-z0-9-]+)`")
)

// parseCheckRules reads the rows of every table in doc.
func parseCheckRules(doc string) map[finding.Kind]*checkRule {
	rules := map[finding.Kind]*checkRule{}
	var section, anchor string
	var header []string
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### "):
			title := strings.TrimLeft(line, "# ")
			section = strings.ReplaceAll(title, "`", "")
			if strings.HasPrefix(line, "## ") {
				anchor = markdownAnchor(title)
			}
			header = nil
		case !strings.HasPrefix(line, "|"):
			header = nil
		case tableSep.MatchString(line):
		case i+1 < len(lines) && tableSep.MatchString(lines[i+1]):
			header = tableCells(line)
		case header != nil:
			cells := tableCells(line)
			for _, m := range backtick.FindAllStringSubmatch(cells[0], -1) {
				k, ok := finding.Lookup(m[1])
				if !ok {
					continue
				}
				r := rules[k]
				if r == nil {
					r = &checkRule{kind: k, anchor: anchor}
					rules[k] = r
				}
				r.addRow(section, header, cells)
			}
		}
	}
	return rules
}

// addRow adds one table row about the rule's kind.
func (r *checkRule) addRow(section string, header, cells []string) {
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
		if r.full == "" && (h == "what it means" || strings.HasPrefix(h, "what ")) {
			r.full = plainMarkdown(c)
			r.short = firstSentence(r.full)
		}
	}
	if r.markdown != "" {
		r.markdown += "\n"
		r.text += "\n"
	}
	r.markdown += md.String()
	r.text += txt.String()
}

// tableCells splits a Markdown table row on its unescaped pipes.
func tableCells(line string) []string {
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
func markdownAnchor(title string) string {
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
