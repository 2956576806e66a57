// The image checked against the partitions on disk: replicas the image places
// here and the disk lacks, partitions on disk the image does not know (or
// knows under another topic id), and leader epochs the image never
// recorded.

package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// crossCheck compares the image with the disks: every partition directory
// of a log directory whose node id is known against the image, and every
// replica the image assigns to such a node against the directories. later
// is the image at the log end when the image is of an earlier offset
// (--at), nil otherwise.
func (v *MetadataView) crossCheck(inv *Inventory, later *MetadataImage) {
	cc := &crossChecker{v: v, inv: inv, later: later, byName: map[string]*TopicImage{}, nodeOf: map[string]int32{},
		nodes: map[int32]bool{}, seen: map[replicaKey]bool{}}
	for i := range v.Image.Topics {
		cc.byName[v.Image.Topics[i].Name] = &v.Image.Topics[i]
	}
	for _, d := range inv.LogDirs {
		cc.nodeOf[d.Path] = d.NodeID
		if d.NodeID >= 0 {
			cc.nodes[d.NodeID] = true
		}
	}
	tps, unreadable := cc.diskPartitions()
	for _, tp := range tps {
		if tp.Topic == ClusterMetadataTopic {
			continue
		}
		for _, r := range inv.Partitions[tp] {
			cc.replica(tp, r)
		}
		for _, u := range unreadable[tp] {
			node := cc.nodeOf[u.LogDir]
			row := DiskPartition{Topic: tp.Topic, Partition: tp.Partition, Node: node, Dir: u.Dir, DiskLeaderEpoch: -1, ImageLeaderEpoch: -1, Status: "unreadable"}
			if t := cc.byName[tp.Topic]; t != nil {
				row.ImageTopicID = t.ID
			}
			cc.seen[replicaKey{tp, node}] = true
			v.Disk = append(v.Disk, row)
		}
	}
	cc.missingReplicas()
}

// replicaKey is a replica: a partition on a node.
type replicaKey struct {
	tp   TopicPartition
	node int32
}

// crossChecker is one crossCheck: the image's topics by name, the nodes
// of the log directories given, and the replicas found on their disks.
type crossChecker struct {
	v      *MetadataView
	inv    *Inventory
	later  *MetadataImage
	byName map[string]*TopicImage
	nodeOf map[string]int32 // log directory → node.id
	nodes  map[int32]bool   // nodes whose disk was given
	seen   map[replicaKey]bool
}

// diskPartitions are the partitions on disk, in order, those that could
// not be listed included, and the latter by partition. A partition
// directory that could not be listed holds the replica as far as anyone
// can tell: "unreadable", never "missing".
func (cc *crossChecker) diskPartitions() ([]TopicPartition, map[TopicPartition][]Unreadable) {
	inv := cc.inv
	tps := make([]TopicPartition, 0, len(inv.Partitions))
	for tp := range inv.Partitions {
		tps = append(tps, tp)
	}
	unreadable := map[TopicPartition][]Unreadable{}
	for _, u := range inv.Unreadable {
		if len(unreadable[u.TopicPartition]) == 0 && len(inv.Partitions[u.TopicPartition]) == 0 {
			tps = append(tps, u.TopicPartition)
		}
		unreadable[u.TopicPartition] = append(unreadable[u.TopicPartition], u)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return tps, unreadable
}

// replica judges the replica r of tp on disk against the image: its row
// and its finding.
func (cc *crossChecker) replica(tp TopicPartition, r Replica) {
	v, im := cc.v, cc.v.Image
	node := cc.nodeOf[r.LogDir]
	row := DiskPartition{Topic: tp.Topic, Partition: tp.Partition, Node: node, Dir: r.Dir, DiskTopicID: r.TopicID, DiskLeaderEpoch: -1, ImageLeaderEpoch: -1, Status: "ok"}
	if pd, err := cc.inv.openPartitionDir(r.Dir); err == nil && pd.LeaderEpochCheckpoint != "" {
		if es, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint); err == nil && len(es) > 0 {
			row.DiskLeaderEpoch = es[len(es)-1].Epoch
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			v.Findings = append(v.Findings, newFinding(finding.LeaderEpochNotCompared, tp.String(), r.Dir, -1, err.Error()))
		}
	}
	t := cc.byName[tp.Topic]
	var p *PartitionImage
	if t != nil {
		row.ImageTopicID = t.ID
		if i, ok := slices.BinarySearchFunc(t.Partitions, tp.Partition, func(p PartitionImage, n int32) int { return cmp.Compare(p.Partition, n) }); ok {
			p = &t.Partitions[i]
			row.ImageLeaderEpoch = p.LeaderEpoch
		}
	}
	var f *finding.Finding
	row.Status, f = judgeDiskPartition(im, cc.later, t, p, r, row, node)
	if f != nil {
		v.Findings = append(v.Findings, *f)
	}
	if row.Status != "orphan" && row.Status != "recreated" {
		// An orphan does not hold the image's replica: the replica is
		// still missing.
		cc.seen[replicaKey{tp, node}] = true
	}
	v.Disk = append(v.Disk, row)
}

// missingReplicas are the replicas the image assigns to a node whose disk
// was given and that its disk does not hold.
func (cc *crossChecker) missingReplicas() {
	v, im := cc.v, cc.v.Image
	cps := recoveryPoints{}
	for _, t := range im.Topics {
		for _, p := range t.Partitions {
			for _, n := range p.Replicas {
				tp := TopicPartition{t.Name, p.Partition}
				if !cc.nodes[n] || cc.seen[replicaKey{tp, n}] {
					continue
				}
				row := DiskPartition{Topic: t.Name, Partition: p.Partition, Node: n, ImageTopicID: t.ID, DiskLeaderEpoch: -1, ImageLeaderEpoch: p.LeaderEpoch, Status: "missing"}
				if cc.later != nil {
					if lp := cc.later.partition(t.ID, p.Partition); lp == nil || !slices.Contains(lp.Replicas, n) {
						// Moved off the node, or deleted, after --at:
						// the disk of now has no reason to hold it.
						row.Status = "unassigned-later"
						v.Disk = append(v.Disk, row)
						continue
					}
				}
				v.Disk = append(v.Disk, row)
				v.Findings = append(v.Findings, newFinding(finding.MissingReplica, tp.String(), "", -1,
					fmt.Sprintf("the metadata image at offset %d assigns %s (topic id %s) to node %d, but no log directory of node %d given holds it%s", im.Offset, tp, t.ID, n, n, cps.had(cc.inv, n, tp))))
			}
		}
	}
}

// recoveryPoints are the recovery-point-offset-checkpoint entries of the
// log directories, read once each (nil: absent or unreadable).
type recoveryPoints map[string]map[TopicPartition]int64

// had says, for a replica missing from node's log directories, whether
// one of them still lists it in its recovery-point-offset-checkpoint
// (LogManager.checkpointLogRecoveryOffsets writes every log the broker
// holds): then the broker had the replica, and the directory is what is
// gone (deleted, or not copied with the rest). "" when none does, and
// when the node's directories hold a directory of that name (an orphan of
// a deleted or recreated topic): the entry, keyed by name, is that
// directory's.
func (c recoveryPoints) had(inv *Inventory, node int32, tp TopicPartition) string {
	for _, d := range inv.LogDirs {
		if d.NodeID != node {
			continue
		}
		if slices.ContainsFunc(inv.Partitions[tp], func(r Replica) bool { return r.LogDir == d.Path }) {
			return ""
		}
	}
	for _, d := range inv.LogDirs {
		if d.NodeID != node {
			continue
		}
		m, ok := c[d.Path]
		if !ok {
			es, _ := segment.ReadOffsetCheckpoint(filepath.Join(d.Path, "recovery-point-offset-checkpoint"))
			if es != nil {
				m = map[TopicPartition]int64{}
				for _, e := range es {
					m[TopicPartition{e.Topic, e.Partition}] = e.Offset
				}
			}
			c[d.Path] = m
		}
		if off, ok := m[tp]; ok {
			return fmt.Sprintf("; %s still lists it (recovery point %d): the broker had this replica, and its directory is gone from what was given (deleted, or not copied)",
				filepath.Join(d.Path, "recovery-point-offset-checkpoint"), off)
		}
	}
	return ""
}

// partition is the partition p of the topic with id, nil if none.
func (im *MetadataImage) partition(id string, p int32) *PartitionImage {
	t := im.Topic(id)
	if t == nil {
		return nil
	}
	if i, ok := slices.BinarySearchFunc(t.Partitions, p, func(x PartitionImage, n int32) int { return cmp.Compare(x.Partition, n) }); ok {
		return &t.Partitions[i]
	}
	return nil
}

// judgeDiskPartition gives one partition directory (replica r on node,
// row filled with its epochs and ids) its status against the image — t
// and p are the image's topic by name and partition, nil when absent —
// and the finding it makes, if any. With later (the image at the log end
// when im is of an earlier --at), what the records after im.Offset
// explain is no finding: a directory of a topic or partition created
// later is "created-later", a leader epoch the log reaches later is not
// ahead.
func judgeDiskPartition(im, later *MetadataImage, t *TopicImage, p *PartitionImage, r Replica, row DiskPartition, node int32) (string, *finding.Finding) {
	tp := TopicPartition{row.Topic, row.Partition}
	mk := func(k finding.Kind, msg string) *finding.Finding {
		f := newFinding(k, tp.String(), r.Dir, -1, msg)
		return &f
	}
	createdLater := func() bool {
		if later == nil {
			return false
		}
		if r.TopicID != "" {
			return later.partition(r.TopicID, tp.Partition) != nil
		}
		for i := range later.Topics {
			if later.Topics[i].Name == tp.Topic {
				return later.partition(later.Topics[i].ID, tp.Partition) != nil
			}
		}
		return false
	}
	switch {
	case r.TopicID != "" && im.Topic(r.TopicID) == nil:
		if createdLater() {
			return "created-later", nil
		}
		msg := fmt.Sprintf("%s holds topic id %s (partition.metadata), which the metadata image at offset %d does not have", r.Dir, r.TopicID, im.Offset)
		if t != nil {
			return "recreated", mk(finding.OrphanPartition, msg+fmt.Sprintf(": topic %s was deleted and recreated with id %s, and this directory is the old incarnation's data (the broker treats it as a stray log and deletes it)", tp.Topic, t.ID))
		}
		return "orphan", mk(finding.OrphanPartition, msg+": the topic was deleted (the broker treats it as a stray log and deletes it)")
	case r.TopicID == "" && t == nil:
		if createdLater() {
			return "created-later", nil
		}
		return "orphan", mk(finding.OrphanPartition, fmt.Sprintf("%s: the metadata image at offset %d has no topic %s (and the directory has no partition.metadata)", r.Dir, im.Offset, tp.Topic))
	case p == nil:
		if createdLater() {
			return "created-later", nil
		}
		return "orphan", mk(finding.OrphanPartition, fmt.Sprintf("%s: topic %s has no partition %d in the metadata image at offset %d", r.Dir, tp.Topic, tp.Partition, im.Offset))
	case row.DiskLeaderEpoch > p.LeaderEpoch:
		if later != nil {
			if lp := later.partition(t.ID, tp.Partition); lp != nil && lp.LeaderEpoch >= row.DiskLeaderEpoch {
				break // a leader the log elects after --at
			}
		}
		return "epoch-ahead", mk(finding.LeaderEpochAhead, fmt.Sprintf("%s: leader-epoch-checkpoint reaches leader epoch %d, ahead of the image's %d at offset %d: the log was written by a leader the controller's metadata does not know (a metadata log behind the data, or data from another cluster)",
			r.Dir, row.DiskLeaderEpoch, p.LeaderEpoch, im.Offset))
	}
	if node >= 0 && !slices.Contains(p.Replicas, node) {
		return "not-assigned", nil
	}
	return "ok", nil
}
