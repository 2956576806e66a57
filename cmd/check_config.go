package cmd

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

// checkConfigName is the file kseg check looks for.
const checkConfigName = "kseg-check.yaml"

// checkConfig is a parsed expectations file (or the defaults, without
// one: file "", dir the working directory).
type checkConfig struct {
	file    string // as found or given; "" without one
	dir     string // its directory, absolute: paths are relative to it
	cwd     string // the working directory, which reports are relative to
	failOn  finding.Severity
	ignore  []finding.Kind
	deep    bool
	entries []*checkEntry

	doc   *yaml.Node // the document, for --write-baseline
	paths *yaml.Node // the sequence under paths: (nil when absent)
}

// checkEntry is one item of paths:.
type checkEntry struct {
	line, col int
	path      string   // as written
	matches   []string // what it names: absolute directories (a glob's matches, sorted)
	expect    []*checkExpect
	ignore    []finding.Kind
	failOn    finding.Severity // 0: inherited
	deep      *bool
	edges     []checkEdge
	node      *yaml.Node // its mapping
}

// checkExpect is one item of expect:. Position, Offset and Count are -1
// when not given.
type checkExpect struct {
	line, col int
	kind      finding.Kind
	file      string // relative to the entry's path, slash-separated as written
	position  int64
	offset    int64
	subject   string
	count     int64
	node      *yaml.Node
}

// checkEdge is one item of edges:.
type checkEdge struct {
	line, col      int
	upstream, down string // relative to the entry's path
}

// configError is a usage error at a node of the file.
func (c *checkConfig) errorf(n *yaml.Node, format string, args ...any) error {
	return ui.UsageErrorf("%s:%d:%d: %s", c.file, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// findCheckConfig looks for kseg-check.yaml in dir and every directory
// above it, as golangci-lint looks for .golangci.yml; "" when there is
// none.
func findCheckConfig(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, checkConfigName)
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

// defaultCheckConfig is the configuration without a file: paths are
// relative to the working directory, findings of severity error fail.
func defaultCheckConfig() (*checkConfig, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, inputs.IOError(err)
	}
	return &checkConfig{dir: wd, cwd: wd, failOn: finding.Error}, nil
}

// display is an absolute path as reports show it: relative to the working
// directory.
func (c *checkConfig) display(abs string) string {
	if rel, err := filepath.Rel(c.cwd, abs); err == nil {
		return rel
	}
	return abs
}

// displayFile names the expectations file in reports.
func (c *checkConfig) displayFile() string {
	if c.file == "" {
		return "no " + checkConfigName
	}
	return c.file
}

// loadCheckConfig reads and checks the expectations file at path.
func loadCheckConfig(path string) (*checkConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, inputs.IOError(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, inputs.IOError(err)
	}
	c, err := defaultCheckConfig()
	if err != nil {
		return nil, err
	}
	c.file, c.dir = path, filepath.Dir(abs)
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, ui.UsageErrorf("%s: %v", path, err)
	}
	c.doc = &doc
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
			return c.severity(v, &c.failOn)
		case "ignore":
			return c.kinds(v, &c.ignore)
		case "deep":
			return c.boolean(v, &c.deep)
		case "paths":
			if v.Kind != yaml.SequenceNode {
				return c.errorf(v, "paths must be a list of path entries")
			}
			c.paths = v
			for _, item := range v.Content {
				e, err := c.entry(item)
				if err != nil {
					return err
				}
				c.entries = append(c.entries, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// root sets the directory paths are relative to.
func (c *checkConfig) root(n *yaml.Node) error {
	r, err := c.str(n, "root")
	if err != nil {
		return err
	}
	dir := c.join(c.dir, r)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return c.errorf(n, "root %q is not a directory", r)
	}
	c.dir = dir
	return nil
}

// join is p, a path of the file (slash-separated), relative to dir
// unless it is absolute.
func (c *checkConfig) join(dir, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// mapping calls fn for each key of n, a mapping whose keys must be among
// known.
func (c *checkConfig) mapping(n *yaml.Node, what string, known []string, fn func(key string, v *yaml.Node) error) error {
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

func (c *checkConfig) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || n.Value == "" {
		return "", c.errorf(n, "%s must be a non-empty string", key)
	}
	return n.Value, nil
}

func (c *checkConfig) integer(n *yaml.Node, key string) (int64, error) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil || v < 0 {
		return 0, c.errorf(n, "%s must be a whole number, 0 or more", key)
	}
	return v, nil
}

func (c *checkConfig) boolean(n *yaml.Node, p *bool) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(p) != nil {
		return c.errorf(n, "deep must be true or false")
	}
	return nil
}

func (c *checkConfig) severity(n *yaml.Node, p *finding.Severity) error {
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

func (c *checkConfig) kind(n *yaml.Node) (finding.Kind, error) {
	if n.Kind == yaml.ScalarNode {
		if k, ok := finding.Lookup(n.Value); ok {
			return k, nil
		}
	}
	return 0, c.errorf(n, "%q is no finding kind (docs/troubleshooting.md lists them)", n.Value)
}

func (c *checkConfig) kinds(n *yaml.Node, p *[]finding.Kind) error {
	if n.Kind != yaml.SequenceNode {
		return c.errorf(n, "ignore must be a list of finding kinds")
	}
	for _, item := range n.Content {
		k, err := c.kind(item)
		if err != nil {
			return err
		}
		*p = append(*p, k)
	}
	return nil
}

// entry reads one item of paths: and resolves its path.
func (c *checkConfig) entry(n *yaml.Node) (*checkEntry, error) {
	e := &checkEntry{line: n.Line, col: n.Column, node: n}
	var expect, edges *yaml.Node
	err := c.mapping(n, "a path entry", []string{"path", "expect", "ignore", "fail-on", "deep", "edges"}, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "path":
			e.path, err = c.str(v, "path")
			if err == nil {
				e.matches, err = c.resolve(v, e.path)
			}
		case "expect":
			if v.Kind != yaml.SequenceNode {
				return c.errorf(v, "expect must be a list of expected findings")
			}
			expect = v
		case "ignore":
			err = c.kinds(v, &e.ignore)
		case "fail-on":
			err = c.severity(v, &e.failOn)
		case "deep":
			var d bool
			if err = c.boolean(v, &d); err == nil {
				e.deep = &d
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
	if e.path == "" {
		return nil, c.errorf(n, "a path entry needs a path")
	}
	if expect != nil {
		for _, item := range expect.Content {
			x, err := c.expectation(e, item)
			if err != nil {
				return nil, err
			}
			e.expect = append(e.expect, x)
		}
	}
	if edges != nil {
		for _, item := range edges.Content {
			ed, err := c.edge(e, item)
			if err != nil {
				return nil, err
			}
			e.edges = append(e.edges, ed)
		}
	}
	return e, nil
}

// isGlob reports a path with filepath.Match's special characters.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// resolve is what an entry's path names: the directory, or the
// directories a glob matches, which must exist.
func (c *checkConfig) resolve(n *yaml.Node, p string) ([]string, error) {
	full := c.join(c.dir, p)
	if isGlob(p) {
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
func (c *checkConfig) expectation(e *checkEntry, n *yaml.Node) (*checkExpect, error) {
	x := &checkExpect{line: n.Line, col: n.Column, position: -1, offset: -1, count: -1, node: n}
	err := c.mapping(n, "an expected finding", []string{"kind", "file", "position", "offset", "subject", "count"}, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "kind":
			x.kind, err = c.kind(v)
		case "file":
			if x.file, err = c.str(v, "file"); err == nil {
				for _, m := range e.matches {
					if _, serr := os.Stat(filepath.Join(m, filepath.FromSlash(x.file))); serr != nil {
						return c.errorf(v, "file %q: %v", filepath.Join(m, filepath.FromSlash(x.file)), errors.Unwrap(serr))
					}
				}
			}
		case "position":
			x.position, err = c.integer(v, "position")
		case "offset":
			x.offset, err = c.integer(v, "offset")
		case "subject":
			x.subject, err = c.str(v, "subject")
		case "count":
			if x.count, err = c.integer(v, "count"); err == nil && x.count == 0 {
				err = c.errorf(v, "count must be 1 or more (a finding that must not be there is any finding not expected)")
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if x.kind == 0 {
		return nil, c.errorf(n, "an expected finding needs a kind")
	}
	return x, nil
}

// edge reads one item of edges:.
func (c *checkConfig) edge(e *checkEntry, n *yaml.Node) (checkEdge, error) {
	ed := checkEdge{line: n.Line, col: n.Column}
	err := c.mapping(n, "an edge", []string{"upstream", "downstream"}, func(key string, v *yaml.Node) error {
		s, err := c.str(v, key)
		if err != nil {
			return err
		}
		for _, m := range e.matches {
			if st, serr := os.Stat(filepath.Join(m, filepath.FromSlash(s))); serr != nil || !st.IsDir() {
				return c.errorf(v, "%s %q is not a directory under %s", key, s, m)
			}
		}
		if key == "upstream" {
			ed.upstream = s
		} else {
			ed.down = s
		}
		return nil
	})
	if err != nil {
		return ed, err
	}
	if ed.upstream == "" || ed.down == "" {
		return ed, c.errorf(n, "an edge needs an upstream and a downstream")
	}
	return ed, nil
}
