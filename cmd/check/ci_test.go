package check

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// ciDoc is docs/ci.md's fenced blocks by language.
func ciDocBlocks(t *testing.T) map[string][]string {
	t.Helper()
	blocks := map[string][]string{}
	lang, cur := "", []string(nil)
	for _, line := range strings.Split(clitest.RepoFile(t, "docs/ci.md"), "\n") {
		switch {
		case strings.HasPrefix(line, "```") && lang == "":
			lang, cur = strings.TrimPrefix(line, "```"), nil
		case strings.HasPrefix(line, "```"):
			blocks[lang] = append(blocks[lang], strings.Join(cur, "\n"))
			lang = ""
		case lang != "":
			cur = append(cur, line)
		}
	}
	return blocks
}

// ksegCheckArgs are the arguments of every "kseg check" command in s.
var ksegCheckLine = regexp.MustCompile(`kseg check[^'"\n#]*`)

// checkFlagsParse fails unless args parse with kseg check's own flags
// (and the tree's global ones): with --help added, the tree parses them
// and prints the help instead of running the check.
func checkFlagsParse(t *testing.T, where, line string) {
	t.Helper()
	words := strings.Fields(strings.TrimPrefix(line, "kseg check"))
	if r := clitest.Run(append(append([]string{"check"}, words...), "--help")...); r.Code != ui.ExitOK {
		t.Errorf("%s: %q: exit %d: %s", where, line, r.Code, r.Stderr)
	}
}

// TestCIDocExamplesParse: the CI examples of docs/ci.md are what GitHub
// Actions, GitLab CI, Jenkins and pre-commit read — the YAML parses into
// the shape each expects, the Jenkinsfile is a declarative pipeline whose
// junit step reads the report kseg writes — and every kseg check command
// in them parses with kseg check's flags.
func TestCIDocExamplesParse(t *testing.T) {
	t.Parallel()
	blocks := ciDocBlocks(t)
	var sawWorkflow, sawAction, sawGitLab, sawPreCommit, sawConfig int
	for i, y := range blocks["yaml"] {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(y), &doc); err != nil {
			t.Errorf("docs/ci.md yaml block %d: %v\n%s", i+1, err, y)
			continue
		}
		for _, m := range ksegCheckLine.FindAllString(y, -1) {
			checkFlagsParse(t, "docs/ci.md yaml block", m)
		}
		switch first := strings.SplitN(y, "\n", 2)[0]; {
		case strings.Contains(first, ".github/workflows/"):
			sawWorkflow++
			jobs, _ := doc["jobs"].(map[string]any)
			if doc["on"] == nil || len(jobs) == 0 {
				t.Errorf("a workflow without on: or jobs:\n%s", y)
			}
			for name, j := range jobs {
				steps, _ := j.(map[string]any)["steps"].([]any)
				if len(steps) == 0 || j.(map[string]any)["runs-on"] == nil {
					t.Errorf("job %s: no steps or runs-on", name)
				}
				for _, s := range steps {
					st := s.(map[string]any)
					if (st["uses"] == nil) == (st["run"] == nil) {
						t.Errorf("job %s: a step needs uses: or run: (one): %v", name, st)
					}
					if u, _ := st["uses"].(string); strings.HasPrefix(u, "kseg/kseg/.ci/action@") {
						sawAction++
						checkActionInputs(t, st["with"])
					}
				}
			}
		case strings.Contains(first, ".gitlab-ci.yml"):
			sawGitLab++
			job, _ := doc["kafka-fixtures"].(map[string]any)
			script, _ := job["script"].([]any)
			reports, _ := job["artifacts"].(map[string]any)["reports"].(map[string]any)
			if len(script) == 0 || reports["junit"] != "kseg-check.xml" || !strings.Contains(y, "--report junit=kseg-check.xml") {
				t.Errorf("the GitLab job does not publish the JUnit report kseg writes:\n%s", y)
			}
		case strings.Contains(first, ".pre-commit-config.yaml"):
			sawPreCommit++
			if !strings.Contains(y, "id: kseg-check") {
				t.Errorf("the pre-commit example does not use the hook:\n%s", y)
			}
		case strings.Contains(first, "kseg-check.yaml"):
			sawConfig++
			checkDocConfigLoads(t, y)
		}
	}
	if sawWorkflow < 2 || sawAction != 1 || sawGitLab != 1 || sawPreCommit != 1 || sawConfig != 1 {
		t.Errorf("examples: %d workflows (%d with the action), %d GitLab, %d pre-commit, %d expectations files", sawWorkflow, sawAction, sawGitLab, sawPreCommit, sawConfig)
	}
	if len(blocks["groovy"]) != 1 {
		t.Fatalf("%d Jenkinsfiles", len(blocks["groovy"]))
	}
	checkJenkinsfile(t, blocks["groovy"][0])
	for _, b := range append(blocks["sh"], blocks["console"]...) {
		for _, m := range ksegCheckLine.FindAllString(b, -1) {
			checkFlagsParse(t, "docs/ci.md", m)
		}
	}
}

// checkDocConfigLoads: the documented expectations file is one kseg
// reads, once the paths it names exist.
func checkDocConfigLoads(t *testing.T, y string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"fixtures/broken/crc-mismatch/events-0", "fixtures/healthy/orders-0", "fixtures/broker-1",
		"fixtures/chains/failover/a/orders-0", "fixtures/chains/failover/b/orders-0"} {
		clitest.Mkdir(t, filepath.Join(dir, d))
	}
	testkit.WriteFile(t, filepath.Join(dir, "fixtures/broken/crc-mismatch/events-0/00000000000000000000.log"), nil)
	p := writeCheckConfig(t, dir, y)
	cfg, err := expect.Load(p)
	if err != nil {
		t.Fatalf("docs/ci.md's expectations file: %v", err)
	}
	if len(cfg.Entries) != 4 || cfg.FailOn.String() != "warning" || len(cfg.Entries[3].Edges) != 1 {
		t.Errorf("docs/ci.md's expectations file reads as %+v", cfg)
	}
	// The error the page shows is the one kseg gives.
	bad := strings.Replace(y, "        position: 214", "        pos: 214", 1)
	r := clitest.Run("check", "--config", writeCheckConfig(t, dir, bad), dir)
	line := regexp.MustCompile(`kseg: \S+:(\d+:\d+): unknown key "pos" in an expected finding \(known: kind, file, position, offset, subject, count\)`)
	if m := line.FindStringSubmatch(r.Stderr); r.Code != ui.ExitUsage || m == nil {
		t.Errorf("a misspelt key: exit %d\n%s", r.Code, r.Stderr)
	}
}

// checkJenkinsfile: a declarative pipeline (brackets balanced, pipeline
// > agent, stages > stage > steps, post > junit) whose junit step reads
// the file kseg check writes.
func checkJenkinsfile(t *testing.T, g string) {
	t.Helper()
	depth := map[rune]int{}
	pairs := map[rune]rune{'}': '{', ')': '(', ']': '['}
	var quote rune
	for _, r := range g {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '{' || r == '(' || r == '[':
			depth[r]++
		case pairs[r] != 0:
			depth[pairs[r]]--
			if depth[pairs[r]] < 0 {
				t.Fatalf("the Jenkinsfile closes %c it never opened", r)
			}
		}
	}
	if quote != 0 || depth['{'] != 0 || depth['('] != 0 || depth['['] != 0 {
		t.Errorf("the Jenkinsfile is unbalanced: quote %q, %v", quote, depth)
	}
	order := []string{"pipeline {", "agent ", "stages {", "stage(", "steps {", "post {", "always {", "junit "}
	at := 0
	for _, w := range order {
		i := strings.Index(g[at:], w)
		if i < 0 {
			t.Errorf("the Jenkinsfile has no %q after position %d", w, at)
			continue
		}
		at += i
	}
	m := regexp.MustCompile(`--report junit=(\S+)`).FindStringSubmatch(g)
	if m == nil || !strings.Contains(g, "junit testResults: '"+m[1]+"'") {
		t.Errorf("the junit step does not read the report kseg writes")
	}
	for _, c := range ksegCheckLine.FindAllString(g, -1) {
		checkFlagsParse(t, "Jenkinsfile", c)
	}
}

// checkActionInputs: the workflow's with: names inputs the action has.
func checkActionInputs(t *testing.T, with any) {
	t.Helper()
	inputs := actionInputs(t)
	for k := range with.(map[string]any) {
		if _, ok := inputs[k]; !ok {
			t.Errorf("the workflow gives the action an input it does not have: %s", k)
		}
	}
}

func actionInputs(t *testing.T) map[string]any {
	t.Helper()
	var a map[string]any
	b := []byte(clitest.RepoFile(t, ".ci/action/action.yml"))
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a["inputs"].(map[string]any)
}

// TestCIActionAndHooks: .ci/action/action.yml is a composite action whose
// every input is used and every reference is an input; its run steps say
// their shell; .pre-commit-hooks.yaml, at the root where pre-commit looks,
// runs kseg check.
func TestCIActionAndHooks(t *testing.T) {
	t.Parallel()
	b := []byte(clitest.RepoFile(t, ".ci/action/action.yml"))
	var a struct {
		Name, Description string
		Inputs            map[string]struct{ Description, Default string }
		Runs              struct {
			Using string
			Steps []map[string]any
		}
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("action.yml: %+v", a)
	}
	for _, s := range a.Runs.Steps {
		if s["run"] != nil && s["shell"] == nil {
			t.Errorf("a run step without shell: (composite actions require it): %v", s)
		}
	}
	used := regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(string(b), -1)
	seen := map[string]bool{}
	for _, m := range used {
		seen[m[1]] = true
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	for k, in := range a.Inputs {
		if !seen[k] || in.Description == "" {
			t.Errorf("input %s: used %v, description %q", k, seen[k], in.Description)
		}
	}
	var hooks []map[string]any
	hb := []byte(clitest.RepoFile(t, ".pre-commit-hooks.yaml"))
	if err := yaml.Unmarshal(hb, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0]["id"] != "kseg-check" || hooks[0]["entry"] != "kseg check" || hooks[0]["language"] != "golang" ||
		hooks[0]["pass_filenames"] != false {
		t.Errorf(".pre-commit-hooks.yaml: %v", hooks)
	}
	files := regexp.MustCompile(hooks[0]["files"].(string))
	for _, name := range []string{"a/orders-0/00000000000000000000.log", "x/leader-epoch-checkpoint", "kseg-check.yaml", "b/00000000000000000026.snapshot"} {
		if !files.MatchString(name) {
			t.Errorf("the hook does not run when %s changes", name)
		}
	}
	if files.MatchString("README.md") {
		t.Errorf("the hook runs for README.md")
	}
}
