package check

import (
	"bytes"
	"fmt"
	"github.com/kseg/kseg/cmd/check/expect"
	"github.com/kseg/kseg/cmd/check/tree"
	"os"
	"path/filepath"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/finding"
)

// --write-baseline: make the expectations file describe what this run
// found, changing as little as it can, so that its diff reviews well.
//
//   - An expectation every finding it names still meets is kept as it is
//     (its comments too).
//   - An expectation that is missing somewhere is removed, and the
//     findings it still met elsewhere (a glob's other directories) are
//     written again as expectations of their own.
//   - Each new finding becomes an expectation: of the entry whose path is
//     the unit it was found in (a partition, a log directory), created at
//     the end of paths: when there is none. It names the kind and, where
//     the finding has them, the file (relative to the entry), position
//     and offset — or the subject, for a finding about no file; findings
//     alike are one expectation with a count.
//
// Findings that do not fail (ignored, below fail-on) are not written, and
// an unreadable partition is left alone: the run still fails on it.

// baselineEntry collects the expectations to add under one path.
type baselineEntry struct {
	dir   string // absolute
	node  *yaml.Node
	specs []baselineSpec
}

// baselineSpec is one expectation to write, with how many findings it
// stands for.
type baselineSpec struct {
	kind             finding.Kind
	file, subject    string
	position, offset int64
	n                int
}

func writeCheckBaseline(s *ui.Streams, r *checkResult) error {
	cfg := r.cfg
	top, err := baselineTop(cfg)
	if err != nil {
		return err
	}
	removed := map[*expect.Expect]bool{}
	for i := range r.items {
		for _, it := range r.items[i] {
			if it.status == statusMissing {
				removed[it.inst.exp] = true
			}
		}
	}
	order := baselineAdditions(r, removed)
	// Remove what is missing.
	for _, e := range cfg.Entries {
		if e.Node == nil {
			continue
		}
		for _, x := range e.Expect {
			if removed[x] {
				removeExpectation(e.Node, x.Node)
			}
		}
	}
	added := 0
	for _, be := range order {
		be.node = cfg.LiteralEntry(be.dir)
		if be.node == nil {
			be.node = appendEntry(cfg, top, be.dir)
		}
		seq := entryExpect(be.node)
		for _, sp := range be.specs {
			seq.Content = append(seq.Content, sp.node())
			added++
		}
	}
	dropEmptyExpect(cfg)
	_, statErr := os.Stat(cfg.File)
	switch {
	case added == 0 && len(removed) == 0 && statErr == nil:
		if !s.Quiet {
			fmt.Fprintf(s.Err, "kseg check: %s already describes every finding: left as it is\n", cfg.File)
		}
	default:
		if err := writeYAMLFile(cfg.File, cfg.Doc); err != nil {
			return err
		}
		if !s.Quiet {
			fmt.Fprintf(s.Err, "kseg check: wrote %s: %s added, %s removed\n", cfg.File, ui.Plural(added, "expectation"), ui.Plural(len(removed), "expectation"))
		}
	}
	if r.unreadable > 0 {
		return &ui.ExitCodeError{Code: ui.ExitError, Err: fmt.Errorf("%d checks could not read their partition: they stay failing", r.unreadable)}
	}
	return nil
}

// baselineAdditions are the expectations --write-baseline adds, by
// directory in the order first met: every new finding, and every finding
// that met an expectation being removed (one of its instances is
// missing), so that it stays expected.
func baselineAdditions(r *checkResult, removed map[*expect.Expect]bool) []*baselineEntry {
	var order []*baselineEntry
	byDir := map[string]*baselineEntry{}
	add := func(c *checkCase, f *finding.Finding) {
		loc := findingPath(f, c)
		dir := c.abs
		if !tree.PathWithin(loc, dir) {
			dir = filepath.Dir(loc)
		}
		be := byDir[dir]
		if be == nil {
			be = &baselineEntry{dir: dir}
			byDir[dir] = be
			order = append(order, be)
		}
		be.add(f, dir)
	}
	for i := range r.items {
		for _, it := range r.items[i] {
			switch {
			case it.status == statusNew:
				add(&r.cases[i], &it.finding)
			case it.status == statusExpected && removed[it.inst.exp]:
				add(&r.cases[i], &it.finding)
			}
		}
	}
	return order
}

// add counts finding f as an expectation of the entry at dir.
func (be *baselineEntry) add(f *finding.Finding, dir string) {
	sp := baselineSpec{kind: f.Kind, position: -1, offset: f.Offset}
	if f.File != "" {
		if abs, err := filepath.Abs(f.File); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil {
				sp.file = filepath.ToSlash(rel)
				sp.position = f.Position
			}
		}
	} else {
		sp.subject = f.Subject
	}
	for i := range be.specs {
		if o := &be.specs[i]; o.kind == sp.kind && o.file == sp.file && o.subject == sp.subject && o.position == sp.position && o.offset == sp.offset {
			o.n++
			return
		}
	}
	sp.n = 1
	be.specs = append(be.specs, sp)
}

// node is the expectation as YAML.
func (sp *baselineSpec) node() *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	put := func(k string, v *yaml.Node) { m.Content = append(m.Content, strNode(k), v) }
	put("kind", strNode(sp.kind.String()))
	if sp.file != "" {
		put("file", strNode(sp.file))
	}
	if sp.position >= 0 {
		put("position", intNode(sp.position))
	}
	if sp.offset >= 0 {
		put("offset", intNode(sp.offset))
	}
	if sp.subject != "" {
		put("subject", strNode(sp.subject))
	}
	if sp.n > 1 {
		put("count", intNode(int64(sp.n)))
	}
	return m
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
func intNode(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
}

// baselineTop is the file's top mapping, created for a new or empty file.
func baselineTop(cfg *expect.Config) (*yaml.Node, error) {
	if cfg.Doc == nil || len(cfg.Doc.Content) == 0 || cfg.Doc.Content[0].Tag == "!!null" {
		top := &yaml.Node{Kind: yaml.MappingNode}
		cfg.Doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top},
			HeadComment: "kseg check: the findings each path is meant to have (docs/ci.md).\nWritten by kseg check --write-baseline; edit it as you like."}
		return top, nil
	}
	return cfg.Doc.Content[0], nil
}

// appendEntry adds an entry for dir at the end of paths:.
func appendEntry(cfg *expect.Config, top *yaml.Node, dir string) *yaml.Node {
	if cfg.Paths == nil {
		cfg.Paths = &yaml.Node{Kind: yaml.SequenceNode}
		top.Content = append(top.Content, strNode("paths"), cfg.Paths)
	}
	rel, err := filepath.Rel(cfg.Dir, dir)
	if err != nil {
		rel = dir
	}
	e := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{strNode("path"), strNode(filepath.ToSlash(rel))}}
	cfg.Paths.Content = append(cfg.Paths.Content, e)
	cfg.Entries = append(cfg.Entries, &expect.Entry{Path: filepath.ToSlash(rel), Matches: []string{dir}, Node: e})
	return e
}

// entryExpect is the expect: sequence of an entry, added when absent.
func entryExpect(e *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(e.Content); i += 2 {
		if e.Content[i].Value == "expect" {
			return e.Content[i+1]
		}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	e.Content = append(e.Content, strNode("expect"), seq)
	return seq
}

// removeExpectation takes x out of entry e's expect: list.
func removeExpectation(e, x *yaml.Node) {
	seq := entryExpect(e)
	for i, n := range seq.Content {
		if n == x {
			seq.Content = append(seq.Content[:i], seq.Content[i+1:]...)
			return
		}
	}
}

// dropEmptyExpect removes expect: lists left empty, and entries left with
// nothing but their path.
func dropEmptyExpect(cfg *expect.Config) {
	if cfg.Paths == nil {
		return
	}
	keep := cfg.Paths.Content[:0]
	for _, e := range cfg.Paths.Content {
		c := e.Content[:0]
		for i := 0; i+1 < len(e.Content); i += 2 {
			if e.Content[i].Value == "expect" && len(e.Content[i+1].Content) == 0 {
				continue
			}
			c = append(c, e.Content[i], e.Content[i+1])
		}
		e.Content = c
		if len(c) == 2 && c[0].Value == "path" && c[0].HeadComment == "" && e.HeadComment == "" {
			continue
		}
		keep = append(keep, e)
	}
	cfg.Paths.Content = keep
}

// writeYAMLFile writes doc to path through a temporary file renamed over
// it, keeping the mode of the file it replaces.
func writeYAMLFile(path string, doc *yaml.Node) error {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b.Bytes())
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
