// Package completion is kseg completion: cobra's completion command for
// bash, zsh, fish and PowerShell with kseg's examples (Finish), and the
// values every flag of the tree completes to (FlagValues).
package completion

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag-value completion. Without a completion function cobra lets the
// shell complete file names after every flag, so `kseg dump --output <TAB>`
// offered the directory listing. FlagValues gives every flag that
// takes a value an answer: its words, when the flag has a fixed set; the
// file system, only for the flags that take a path; nothing otherwise.

// flagWords are the value sets the usage text does not spell as a|b|c.
var flagWords = map[string][]string{
	"from-snapshot": {"latest", "none"},
	"clock":         {"log", "now"},
	"now":           {"log", "now"}, // txns: also epoch ms or RFC 3339, which no list holds
	"mode":          {"truncate", "abort"},
}

// pathFlags take a path: files (false) or directories only (true).
var pathFlags = map[string]bool{
	"write-snapshot": false,
	"backup-dir":     true,
	"files":          false, // kafka-dump-log --files (and dump's spelling of it)
}

var usageChoices = regexp.MustCompile(`\b([a-z0-9]+(?:\|[a-z0-9]+)+)\b`)

// FlagValues gives each flag of c that takes a value its completion: its
// words, the file system for a path, or nothing.
func FlagValues(c *cobra.Command) {
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" || f.Hidden {
			return
		}
		if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
			return
		}
		var fn cobra.CompletionFunc
		if dirs, ok := pathFlags[f.Name]; ok {
			directive := cobra.ShellCompDirectiveDefault
			if dirs {
				directive = cobra.ShellCompDirectiveFilterDirs
			}
			fn = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) { return nil, directive }
		} else {
			// The usage is read when a shell asks, not at every start:
			// matching every flag's usage cost each run of kseg 0.6 ms.
			name, usage := f.Name, f.Usage
			fn = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				words := flagWords[name]
				if m := usageChoices.FindStringSubmatch(usage); words == nil && m != nil {
					words = strings.Split(m[1], "|")
				}
				return words, cobra.ShellCompDirectiveNoFileComp
			}
		}
		// Registration fails only for an unknown flag or a second
		// registration, both excluded above.
		_ = c.RegisterFlagCompletionFunc(f.Name, fn)
	})
}

// Finish documents cobra's completion command with kseg's examples.
func Finish(comp *cobra.Command) {
	comp.Example = `  source <(kseg completion bash)                 # this shell only
  kseg completion bash > /etc/bash_completion.d/kseg
  kseg completion zsh > "${fpath[1]}/_kseg"
  kseg completion fish > ~/.config/fish/completions/kseg.fish
  kseg completion powershell | Out-String | Invoke-Expression`
	examples := map[string]string{
		"bash":       "  source <(kseg completion bash)\n  kseg completion bash > /etc/bash_completion.d/kseg",
		"zsh":        "  kseg completion zsh > \"${fpath[1]}/_kseg\"\n  kseg completion zsh --no-descriptions > _kseg",
		"fish":       "  kseg completion fish | source\n  kseg completion fish > ~/.config/fish/completions/kseg.fish",
		"powershell": "  kseg completion powershell | Out-String | Invoke-Expression",
	}
	for _, sh := range comp.Commands() {
		if ex, ok := examples[sh.Name()]; ok {
			sh.Example = ex
		}
	}
}
