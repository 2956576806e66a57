package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
)

// TestEveryJSONCommandHasFormat: --format is on every command that writes
// json, and on no other.
func TestEveryJSONCommandHasFormat(t *testing.T) {
	s, _, _ := ui.TestStreams()
	n := 0
	ui.WalkCommands(NewRootCmd(s), func(c *cobra.Command) {
		out := c.Flags().Lookup("output")
		hasJSON := out != nil && strings.Contains(out.Usage, "json")
		if got := c.Flags().Lookup("format") != nil; got != hasJSON {
			t.Errorf("%s: --format %v, json output %v", c.CommandPath(), got, hasJSON)
		}
		if hasJSON {
			n++
		}
	})
	if n < 15 {
		t.Errorf("only %d commands with json output and --format", n)
	}
}

func TestFormatTemplate(t *testing.T) {
	ld := clitest.Testdata("logdirs/broker-1")
	for _, tc := range []struct {
		args []string
		code int
		want string // the whole stdout
	}{
		{[]string{"groups", "--format", "{{.group}} {{.state}}", "--group", "billing", ld}, ui.ExitOK, "billing Stable\n"},
		// A template that selects by type prints nothing, not a blank
		// line, for the other objects (the finding).
		{[]string{"groups", "--format", `{{if eq .type "group"}}{{.group}}{{end}}`, ld}, ui.ExitFindings, "audit\nbilling\n"},
		// null prints nothing and is false; json writes it back null.
		{[]string{"groups", "--format", `{{range .offsets}}{{.lag}}|{{if .lag}}set{{else}}null{{end}}|{{json .lag}}\n{{end}}`, ld}, ui.ExitFindings, "|null|null\n3|set|3\n"},
		// Integers compare as integers.
		{[]string{"groups", "--format", `{{range .offsets}}{{if gt .committedOffset 10}}{{.committedOffset}}{{end}}{{end}}`, ld}, ui.ExitFindings, "12\n"},
		// \t between actions is a tab; inside an action the template's own.
		{[]string{"status", "--format", `{{if eq .type "logDirStatus"}}{{base .logDir}}\t{{.partitions}}{{"!"}}{{end}}`, ld}, ui.ExitOK, "broker-1\t7!\n"},
		{[]string{"txns", "--format", `{{if eq .type "transaction"}}{{upper .transactionalId}} {{time .transactionLastUpdateTimestamp}}{{end}}`, ld}, ui.ExitFindings,
			"PAY-1 2023-11-14T22:14:30.001Z\nPAY-2 2023-11-14T22:13:32.001Z\n"},
	} {
		r := clitest.Run(tc.args...)
		if r.Code != tc.code || r.Stdout != tc.want {
			t.Errorf("%q: exit %d, stdout %q; want %d, %q\n%s", tc.args, r.Code, r.Stdout, tc.code, tc.want, r.Stderr)
		}
	}
}

func TestFormatErrors(t *testing.T) {
	ld := clitest.Testdata("logdirs/broker-1")
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"groups", "--format", "{{.group", ld}, "--format: template: --format:1: unclosed action"},
		{[]string{"groups", "-o", "table", "--format", "{{.group}}", ld}, "cannot be combined with --output table"},
		// A template for the groups meets the finding: the error says how
		// to select.
		{[]string{"groups", "--format", "{{len .members}}", ld}, `on a {"type":"finding"} object; a template for some objects only selects them: {{if eq .type "group"}}`},
	} {
		r := clitest.Run(tc.args...)
		if r.Code != ui.ExitUsage || !strings.Contains(r.Stderr, tc.err) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.Code, r.Stderr, ui.ExitUsage, tc.err)
		}
	}
}
