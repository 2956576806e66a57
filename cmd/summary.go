package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
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
	// listWhole is the longest list printed whole.
	listWhole = 20
	// listHead and listTail are how many items of a longer list are
	// printed, from its start and from its end.
	listHead = 10
	listTail = 5

	// kindWhole is the most findings of one kind printed whole; of a kind
	// reported more often, the first kindHead are printed and the rest
	// counted.
	kindWhole = 5
	kindHead  = 3
)

// summarising are the commands whose text and table printers summarise:
// addVerboseFlags gives them -v/--verbose and finishTree puts outputHelp in
// their help, before EXIT STATUS.
//
// -v has one meaning in kseg: --verbose. It is a flag of each summarising
// command (shown in its help), and a hidden persistent flag of the root, so
// that "kseg -v replay-psm DIR" means what "kseg replay-psm -v DIR" means
// (cobra hands a flag written before the subcommand to the subcommand's
// flag set). Given to any other command — dump, explain and
// kafka-dump-log print every batch anyway; version, docs, help and
// completion have no list to summarise — or to kseg alone, it is a usage
// error (checkVerbose), before or after the subcommand alike: a CI step
// written "kseg -v replay-psm DIR" must not print the version and exit 0,
// as cobra's default -v shorthand for --version made it do. The version is
// --version (or kseg version), with no shorthand.
var summarising = map[string]bool{
	"inject-barrier": true, "mirror": true, "repair": true, "verify-chain": true,
	"replay-psm": true, "groups": true, "txns": true, "metadata": true,
	"status": true, "verify-mm2": true,
}

// verboseUsage is -v/--verbose's help line.
const verboseUsage = "text and table list every item instead of the first and last few of a long list (json always does)"

// addVerboseFlags adds -v/--verbose to the summarising commands under root
// and, hidden, to the root as a persistent flag; the root's
// PersistentPreRunE checks it (checkVerbose) and copies it to
// Streams.verbose.
func addVerboseFlags(root *cobra.Command, verbose *bool) {
	root.PersistentFlags().BoolVarP(verbose, "verbose", "v", false, verboseUsage)
	_ = root.PersistentFlags().MarkHidden("verbose")
	for _, c := range root.Commands() {
		if summarising[c.Name()] {
			c.Flags().BoolVarP(verbose, "verbose", "v", false, verboseUsage)
		}
	}
}

// checkVerbose refuses -v/--verbose on a command that does not summarise.
func checkVerbose(c *cobra.Command) error {
	f := c.Flags().Lookup("verbose")
	if f == nil || !f.Changed || c.LocalNonPersistentFlags().Lookup("verbose") != nil {
		// Not given, or a flag of the command itself: a summarising
		// command's (addVerboseFlags), or one a command defines with its
		// own meaning (check: list the expected findings too).
		return nil
	}
	if !c.HasParent() {
		return usageErrorf("-v is --verbose, a flag of %s; the version is kseg --version", summarisingList(c))
	}
	return usageErrorf("-v/--verbose is not a flag of %s: it is a flag of %s (the version is kseg --version)",
		c.CommandPath(), summarisingList(c))
}

// summarisingList names the commands of c's tree that have a -v/--verbose
// of their own, sorted: the summarising ones, and check.
func summarisingList(c *cobra.Command) string {
	var names []string
	for _, sub := range c.Root().Commands() {
		if sub.LocalNonPersistentFlags().Lookup("verbose") != nil {
			names = append(names, sub.Name())
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// outputHelp is the OUTPUT section of their help.
var outputHelp = fmt.Sprintf(`OUTPUT
  Text and table summarise what can grow without bound: a list longer than
  %d items shows its first %d and last %d, with a line "… K more … (N in all;
  --verbose lists them) …" between them, and a finding kind reported more
  than %d times shows its first %d findings and "… and K more KIND findings".
  -v/--verbose prints every item; json always does.

`, listWhole, listHead, listTail, kindWhole, kindHead)

// lister decides how much of a list the text and table printers show.
type lister struct {
	// all is --verbose: show everything.
	all bool
}

// lister is the lister --verbose asks for.
func (s *Streams) lister() lister { return lister{all: s.verbose} }

// cut is what a printer shows of a list of n items: the first head and the
// last tail; hidden() are left out between them.
type cut struct{ n, head, tail int }

// cut is how a list of n items is shown: whole when it has at most
// listWhole items (or under --verbose), else its first listHead and last
// listTail.
func (l lister) cut(n int) cut {
	if l.all || n <= listWhole {
		return cut{n: n, head: n}
	}
	return cut{n: n, head: listHead, tail: listTail}
}

// hidden is how many items are left out.
func (c cut) hidden() int { return c.n - c.head - c.tail }

// each calls item for every shown index in order, and gap once, between
// the first and the last items, when some are left out.
func (c cut) each(item func(i int), gap func()) {
	for i := range c.head {
		item(i)
	}
	if c.hidden() <= 0 {
		return
	}
	gap()
	for i := c.n - c.tail; i < c.n; i++ {
		item(i)
	}
}

// more is the line that stands for the items left out: "… 558 more
// .txnindex entries (573 in all; --verbose lists them) …". what is the
// items' plural noun.
func (c cut) more(what string) string {
	return fmt.Sprintf("… %d more %s (%d in all; --verbose lists them) …", c.hidden(), what, c.n)
}

// lines calls line for every shown item of a list of n, and gap with the
// more line (what: the items' plural noun) between the first and the last
// when some are left out.
func (l lister) lines(n int, what string, line func(i int), gap func(more string)) {
	c := l.cut(n)
	c.each(line, func() { gap(c.more(what)) })
}

// rowsOf is rows of a table whose row i is row(i), formatting only the
// rows shown; width is the number of columns.
func (c cut) rowsOf(width int, row func(i int) []string) [][]string {
	out := make([][]string, 0, c.head+1+c.tail)
	c.each(func(i int) { out = append(out, row(i)) }, func() {
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
	if c.hidden() <= 0 {
		return rows
	}
	out := make([][]string, 0, c.head+1+c.tail)
	c.each(func(i int) { out = append(out, rows[i]) }, func() {
		gap := make([]string, len(rows[0]))
		for i := range gap {
			gap[i] = "…"
		}
		out = append(out, gap)
	})
	return out
}

// table renders rows as a table of at most listHead+1+listTail rows, and
// after it the line saying how many rows are left out (what: their plural
// noun).
func (l lister) table(w io.Writer, width int, header []string, rows [][]string, what string) {
	c := l.cut(len(rows))
	renderTable(w, width, header, c.rows(rows))
	if c.hidden() > 0 {
		fmt.Fprintln(w, c.more(what))
	}
}

// join joins the shown items of an inline list with sep: "0, 100, 200, …
// 985 more …, 99800, 99900 (1000 in all)".
func (l lister) join(items []string, sep string) string {
	c := l.cut(len(items))
	if c.hidden() <= 0 {
		return strings.Join(items, sep)
	}
	shown := make([]string, 0, c.head+1+c.tail)
	c.each(func(i int) { shown = append(shown, items[i]) }, func() {
		shown = append(shown, fmt.Sprintf("… %d more …", c.hidden()))
	})
	return strings.Join(shown, sep) + fmt.Sprintf(" (%d in all)", c.n)
}

// offsets is offsetsList, summarised.
func (l lister) offsets(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return l.join(s, ", ")
}

// byKind calls item for every finding of a list of n that is shown, in
// order, and more right after the last shown finding of a kind that has
// findings left out, with the line that counts them ("… and 47 more
// missing-replica findings (--verbose lists them)"). A kind reported at
// most kindWhole times is shown whole, a more frequent one by its first
// kindHead findings; under --verbose every finding is shown.
func (l lister) byKind(n int, kind func(i int) string, item func(i int), more func(line string)) {
	if l.all {
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
		if count[k] <= kindWhole {
			item(i)
			continue
		}
		seen[k]++
		if seen[k] > kindHead {
			continue
		}
		item(i)
		if seen[k] == kindHead {
			more(fmt.Sprintf("… and %d more %s findings (--verbose lists them)", count[k]-kindHead, k))
		}
	}
}

// kindRows is byKind for a table: the shown rows, and the lines to print
// after the table.
func (l lister) kindRows(rows [][]string, kind func(i int) string) (shown [][]string, notes []string) {
	l.byKind(len(rows), kind, func(i int) { shown = append(shown, rows[i]) }, func(line string) { notes = append(notes, line) })
	return shown, notes
}
