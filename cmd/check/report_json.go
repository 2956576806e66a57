package check

import (
	"encoding/json"
	"io"
)

// The JSON lines of kseg check (docs/ci.md): one object per line with a
// type — "finding" (with its status), "missing", "unreadable", "skipped"
// (checks that did not apply) — then one "summary". Explicit wire structs,
// not the domain's.

type checkJSONFinding struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Check  string `json:"check"`
	Suite  string `json:"suite"`
	Unit   string `json:"unit"`
	// The finding as every command writes it (finding.Finding's JSON:
	// kind, severity, file, position, offset, … message).
	Finding json.RawMessage `json:"finding"`
	// FailOn is the threshold a finding no expectation names was judged
	// against.
	FailOn string `json:"failOn,omitempty"`
	// Expectation is where the expectation it met is written.
	Expectation *checkJSONWhere `json:"expectation,omitempty"`
}

type checkJSONWhere struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

type checkJSONMissing struct {
	Type        string         `json:"type"`
	Check       string         `json:"check"`
	Suite       string         `json:"suite"`
	Unit        string         `json:"unit"`
	Kind        string         `json:"kind"`
	Dir         string         `json:"dir"`
	File        string         `json:"file,omitempty"`
	Position    *int64         `json:"position,omitempty"`
	Offset      *int64         `json:"offset,omitempty"`
	Subject     string         `json:"subject,omitempty"`
	Count       *int64         `json:"count,omitempty"`
	Found       int64          `json:"found"`
	Expectation checkJSONWhere `json:"expectation"`
	Message     string         `json:"message"`
}

type checkJSONCase struct {
	Type   string `json:"type"`
	Check  string `json:"check"`
	Suite  string `json:"suite"`
	Unit   string `json:"unit"`
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type checkJSONSummary struct {
	Type       string `json:"type"`
	Config     string `json:"config"`
	Checks     int    `json:"checks"`
	Failed     int    `json:"failed"`
	New        int    `json:"new"`
	Missing    int    `json:"missing"`
	Unreadable int    `json:"unreadable"`
	Expected   int    `json:"expected"`
	Ignored    int    `json:"ignored"`
	Notes      int    `json:"notes"`
	ExitCode   int    `json:"exitCode"`
}

func renderCheckJSON(w io.Writer, _ *checkReportContext, r *checkResult) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	opt := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	failed := 0
	for i := range r.cases {
		c := &r.cases[i]
		if r.caseFailed(i) {
			failed++
		}
		switch {
		case c.err != nil:
			if err := enc.Encode(checkJSONCase{Type: "unreadable", Check: c.check, Suite: c.suite, Unit: c.unit, Error: c.err.Error()}); err != nil {
				return err
			}
		case c.skip != "":
			if err := enc.Encode(checkJSONCase{Type: "skipped", Check: c.check, Suite: c.suite, Unit: c.unit, Reason: c.skip}); err != nil {
				return err
			}
		}
		for j := range r.items[i] {
			it := &r.items[i][j]
			var v any
			if it.status == statusMissing {
				x := it.inst.exp
				m := checkJSONMissing{Type: "missing", Check: c.check, Suite: c.suite, Unit: c.unit, Kind: x.Kind.String(),
					Dir: r.cfg.Display(it.inst.dir), Position: opt(x.Position), Offset: opt(x.Offset), Subject: x.Subject,
					Count: opt(x.Count), Found: it.inst.found, Message: it.headline(r.cfg),
					Expectation: checkJSONWhere{r.cfg.File, x.Line, x.Col}}
				if it.inst.file != "" {
					m.File = r.cfg.Display(it.inst.file)
				}
				v = m
			} else {
				b, err := json.Marshal(it.finding)
				if err != nil {
					return err
				}
				jf := checkJSONFinding{Type: "finding", Status: it.status, Check: c.check, Suite: c.suite, Unit: c.unit, Finding: b}
				if it.inst != nil {
					jf.Expectation = &checkJSONWhere{r.cfg.File, it.inst.exp.Line, it.inst.exp.Col}
				} else {
					jf.FailOn = it.failOn.String()
				}
				v = jf
			}
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
	}
	return enc.Encode(checkJSONSummary{Type: "summary", Config: r.cfg.DisplayFile(), Checks: len(r.cases), Failed: failed,
		New: r.counts[statusNew], Missing: r.counts[statusMissing], Unreadable: r.unreadable, Expected: r.counts[statusExpected],
		Ignored: r.counts[statusIgnored], Notes: r.counts[statusNote], ExitCode: r.exitCode()})
}
