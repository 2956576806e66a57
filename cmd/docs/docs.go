// Package docs is kseg docs: the command reference (Markdown and man
// pages) generated from the command tree itself, and checked against the
// committed docs/cli/ (Diff).
package docs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/kseg/kseg/cmd/internal/ui"
)

// ManDate is the date in the man pages' header. It is fixed, not the
// day of generation, so that regenerating docs/cli/ on another day changes
// nothing and the staleness test (TestDocsUpToDate) stays meaningful; bump
// it (or pass --date) when cutting a release.
const ManDate = "2026-01-01"

type docsOptions struct {
	date string

	// derived by Validate
	when time.Time
}

func (o *docsOptions) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.date, "date", ManDate, "date in the man pages' header (YYYY-MM-DD); fixed so that the output is reproducible")
}

func (o *docsOptions) Validate(_ *cobra.Command, _ []string) error {
	t, err := time.Parse(time.DateOnly, o.date)
	if err != nil {
		return ui.UsageErrorf("--date %q is not a YYYY-MM-DD date", o.date)
	}
	o.when = t
	return nil
}

func NewCmd(s *ui.Streams) *cobra.Command {
	o := &docsOptions{}
	c := &cobra.Command{
		Use:   "docs DIR",
		Short: "Generate the Markdown and man-page CLI reference from the command tree",
		Long: `Write the reference of every kseg command, generated from the command tree
itself: one Markdown page per command in DIR (kseg.md links to the rest) and
one man page per command in DIR/man. The output is deterministic (no
generation date, a fixed man-page date), so it can be committed: the CLI
reference in docs/cli/ is made with "go run . docs docs/cli", and a test
fails when it no longer matches the commands.

Pages of commands that no longer exist (kseg*.md, man/kseg*.1) are removed
from DIR; no other file in it is touched.
`,
		Example: `  kseg docs docs/cli                      # regenerate the committed reference
  go run . docs docs/cli                  # the same, from a checkout
  kseg docs /tmp/kseg-docs && man /tmp/kseg-docs/man/kseg-dump.1`,
		Args: cobra.ExactArgs(1),
	}
	return ui.NewCommand(c, s, o, func(_ context.Context, s *ui.Streams, o *docsOptions, args []string) error {
		return runDocs(s, o, c.Root(), args[0])
	})
}

func runDocs(s *ui.Streams, o *docsOptions, root *cobra.Command, dir string) error {
	tmp, err := os.MkdirTemp("", "kseg-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := Generate(root, tmp, o.when); err != nil {
		return err
	}
	n, err := syncDocs(tmp, dir)
	if err != nil {
		return err
	}
	if !s.Quiet {
		fmt.Fprintf(s.Err, "kseg: %d pages in %s (%d changed)\n", countDocs(tmp), dir, n)
	}
	return nil
}

// Generate writes the Markdown reference into dir and the man pages
// into dir/man.
//
// It rewrites the help texts of root's tree for Markdown (docsLong), so
// root must be a tree built for this purpose, not one that will run.
func Generate(root *cobra.Command, dir string, date time.Time) error {
	ui.WalkCommands(root, func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		c.Long = docsLong(c.Long)
	})
	if err := os.MkdirAll(filepath.Join(dir, "man"), 0o755); err != nil {
		return err
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return err
	}
	hdr := &doc.GenManHeader{Section: "1", Date: &date, Source: "kseg", Manual: "kseg manual"}
	return doc.GenManTree(root, hdr, filepath.Join(dir, "man"))
}

// docsLong makes a help text read well as Markdown (which the man pages
// are rendered from too): the EXIT STATUS table, indented for a terminal,
// would be joined into one paragraph, so it becomes a preformatted block
// under a bold heading.
func docsLong(long string) string {
	lines := strings.Split(long, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if lines[i] != "EXIT STATUS" {
			out = append(out, lines[i])
			continue
		}
		out = append(out, "**EXIT STATUS**", "", "```")
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") {
			i++
			out = append(out, lines[i])
		}
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// docsFiles lists the generated pages under dir, relative to it.
func docsFiles(dir string) ([]string, error) {
	var out []string
	for _, pat := range []string{"kseg*.md", filepath.Join("man", "kseg*.1")} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out, nil
}

func countDocs(dir string) int {
	f, _ := docsFiles(dir)
	return len(f)
}

// syncDocs makes the pages under dst those under src: new and changed
// pages are written, pages src lacks are removed. It returns how many files
// it wrote or removed.
func syncDocs(src, dst string) (int, error) {
	want, err := docsFiles(src)
	if err != nil {
		return 0, err
	}
	have, err := docsFiles(dst)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(dst, "man"), 0o755); err != nil {
		return 0, err
	}
	changed := 0
	keep := map[string]bool{}
	for _, rel := range want {
		keep[rel] = true
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return changed, err
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return changed, err
		}
		changed++
	}
	for _, rel := range have {
		if !keep[rel] {
			if err := os.Remove(filepath.Join(dst, filepath.FromSlash(rel))); err != nil {
				return changed, err
			}
			changed++
		}
	}
	return changed, nil
}

// Diff compares the pages under two directories and describes the
// differences, one per line (empty when they match).
func Diff(want, have string) (string, error) {
	w, err := docsFiles(want)
	if err != nil {
		return "", err
	}
	h, err := docsFiles(have)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	inHave := map[string]bool{}
	for _, rel := range h {
		inHave[rel] = true
	}
	inWant := map[string]bool{}
	for _, rel := range w {
		inWant[rel] = true
		if !inHave[rel] {
			fmt.Fprintf(&out, "missing: %s\n", rel)
			continue
		}
		a, _ := os.ReadFile(filepath.Join(want, filepath.FromSlash(rel)))
		b, _ := os.ReadFile(filepath.Join(have, filepath.FromSlash(rel)))
		if !bytes.Equal(a, b) {
			fmt.Fprintf(&out, "differs: %s\n", rel)
		}
	}
	for _, rel := range h {
		if !inWant[rel] {
			fmt.Fprintf(&out, "stale:   %s (no such command any more)\n", rel)
		}
	}
	return out.String(), nil
}
