package completion_test

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
)

// TestCompletionScripts: cobra's completion command is present for the
// four shells, each script is non-empty and names kseg, and the command is
// documented (examples, EXIT STATUS).
func TestCompletionScripts(t *testing.T) {
	marks := map[string]string{
		"bash":       "__start_kseg",
		"zsh":        "#compdef kseg",
		"fish":       "complete -c kseg",
		"powershell": "Register-ArgumentCompleter",
	}
	for shell, mark := range marks {
		r := clitest.Run("completion", shell)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("completion %s: exit %d, stderr %q", shell, r.Code, r.Stderr)
		}
		if len(r.Stdout) < 500 || !strings.Contains(r.Stdout, mark) {
			t.Errorf("completion %s: %d bytes, no %q", shell, len(r.Stdout), mark)
		}
	}
	h := clitest.Run("completion", "--help")
	clitest.MustContain(t, h.Stdout, "bash", "zsh", "fish", "powershell", "Examples:", "source <(kseg completion bash)", "EXIT STATUS")
}

// TestCompletionCompletes asks the hidden __complete command what a shell
// would: subcommands at the top, flags of dump, values of --output.
func TestCompletionCompletes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", ""}, []string{"dump", "explain", "replay-psm", "version", "completion"}},
		{[]string{"__complete", "dump", "--ou"}, []string{"--output"}},
	} {
		r := clitest.Run(tc.args...)
		if r.Code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, r.Code, r.Stderr)
		}
		clitest.MustContain(t, r.Stdout, tc.want...)
	}
}

// TestCompletionFlagValuesNotFiles: a flag's value completes to its words,
// or to nothing, never to the file names the shell would offer when no
// completion is registered (directive 0, ShellCompDirectiveDefault); only
// the flags that take a path complete paths.
func TestCompletionFlagValuesNotFiles(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"dump", "--output"}, []string{"text", "table", "wide", "json", "kafka"}, ":4"},
		{[]string{"replay-psm", "--output"}, []string{"text", "table", "wide", "json"}, ":4"},
		{[]string{"dump", "--color"}, []string{"auto", "always", "never"}, ":4"},
		{[]string{"replay-psm", "--from-snapshot"}, []string{"latest", "none"}, ":4"},
		{[]string{"inject-barrier", "--mode"}, []string{"truncate", "abort"}, ":4"},
		{[]string{"dump", "--value-format"}, []string{"auto", "utf8", "hex", "base64"}, ":4"},
		{[]string{"replay-psm", "--jobs"}, nil, ":4"},
		{[]string{"dump", "--offsets"}, nil, ":4"},
		{[]string{"repair", "--backup-dir"}, nil, ":16"},
		{[]string{"replay-psm", "--write-snapshot"}, nil, ":0"},
		{[]string{"kafka-dump-log", "--files"}, nil, ":0"},
		{[]string{"dump", "--files"}, nil, ":0"},
		{[]string{"txns", "--now"}, []string{"log", "now"}, ":4"},
		{[]string{"replay-psm", "--clock"}, []string{"log", "now"}, ":4"},
		{[]string{"groups", "--output"}, []string{"text", "table", "wide", "json"}, ":4"},
		{[]string{"txns", "--transactional-id"}, nil, ":4"},
	} {
		r := clitest.Run(append(append([]string{"__complete"}, tc.args...), "")...)
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if r.Code != 0 || len(lines) == 0 || lines[len(lines)-1] != tc.directive {
			t.Errorf("%v: exit %d, directive %q, want %s", tc.args, r.Code, lines[len(lines)-1], tc.directive)
			continue
		}
		if got := lines[:len(lines)-1]; strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: completes %q, want %q", tc.args, got, tc.want)
		}
	}
}
