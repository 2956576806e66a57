package check

import (
	"bufio"
	"fmt"
	"github.com/kseg/kseg/cmd/check/expect"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/cmd/version"
	"github.com/kseg/kseg/segment/finding"
)

// kseg check's reports: one renderer per format, each in its own file
// (report_text.go, _json, _junit, _sarif, _github), over the same
// judged result. --output renders to stdout; --report FORMAT=FILE to a
// file, the same bytes as stdout would get (text without colour).

// checkRender writes the report of r in one format.
type checkRender func(w io.Writer, rc *checkReportContext, r *checkResult) error

// checkReportContext is what a renderer knows besides the result.
type checkReportContext struct {
	st      *ui.Styles // text on a terminal; plain elsewhere
	verbose bool
	version string
	now     time.Time // when the run ended (JUnit's timestamp)
	width   int       // the terminal's, for table (0: no limit)
}

var checkRenderers = map[string]checkRender{
	"text":   renderCheckText,
	"table":  renderCheckTable,
	"json":   renderCheckJSON,
	"junit":  renderCheckJUnit,
	"sarif":  renderCheckSARIF,
	"github": renderCheckGitHub,
}

// renderCheck writes r to stdout in format.
func renderCheck(s *ui.Streams, o *checkOptions, format string, r *checkResult) error {
	w := bufio.NewWriter(s.Out)
	rc := &checkReportContext{st: s.Styles(), verbose: o.verbose, version: version.String(), now: time.Now(), width: s.Width}
	if err := checkRenderers[format](w, rc, r); err != nil {
		return err
	}
	return w.Flush()
}

// writeCheckReport writes r to a --report file.
func writeCheckReport(s *ui.Streams, o *checkOptions, f checkReportFile, r *checkResult) error {
	out, err := os.Create(f.path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	rc := &checkReportContext{st: &ui.Styles{}, verbose: o.verbose, version: version.String(), now: time.Now()}
	err = checkRenderers[f.format](w, rc, r)
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--report %s=%s: %w", f.format, f.path, err)
	}
	return nil
}

// where is a finding's location as reports show it: its file (else its
// partition, else the unit checked), then position and offset.
func (it *checkItem) where(c *checkCase) (path string, detail []string) {
	f := &it.finding
	path = c.unit
	switch {
	case f.File != "":
		path = f.File
	case f.PartitionDir != "":
		path = f.PartitionDir
	}
	if f.Position >= 0 {
		detail = append(detail, fmt.Sprintf("position %d", f.Position))
	}
	if f.Offset >= 0 {
		detail = append(detail, fmt.Sprintf("offset %d", f.Offset))
	}
	if f.ProducerID >= 0 {
		detail = append(detail, fmt.Sprintf("producer %d", f.ProducerID))
	}
	if f.Subject != "" {
		detail = append(detail, f.Subject)
	}
	return path, detail
}

// headline is an item in one line, without its location: what a failure
// or an annotation says first.
func (it *checkItem) headline(cfg *expect.Config) string {
	if it.status == statusMissing {
		return "missing " + it.inst.describe(cfg) + ": expected, not found"
	}
	f := &it.finding
	s := fmt.Sprintf("%s %s (%s)", it.status, f.Kind, f.Severity())
	switch it.status {
	case statusNew:
		if it.failOn != finding.Error {
			s += fmt.Sprintf(", fail-on %s", it.failOn)
		}
	case statusNote:
		s += fmt.Sprintf(", below fail-on %s", it.failOn)
	}
	return s
}

// configLocation is where a missing expectation is written.
func (it *checkItem) configLocation(cfg *expect.Config) string {
	return fmt.Sprintf("%s:%d:%d", cfg.File, it.inst.exp.Line, it.inst.exp.Col)
}

// slashPath is p with forward slashes, as SARIF URIs and JUnit file
// attributes want.
func slashPath(p string) string { return filepath.ToSlash(strings.TrimPrefix(p, "./")) }
