// Package tree is what kseg check walks: the partition directories and
// log directories under its PATHs, and the directories it could not read.
package tree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/cmd/internal/inputs"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// Finding the Kafka data under kseg check's PATHs.
//
// A fixture tree nests partition directories under folders of any name
// (testdata/broken/crc-mismatch/events-0, a repository's
// kafka/data/orders-0), so check walks each PATH and keeps every directory
// that is a partition: its name is <topic>-<partition> (Kafka's
// Log.parseTopicPartitionName, -delete/-future/-stray included) and it
// holds at least one file of a partition (a segment file, a producer
// snapshot, leader-epoch-checkpoint, partition.metadata, a KRaft
// snapshot, or a kseg journal). The name alone is not enough:
// "kafka-logs-1" is a log directory named like partition 1 of topic
// "kafka-logs". A partition's parent is its log directory; check reads a
// log directory's own files (its checkpoints, meta.properties) and runs
// the whole-broker views on it when it is inside a PATH. Hidden
// directories (.git, a backup folder) and everything that is not Kafka
// data are skipped.

// checkTree is what the walk found, in walk order (PATH by PATH, each in
// lexical order): partitions, and the log directories holding them.
type Tree struct {
	roots      []string // the PATHs, absolute and clean
	Partitions []Partition
	LogDirs    []*LogDir
	// unreadable are directories the walk could not list whose name is no
	// partition's (a partition's name makes it a partition, unread).
	Unreadable []WalkError
}

// checkPartition is one partition directory.
type Partition struct {
	Path string // as walked: the PATH joined with the rest
	Abs  string
	// logDir indexes tree.logDirs when the parent is inside a PATH, else
	// -1.
	LogDir int
}

// checkLogDir is a directory that holds partitions.
type LogDir struct {
	Path, Abs  string
	partitions []int
	// topics are the internal topics among its partitions, which decide
	// the whole-broker views run on it (groups, txns, metadata).
	Topics map[string]bool
}

type WalkError struct {
	Path string
	Err  error
}

// isPartitionFile reports a file name that only a partition directory
// holds.
func isPartitionFile(name string) bool {
	if edit.IsJournal(name) {
		return true
	}
	fi, ok := segment.ParseFileName(name)
	if !ok {
		return false
	}
	switch fi.Kind {
	case segment.KindLog, segment.KindIndex, segment.KindTimeIndex, segment.KindTxnIndex, segment.KindProducerSnapshot,
		segment.KindLeaderEpochCheckpoint, segment.KindPartitionMetadata, segment.KindMetadataSnapshot, segment.KindQuorumState:
		return true
	}
	return false
}

// walkCheckPaths walks the PATHs. A PATH that cannot be read is an
// operational error (exit 1), a file a usage error (exit 2), as every
// command takes its inputs (inputs.go).
func Walk(paths []string) (*Tree, error) {
	t := &Tree{}
	seen := map[string]bool{}
	logDirs := map[string]int{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, inputs.IOError(err)
		}
		if !st.IsDir() {
			return nil, inputs.NotInput(p, "a file, not a directory", "check takes directories: partitions, log directories, or trees holding them")
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, inputs.IOError(err)
		}
		t.roots = append(t.roots, abs)
		if err := t.walk(p, abs, seen, logDirs); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Tree) walk(root, rootAbs string, seen map[string]bool, logDirs map[string]int) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && !d.IsDir() {
			return nil
		}
		name := filepath.Base(p)
		if p != root && strings.HasPrefix(name, ".") {
			return filepath.SkipDir
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return rerr
		}
		abs := filepath.Join(rootAbs, rel)
		if seen[abs] {
			return filepath.SkipDir // a PATH inside another one
		}
		_, named := segment.ParsePartitionDir(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != root {
				return nil // gone during the walk
			}
			seen[abs] = true
			if named {
				t.addPartition(p, abs, logDirs)
			} else {
				t.Unreadable = append(t.Unreadable, WalkError{p, err})
			}
			return filepath.SkipDir
		}
		if !named {
			return nil
		}
		entries, rerr := os.ReadDir(p)
		partition := rerr != nil
		for _, e := range entries {
			if !e.IsDir() && isPartitionFile(e.Name()) {
				partition = true
				break
			}
		}
		if !partition {
			return nil
		}
		seen[abs] = true
		t.addPartition(p, abs, logDirs)
		return filepath.SkipDir
	})
}

// addPartition records a partition and, when its parent lies inside a
// PATH, that log directory.
func (t *Tree) addPartition(p, abs string, logDirs map[string]int) {
	cp := Partition{Path: p, Abs: abs, LogDir: -1}
	parentAbs := filepath.Dir(abs)
	if t.Inside(parentAbs) {
		i, ok := logDirs[parentAbs]
		if !ok {
			i = len(t.LogDirs)
			logDirs[parentAbs] = i
			t.LogDirs = append(t.LogDirs, &LogDir{Path: filepath.Dir(p), Abs: parentAbs, Topics: map[string]bool{}})
		}
		cp.LogDir = i
		ld := t.LogDirs[i]
		ld.partitions = append(ld.partitions, len(t.Partitions))
		if n, ok := segment.ParsePartitionDir(filepath.Base(p)); ok && n.State == segment.DirLive {
			switch n.Topic {
			case cluster.ConsumerOffsetsTopic, cluster.TransactionStateTopic, cluster.ClusterMetadataTopic:
				ld.Topics[n.Topic] = true
			}
		}
	}
	t.Partitions = append(t.Partitions, cp)
}

// inside reports whether abs is one of the PATHs or below one.
func (t *Tree) Inside(abs string) bool {
	for _, r := range t.roots {
		if PathWithin(abs, r) {
			return true
		}
	}
	return false
}

// pathWithin reports whether p is dir or below it (both absolute and
// clean).
func PathWithin(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}
