package cluster

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kseg/kseg/segment"
)

// Internal topic names.
const (
	ConsumerOffsetsTopic  = "__consumer_offsets"
	TransactionStateTopic = "__transaction_state"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// LogDirInfo is one log directory given to a view.
type LogDirInfo struct {
	Path string
	// NodeID is node.id (KRaft) or broker.id (ZooKeeper) from
	// meta.properties; -1 when absent.
	NodeID    int32
	ClusterID string
}

// Replica is one copy of a partition on disk.
type Replica struct {
	Dir    string
	LogDir string
	// TopicID is partition.metadata's topic_id, "" when the file is absent.
	TopicID string
	// size estimates how far the replica's log reaches (last segment's
	// base offset, then its .log size), to pick the most complete copy.
	lastBase, lastSize int64
}

// Inventory is every live partition directory of a set of log
// directories. A partition found in several directories (replicas on
// several brokers' disks) has several Replicas, the most complete first.
type Inventory struct {
	LogDirs    []LogDirInfo
	Partitions map[TopicPartition][]Replica
	// Warnings are files whose content could not be parsed
	// (meta.properties, partition.metadata); the views go on without what
	// they would have said.
	Warnings []string
	// Unreadable are the live partition directories that could not be
	// listed. They are not absent: a view says it could not read them
	// (a replica the metadata image places there is unreadable, not
	// missing; a committed partition's lag is unknown), and goes on with
	// the others.
	Unreadable []Unreadable

	// logDirs reads each log directory's checkpoints and meta.properties
	// once, for every partition directory the views open.
	logDirs *segment.LogDirCache
}

// openPartitionDir lists a partition directory of the inventory.
func (inv *Inventory) openPartitionDir(dir string) (*segment.PartitionDir, error) {
	return inv.logDirs.OpenPartitionDir(dir)
}

// Unreadable is a partition whose directory, or one of whose files, could
// not be read: a view goes on without it and reports Err.
type Unreadable struct {
	TopicPartition
	Dir    string
	LogDir string
	Err    error
}

// unreadableOf says whether tp could not be read: its most complete copy
// failed in a view's reading of it (in unread), or it has no readable copy
// and an unreadable one.
func unreadableOf(inv *Inventory, unread []Unreadable, tp TopicPartition) (Unreadable, bool) {
	if rs := inv.Partitions[tp]; len(rs) > 0 {
		for _, u := range unread {
			if u.Dir == rs[0].Dir {
				return u, true
			}
		}
		return Unreadable{}, false
	}
	return inv.unreadable(tp)
}

// unreadable is the unreadable copy of tp, if tp has no readable one.
func (inv *Inventory) unreadable(tp TopicPartition) (Unreadable, bool) {
	if len(inv.Partitions[tp]) > 0 {
		return Unreadable{}, false
	}
	for _, u := range inv.Unreadable {
		if u.TopicPartition == tp {
			return u, true
		}
	}
	return Unreadable{}, false
}

// OpenInventory lists the log directories. Only partition directories in
// the live state are taken (a -delete or -future directory is not what a
// broker serves); one that cannot be listed is Unreadable, and a log
// directory that cannot be listed an error.
func OpenInventory(paths []string) (*Inventory, error) {
	inv := &Inventory{Partitions: map[TopicPartition][]Replica{}, logDirs: segment.NewLogDirCache()}
	for _, p := range paths {
		ld, err := segment.OpenLogDir(p)
		if err != nil {
			return nil, err
		}
		info := LogDirInfo{Path: p, NodeID: -1}
		if _, ok := ld.File(segment.KindMetaProperties); ok {
			props, err := inv.logDirs.MetaProperties(p)
			if err != nil {
				inv.Warnings = append(inv.Warnings, err.Error())
			}
			id := props["node.id"]
			if id == "" {
				id = props["broker.id"]
			}
			var n int32
			if _, err := fmt.Sscan(id, &n); err == nil {
				info.NodeID = n
			}
			info.ClusterID = props["cluster.id"]
		}
		inv.LogDirs = append(inv.LogDirs, info)
		for _, dir := range ld.Partitions {
			n, ok := segment.ParsePartitionDir(filepath.Base(dir))
			if !ok || n.State != segment.DirLive {
				continue
			}
			pd, err := inv.openPartitionDir(dir)
			if err != nil {
				// A partition that cannot be listed is not absent:
				// the views say so rather than call its replica missing.
				inv.Unreadable = append(inv.Unreadable, Unreadable{TopicPartition{n.Topic, n.Partition}, dir, p, err})
				continue
			}
			r := Replica{Dir: dir, LogDir: p}
			if pd.PartitionMetadata != "" {
				if pm, err := segment.ReadPartitionMetadata(pd.PartitionMetadata); err == nil {
					r.TopicID = segment.TopicIDString(pm.TopicID)
				} else {
					inv.Warnings = append(inv.Warnings, err.Error())
				}
			}
			for s := range pd.Logs() {
				r.lastBase = s.BaseOffset
				if fi, err := os.Stat(s.Log); err == nil {
					r.lastSize = fi.Size()
				}
			}
			tp := TopicPartition{n.Topic, n.Partition}
			inv.Partitions[tp] = append(inv.Partitions[tp], r)
		}
	}
	for tp, rs := range inv.Partitions {
		slices.SortStableFunc(rs, func(a, b Replica) int {
			return cmp.Or(cmp.Compare(b.lastBase, a.lastBase), cmp.Compare(b.lastSize, a.lastSize))
		})
		inv.Partitions[tp] = rs
	}
	return inv, nil
}

// TopicPartitions returns the partitions of topic present, sorted.
func (inv *Inventory) TopicPartitions(topic string) []TopicPartition {
	var out []TopicPartition
	for tp := range inv.Partitions {
		if tp.Topic == topic {
			out = append(out, tp)
		}
	}
	slices.SortFunc(out, func(a, b TopicPartition) int { return cmp.Compare(a.Partition, b.Partition) })
	return out
}

// DataPartitions returns every partition that is not an internal topic's
// (__consumer_offsets, __transaction_state, __cluster_metadata), sorted.
func (inv *Inventory) DataPartitions() []TopicPartition {
	var out []TopicPartition
	for tp := range inv.Partitions {
		if !isDataTopic(tp.Topic) {
			continue
		}
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// isDataTopic: topic is not one of the internal topics the views read
// themselves (__consumer_offsets, __transaction_state, __cluster_metadata).
func isDataTopic(topic string) bool {
	return !strings.HasPrefix(topic, "__consumer_offsets") && topic != TransactionStateTopic && topic != "__cluster_metadata"
}

// TopicNames maps topic ids (partition.metadata) to topic names, for the
// KIP-848 records, which name topics by id. A topic recreated under the
// same name on these disks has two ids, both mapped.
func (inv *Inventory) TopicNames() map[string]string {
	m := map[string]string{}
	for tp, rs := range inv.Partitions {
		for _, r := range rs {
			if r.TopicID != "" {
				m[r.TopicID] = tp.Topic
			}
		}
	}
	return m
}

// eachCoordinator opens each coordinator partition directory dirs[i] and
// hands it to scan, jobs at a time; errs[i] is the error of the one that
// could not be opened or read.
func eachCoordinator(inv *Inventory, dirs []string, jobs int, scan func(i int, pd *segment.PartitionDir) error) (errs []error) {
	errs = make([]error, len(dirs))
	parallel(len(dirs), jobs, func(i int) {
		pd, err := inv.openPartitionDir(dirs[i])
		if err != nil {
			errs[i] = err
			return
		}
		errs[i] = scan(i, pd)
	})
	return errs
}

// parallel runs fn(i) for i in [0, n) on at most jobs goroutines.
func parallel(n, jobs int, fn func(i int)) {
	if jobs <= 0 {
		jobs = 1
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
