package cmd

import (
	"io"
	"os"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/digest"
)

// A verify-chain node is a partition directory, a digest file (kseg
// digest), or "-": a digest on stdin, as ssh brings it
// (ssh broker-b kseg digest DIR | kseg verify-chain A -).

// isDigestArg reports an argument that names a digest: "-", or a file
// that starts as a digest does.
func isDigestArg(p string) bool { return p == "-" || mirror.IsDigestFile(p) }

// openNodes opens every node. stdin is read once into a temporary file
// (a verify-chain pass reads a node more than once: the walk, then the
// producer-state replays), removed by the returned func, which closes
// the nodes too.
func openNodes(s *ui.Streams, args []string) ([]mirror.Node, func(), error) {
	var nodes []mirror.Node
	var spool string
	done := func() {
		for _, n := range nodes {
			n.Close()
		}
		if spool != "" {
			removeSpool(spool)
		}
	}
	for _, a := range args {
		if a != "-" {
			n, err := mirror.OpenNode(a)
			if err != nil {
				return nodes, done, digestInputError(err)
			}
			nodes = append(nodes, n)
			continue
		}
		if s.InTTY {
			return nodes, done, ui.UsageErrorf("- reads a digest (kseg digest) from stdin, which is a terminal: pipe one in, or give its file")
		}
		var err error
		if spool, err = spoolStdin(s.In); err != nil {
			return nodes, done, err
		}
		d, err := digest.Open(spool)
		if err != nil {
			if fe, ok := err.(*digest.FormatError); ok {
				fe.Path = "- (stdin)"
			}
			return nodes, done, digestInputError(err)
		}
		nodes = append(nodes, mirror.NewDigestNode("-", d))
	}
	return nodes, done, nil
}

// nodeBytes is what the progress line counts for a node read `reads`
// times: its log's size; a digest's once, whatever reads says (its
// replays report no progress).
func nodeBytes(n mirror.Node, reads int64) int64 {
	info := n.Digest()
	if info == nil {
		return reads * ui.LogBytes(n.Name())
	}
	var total int64
	for _, s := range info.Segments {
		total += s.Size
	}
	return total
}

// nodeDigests maps the digest nodes' names to their descriptions.
func nodeDigests(nodes []mirror.Node) map[string]*digest.Info {
	m := map[string]*digest.Info{}
	for _, n := range nodes {
		if info := n.Digest(); info != nil {
			m[n.Name()] = info
		}
	}
	return m
}

// spoolStdin copies a digest on stdin into a temporary file ($TMPDIR) and
// returns its path: the one file a reading command writes, never in a
// partition (removeSpool removes it).
func spoolStdin(in io.Reader) (string, error) {
	f, err := os.CreateTemp("", "kseg-stdin-*.digest")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// removeSpool removes spoolStdin's file.
func removeSpool(path string) { os.Remove(path) }
