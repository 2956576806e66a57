package check

import (
	"encoding/json"
	"fmt"
	"github.com/kseg/kseg/cmd/check/rules"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment/finding"
)

// The SARIF 2.1.0 report (OASIS; what GitHub code scanning and most CI
// dashboards read): one rule per finding kind of the registry, its help
// from docs/troubleshooting.md (cmd/check/rules), and a result per item:
//
//	new       level by severity, baselineState "new"
//	missing   level error, baselineState "absent", located at the
//	          expectation's line in the expectations file (and its data
//	          file as a related location)
//	expected  baselineState "unchanged", suppressed (kind "external": the
//	          expectations file accepted it)
//	note      level "note" (below fail-on)
//
// Results are located by file and byte region (byteOffset, byteLength for
// a skipped range). An unreadable partition is a tool execution
// notification of level error. A test validates the output against the
// official schema (testdata/schemas/sarif-schema-2.1.0.json).

const (
	sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	ksegURI     = "https://github.com/kseg/kseg"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	HelpURI              string         `json:"helpUri"`
	DefaultConfiguration sarifRuleLevel `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifRuleLevel struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ExitCode                   int                 `json:"exitCode"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifResult struct {
	RuleID           string             `json:"ruleId"`
	RuleIndex        int                `json:"ruleIndex"`
	Level            string             `json:"level"`
	Kind             string             `json:"kind"`
	Message          sarifText          `json:"message"`
	Locations        []sarifLocation    `json:"locations"`
	RelatedLocations []sarifLocation    `json:"relatedLocations,omitempty"`
	BaselineState    string             `json:"baselineState"`
	Suppressions     []sarifSuppression `json:"suppressions,omitempty"`
	Properties       map[string]any     `json:"properties"`
}

type sarifLocation struct {
	ID               int                   `json:"id,omitempty"`
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	Message          *sarifText            `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int    `json:"startLine,omitempty"`
	StartColumn int    `json:"startColumn,omitempty"`
	ByteOffset  *int64 `json:"byteOffset,omitempty"`
	ByteLength  *int64 `json:"byteLength,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// sarifLevel is a severity as SARIF names it.
func sarifLevel(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "note"
}

// sarifURI is a path as an artifact URI: relative paths as relative
// references (slashes, escaped), absolute ones as file URIs.
func sarifURI(p string) string {
	if filepath.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
	}
	return (&url.URL{Path: slashPath(p)}).String()
}

// sarifRules is the rule of every finding kind, in the registry's order.
func sarifRules() []sarifRule {
	docs := rules.Rules()
	var rules []sarifRule
	for _, k := range finding.Kinds() {
		r := sarifRule{ID: k.String(), Name: sarifRuleName(k.String()), HelpURI: ksegURI + "/blob/main/docs/troubleshooting.md",
			DefaultConfiguration: sarifRuleLevel{sarifLevel(k.Severity())},
			Properties:           map[string]any{"severity": k.Severity().String(), "tags": []string{"kafka", k.Severity().String()}}}
		if d := docs[k]; d != nil {
			r.ShortDescription = sarifText{Text: d.Short}
			r.FullDescription = sarifText{Text: d.Full}
			r.Help = sarifText{Text: d.Text, Markdown: d.Markdown}
			r.HelpURI += "#" + d.Anchor
		} else {
			r.ShortDescription = sarifText{Text: k.String()}
			r.FullDescription = r.ShortDescription
			r.Help = sarifText{Text: "See docs/troubleshooting.md."}
		}
		rules = append(rules, r)
	}
	return rules
}

// sarifRuleName is a kind in UpperCamelCase (SARIF's rule names are
// identifiers): crc-mismatch → CrcMismatch.
func sarifRuleName(kind string) string {
	var b strings.Builder
	for _, w := range strings.Split(kind, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

func renderCheckSARIF(w io.Writer, rc *checkReportContext, r *checkResult) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "kseg", Version: rc.version, InformationURI: ksegURI, Rules: sarifRules()}},
		Results: []sarifResult{}}
	inv := sarifInvocation{ExecutionSuccessful: r.unreadable == 0, ExitCode: r.exitCode()}
	for i := range r.cases {
		c := &r.cases[i]
		if c.err != nil {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
				Message:   sarifText{Text: fmt.Sprintf("%s could not be read (%s): %v", c.unit, c.check, c.err)},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{sarifURI(c.unit)}}}}})
		}
		for j := range r.items[i] {
			if res, ok := sarifItem(r, c, &r.items[i][j]); ok {
				run.Results = append(run.Results, res)
			}
		}
	}
	run.Invocations = []sarifInvocation{inv}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifItem is an item's result; ignored findings have none.
func sarifItem(r *checkResult, c *checkCase, it *checkItem) (sarifResult, bool) {
	props := map[string]any{"check": c.check, "status": it.status, "unit": c.unit}
	if it.status == statusMissing {
		x := it.inst.exp
		res := sarifResult{RuleID: x.Kind.String(), RuleIndex: int(x.Kind) - 1, Level: "error", Kind: "fail",
			Message: sarifText{Text: it.headline(r.cfg)}, BaselineState: "absent", Properties: props,
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{sarifURI(r.cfg.File)},
				Region: &sarifRegion{StartLine: x.Line, StartColumn: x.Col}}}}}
		target := it.inst.dir
		if it.inst.file != "" {
			target = it.inst.file
		}
		rel := sarifLocation{ID: 1, PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{sarifURI(r.cfg.Display(target))}},
			Message: &sarifText{Text: "where the expected finding is missing"}}
		if x.Position >= 0 && it.inst.file != "" {
			rel.PhysicalLocation.Region = &sarifRegion{ByteOffset: &x.Position}
		}
		res.RelatedLocations = []sarifLocation{rel}
		return res, true
	}
	if it.status == statusIgnored {
		return sarifResult{}, false
	}
	f := &it.finding
	path, _ := it.where(c)
	loc := sarifLocation{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{sarifURI(path)}}}
	if f.Position >= 0 && f.File != "" {
		reg := &sarifRegion{ByteOffset: &f.Position}
		if f.To > f.Position {
			n := f.To - f.Position
			reg.ByteLength = &n
		}
		loc.PhysicalLocation.Region = reg
	}
	if f.Offset >= 0 {
		props["offset"] = f.Offset
	}
	if f.ProducerID >= 0 {
		props["producerId"] = f.ProducerID
	}
	if f.Subject != "" {
		props["subject"] = f.Subject
	}
	res := sarifResult{RuleID: f.Kind.String(), RuleIndex: int(f.Kind) - 1, Level: sarifLevel(f.Severity()), Kind: "fail",
		Message: sarifText{Text: f.Message}, Locations: []sarifLocation{loc}, BaselineState: "new", Properties: props}
	switch it.status {
	case statusExpected:
		res.BaselineState = "unchanged"
		res.Suppressions = []sarifSuppression{{Kind: "external",
			Justification: fmt.Sprintf("expected by %s:%d", r.cfg.File, it.inst.exp.Line)}}
	case statusNote:
		res.Level = "note"
	}
	return res, true
}
