package check

import (
	"fmt"
	"io"
	"strings"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// renderCheckText is the text report, a line per failure as linters
// print them, location first:
//
//	PATH: new KIND (SEVERITY) at position P, offset O [CHECK]: MESSAGE
//	FILE:LINE:COL: missing KIND in PATH at position P … [CHECK]: expected, not found
//	PATH: unreadable [CHECK]: ERROR
//
// With --verbose, the items that pass (expected, ignored, notes) and the
// checks skipped are listed as well.
func renderCheckText(w io.Writer, rc *checkReportContext, r *checkResult) error {
	st := rc.st
	for i := range r.cases {
		c := &r.cases[i]
		if c.err != nil {
			fmt.Fprintf(w, "%s: %s [%s]: %s\n", ui.Esc(c.unit), st.Paint(st.Err, "unreadable"), c.check, ui.Esc(c.err.Error()))
		}
		if c.skip != "" && rc.verbose {
			fmt.Fprintf(w, "%s: %s [%s]: %s\n", ui.Esc(c.unit), st.Paint(st.Dim, "skipped"), c.check, c.skip)
		}
		for j := range r.items[i] {
			if it := &r.items[i][j]; it.failed() || rc.verbose {
				fmt.Fprintln(w, checkItemLine(r, c, it, st))
			}
		}
	}
	return nil
}

// checkItemLine is an item in one line, its status styled by st.
func checkItemLine(r *checkResult, c *checkCase, it *checkItem, st *ui.Styles) string {
	style := st.Dim
	switch it.status {
	case statusNew, statusMissing:
		style = st.Err
	case statusExpected:
		style = st.OK
	}
	status, rest, _ := strings.Cut(it.headline(r.cfg), " ")
	head := st.Paint(style, status) + " " + rest
	// Paths, subjects and messages may carry what the data holds (a topic,
	// a group id): escaped (escape.go).
	if it.status == statusMissing {
		return ui.Esc(fmt.Sprintf("%s: %s [%s]", it.configLocation(r.cfg), head, c.check))
	}
	path, detail := it.where(c)
	at := ""
	if len(detail) > 0 {
		at = " at " + ui.Esc(strings.Join(detail, ", "))
	}
	return fmt.Sprintf("%s: %s%s [%s]: %s", ui.Esc(path), head, at, c.check, ui.Esc(it.finding.Message))
}

// renderCheckTable is the text report as a table, a row per item (the
// failures; with --verbose every item), and the checks that could not
// read their partition.
func renderCheckTable(w io.Writer, rc *checkReportContext, r *checkResult) error {
	header := []string{"STATUS", "KIND", "SEVERITY", "CHECK", "WHERE", "MESSAGE"}
	var rows [][]string
	for i := range r.cases {
		c := &r.cases[i]
		if c.err != nil {
			rows = append(rows, []string{"unreadable", "-", "-", c.check, ui.Esc(c.unit), ui.Esc(c.err.Error())})
		}
		for j := range r.items[i] {
			it := &r.items[i][j]
			if !it.failed() && !rc.verbose {
				continue
			}
			if it.status == statusMissing {
				x := it.inst.exp
				rows = append(rows, []string{it.status, x.Kind.String(), x.Kind.Severity().String(), c.check,
					ui.Esc(it.configLocation(r.cfg)), ui.Esc(it.inst.describe(r.cfg))})
				continue
			}
			path, detail := it.where(c)
			if len(detail) > 0 {
				path += " (" + strings.Join(detail, ", ") + ")"
			}
			f := &it.finding
			rows = append(rows, []string{it.status, f.Kind.String(), f.Severity().String(), c.check, ui.Esc(path), ui.Esc(f.Message)})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return ui.RenderTable(w, rc.width, header, rows)
}
