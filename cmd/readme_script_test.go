package cmd

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// TestScriptReadme runs the commands shown in README.md, in order, as a
// testscript over a copy of the bundled testdata, and checks the output
// the README shows for them, so that the README's tour cannot drift from
// what kseg does.
//
// What counts as a command (README authors, read this):
//
//   - In a ```console (or ```shell-session) block, a line starting with
//     "$ " is a command and the lines after it, up to the next "$ ", are
//     its output. Each output line must appear as a whole line of kseg's
//     stdout (after a pipe too: `| grep X` and `| head` only select
//     lines); "…" in a line matches anything, and a line that is only "…"
//     is skipped.
//   - "$ echo $?" followed by a number N is the exit status of the command
//     before it, which must then not be a pipeline (in sh, $? after a
//     pipeline is its last command's status, not kseg's). Without it, a
//     command must exit 0, unless its line ends with "# exit N".
//   - In a ```sh (or ```bash, ```shell) block every line is a command,
//     with no output shown.
//   - Only kseg and "go run ." (the same program) are run; other commands
//     (go test, jq, grep) are not. Of a pipeline only kseg's side runs, and
//     redirections are dropped. A command naming an absolute path
//     (/var/lib/kafka/…) is an illustration and is not run; a path in
//     the metadata image (/, /image/…) is not a file and does not count.
func TestScriptReadme(t *testing.T) {
	script, n, err := readmeScript(clitest.RepoFile(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Skip("README.md shows no kseg commands")
	}
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "readme.txtar"), []byte(script))
	t.Logf("%d README commands", n)
	testscript.Run(t, scriptParams(t, dir))
}

// TestReadmeSetUp: the README's set-up says how to build from a clone
// (kseg is not a published module: "go install MODULE@latest" cannot
// work), the Go version go.mod requires, exactly, and what a first run
// with empty caches does (a minute of downloading and compiling).
func TestReadmeSetUp(t *testing.T) {
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(clitest.RepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	goVersion := m[1]
	s := clitest.RepoFile(t, "README.md")
	i := strings.Index(s, "\n## Set-up")
	if i < 0 {
		t.Fatal("README.md has no ## Set-up section")
	}
	setup := s[i:]
	if j := strings.Index(setup[1:], "\n## "); j >= 0 {
		setup = setup[:j+1]
	}
	for _, want := range []string{"go build -o kseg .", "go install .", "Go " + goVersion + " or later", "`go " + goVersion + "`", "go: downloading", "first"} {
		if !strings.Contains(setup, want) {
			t.Errorf("README set-up does not say %q:\n%s", want, setup)
		}
	}
	docs, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	cli, _ := filepath.Glob(filepath.Join("..", "docs", "cli", "*.md"))
	docs = append(docs, cli...)
	for _, p := range append(docs, filepath.Join("..", "README.md")) {
		b := testkit.ReadFile(t, p)
		for _, bad := range []string{"@latest", "go install github.com/kseg/kseg", "Go ≥"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s says %q: kseg is built from a clone, with the Go version go.mod names (%s)", p, bad, goVersion)
			}
		}
	}
}

// TestScriptDocPages runs the examples of the whole-broker views' pages
// (docs/groups.md, docs/txns.md, docs/metadata.md), of --format
// (docs/format.md), of status (docs/status.md) and of the CI recipes
// (docs/ci.md) as TestScriptReadme runs the README's, over the same copy
// of testdata: every command shown must exit as shown and print the lines
// shown.
func TestScriptDocPages(t *testing.T) {
	dir := t.TempDir()
	for _, page := range []string{"groups", "txns", "metadata", "format", "status", "ci"} {
		name := filepath.Join("docs", page+".md")
		script, n, err := docScript(name, clitest.RepoFile(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if n < 2 {
			t.Errorf("%s shows %d kseg commands; a page shows its worked example", name, n)
		}
		t.Logf("%s: %d commands", name, n)
		testkit.WriteFile(t, filepath.Join(dir, page+".txtar"), []byte(script))
	}
	testscript.Run(t, scriptParams(t, dir))
}

var (
	readmeExit   = regexp.MustCompile(`#\s*exit\s+(\d+)\s*$`)
	readmeEnvVar = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
	readmeStatus = regexp.MustCompile(`^\$ echo \$\?\s*$`)
	readmeNumber = regexp.MustCompile(`^\d+$`)
	readmeGrep   = regexp.MustCompile(`^\s*\|\s*grep\s+([A-Za-z0-9_-]+)\s*(#.*)?$`)
)

// readmeCmd is one command of the README and what it shows.
type readmeCmd struct {
	line     int
	text     string
	env      []string
	words    []string // kseg's arguments
	pipeline bool
	grep     string // PATTERN of a "| grep PATTERN" pipeline
	want     string // exit status
	output   []string
}

// readmeScript turns the README's commands into a testscript.
func readmeScript(readme string) (string, int, error) { return docScript("README.md", readme) }

// docScript turns the commands of a Markdown document (named name in
// messages and comments) into a testscript, by the rules of
// TestScriptReadme.
func docScript(name, readme string) (string, int, error) {
	var cmds []*readmeCmd
	var last *readmeCmd // the command whose output lines follow
	mode := ""          // "", "console" or "sh": the kind of fenced block
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		raw := lines[i]
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") {
			if mode != "" || strings.HasPrefix(line, "````") {
				mode, last = "", nil
				continue
			}
			switch strings.TrimSpace(strings.TrimPrefix(line, "```")) {
			case "console", "shell-session":
				mode = "console"
			case "sh", "bash", "shell":
				mode = "sh"
			default:
				mode = "other"
			}
			continue
		}
		if mode == "" || mode == "other" {
			continue
		}
		var text string
		switch {
		case mode == "console" && readmeStatus.MatchString(line):
			if i+1 >= len(lines) || !readmeNumber.MatchString(strings.TrimSpace(lines[i+1])) {
				return "", 0, fmt.Errorf("%s:%d: `echo $?` is not followed by a number", name, i+1)
			}
			if last != nil {
				if last.pipeline {
					return "", 0, fmt.Errorf("%s:%d: `echo $?` after a pipeline (%q) shows the status of its last command, not kseg's; show kseg's status without the pipe (e.g. `kseg … > /dev/null; echo $?`) or end the kseg line with `# exit N`", name, i+1, last.text)
				}
				last.want = strings.TrimSpace(lines[i+1])
			}
			i++
			last = nil
			continue
		case mode == "console" && strings.HasPrefix(line, "$ "):
			text = strings.TrimPrefix(line, "$ ")
		case mode == "console":
			if last != nil && line != "" {
				last.output = append(last.output, strings.TrimRight(raw, " "))
			}
			continue
		case mode == "sh":
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			text = line
		}
		last = nil
		c, err := parseReadmeCmd(name, i+1, text)
		if err != nil {
			return "", 0, err
		}
		if c != nil {
			cmds = append(cmds, c)
			last = c
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# generated from %s by docScript\n", name)
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n# %s:%d: %s\n", name, c.line, c.text)
		for _, e := range c.env {
			fmt.Fprintf(&b, "env %s\n", tsQuote(e))
		}
		b.WriteString("exitcode " + c.want + " kseg")
		for _, w := range c.words {
			b.WriteString(" " + tsQuote(w))
		}
		b.WriteString("\n")
		if c.grep != "" && !slices.ContainsFunc(c.output, func(o string) bool { return strings.TrimSpace(o) == "…" }) {
			// `| grep X` shows every line grep keeps, unless the README
			// elides some with a "…" line: a line it forgot (dump's
			// summary: line, say) is a README that lies.
			fmt.Fprintf(&b, "stdout -count=%d %s\n", len(c.output), tsQuote(regexp.QuoteMeta(c.grep)))
		}
		for _, out := range c.output {
			if strings.TrimSpace(out) == "…" {
				continue
			}
			parts := strings.Split(out, "…")
			for j := range parts {
				parts[j] = regexp.QuoteMeta(parts[j])
			}
			fmt.Fprintf(&b, "stdout %s\n", tsQuote("^"+strings.Join(parts, ".*")+"$"))
		}
		for _, e := range c.env {
			k, _, _ := strings.Cut(e, "=")
			fmt.Fprintf(&b, "env %s=\n", k)
		}
	}
	return b.String(), len(cmds), nil
}

// parseReadmeCmd reads one command line; nil when it is not one to run.
func parseReadmeCmd(name string, lineNo int, text string) (*readmeCmd, error) {
	c := &readmeCmd{line: lineNo, text: text, want: "0"}
	if m := readmeExit.FindStringSubmatch(text); m != nil {
		c.want = m[1]
	}
	words, rest, err := shellWords(text)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
	}
	c.pipeline = strings.HasPrefix(strings.TrimSpace(rest), "|") && !strings.HasPrefix(strings.TrimSpace(rest), "||")
	if m := readmeGrep.FindStringSubmatch(rest); m != nil {
		c.grep = m[1]
	}
	for len(words) > 0 && readmeEnvVar.MatchString(words[0]) {
		c.env, words = append(c.env, words[0]), words[1:]
	}
	switch {
	case len(words) >= 1 && words[0] == "kseg":
		c.words = words[1:]
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == ".":
		c.words = words[3:]
	default:
		return nil, nil // go test, cd, jq …: not kseg
	}
	for _, w := range c.words {
		// A path in the metadata image (kseg metadata ls /image/topics)
		// is not a file.
		if strings.HasPrefix(w, "/") && w != "/" && w != "/image" && !strings.HasPrefix(w, "/image/") {
			return nil, nil // an illustration: /var/lib/kafka/…
		}
	}
	return c, nil
}

// shellWords splits the first simple command of a shell line into words:
// single and double quotes and backslashes as sh reads them; it stops at
// an unquoted |, ;, &, <, > or # and returns the rest of the line from
// there.
func shellWords(s string) (words []string, rest string, err error) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, "", fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|;&<>", c) >= 0 || (c == '#' && !inWord):
			flush()
			return words, s[i:], nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}

// tsQuote quotes a word for a testscript line.
func tsQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t'#$\"\\") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", "''") + "'"
}

func TestReadmeScriptParsing(t *testing.T) {
	in := "intro `$ kseg not-in-a-block`\n```sh\n" +
		"go run . dump testdata/partitions/orders-0     # decode\n" +
		"go test ./...\n" +
		"```\n\n```console\n" +
		"$ kseg dump -o json --deep testdata/partitions/txn-0 | jq -c .type\n" +
		"$ kseg dump testdata/broken/crc-mismatch/events-0 > /dev/null\n" +
		"$ echo $?\n3\n" +
		"$ NO_COLOR=1 kseg dump 'a b'   # exit 1\n" +
		"$ kseg dump testdata/partitions/orders-0\n" +
		"=== testdata/partitions/orders-0/00000000000000000000.log (log)\n" +
		"…\n" +
		"baseOffset 0 count 1 … valid\n" +
		"$ kseg inject-barrier --dry-run /var/lib/kafka/data/orders-0   # print the plan\n" +
		"```\n```go\n$ kseg in-a-go-block\n```\n"
	got, n, err := readmeScript(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"exitcode 0 kseg dump testdata/partitions/orders-0\n",
		"exitcode 0 kseg dump -o json --deep testdata/partitions/txn-0\n",
		"exitcode 3 kseg dump testdata/broken/crc-mismatch/events-0\n",
		"env NO_COLOR=1\nexitcode 1 kseg dump 'a b'\nenv NO_COLOR=\n",
		`stdout '^=== testdata/partitions/orders-0/00000000000000000000\.log \(log\)$'`,
		`stdout '^baseOffset 0 count 1 .* valid$'`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	if n != 5 || strings.Contains(got, "kseg test") || strings.Contains(got, "/var/lib") || strings.Contains(got, "in-a-go-block") || strings.Contains(got, "not-in-a-block") {
		t.Errorf("%d commands:\n%s", n, got)
	}
	got, _, err = readmeScript("```console\n$ kseg dump x | grep MIRROR\na MIRROR\nb MIRROR\n$ kseg dump y | grep X\n…\n```\n")
	if err != nil || !strings.Contains(got, "stdout -count=2 MIRROR\n") || strings.Contains(got, "-count=0") {
		t.Errorf("| grep without an elision must show every line grep keeps: %v\n%s", err, got)
	}
	_, _, err = readmeScript("```console\n$ kseg dump x | grep ERROR\n$ echo $?\n3\n```\n")
	if err == nil || !strings.Contains(err.Error(), "after a pipeline") {
		t.Errorf("echo $? after a pipeline: %v", err)
	}
}
