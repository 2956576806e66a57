// Package expect is kseg check's expectations file, kseg-check.yaml
// (docs/ci.md): read strictly, with its node tree kept for
// --write-baseline.
package expect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/finding"
)

// The expectations file of kseg check, kseg-check.yaml (docs/ci.md).
//
//	root: ../fixtures           # what paths are relative to (default: this file's directory)
//	fail-on: warning            # severity that fails when not expected: error (default), warning, info
//	ignore: [snapshot-ignored]  # kinds never reported
//	deep: false                 # decode every record (dump --deep)
//	paths:
//	  - path: broken/crc-mismatch/events-0   # a directory, or a glob, relative to this file
//	    expect:
//	      - kind: crc-mismatch
//	        file: 00000000000000000000.log   # relative to the path
//	        position: 214
//	        offset: 4
//	    ignore: [], fail-on: …, deep: …     # for what lies under the path
//	    edges:                               # mirror edges to verify (verify-chain)
//	      - upstream: a/orders-0             # relative to the path
//	        downstream: b/orders-0
//
// It is read strictly, walking yaml.v3's node tree rather than decoding
// into structs (Node.Decode forgets KnownFields): an unknown key, a value
// of the wrong type, an unknown finding kind, or a path, file or edge end
// that does not exist is a usage error (exit 2) naming the file, line and
// column. The node tree is kept, so that --write-baseline can rewrite the
// expectations and leave everything else — comments included — as it was.

// ConfigName is the file kseg check looks for.
const ConfigName = "kseg-check.yaml"

// Config is a parsed expectations file (or the defaults, without
// one: file "", dir the working directory).
type Config struct {
	File    string // as found or given; "" without one
	Dir     string // its directory, absolute: paths are relative to it
	cwd     string // the working directory, which reports are relative to
	FailOn  finding.Severity
	Ignore  []finding.Kind
	Deep    bool
	Entries []*Entry

	Doc   *yaml.Node // the document, for --write-baseline
	Paths *yaml.Node // the sequence under paths: (nil when absent)
}

// Entry is one item of paths:.
type Entry struct {
	line, col int
	Path      string   // as written
	Matches   []string // what it names: absolute directories (a glob's matches, sorted)
	Expect    []*Expect
	Ignore    []finding.Kind
	FailOn    finding.Severity // 0: inherited
	Deep      *bool
	Edges     []checkEdge
	Node      *yaml.Node // its mapping
}

// Expect is one item of expect:. Position, Offset and Count are -1
// when not given.
type Expect struct {
	Line, Col int
	Kind      finding.Kind
	File      string // relative to the entry's path, slash-separated as written
	Position  int64
	Offset    int64
	Subject   string
	Count     int64
	Node      *yaml.Node
}

// checkEdge is one item of edges:.
type checkEdge struct {
	line, col      int
	Upstream, Down string // relative to the entry's path
}

// configError is a usage error at a node of the file.
func (c *Config) errorf(n *yaml.Node, format string, args ...any) error {
	return ui.UsageErrorf("%s:%d:%d: %s", c.File, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// Find looks for kseg-check.yaml in dir and every directory
// above it, as golangci-lint looks for .golangci.yml; "" when there is
// none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ConfigName)
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir():
			return p, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Default is the configuration without a file: paths are
// relative to the working directory, findings of severity error fail.
func Default() (*Config, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, inputs.IOError(err)
	}
	return &Config{Dir: wd, cwd: wd, FailOn: finding.Error}, nil
}

// display is an absolute path as reports show it: relative to the working
// directory.
func (c *Config) Display(abs string) string {
	if rel, err := filepath.Rel(c.cwd, abs); err == nil {
		return rel
	}
	return abs
}

// displayFile names the expectations file in reports.
func (c *Config) DisplayFile() string {
	if c.File == "" {
		return "no " + ConfigName
	}
	return c.File
}

// Load reads and checks the expectations file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, inputs.IOError(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, inputs.IOError(err)
	}
	c, err := Default()
	if err != nil {
		return nil, err
	}
	c.File, c.Dir = path, filepath.Dir(abs)
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, ui.UsageErrorf("%s: %v", path, err)
	}
	c.Doc = &doc
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return c, nil // an empty file: the defaults
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return c, nil
	}
	// root: first, whatever its place: the paths below are relative to it.
	for i := 0; top.Kind == yaml.MappingNode && i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "root" {
			if err := c.root(top.Content[i+1]); err != nil {
				return nil, err
			}
		}
	}
	err = c.mapping(top, "the file", []string{"version", "root", "fail-on", "ignore", "deep", "paths"}, func(key string, v *yaml.Node) error {
		switch key {
		case "version":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Value != "1" {
				return c.errorf(v, "version must be 1")
			}
		case "fail-on":
			return c.severity(v, &c.FailOn)
		case "ignore":
			return c.kinds(v, &c.Ignore)
		case "deep":
			return c.boolean(v, &c.Deep)
		case "paths":
			if v.Kind != yaml.SequenceNode {
				return c.errorf(v, "paths must be a list of path entries")
			}
			c.Paths = v
			return each(v, &c.Entries, c.entry)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// root sets the directory paths are relative to.
func (c *Config) root(n *yaml.Node) error {
	r, err := c.str(n, "root")
	if err != nil {
		return err
	}
	dir := c.join(c.Dir, r)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return c.errorf(n, "root %q is not a directory", r)
	}
	c.Dir = dir
	return nil
}

// join is p, a path of the file (slash-separated), relative to dir
// unless it is absolute.
func (c *Config) join(dir, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// mapping calls fn for each key of n, a mapping whose keys must be among
// known.
func (c *Config) mapping(n *yaml.Node, what string, known []string, fn func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return c.errorf(n, "%s must be a mapping (keys: %s)", what, strings.Join(known, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value) {
			return c.errorf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
		}
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || n.Value == "" {
		return "", c.errorf(n, "%s must be a non-empty string", key)
	}
	return n.Value, nil
}

func (c *Config) integer(n *yaml.Node, key string) (int64, error) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil || v < 0 {
		return 0, c.errorf(n, "%s must be a whole number, 0 or more", key)
	}
	return v, nil
}

func (c *Config) boolean(n *yaml.Node, p *bool) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(p) != nil {
		return c.errorf(n, "deep must be true or false")
	}
	return nil
}

func (c *Config) severity(n *yaml.Node, p *finding.Severity) error {
	if n.Kind == yaml.ScalarNode {
		for _, s := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
			if n.Value == s.String() {
				*p = s
				return nil
			}
		}
	}
	return c.errorf(n, "fail-on must be error, warning or info")
}

func (c *Config) kind(n *yaml.Node) (finding.Kind, error) {
	if n.Kind == yaml.ScalarNode {
		if k, ok := finding.Lookup(n.Value); ok {
			return k, nil
		}
	}
	return 0, c.errorf(n, "%q is no finding kind (docs/troubleshooting.md lists them)", n.Value)
}

func (c *Config) kinds(n *yaml.Node, p *[]finding.Kind) error {
	if n.Kind != yaml.SequenceNode {
		return c.errorf(n, "ignore must be a list of finding kinds")
	}
	return each(n, p, c.kind)
}

// each appends every item of the sequence n (nil: none), as conv reads
// it, to *dst; the first item conv refuses stops it.
func each[T any](n *yaml.Node, dst *[]T, conv func(*yaml.Node) (T, error)) error {
	if n == nil {
		return nil
	}
	for _, item := range n.Content {
		x, err := conv(item)
		if err != nil {
			return err
		}
		*dst = append(*dst, x)
	}
	return nil
}

// entry reads one item of paths: and resolves its path.
func (c *Config) entry(n *yaml.Node) (*Entry, error) {
	e := &Entry{line: n.Line, col: n.Column, Node: n}
	var expect, edges *yaml.Node
	err := c.mapping(n, "a path entry", []string{"path", "expect", "ignore", "fail-on", "deep", "edges"}, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "path":
			e.Path, err = c.str(v, "path")
			if err == nil {
				e.Matches, err = c.resolve(v, e.Path)
			}
		case "expect":
			if v.Kind != yaml.SequenceNode {
				return c.errorf(v, "expect must be a list of expected findings")
			}
			expect = v
		case "ignore":
			err = c.kinds(v, &e.Ignore)
		case "fail-on":
			err = c.severity(v, &e.FailOn)
		case "deep":
			var d bool
			if err = c.boolean(v, &d); err == nil {
				e.Deep = &d
			}
		case "edges":
			if v.Kind != yaml.SequenceNode {
				return c.errorf(v, "edges must be a list of upstream/downstream pairs")
			}
			edges = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if e.Path == "" {
		return nil, c.errorf(n, "a path entry needs a path")
	}
	if err := each(expect, &e.Expect, func(n *yaml.Node) (*Expect, error) { return c.expectation(e, n) }); err != nil {
		return nil, err
	}
	if err := each(edges, &e.Edges, func(n *yaml.Node) (checkEdge, error) { return c.edge(e, n) }); err != nil {
		return nil, err
	}
	return e, nil
}

// isGlob reports a path with filepath.Match's special characters.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// resolve is what an entry's path names: the directory, or the
// directories a glob matches, which must exist.
func (c *Config) resolve(n *yaml.Node, p string) ([]string, error) {
	full := c.join(c.Dir, p)
	if IsGlob(p) {
		ms, err := filepath.Glob(full)
		if err != nil {
			return nil, c.errorf(n, "path %q: %v", p, err)
		}
		var dirs []string
		for _, m := range ms {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				dirs = append(dirs, m)
			}
		}
		if len(dirs) == 0 {
			return nil, c.errorf(n, "path %q matches no directory", p)
		}
		slices.Sort(dirs)
		return dirs, nil
	}
	st, err := os.Stat(full)
	if err != nil {
		return nil, c.errorf(n, "path %q: %v", p, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, c.errorf(n, "path %q is a file, not a directory", p)
	}
	return []string{full}, nil
}

// expectation reads one item of expect:.
func (c *Config) expectation(e *Entry, n *yaml.Node) (*Expect, error) {
	x := &Expect{Line: n.Line, Col: n.Column, Position: -1, Offset: -1, Count: -1, Node: n}
	err := c.mapping(n, "an expected finding", []string{"kind", "file", "position", "offset", "subject", "count"}, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "kind":
			x.Kind, err = c.kind(v)
		case "file":
			if x.File, err = c.str(v, "file"); err == nil {
				for _, m := range e.Matches {
					if _, serr := os.Stat(filepath.Join(m, filepath.FromSlash(x.File))); serr != nil {
						return c.errorf(v, "file %q: %v", filepath.Join(m, filepath.FromSlash(x.File)), errors.Unwrap(serr))
					}
				}
			}
		case "position":
			x.Position, err = c.integer(v, "position")
		case "offset":
			x.Offset, err = c.integer(v, "offset")
		case "subject":
			x.Subject, err = c.str(v, "subject")
		case "count":
			if x.Count, err = c.integer(v, "count"); err == nil && x.Count == 0 {
				err = c.errorf(v, "count must be 1 or more (a finding that must not be there is any finding not expected)")
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if x.Kind == 0 {
		return nil, c.errorf(n, "an expected finding needs a kind")
	}
	return x, nil
}

// edge reads one item of edges:.
func (c *Config) edge(e *Entry, n *yaml.Node) (checkEdge, error) {
	ed := checkEdge{line: n.Line, col: n.Column}
	err := c.mapping(n, "an edge", []string{"upstream", "downstream"}, func(key string, v *yaml.Node) error {
		s, err := c.str(v, key)
		if err != nil {
			return err
		}
		for _, m := range e.Matches {
			if st, serr := os.Stat(filepath.Join(m, filepath.FromSlash(s))); serr != nil || !st.IsDir() {
				return c.errorf(v, "%s %q is not a directory under %s", key, s, m)
			}
		}
		if key == "upstream" {
			ed.Upstream = s
		} else {
			ed.Down = s
		}
		return nil
	})
	if err != nil {
		return ed, err
	}
	if ed.Upstream == "" || ed.Down == "" {
		return ed, c.errorf(n, "an edge needs an upstream and a downstream")
	}
	return ed, nil
}

// LiteralEntry is the node of the entry whose path (not a glob) is dir.
func (c *Config) LiteralEntry(dir string) *yaml.Node {
	for i := len(c.Entries) - 1; i >= 0; i-- {
		e := c.Entries[i]
		if !IsGlob(e.Path) && len(e.Matches) == 1 && e.Matches[0] == dir {
			return e.Node
		}
	}
	return nil
}
