package ui

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
)

// Every --output table of every command is rendered here, as the tools an
// operator already reads render theirs: kafka-consumer-groups.sh
// --describe, kubectl get, gh. Plain columns aligned with spaces, no box
// drawing (a TERM=dumb console, an Emacs buffer, a CI log and `less` show
// it as it is; awk and cut can take it apart), headers in upper case with
// Kafka's hyphens (CURRENT-OFFSET, LOG-END-OFFSET), numbers right-aligned.
//
// On a terminal (width > 0) a table wider than the terminal is made to fit
// without hiding what matters:
//
//   - numbers are never cut;
//   - prose (a column whose cells hold words: a reason, a verdict, a
//     record's data) is wrapped at word boundaries, down to its longest
//     word; a word is never split;
//   - then an identifier (a group, member or client id, a host, a topic
//     id: a cell without spaces) is elided in the middle with "…", down
//     to its header's width or elideFloor columns, keeping both ends,
//     where ids differ (console-consumer-…-5f0c9a7e), and `-o wide`
//     shows it whole;
//   - a table that still does not fit is printed wider than the terminal
//     rather than lose more.
//
// Piped (width 0) and under -o wide (root.go sets Width 0) every cell is
// printed whole at the columns' natural widths. Every cell is escaped
// (esc): the cells hold ids that clients chose.
//
// tablewriter is not used for this: its WithMaxWidth overshot the limit
// and cut headers of tables that fitted, its word wrap split words (a
// producer id 1000 showed as "100"), and what is left once the widths are
// decided here is padding.

// tableGap separates columns (gh's and replay-psm's piped tables).
const tableGap = "  "

// elideFloor is the narrowest an identifier column is elided to: enough to
// keep a few characters of each end.
const elideFloor = 10

// RenderTable writes header and rows as a table fitted to width (0: not a
// terminal, or -o wide: no limit).
func RenderTable(w io.Writer, width int, header []string, rows [][]string) error {
	bw := bufio.NewWriter(w)
	for _, line := range LayoutTable(width, header, rows) {
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// columnKind is how a column gives way on a narrow terminal.
type columnKind int

const (
	colID     columnKind = iota // elided in the middle
	colNumber                   // never cut, right-aligned
	colProse                    // wrapped between words
	colFixed                    // never cut, left-aligned: timestamps, durations
	colData                     // a record's data: wrapped, a long word split
)

// dataHeaders are the columns of data (a record's key and value, an
// explain field's value): wrapped like prose, but a quoted value is one
// "word" as long as the record, so it is split where it must be.
var dataHeaders = map[string]bool{"DATA": true, "VALUE": true, "LINE": true}

// dataFloor is the narrowest a data column is made.
const dataFloor = 24

type tableColumn struct {
	head    string
	kind    columnKind
	natural int // the widest line of header and cells
	floor   int // the narrowest it may become
	width   int // decided
}

// LayoutTable returns the table's lines, without trailing newlines.
func LayoutTable(width int, header []string, rows [][]string) []string {
	n := len(header)
	if n == 0 {
		return nil
	}
	cols := make([]tableColumn, n)
	cells := make([][][]string, len(rows)) // row, column, lines
	for r, row := range rows {
		cells[r] = make([][]string, n)
		for i := range n {
			text := ""
			if i < len(row) {
				text = row[i]
			}
			lines := strings.Split(strings.TrimSpace(text), "\n")
			for k := range lines {
				lines[k] = Esc(strings.TrimSpace(lines[k]))
			}
			cells[r][i] = lines
		}
	}
	for i := range cols {
		c := &cols[i]
		c.head = Esc(HeaderText(header[i]))
		c.natural = displayWidth(c.head)
		longestWord := c.natural
		named := idHeaders[c.head]
		numbers, times, others, spaced := 0, 0, 0, false
		for r := range cells {
			for _, l := range cells[r][i] {
				c.natural = max(c.natural, displayWidth(l))
				switch {
				case l == "" || l == "-" || l == "…":
				case numericCell.MatchString(l):
					numbers++
				case fixedCell.MatchString(l):
					times++
				default:
					others++
					spaced = spaced || strings.ContainsRune(l, ' ')
				}
				for _, word := range strings.Fields(l) {
					longestWord = max(longestWord, displayWidth(word))
				}
			}
		}
		switch {
		case numbers > 0 && others == 0 && times == 0:
			c.kind, c.floor = colNumber, c.natural
		case times > 0 && others == 0:
			c.kind, c.floor = colFixed, c.natural
		case dataHeaders[c.head]:
			c.kind, c.floor = colData, min(c.natural, max(displayWidth(c.head), dataFloor))
		case spaced && !named:
			c.kind, c.floor = colProse, longestWord
		default:
			c.kind, c.floor = colID, min(c.natural, max(displayWidth(c.head), elideFloor))
		}
		c.width = c.natural
	}
	fitColumns(cols, width)

	out := make([]string, 0, len(rows)+1)
	head := make([][]string, n)
	for i := range cols {
		head[i] = []string{cols[i].head}
	}
	out = appendTableRow(out, cols, head)
	for r := range cells {
		row := make([][]string, n)
		for i, c := range cols {
			row[i] = fitCell(cells[r][i], c)
		}
		out = appendTableRow(out, cols, row)
	}
	return out
}

// idHeaders are the columns of identifiers a client or a file chose: a
// group id with a space in it is still one id, elided, not wrapped as
// prose.
var idHeaders = map[string]bool{
	"GROUP": true, "CONSUMER-ID": true, "MEMBER-ID": true, "CLIENT-ID": true, "HOST": true, "GROUP-INSTANCE-ID": true,
	"TRANSACTIONAL-ID": true, "TOPIC": true, "TOPIC-ID": true, "PARTITION": true, "COORDINATOR": true, "LEADER": true,
	"ASSIGNMENT-STRATEGY": true, "PRINCIPAL": true, "RACK": true, "HEADER-KEYS": true,
}

// numericCell is a cell read as a number: right-aligned, never cut.
// A size in binary units (1.5 KiB) is one.
var numericCell = regexp.MustCompile(`^[-+]?[0-9]+(\.[0-9]+)?( ?([KMGTPE]i)?B)?$`)

// fixedCell is a timestamp or a duration: never cut, left-aligned.
var fixedCell = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z|([0-9]+(\.[0-9]+)?(h|m|s|ms|µs|ns))+)$`)

// fitColumns narrows the columns to fit width: first the prose, then the
// identifiers, the widest column first, each down to its floor.
func fitColumns(cols []tableColumn, width int) {
	if width <= 0 {
		return
	}
	total := len(tableGap) * (len(cols) - 1)
	for _, c := range cols {
		total += c.width
	}
	for _, kind := range []columnKind{colProse, colData, colID} {
		for total > width {
			widest := -1
			for i, c := range cols {
				if c.kind == kind && c.width > c.floor && (widest < 0 || c.width > cols[widest].width) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			cols[widest].width--
			total--
		}
	}
}

// fitCell is a cell's lines at its column's width.
func fitCell(lines []string, c tableColumn) []string {
	if c.width >= c.natural {
		return lines
	}
	var out []string
	for _, l := range lines {
		switch c.kind {
		case colProse:
			out = append(out, wrapWords(l, c.width)...)
		case colData:
			for _, line := range wrapWords(l, c.width) {
				for displayWidth(line) > c.width {
					head, rest := cutWidth(line, c.width)
					out = append(out, head)
					line = rest
				}
				out = append(out, line)
			}
		case colID:
			out = append(out, ElideMiddle(l, c.width))
		default:
			out = append(out, l)
		}
	}
	return out
}

// appendTableRow appends the lines of one row: a cell of several lines
// continues below, the other columns left blank.
func appendTableRow(out []string, cols []tableColumn, row [][]string) []string {
	height := 1
	for _, lines := range row {
		height = max(height, len(lines))
	}
	var b strings.Builder
	for k := range height {
		b.Reset()
		pending := 0 // spaces owed before the next text
		for i, c := range cols {
			text := ""
			if k < len(row[i]) {
				text = row[i][k]
			}
			pad := max(c.width-displayWidth(text), 0)
			if i > 0 {
				pending += len(tableGap)
			}
			if c.kind == colNumber {
				pending += pad
				pad = 0
			}
			if text != "" {
				b.WriteString(strings.Repeat(" ", pending))
				b.WriteString(text)
				pending = 0
			}
			pending += pad
		}
		out = append(out, b.String())
	}
	return out
}

// wrapWords breaks s into lines of at most width columns between words; a
// word longer than width has a line of its own.
func wrapWords(s string, width int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && displayWidth(cur)+1+displayWidth(word) <= width {
			cur += " " + word
			continue
		}
		if cur != "" {
			out = append(out, cur)
		}
		cur = word
	}
	return append(out, cur)
}

// cutWidth splits s after as many runes as fit in width columns (at least
// one).
func cutWidth(s string, width int) (string, string) {
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > width && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// ElideMiddle shortens s to width columns by replacing its middle with
// "…": "console-consumer-1a2b3c" at 12 is "console…1a2b3c"'s like.
func ElideMiddle(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width < 3 {
		width = 3
	}
	headW := (width - 1 + 1) / 2
	tailW := width - 1 - headW
	head, w := 0, 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > headW {
			head = i
			break
		}
		w += rw
	}
	tail, w := len(s), 0
	for tail > head {
		r, size := utf8.DecodeLastRuneInString(s[:tail])
		rw := runeWidth(r)
		if w+rw > tailW {
			break
		}
		w += rw
		tail -= size
	}
	return s[:head] + "…" + s[tail:]
}

// HeaderText is how a header is shown: Kafka's tools' style, upper case
// with words joined by hyphens (logEndOffset: LOG-END-OFFSET); a header
// already without lower case (CURRENT-OFFSET, #PARTITIONS, LSO) is kept.
func HeaderText(h string) string {
	if strings.IndexFunc(h, unicode.IsLower) < 0 {
		return strings.ReplaceAll(h, " ", "-")
	}
	var b strings.Builder
	rs := []rune(h)
	for i, r := range rs {
		switch {
		case r == ' ' || r == '_':
			if b.Len() > 0 {
				b.WriteByte('-')
			}
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1]))):
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// displayWidth is the terminal columns s takes; ASCII (nearly every cell)
// without lipgloss's grapheme walk.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return lipgloss.Width(s)
		}
	}
	return len(s)
}

func runeWidth(r rune) int {
	if r < utf8.RuneSelf {
		return 1
	}
	return lipgloss.Width(string(r))
}
