package ui

import (
	"fmt"
	"io"
	"strings"
)

// Output that scales. A partition of 512 MiB has hundreds of aborted
// transactions, a log directory thousands of partitions, a replay
// thousands of producers: every text and table printer of a plan or a
// report shows a long list as its first and last few items with one line
// between them saying how many it leaves out, and a finding reported many
// times over as its first few with a count of the rest. -v/--verbose
// (Streams.verbose, a flag of the commands that summarise) shows every item; JSON always does, because JSON is
// data. A list no longer than the threshold prints exactly as it always
// did.
//
// dump, explain and kafka-dump-log print data, not a plan or a report:
// they print every batch they are asked for and take no part in this.

const (
	// ListWhole is the longest list printed whole.
	ListWhole = 20
	// ListHead and listTail are how many items of a longer list are
	// printed, from its start and from its end.
	ListHead = 10
	ListTail = 5

	// KindWhole is the most findings of one kind printed whole; of a kind
	// reported more often, the first kindHead are printed and the rest
	// counted.
	KindWhole = 5
	KindHead  = 3
)

// Lister decides how much of a list the text and table printers show.
type Lister struct {
	// All is --verbose: show everything.
	All bool
}

// Lister is the lister --verbose asks for.
func (s *Streams) Lister() Lister { return Lister{All: s.Verbose} }

// Cut is what a printer shows of a list of n items: the first head and the
// last tail; hidden() are left out between them.
type cut struct{ n, head, tail int }

// Cut is how a list of n items is shown: whole when it has at most
// ListWhole items (or under --verbose), else its first listHead and last
// ListTail.
func (l Lister) Cut(n int) cut {
	if l.All || n <= ListWhole {
		return cut{n: n, head: n}
	}
	return cut{n: n, head: ListHead, tail: ListTail}
}

// Hidden is how many items are left out.
func (c cut) Hidden() int { return c.n - c.head - c.tail }

// Each calls item for every shown index in order, and gap once, between
// the first and the last items, when some are left out.
func (c cut) Each(item func(i int), gap func()) {
	for i := range c.head {
		item(i)
	}
	if c.Hidden() <= 0 {
		return
	}
	gap()
	for i := c.n - c.tail; i < c.n; i++ {
		item(i)
	}
}

// More is the line that stands for the items left out: "… 558 more
// .txnindex entries (573 in all; --verbose lists them) …". what is the
// items' plural noun.
func (c cut) More(what string) string {
	return fmt.Sprintf("… %d more %s (%d in all; --verbose lists them) …", c.Hidden(), what, c.n)
}

// Lines calls line for every shown item of a list of n, and gap with the
// More line (what: the items' plural noun) between the first and the last
// when some are left out.
func (l Lister) Lines(n int, what string, line func(i int), gap func(more string)) {
	c := l.Cut(n)
	c.Each(line, func() { gap(c.More(what)) })
}

// RowsOf is rows of a table whose row i is row(i), formatting only the
// rows shown; width is the number of columns.
func (c cut) RowsOf(width int, row func(i int) []string) [][]string {
	out := make([][]string, 0, c.head+1+c.tail)
	c.Each(func(i int) { out = append(out, row(i)) }, func() {
		gap := make([]string, width)
		for i := range gap {
			gap[i] = "…"
		}
		out = append(out, gap)
	})
	return out
}

// rows is the shown rows of a table: with items left out, a row of "…"
// between the first and the last. After the table, a printer says how
// many are left out with c.more.
func (c cut) rows(rows [][]string) [][]string {
	if c.Hidden() <= 0 {
		return rows
	}
	out := make([][]string, 0, c.head+1+c.tail)
	c.Each(func(i int) { out = append(out, rows[i]) }, func() {
		gap := make([]string, len(rows[0]))
		for i := range gap {
			gap[i] = "…"
		}
		out = append(out, gap)
	})
	return out
}

// Table renders rows as a table of at most listHead+1+listTail rows, and
// after it the line saying how many rows are left out (what: their plural
// noun).
func (l Lister) Table(w io.Writer, width int, header []string, rows [][]string, what string) {
	c := l.Cut(len(rows))
	RenderTable(w, width, header, c.rows(rows))
	if c.Hidden() > 0 {
		fmt.Fprintln(w, c.More(what))
	}
}

// Join joins the shown items of an inline list with sep: "0, 100, 200, …
// 985 more …, 99800, 99900 (1000 in all)".
func (l Lister) Join(items []string, sep string) string {
	c := l.Cut(len(items))
	if c.Hidden() <= 0 {
		return strings.Join(items, sep)
	}
	shown := make([]string, 0, c.head+1+c.tail)
	c.Each(func(i int) { shown = append(shown, items[i]) }, func() {
		shown = append(shown, fmt.Sprintf("… %d more …", c.Hidden()))
	})
	return strings.Join(shown, sep) + fmt.Sprintf(" (%d in all)", c.n)
}

// Offsets is offsetsList, summarised.
func (l Lister) Offsets(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return l.Join(s, ", ")
}

// ByKind calls item for every finding of a list of n that is shown, in
// order, and more right after the last shown finding of a kind that has
// findings left out, with the line that counts them ("… and 47 more
// missing-replica findings (--verbose lists them)"). A kind reported at
// most kindWhole times is shown whole, a more frequent one by its first
// KindHead findings; under --verbose every finding is shown.
func (l Lister) ByKind(n int, kind func(i int) string, item func(i int), more func(line string)) {
	if l.All {
		for i := range n {
			item(i)
		}
		return
	}
	count := map[string]int{}
	for i := range n {
		count[kind(i)]++
	}
	seen := map[string]int{}
	for i := range n {
		k := kind(i)
		if count[k] <= KindWhole {
			item(i)
			continue
		}
		seen[k]++
		if seen[k] > KindHead {
			continue
		}
		item(i)
		if seen[k] == KindHead {
			more(fmt.Sprintf("… and %d more %s findings (--verbose lists them)", count[k]-KindHead, k))
		}
	}
}

// KindRows is byKind for a table: the shown rows, and the lines to print
// after the table.
func (l Lister) KindRows(rows [][]string, kind func(i int) string) (shown [][]string, notes []string) {
	l.ByKind(len(rows), kind, func(i int) { shown = append(shown, rows[i]) }, func(line string) { notes = append(notes, line) })
	return shown, notes
}

// TableOut renders tables (renderTable) sized to the terminal, for the
// write commands' --output table.
type TableOut struct {
	W     io.Writer
	Width int
}

// Render renders rows as a table, summarised by ls (what: the rows'
// Plural noun).
func (t *TableOut) Render(ls Lister, header []string, rows [][]string, what string) {
	if len(rows) == 0 {
		return
	}
	ls.Table(t.W, t.Width, header, rows, what)
}
