// Command house prints the sizes issue 26 holds the tree to, so that a
// change can see what it does to them: the largest non-test, non-generated
// files and functions, the lines of every package (cmd/ and the domain
// floors), what is over a limit, and — when the `duplicates` tool is on
// PATH — the number of duplicated-run pairs, with generated files,
// without them, and without them with import lines passed over.
// cmd/house_sizes_test.go fails on what is over a limit and not on its
// allow-list. Run it from the repository root:
//
//	go run ./testdata/house          # the 15 largest of each
//	go run ./testdata/house -n 40    # more rows
//	go run ./testdata/house -dups=false
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kseg/kseg/testdata/house/sizes"
)

func main() {
	root := flag.String("root", ".", "the module's root")
	n := flag.Int("n", 15, "rows of the largest files and functions")
	dups := flag.Bool("dups", true, "count duplicated-run pairs with `duplicates` when it is on PATH")
	flag.Parse()
	t, err := sizes.Measure(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	printFiles(w, t, *n)
	printFuncs(w, t, *n)
	printPackages(w, t)
	printOver(w, t)
	w.Flush()
	if *dups {
		printDuplicates(os.Stdout, *root, t)
	}
}

// printFiles lists the n largest counted files.
func printFiles(w io.Writer, t *sizes.Tree, n int) {
	fmt.Fprintf(w, "largest files (non-test, non-generated; limit %d)\n", sizes.MaxFileLines)
	for _, f := range t.Files {
		if !f.Counted() {
			continue
		}
		if n--; n < 0 {
			break
		}
		fmt.Fprintf(w, "%6d  %s\n", f.Lines, f.Path)
	}
}

// printFuncs lists the n longest functions of counted files.
func printFuncs(w io.Writer, t *sizes.Tree, n int) {
	fmt.Fprintf(w, "\nlongest functions (limit %d)\n", sizes.MaxFuncLines)
	for _, fn := range t.Funcs[:min(n, len(t.Funcs))] {
		fmt.Fprintf(w, "%6d  %s:%d %s\n", fn.Lines, fn.File, fn.Line, fn.Name)
	}
}

// printPackages gives the lines of every package, and the totals of cmd/
// (the face) and of the domain floors.
func printPackages(w io.Writer, t *sizes.Tree) {
	fmt.Fprintf(w, "\nlines per package (non-test, non-generated; test lines beside)\n")
	fmt.Fprintf(w, "%6s %6s %6s  %s\n", "lines", "files", "tests", "package")
	var total, face int
	for _, p := range t.Packages() {
		total += p.Lines
		if p.Dir == "cmd" || strings.HasPrefix(p.Dir, "cmd/") {
			face += p.Lines
		}
		if p.Lines == 0 {
			continue
		}
		limit := ""
		if l := p.Limit(); l > 0 {
			limit = fmt.Sprintf(" (limit %d)", l)
		}
		fmt.Fprintf(w, "%6d %6d %6d  %s%s\n", p.Lines, p.Files, p.Tests, p.Dir, limit)
	}
	fmt.Fprintf(w, "%6d %6s %6s  all; cmd/ %d (%.0f %%)\n", total, "", "", face, 100*float64(face)/float64(max(total, 1)))
}

// printOver lists what exceeds a limit.
func printOver(w io.Writer, t *sizes.Tree) {
	over := t.Over()
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(w, "\nover a limit: %d\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(w, "%6d > %-4d  %s\n", over[k][0], over[k][1], k)
	}
}

// printDuplicates counts the pairs of duplicated runs `duplicates` finds in
// the tree, and again in a copy of it without the generated files (issue
// 26 counts the pairs "generated tables aside").
func printDuplicates(w io.Writer, root string, t *sizes.Tree) {
	if _, err := exec.LookPath("duplicates"); err != nil {
		fmt.Fprintln(w, "\nduplicates: not on PATH, pairs not counted")
		return
	}
	fmt.Fprintf(w, "\nduplicated-run pairs (duplicates --repo): %s\n", countPairs(root))
	tmp, err := os.MkdirTemp("", "house-")
	if err != nil {
		fmt.Fprintln(w, "duplicates without generated files:", err)
		return
	}
	defer os.RemoveAll(tmp)
	if err := copyTracked(root, tmp, t); err != nil {
		fmt.Fprintln(w, "duplicates without generated files:", err)
		return
	}
	fmt.Fprintf(w, "duplicated-run pairs, generated files aside: %s\n", countPairs(tmp))
	if err := spellImportsSingly(tmp); err != nil {
		fmt.Fprintln(w, "duplicates with import lines passed over:", err)
		return
	}
	fmt.Fprintf(w, "duplicated-run pairs, generated files aside, import lines passed over: %s\n", countPairs(tmp))
}

// importBlock is a gofmt'd import declaration with parentheses.
var importBlock = regexp.MustCompile(`(?ms)^import \(\n(.*?)\n\)`)

// spellImportsSingly rewrites every import block of the Go files below dir
// as one `import "path"` declaration a line, the same imports. duplicates
// documents that it passes import lines over, but it knows them only in
// that form: an `import (…)` block's lines count as code, so two files
// that import six of the same packages make a pair — most of the pairs
// after issue 26 gave every command its own package (and so its own
// import block). The third count is the tree's repetition without them.
func spellImportsSingly(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := importBlock.ReplaceAllFunc(b, func(m []byte) []byte {
			var lines []string
			for _, l := range strings.Split(string(importBlock.FindSubmatch(m)[1]), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
					lines = append(lines, "import "+l)
				}
			}
			return []byte(strings.Join(lines, "\n"))
		})
		return os.WriteFile(p, out, 0o644)
	})
}

// countPairs is the pair count of `duplicates --repo dir`'s first line.
func countPairs(dir string) string {
	out, err := exec.Command("duplicates", "--repo", dir, "--most", "1", "--seconds", "120").Output()
	if err != nil {
		return "failed: " + err.Error()
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if f := strings.Fields(string(line)); len(f) > 0 && f[0] != "no" {
		return f[0]
	} else if len(f) > 0 {
		return "0"
	}
	return "?"
}

// copyTracked copies the files git tracks (or would: untracked, not
// ignored) below root into dst, leaving out the generated Go files.
func copyTracked(root, dst string, t *sizes.Tree) error {
	generated := map[string]bool{}
	for _, f := range t.Files {
		if f.Generated {
			generated[f.Path] = true
		}
	}
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		rel := sc.Text()
		if generated[rel] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue // listed but gone (a deletion not yet staged)
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return sc.Err()
}
