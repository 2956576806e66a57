package metadata

import (
	"bufio"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/cmd/internal/brokerview"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/psm/cluster"
)

// kseg metadata ls | cat | find: kafka-metadata-shell's commands over the
// image kseg metadata builds (broker.MetadataImage.Tree), offline and
// non-interactive, with the shell's names: /image/topics/byName/orders/0,
// /image/cluster/brokers/1, /image/configs/TOPIC:orders/retention.ms. A
// path not starting with / is taken under /image, as after the shell's
// `cd image`; each component may be a glob (*, ?, [a-z]), as the shell's
// GlobVisitor allows.

// metadataShellOptions are the flags of ls, cat and find.
type metadataShellOptions struct {
	verb   string // ls, cat or find
	at     int64
	output string
}

func (o *metadataShellOptions) AddFlags(c *cobra.Command) {
	c.Flags().Int64Var(&o.at, "at", -1, "the image before OFFSET (exclusive): every record below it applied; -1 = the log end")
	ui.AddOutputFlag(c, &o.output)
}

func (o *metadataShellOptions) Validate(_ *cobra.Command, args []string) error {
	verb := o.verb
	if err := ui.ValidateOutput(o.output); err != nil {
		return err
	}
	if len(args) < 2 {
		return ui.UsageErrorf("metadata %s needs an image path and at least one log directory: kseg metadata %s /image/topics/byName LOGDIR", verb, verb)
	}
	if o.at < -1 {
		return ui.UsageErrorf("--at must be an offset (or -1 for the log end)")
	}
	return nil
}

// metadataShellVerbs are the three commands: what each does, its
// examples.
var metadataShellVerbs = []struct {
	verb, short, long, example string
}{
	{"ls", "List a node of the metadata image, as kafka-metadata-shell's ls",
		`List the children of a directory node of the KRaft metadata image (sorted,
one per line), or the name of a leaf, as kafka-metadata-shell's ls does
non-interactively. With a glob matching several nodes, each directory's
listing is headed by its name.`,
		`  kseg metadata ls /image/topics/byName /var/lib/kafka/data
  kseg metadata ls /image/cluster/brokers /var/lib/kafka/data
  kseg metadata ls 'topics/byName/orders' /var/lib/kafka/data`},
	{"cat", "Print a leaf of the metadata image, as kafka-metadata-shell's cat",
		`Print a leaf node of the KRaft metadata image as kafka-metadata-shell's cat
does: a partition's PartitionRegistration(…), a broker's
BrokerRegistration(…), an ACL's StandardAcl(…), a config's value.`,
		`  kseg metadata cat /image/topics/byName/orders/0 /var/lib/kafka/data
  kseg metadata cat /image/features/metadataVersion /var/lib/kafka/data
  kseg metadata cat '/image/topics/byName/*/id' /var/lib/kafka/data`},
	{"find", "Print every path under a node of the metadata image, as kafka-metadata-shell's find",
		`Print the path of a node and of every node below it, depth first, children
sorted, as kafka-metadata-shell's find does; with -o json one
{"type":"metadataNode"} object per node, leaves with their value.`,
		`  kseg metadata find /image/topics /var/lib/kafka/data
  kseg metadata find / /var/lib/kafka/data | grep retention
  kseg metadata find -o json /image/configs /var/lib/kafka/data | jq -r 'select(.value) | .path + " = " + .value'`},
}

func newMetadataShellCmds(s *ui.Streams) []*cobra.Command {
	var cmds []*cobra.Command
	for _, v := range metadataShellVerbs {
		o := &metadataShellOptions{verb: v.verb}
		c := &cobra.Command{
			Use:   v.verb + " IMAGE-PATH LOGDIR...",
			Short: v.short,
			Long: v.long + `

The image is the one kseg metadata builds: the newest KRaft snapshot at or
below --at and the __cluster_metadata log after it. IMAGE-PATH names nodes
as kafka-metadata-shell does (/image/topics/byName/orders/0,
/image/topics/byId/<id>, /image/cluster/brokers/1,
/image/configs/TOPIC:orders/retention.ms, /image/clientQuotas/user(alice),
/image/acls/<id>, /image/features/metadataVersion,
/image/producerIds/nextProducerId); a path without a leading / is under
/image, and a component may be a glob (*, ?, [a-z]). SCRAM credentials and
delegation tokens are not in kseg's image. A path that names no node is a
usage error. Nothing is written.
` + ui.ExitStatusHelp,
			Example: v.example,
			Args:    cobra.ArbitraryArgs,
		}
		cmds = append(cmds, ui.NewCommand(c, s, o, runMetadataShell))
	}
	return cmds
}

// imageMatch is a node a path names, with its full path.
type imageMatch struct {
	path string
	node *cluster.ImageNode
}

// resolveImagePath returns the nodes p names, in order: components
// matched one at a time, a glob against every child.
func resolveImagePath(root *cluster.ImageNode, p string) ([]imageMatch, error) {
	if !strings.HasPrefix(p, "/") {
		p = "/image/" + p
	}
	cur := []imageMatch{{"/", root}}
	for _, comp := range strings.Split(strings.Trim(path.Clean(p), "/"), "/") {
		if comp == "" {
			continue
		}
		var next []imageMatch
		for _, m := range cur {
			if !m.node.Dir {
				continue
			}
			for _, c := range m.node.Children {
				ok := c.Name == comp
				if !ok && strings.ContainsAny(comp, "*?[") {
					var err error
					if ok, err = path.Match(comp, c.Name); err != nil {
						return nil, ui.UsageErrorf("%s: %v", p, err)
					}
				}
				if ok {
					next = append(next, imageMatch{strings.TrimSuffix(m.path, "/") + "/" + c.Name, c})
				}
			}
		}
		cur = next
	}
	return cur, nil
}

// runMetadataShell runs ls, cat or find: args are IMAGE-PATH LOGDIR....
func runMetadataShell(_ context.Context, s *ui.Streams, o *metadataShellOptions, args []string) error {
	verb := o.verb
	matches, err := shellMatches(s, o, args[0], args[1:])
	if err != nil {
		return err
	}
	w := bufio.NewWriter(s.Out)
	defer w.Flush()
	if o.output == "table" {
		return metadataShellTable(w, s, verb, matches)
	}
	out := &shellOut{w: w, json: o.output == "json"}
	switch verb {
	case "cat":
		if err := out.cat(matches); err != nil {
			return err
		}
	case "ls":
		lsPrint(w, o, matches, out.emit)
	case "find":
		for _, m := range matches {
			if err := out.find(m.path, m.node); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// shellMatches loads the metadata image of dirs (at --at) and resolves
// target in its tree: a usage error when nothing matches.
func shellMatches(s *ui.Streams, o *metadataShellOptions, target string, dirs []string) ([]imageMatch, error) {
	inv, err := brokerview.OpenInventory(s, "metadata "+o.verb, dirs)
	if err != nil {
		return nil, err
	}
	v, err := cluster.LoadMetadata(inv, cluster.MetadataOptions{At: o.at})
	if err != nil {
		return nil, err
	}
	matches, err := resolveImagePath(v.Image.Tree(), target)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		hint := ""
		if strings.HasPrefix(target, "/topics") || strings.HasPrefix(target, "/brokers") {
			// The ZooKeeper-era shell's names (/topics/orders/0/data).
			hint = " (kafka-metadata-shell names the image's nodes /image/topics/byName/<topic>/<partition>, /image/cluster/brokers/<id>; kseg metadata find / lists them)"
		}
		return nil, ui.UsageErrorf("metadata %s: %s: no such node in the image at offset %d%s", o.verb, target, v.Image.Offset, hint)
	}
	return matches, nil
}

// shellOut writes the nodes cat, ls and find print: a line each, or with
// json a "metadataNode" line.
type shellOut struct {
	w    *bufio.Writer
	j    ui.JSONWriter
	json bool
}

// emit writes node n at path p as JSON (value: with its value); nothing
// for text.
func (o *shellOut) emit(p string, n *cluster.ImageNode, value bool) error {
	if !o.json {
		return nil
	}
	j := &o.j
	j.B = j.B[:0]
	j.BeginLine("metadataNode")
	j.Str("path", p)
	j.Bool("directory", n.Dir)
	if !n.Dir && value {
		j.Str("value", n.Value)
	}
	j.EndLine()
	_, err := o.w.Write(j.B)
	return err
}

// cat prints the values of matches, none of which may be a directory.
func (o *shellOut) cat(matches []imageMatch) error {
	for _, m := range matches {
		if m.node.Dir {
			o.w.Flush()
			return ui.UsageErrorf("metadata cat: %s: is a directory (kseg metadata ls lists it)", ui.Esc(m.path))
		}
	}
	for _, m := range matches {
		if o.json {
			if err := o.emit(m.path, m.node, true); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(o.w, ui.Esc(m.node.Value))
	}
	return nil
}

// find prints the node n at p and every node below it.
func (o *shellOut) find(p string, n *cluster.ImageNode) error {
	if o.json {
		if err := o.emit(p, n, true); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.w, ui.Esc(p))
	}
	for _, c := range n.Children {
		if err := o.find(strings.TrimSuffix(p, "/")+"/"+c.Name, c); err != nil {
			return err
		}
	}
	return nil
}

// metadataShellTable is -o table: a PATH VALUE row per node listed,
// printed or found ("-" for a directory's value).
func metadataShellTable(w *bufio.Writer, s *ui.Streams, verb string, matches []imageMatch) error {
	var rows [][]string
	add := func(p string, n *cluster.ImageNode) {
		v := n.Value
		if n.Dir {
			v = "-"
		}
		rows = append(rows, []string{p, v})
	}
	var walk func(p string, n *cluster.ImageNode)
	walk = func(p string, n *cluster.ImageNode) {
		add(p, n)
		for _, c := range n.Children {
			walk(strings.TrimSuffix(p, "/")+"/"+c.Name, c)
		}
	}
	for _, m := range matches {
		switch {
		case verb == "find":
			walk(m.path, m.node)
		case verb == "ls" && m.node.Dir:
			for _, c := range m.node.Children {
				add(strings.TrimSuffix(m.path, "/")+"/"+c.Name, c)
			}
		case verb == "cat" && m.node.Dir:
			return ui.UsageErrorf("metadata cat: %s: is a directory (kseg metadata ls lists it)", ui.Esc(m.path))
		default:
			add(m.path, m.node)
		}
	}
	if err := ui.RenderTable(w, s.Width, []string{"PATH", "VALUE"}, rows); err != nil {
		return err
	}
	return w.Flush()
}

// lsPrint is LsCommandHandler.printTargets without a terminal: the leaves
// named first, then each directory's children, one per line, headed by
// "name:" when there is more than one thing to list.
func lsPrint(w *bufio.Writer, o *metadataShellOptions, matches []imageMatch, emit func(string, *cluster.ImageNode, bool) error) {
	var files, dirs []imageMatch
	for _, m := range matches {
		if m.node.Dir {
			dirs = append(dirs, m)
		} else {
			files = append(files, m)
		}
	}
	if o.output == "json" {
		for _, m := range files {
			emit(m.path, m.node, false)
		}
		for _, m := range dirs {
			for _, c := range m.node.Children {
				emit(strings.TrimSuffix(m.path, "/")+"/"+c.Name, c, false)
			}
		}
		return
	}
	for _, m := range files {
		fmt.Fprintln(w, ui.Esc(m.node.Name))
	}
	needIntro := len(files) > 0 || len(dirs) > 1
	first := len(files) == 0
	for _, m := range dirs {
		if len(m.node.Children) == 0 {
			continue
		}
		if needIntro {
			if !first {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s:\n", ui.Esc(m.node.Name))
			first = false
		}
		for _, c := range m.node.Children {
			fmt.Fprintln(w, ui.Esc(c.Name))
		}
	}
}
