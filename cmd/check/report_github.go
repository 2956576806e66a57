package check

import (
	"fmt"
	"io"
	"strings"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// renderCheckGitHub writes GitHub Actions workflow commands, one per
// failure, which the runner turns into annotations on the file:
//
//	::error file=PATH,title=TITLE::MESSAGE
//
// A missing expectation is annotated on its line of the expectations
// file (file=,line=,col=); a finding on its data file (binary: no line).
// Values are escaped as the runner unescapes them (actions/toolkit
// command.ts: escapeData, escapeProperty): %, CR and LF in the message; %,
// CR, LF, ':' and ',' in a property.
func renderCheckGitHub(w io.Writer, _ *checkReportContext, r *checkResult) error {
	for i := range r.cases {
		c := &r.cases[i]
		if c.err != nil {
			writeGitHubCommand(w, "error", [][2]string{{"file", slashPath(c.unit)}, {"title", "kseg check: unreadable (" + c.check + ")"}},
				fmt.Sprintf("%s could not be read: %v", c.unit, c.err))
		}
		for j := range r.items[i] {
			it := &r.items[i][j]
			if !it.failed() {
				continue
			}
			if it.status == statusMissing {
				x := it.inst.exp
				writeGitHubCommand(w, "error", [][2]string{{"file", slashPath(r.cfg.File)}, {"line", fmt.Sprint(x.Line)}, {"col", fmt.Sprint(x.Col)},
					{"title", "kseg check: missing " + x.Kind.String() + " (" + c.check + ")"}}, it.headline(r.cfg))
				continue
			}
			path, detail := it.where(c)
			msg := it.finding.Message
			if len(detail) > 0 {
				msg = "at " + strings.Join(detail, ", ") + ": " + msg
			}
			writeGitHubCommand(w, "error", [][2]string{{"file", slashPath(path)},
				{"title", fmt.Sprintf("kseg check: new %s (%s, %s)", it.finding.Kind, it.finding.Severity(), c.check)}}, msg)
		}
	}
	return nil
}

// writeGitHubCommand writes ::cmd k=v,…::message.
func writeGitHubCommand(w io.Writer, cmd string, props [][2]string, message string) {
	var b strings.Builder
	b.WriteString("::" + cmd)
	for i, p := range props {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p[0] + "=" + githubEscapeProperty(ui.Esc(p[1])))
	}
	b.WriteString("::" + githubEscapeData(ui.EscMessage(message)) + "\n")
	io.WriteString(w, b.String())
}

var (
	githubData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func githubEscapeData(s string) string     { return githubData.Replace(s) }
func githubEscapeProperty(s string) string { return githubProperty.Replace(s) }
