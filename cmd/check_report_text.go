package cmd

import (
	"fmt"
	"io"
	"strings"
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
			fmt.Fprintf(w, "%s: %s [%s]: %s\n", esc(c.unit), st.paint(st.err, "unreadable"), c.check, esc(c.err.Error()))
		}
		if c.skip != "" && rc.verbose {
			fmt.Fprintf(w, "%s: %s [%s]: %s\n", esc(c.unit), st.paint(st.dim, "skipped"), c.check, c.skip)
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
func checkItemLine(r *checkResult, c *checkCase, it *checkItem, st *styles) string {
	style := st.dim
	switch it.status {
	case statusNew, statusMissing:
		style = st.err
	case statusExpected:
		style = st.ok
	}
	status, rest, _ := strings.Cut(it.headline(r.cfg), " ")
	head := st.paint(style, status) + " " + rest
	// Paths, subjects and messages may carry what the data holds (a topic,
	// a group id): escaped (escape.go).
	if it.status == statusMissing {
		return esc(fmt.Sprintf("%s: %s [%s]", it.configLocation(r.cfg), head, c.check))
	}
	path, detail := it.where(c)
	at := ""
	if len(detail) > 0 {
		at = " at " + esc(strings.Join(detail, ", "))
	}
	return fmt.Sprintf("%s: %s%s [%s]: %s", esc(path), head, at, c.check, esc(it.finding.Message))
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
			rows = append(rows, []string{"unreadable", "-", "-", c.check, esc(c.unit), esc(c.err.Error())})
		}
		for j := range r.items[i] {
			it := &r.items[i][j]
			if !it.failed() && !rc.verbose {
				continue
			}
			if it.status == statusMissing {
				x := it.inst.exp
				rows = append(rows, []string{it.status, x.kind.String(), x.kind.Severity().String(), c.check,
					esc(it.configLocation(r.cfg)), esc(it.inst.describe(r.cfg))})
				continue
			}
			path, detail := it.where(c)
			if len(detail) > 0 {
				path += " (" + strings.Join(detail, ", ") + ")"
			}
			f := &it.finding
			rows = append(rows, []string{it.status, f.Kind.String(), f.Severity().String(), c.check, esc(path), esc(f.Message)})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return renderTable(w, rc.width, header, rows)
}
