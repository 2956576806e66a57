package cmd

import (
	"strings"
	"testing"
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
		r := runKseg("completion", shell)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("completion %s: exit %d, stderr %q", shell, r.code, r.stderr)
		}
		if len(r.stdout) < 500 || !strings.Contains(r.stdout, mark) {
			t.Errorf("completion %s: %d bytes, no %q", shell, len(r.stdout), mark)
		}
	}
	h := runKseg("completion", "--help")
	for _, want := range []string{"bash", "zsh", "fish", "powershell", "Examples:", "source <(kseg completion bash)", "EXIT STATUS"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("completion --help lacks %q", want)
		}
	}
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
		r := runKseg(tc.args...)
		if r.code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: no %q in %q", tc.args, w, r.stdout)
			}
		}
	}
}
