// Package chainnode is how the commands that compare partitions across a
// mirror chain (verify-chain, mirror, digest) open and describe its nodes:
// a partition directory, a digest file (kseg digest) or "-", a digest on
// stdin; their offset ranges and digests in text and JSON; and the checks
// that two nodes can be one partition's mirrors.
package chainnode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/barrier/mirror"
	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment/digest"
)

// A verify-chain node is a partition directory, a digest file (kseg
// digest), or "-": a digest on stdin, as ssh brings it
// (ssh broker-b kseg digest DIR | kseg verify-chain A -).

// IsDigest reports an argument that names a digest: "-", or a file
// that starts as a digest does.
func IsDigest(p string) bool { return p == "-" || mirror.IsDigestFile(p) }

// Open opens every node. stdin is read once into a temporary file
// (a verify-chain pass reads a node more than once: the walk, then the
// producer-state replays), removed by the returned func, which closes
// the nodes too.
func Open(s *ui.Streams, args []string) ([]mirror.Node, func(), error) {
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
				return nodes, done, InputError(err)
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
			return nodes, done, InputError(err)
		}
		nodes = append(nodes, mirror.NewDigestNode("-", d))
	}
	return nodes, done, nil
}

// Bytes is what the progress line counts for a node read `reads`
// times: its log's size; a digest's once, whatever reads says (its
// replays report no progress).
func Bytes(n mirror.Node, reads int64) int64 {
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

// Digests maps the digest nodes' names to their descriptions.
func Digests(nodes []mirror.Node) map[string]*digest.Info {
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

// RangeText is an offset range in text: [start, end), or "none".
func RangeText(r mirror.OffsetRange) string {
	if r.Start < 0 {
		return "none"
	}
	return fmt.Sprintf("[%d, %d)", r.Start, r.End)
}

// RangeJSON is an offset range on the wire.
type RangeJSON struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Batches is "1 batch" or "N batches".
func Batches(n int64) string {
	if n == 1 {
		return "1 batch"
	}
	return ui.Plural(n, "batch")
}

// DigestJSON describes a node that is a digest.
type DigestJSON struct {
	Dir           string `json:"dir"`
	Host          string `json:"host"`
	Taken         string `json:"taken"`
	KsegVersion   string `json:"ksegVersion"`
	FormatVersion int    `json:"formatVersion"`
	Hash          string `json:"hash"`
	Sections      int    `json:"sections"`
	Live          bool   `json:"live"`
}

// DigestOf is info on the wire; nil for a node that is not a digest.
func DigestOf(info *digest.Info) *DigestJSON {
	if info == nil {
		return nil
	}
	return &DigestJSON{Dir: info.Dir, Host: info.Host, Taken: info.Taken.UTC().Format("2006-01-02T15:04:05.000Z"), KsegVersion: info.KsegVersion,
		FormatVersion: info.FormatVersion, Hash: info.Hash.String(), Sections: info.Sections, Live: info.Live}
}

// DigestText is a digest node's description in the text output.
// The host, directory and version came from the digest: escaped.
func DigestText(info *digest.Info) string {
	where := info.Dir
	if info.Host != "" {
		where = info.Host + ":" + where
	}
	s := fmt.Sprintf("of %s, taken %s by kseg %s (%s", ui.Esc(where), info.Taken.UTC().Format("2006-01-02T15:04:05.000Z"), ui.Esc(info.KsegVersion), info.Hash)
	if info.Sections > 1 {
		s += fmt.Sprintf(", %d sections", info.Sections)
	}
	if info.Live {
		s += ", a broker running"
	}
	return s + ")"
}

// InputError is a digest that cannot be read: a usage error (exit
// 2) naming the byte and what was expected there.
func InputError(err error) error {
	var fe *digest.FormatError
	if errors.As(err, &fe) || errors.Is(err, mirror.ErrHashMismatch) {
		return &ui.ExitCodeError{Code: ui.ExitUsage, Err: err}
	}
	return err
}

// SameDir: a and b name the same directory (os.SameFile follows links).
func SameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}

// CheckSamePartition refuses an edge whose two partitions cannot be a
// mirror and its source: a KIP-1279 mirror topic keeps its source's topic
// name, partition and topic id (partition.metadata), so anything else is
// two unrelated partitions, and comparing them byte for byte would report
// a "divergence" that is no such thing.
// A digest (kseg digest) carries its partition's name and topic id, and is
// refused in the same words.
func CheckSamePartition(un, dn mirror.Node) error {
	up, down := un.Name(), dn.Name()
	iu, id := un.Identity(), dn.Identity()
	if iu.Named && id.Named && (iu.Topic != id.Topic || iu.Partition != id.Partition) {
		return ui.Refusedf("refused (topic): %s is %s-%d but %s is %s-%d: a mirror keeps its source's topic name and partition",
			up, iu.Topic, iu.Partition, down, id.Topic, id.Partition)
	}
	if iu.HasTopicID && id.HasTopicID && iu.TopicID != id.TopicID {
		return ui.Refusedf("refused (%s): %s has topic id %s but %s has %s: a mirror keeps its source's topic id",
			mirror.RefuseTopicID, up, iu.TopicIDString(), down, id.TopicIDString())
	}
	return nil
}
