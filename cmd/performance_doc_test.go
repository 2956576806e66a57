package cmd

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/cmd/internal/clitest"
	"github.com/kseg/kseg/decode/decodetest/testkit"
)

// TestPerformanceDocMatchesBenchScript: the targets table of
// docs/performance.md lists exactly the targets testdata/bench/run.sh
// measures, by the names run.sh prints and with its goals. Both sides are
// read from the files, so a target added to run.sh (a pair or row call, or
// a call of a function that makes one, such as rss) fails here until the
// doc has its row, and a row the script no longer measures fails too.
func TestPerformanceDocMatchesBenchScript(t *testing.T) {
	script := testkit.ReadFile(t, clitest.Testdata("bench/run.sh"))
	doc := clitest.RepoFile(t, "docs/performance.md")
	measured := benchTargets(t, string(script))
	if len(measured) < 5 || measured["dump -o json (batches, CRCs) / crcfloor"] != "<=0.7" {
		t.Fatalf("the parse of run.sh is off: %v", measured)
	}
	documented := docTargets(t, doc)
	for name, goal := range measured {
		g, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("docs/performance.md's targets table has no row %q (goal %s) that run.sh measures", name, goal)
		case g != goal:
			t.Errorf("target %q: docs/performance.md gives goal %s, run.sh %s", name, g, goal)
		}
	}
	for name := range documented {
		if _, ok := measured[name]; !ok {
			t.Errorf("docs/performance.md's targets table has a row %q that run.sh does not measure", name)
		}
	}
}

// normGoal spells a goal one way: "≤ 1.5", "<=1.5"; "≥ 1.6×", ">=1.6".
func normGoal(g string) string {
	g = strings.NewReplacer("≤", "<=", "≥", ">=", "×", "", " ", "").Replace(g)
	return strings.TrimSpace(g)
}

var (
	shVar    = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*|[1-9])\}?`)
	shAssign = regexp.MustCompile(`^[A-Z_]+$`)
)

// benchTargets reads run.sh's targets, name → goal: the calls of pair
// (NAME GOAL …) and row (NAME MEASURED FLOOR RATIO CPU-RATIO GOAL RESULT)
// at the top level, and of the functions whose body calls row, pair or such
// a function defined before it (their $1… replaced by the call's
// arguments); variables take the defaults the script assigns at the top
// level (SIZE=1GiB …).
func benchTargets(t *testing.T, script string) map[string]string {
	t.Helper()
	// Join continued lines.
	var lines []string
	cur := ""
	for _, l := range strings.Split(script, "\n") {
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	vars := map[string]string{}
	templates := map[string][][]string{} // function → its calls of row, pair and templates
	fn := ""                             // the function being read
	targets := map[string]string{}
	var call func(words []string, args []string)
	expand := func(s string, args []string) string {
		return shVar.ReplaceAllStringFunc(s, func(m string) string {
			k := shVar.FindStringSubmatch(m)[1]
			if k[0] >= '1' && k[0] <= '9' {
				if i := int(k[0] - '0'); i < len(args) {
					return args[i]
				}
				return m
			}
			if v, ok := vars[k]; ok {
				return v
			}
			return m
		})
	}
	call = func(words []string, args []string) {
		arg := func(i int) string {
			if i < len(words) {
				return strings.TrimSpace(expand(words[i], args))
			}
			return ""
		}
		switch words[0] {
		case "pair":
			targets[arg(1)] = normGoal(arg(2))
		case "row":
			targets[arg(1)] = normGoal(arg(6))
		default:
			callArgs := make([]string, len(words))
			for i, w := range words {
				callArgs[i] = expand(w, args)
			}
			for _, tpl := range templates[words[0]] {
				call(tpl, callArgs)
			}
		}
	}
	funcStart := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\(\)\s*\{(.*)$`)
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if m := funcStart.FindStringSubmatch(trimmed); m != nil && fn == "" {
			if strings.HasSuffix(strings.TrimSpace(m[2]), "}") {
				continue // a one-line function (spread)
			}
			fn = m[1]
			continue
		}
		if fn != "" {
			if line == "}" {
				fn = ""
				continue
			}
			if fn == "row" || fn == "pair" {
				continue
			}
			if words, _, err := shellWords(trimmed); err == nil && len(words) > 0 && (words[0] == "row" || words[0] == "pair" || templates[words[0]] != nil) {
				templates[fn] = append(templates[fn], words)
			}
			continue
		}
		// Top level: every simple command of the line.
		rest := trimmed
		for rest != "" {
			words, r, err := shellWords(rest)
			if err != nil {
				t.Fatalf("run.sh: %v", err)
			}
			for len(words) > 0 && slices.Contains([]string{"then", "else", "do", "!"}, words[0]) {
				words = words[1:]
			}
			if len(words) > 0 {
				if k, _, ok := strings.Cut(words[0], "="); ok && shAssign.MatchString(k) {
					for _, w := range words {
						if k, v, ok := strings.Cut(w, "="); ok {
							if _, seen := vars[k]; !seen {
								vars[k] = v
							}
						}
					}
				} else if words[0] == "pair" || words[0] == "row" || templates[words[0]] != nil {
					call(words, nil)
				}
			}
			rest = strings.TrimLeft(r, ";&|<> \t")
			if strings.HasPrefix(rest, "#") {
				break
			}
		}
	}
	return targets
}

// docTargets reads the targets table of docs/performance.md (the first
// table whose header starts "| target"), name → goal; a name's
// backticks and a leading "—" are not part of it.
func docTargets(t *testing.T, doc string) map[string]string {
	t.Helper()
	targets := map[string]string{}
	in, goalCol := false, -1
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 3 {
			if in {
				break
			}
			continue
		}
		cells = cells[1 : len(cells)-1]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !in {
			if strings.HasPrefix(cells[0], "target") {
				in, goalCol = true, slices.Index(cells, "goal")
			}
			continue
		}
		if strings.Trim(cells[0], "-") == "" || goalCol < 0 || goalCol >= len(cells) {
			continue
		}
		name := strings.TrimSpace(strings.TrimPrefix(strings.ReplaceAll(cells[0], "`", ""), "—"))
		targets[name] = normGoal(cells[goalCol])
	}
	if len(targets) == 0 {
		t.Fatal(`docs/performance.md has no targets table ("| target | … | goal |")`)
	}
	return targets
}

// TestBenchTargetsParse: the reading of run.sh finds targets however the
// script calls them: pair and row at the top level, inside if/else and
// after "then" on one line, continued lines, and functions that call row
// (or a function that does) with their arguments and the script's
// variables.
func TestBenchTargetsParse(t *testing.T) {
	script := `SIZE=1GiB QUICK=0
row() { # row TARGET MEASURED FLOOR RATIO CPU-RATIO GOAL RESULT
  ROWS+=("$1|$2")
}
pair() {
  local name=$1 goal=$2; shift 3
  row "$name" "$(spread "$a")" "x" "$ratio" "$cpu" "$goal" "$ok"
}
spread() { awk '{print}' <<<"$1"; }
cmp_row() {
  local r; r=$(ratio "$3" "$4")
  row "$1" "$(spread "$3")" "$(spread "$4")" "$r" "$(ratio "$3" "$4" 6)" "$2" "$ok"
}
progress_row() {
  timed 5 - - -- x $2 :: y $2
  cmp_row "progress: $1 / none" "<=1.02" "${OUT[0]}" "${OUT[1]}"
}
pair "a / b" "<=1.5" -- \
  cmd :: base
if true; then
  pair "c / d" ">=2" -- x :: y
else
  row "c / d" "-" "-" "-" "-" ">=2" SKIP
fi
rss() { # rss NAME FILE
  row "peak RSS, $1 (x / y)" "$((a / 1024)) MiB" "-" "-" "-" "<=128 MiB" \
    "$([ "$peak" -le 5 ] && echo PASS || echo FAIL)"
}
rss "$SIZE segment" "$SEG"
if [ $QUICK = 0 ]; then rss "4 GiB segment" "$BIG"; fi
row "  same (sha256)" "$s2" "$s1" "-" "-" "equal" "$ok"
cmp_row "e / f" "<=0.1" "${OUT[2]}" "${OUT[0]}"
progress_row dump "dump -o json $SEG"
`
	got := benchTargets(t, script)
	want := map[string]string{"a / b": "<=1.5", "c / d": ">=2", "peak RSS, 1GiB segment (x / y)": "<=128MiB",
		"peak RSS, 4 GiB segment (x / y)": "<=128MiB", "same (sha256)": "equal", "e / f": "<=0.1", "progress: dump / none": "<=1.02"}
	if len(got) != len(want) {
		t.Errorf("targets %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("target %q: goal %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
