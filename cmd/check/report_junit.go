package check

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// The JUnit XML report, as Jenkins' junit step, GitLab's
// artifacts:reports:junit and most CI dashboards read it: a testsuite per
// log directory, a testcase per partition and check (classname the
// partition, name the check), a failure listing the check's new and
// missing findings, an error for an unreadable partition, skipped for a
// check that does not apply. The suite's system-out lists what passed
// (expected findings, ignored ones, notes below fail-on).
//
// It is valid against both published schemas a test keeps in
// testdata/schemas: Apache Ant's (windyroad JUnit.xsd), the strict one —
// every suite has package, id, timestamp, hostname, properties,
// system-out and system-err; a testcase has at most one of
// failure/error/skipped — and Jenkins' (xunit-plugin junit-10.xsd).

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  string          `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func junitSeconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func renderCheckJUnit(w io.Writer, rc *checkReportContext, r *checkResult) error {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	out := junitSuites{Suites: []junitSuite{}}
	var cur *junitSuite
	var elapsed time.Duration
	var passed strings.Builder
	flush := func() {
		if cur != nil {
			cur.Time, cur.SystemOut = junitSeconds(elapsed), passed.String()
			out.Suites = append(out.Suites, *cur)
		}
	}
	for i := range r.cases {
		c := &r.cases[i]
		if cur == nil || cur.Name != c.suite {
			flush()
			cur = &junitSuite{Name: c.suite, Package: c.suite, ID: len(out.Suites), Timestamp: rc.now.UTC().Format("2006-01-02T15:04:05"),
				Hostname: host, Properties: []junitProperty{{"kseg.version", rc.version}, {"config", r.cfg.DisplayFile()}}}
			elapsed = 0
			passed.Reset()
		}
		jc := junitCase{Name: c.check, Classname: c.unit, Time: junitSeconds(c.elapsed)}
		if c.check == checkChain {
			jc.Name = c.check + " from " + c.upstream
		}
		elapsed += c.elapsed
		cur.Tests++
		var failed []string
		var kinds []string
		news, missing := 0, 0
		for j := range r.items[i] {
			it := &r.items[i][j]
			line := checkItemLine(r, c, it, &ui.Styles{})
			if !it.failed() {
				passed.WriteString(line + "\n")
				continue
			}
			failed = append(failed, line)
			if it.status == statusNew {
				news++
				kinds = append(kinds, it.finding.Kind.String())
			} else {
				missing++
				kinds = append(kinds, it.inst.exp.Kind.String())
			}
		}
		switch {
		case c.err != nil:
			cur.Errors++
			jc.Error = &junitProblem{Type: "unreadable", Message: c.err.Error(), Text: c.err.Error()}
		case len(failed) > 0:
			cur.Failures++
			jc.Failure = junitFailure(news, missing, kinds, failed)
		case c.skip != "":
			cur.Skipped++
			jc.Skipped = &junitSkipped{Message: c.skip}
		}
		cur.Cases = append(cur.Cases, jc)
	}
	flush()
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// junitFailure is a failing case's failure: news new findings and
// missing missing expectations, of kinds, each item a line of failed.
func junitFailure(news, missing int, kinds, failed []string) *junitProblem {
	var what []string
	if news > 0 {
		what = append(what, ui.Plural(news, "new finding"))
	}
	if missing > 0 {
		what = append(what, ui.Plural(missing, "missing expectation"))
	}
	typ := "new"
	if news == 0 {
		typ = "missing"
	} else if missing > 0 {
		typ = "new, missing"
	}
	return &junitProblem{Type: typ, Message: strings.Join(what, ", ") + ": " + strings.Join(uniq(kinds), ", "),
		Text: strings.Join(failed, "\n")}
}

// uniq is ss without repeats, in order.
func uniq(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
