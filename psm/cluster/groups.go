package cluster

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// Group is one consumer group as its coordinator would load it from
// __consumer_offsets.
type Group struct {
	Group string
	// Type is "classic" (GroupMetadataValue) or "consumer" (KIP-848
	// records); a group known only by its committed offsets (a consumer
	// using assign() and commitSync) is "classic" with no protocol type,
	// as the coordinator loads it.
	Type string
	// State is the state the coordinator gives the group on load: classic
	// groups are Empty or Stable (ClassicGroup.fromRecord); consumer groups
	// Empty, Assigning, Reconciling or Stable (ConsumerGroup.maybeUpdateGroupState).
	State        string
	ProtocolType string
	Protocol     string
	// Generation is the classic generation or the consumer group epoch.
	Generation int32
	// AssignmentEpoch is a consumer group's target assignment epoch.
	AssignmentEpoch int32
	Leader          string
	// StateTimestamp is currentStateTimestamp, -1 when unknown.
	StateTimestamp int64
	Members        []Member
	Offsets        []CommittedOffset
	// Coordinator is the __consumer_offsets partition directory holding
	// the group; MetadataOffset the offset of its latest metadata record
	// there (-1 when the group has none).
	Coordinator    string
	MetadataOffset int64
}

// Member is a group member.
type Member struct {
	MemberID           string
	GroupInstanceID    string
	ClientID           string
	ClientHost         string
	SessionTimeoutMs   int32
	RebalanceTimeoutMs int32
	// MemberEpoch and State: KIP-848 members (ConsumerGroupCurrentMemberAssignment).
	MemberEpoch int32
	State       string
	Subscribed  []string
	// Assignment: the classic member's assigned partitions, or the
	// KIP-848 member's current assignment (topic ids resolved to names
	// through partition.metadata where found; else the id).
	Assignment []TopicPartitions
}

// CommittedOffset is a group's last committed offset for one partition,
// with what the partition's log on disk says about it.
type CommittedOffset struct {
	Topic           string
	Partition       int32
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64
	// RecordOffset is where the commit is in the coordinator partition.
	RecordOffset int64
	// Log is nil when the partition is not in the directories.
	Log *PartitionLog
	// Lag is highWatermark - offset (kafka-consumer-groups' LAG), -1 when
	// the log is absent or the offset outside it.
	Lag int64
}

// GroupsOptions select and tune the groups view.
type GroupsOptions struct {
	// Groups and Topics filter (exact names); empty = all.
	Groups []string
	Topics []string
	Jobs   int
	// PSM are the options of the data partitions' rebuild.
	PSM psm.Options
	// NumPartitions is offsets.topic.num.partitions, to tell which
	// coordinator partition a group named in Groups lives in; 0 takes it
	// from the KRaft metadata image when __cluster_metadata-0 is in the
	// directories, else DefaultOffsetsPartitions.
	NumPartitions int32
}

// GroupsView is the groups view of a set of log directories.
type GroupsView struct {
	Groups []Group
	// Coordinators are the __consumer_offsets partition directories read.
	Coordinators []string
	// Skipped counts records of types the view does not interpret.
	Skipped map[string]int
	// Unanswerable: a group asked for (GroupsOptions.Groups) whose
	// coordinator partition is not in the directories, so that its
	// absence from Groups says nothing about the group.
	Unanswerable []string
	// Absent are the groups asked for (GroupsOptions.Groups) that do not
	// exist: their coordinator partition was read and holds no such group
	// (never created, or deleted).
	Absent   []string
	Findings []finding.Finding
	// Unreadable are the partitions that could not be read (the
	// inventory's, and __consumer_offsets partitions whose files could
	// not be): the view is complete but for them.
	Unreadable []Unreadable
}

// LoadGroups replays every __consumer_offsets partition of the inventory
// (the most complete replica of each, jobs at a time) and cross-checks
// each committed offset with its partition's log when present.
func LoadGroups(inv *Inventory, dec Decoder, o GroupsOptions) (*GroupsView, error) {
	tps := inv.TopicPartitions(ConsumerOffsetsTopic)
	v := &GroupsView{Skipped: map[string]int{}, Unreadable: slices.Clone(inv.Unreadable)}
	for _, tp := range tps {
		v.Coordinators = append(v.Coordinators, inv.Partitions[tp][0].Dir)
	}
	res := make([]*groupsReplay, len(tps))
	errs := eachCoordinator(inv, v.Coordinators, o.Jobs, func(i int, pd *segment.PartitionDir) error {
		res[i] = newGroupsReplay(dec, v.Coordinators[i])
		_, fs, err := scanPartition(pd, scanHandler{record: res[i].apply, marker: res[i].marker})
		res[i].findings = append(fs, res[i].findings...)
		return err
	})
	names := inv.TopicNames()
	want := func(list []string, s string) bool { return len(list) == 0 || slices.Contains(list, s) }
	for i, r := range res {
		if errs[i] != nil {
			// One coordinator partition that cannot be read does not
			// stop the others: its groups are unknown, and said so.
			v.Unreadable = append(v.Unreadable, Unreadable{tps[i], v.Coordinators[i], inv.Partitions[tps[i]][0].LogDir, errs[i]})
			continue
		}
		v.Findings = append(v.Findings, r.findings...)
		for k, n := range r.skipped {
			v.Skipped[k] += n
		}
		// Each group's replay state is let go once its Group is built, so
		// that the view does not need the memory of both at once.
		for name, acc := range r.groups {
			delete(r.groups, name)
			if !want(o.Groups, name) || acc.deleted() {
				continue
			}
			g := acc.group(name, v.Coordinators[i], names)
			if len(o.Topics) > 0 {
				g.Offsets = slices.DeleteFunc(g.Offsets, func(c CommittedOffset) bool { return !slices.Contains(o.Topics, c.Topic) })
				if len(g.Offsets) == 0 && !memberAssigned(g, o.Topics) {
					continue
				}
			}
			v.Groups = append(v.Groups, g)
		}
		res[i] = nil
	}
	slices.SortFunc(v.Groups, func(a, b Group) int { return cmp.Compare(a.Group, b.Group) })
	v.Unanswerable, v.Absent = groupsUnanswerable(inv, o, tps, v.Groups, v.Unreadable)
	if len(tps) == 0 && len(v.Unreadable) == 0 {
		v.Unanswerable = append(v.Unanswerable, "no __consumer_offsets partition is in these directories: the groups and what they committed are on other brokers' disks")
	}
	v.checkOffsets(inv, o)
	return v, nil
}

// checkOffsets cross-checks every committed offset with its partition's
// log, rebuilt once per partition: its lag, or an offset below the log
// start or above the log end.
func (v *GroupsView) checkOffsets(inv *Inventory, o GroupsOptions) {
	var need []TopicPartition
	seen := map[TopicPartition]bool{}
	for _, g := range v.Groups {
		for _, c := range g.Offsets {
			tp := TopicPartition{c.Topic, c.Partition}
			if !seen[tp] {
				seen[tp] = true
				need = append(need, tp)
			}
		}
	}
	logs := rebuildPartitions(inv, need, o.Jobs, o.PSM)
	for gi := range v.Groups {
		g := &v.Groups[gi]
		for ci := range g.Offsets {
			c := &g.Offsets[ci]
			c.Lag = -1
			pl := logs[TopicPartition{c.Topic, c.Partition}]
			if pl == nil {
				continue
			}
			c.Log = pl
			if pl.Err != nil {
				v.Unreadable = unreadLog(v.Unreadable, TopicPartition{c.Topic, c.Partition}, pl, filepath.Dir(pl.Dir))
				v.Findings = append(v.Findings, newFinding(finding.PartitionNotReplayed, g.Group, pl.Dir, -1,
					fmt.Sprintf("%s-%d: the log could not be read (%v): no lag", c.Topic, c.Partition, pl.Err)))
				continue
			}
			switch {
			case c.Offset < pl.LogStartOffset:
				v.Findings = append(v.Findings, newFinding(finding.OffsetBelowLogStart, g.Group, pl.Dir, c.Offset,
					fmt.Sprintf("group %s committed offset %d for %s-%d, below the log start offset %d: the records in between were deleted before the group consumed them, and a consumer resuming there gets OFFSET_OUT_OF_RANGE and auto.offset.reset decides where it goes",
						g.Group, c.Offset, c.Topic, c.Partition, pl.LogStartOffset)))
			case c.Offset > pl.LogEndOffset:
				v.Findings = append(v.Findings, newFinding(finding.OffsetAboveLogEnd, g.Group, pl.Dir, c.Offset,
					fmt.Sprintf("group %s committed offset %d for %s-%d, above the log end offset %d: the log was truncated (a failover to a replica that had less, or a cut) after the group consumed it; a consumer resuming there gets OFFSET_OUT_OF_RANGE, and records written again below %d will not be consumed",
						g.Group, c.Offset, c.Topic, c.Partition, pl.LogEndOffset, c.Offset)))
			default:
				c.Lag = max(pl.HighWatermark-c.Offset, 0)
			}
		}
	}
}

// groupsUnanswerable names the groups asked for that are not in the
// view and whose coordinator partition (GroupCoordinatorService.partitionFor)
// is not in the directories: where they are, or whether they exist, is on
// another broker's disk.
func groupsUnanswerable(inv *Inventory, o GroupsOptions, tps []TopicPartition, found []Group, unread []Unreadable) (unanswerable, absent []string) {
	if len(o.Groups) == 0 {
		return nil, nil
	}
	n, from := o.NumPartitions, "offsets.topic.num.partitions as given"
	if n <= 0 {
		n, from = DefaultOffsetsPartitions, "offsets.topic.num.partitions' default"
		if k := imagePartitionCount(inv, ConsumerOffsetsTopic); k > 0 {
			n, from = k, "the metadata image"
		}
	}
	present := map[int32]bool{}
	for _, tp := range tps {
		present[tp.Partition] = true
	}
	for _, name := range o.Groups {
		if slices.ContainsFunc(found, func(g Group) bool { return g.Group == name }) {
			continue
		}
		p := CoordinatorPartition(name, n)
		if u, ok := unreadableOf(inv, unread, TopicPartition{ConsumerOffsetsTopic, p}); ok {
			unanswerable = append(unanswerable, fmt.Sprintf("group %q is coordinated by %s-%d (of %d partitions, from %s), which could not be read (%v): whether it exists and what it committed are unknown",
				name, ConsumerOffsetsTopic, p, n, from, u.Err))
			continue
		}
		if !present[p] {
			unanswerable = append(unanswerable, fmt.Sprintf("group %q is coordinated by %s-%d (of %d partitions, from %s), which is not in these directories: whether it exists and what it committed are unknown",
				name, ConsumerOffsetsTopic, p, n, from))
			continue
		}
		if len(o.Topics) == 0 {
			// With --topic, a group that committed nothing for the
			// topic is left out, not absent.
			absent = append(absent, fmt.Sprintf("group %q does not exist: %s-%d, which coordinates it, holds no such group", name, ConsumerOffsetsTopic, p))
		}
	}
	return unanswerable, absent
}

func memberAssigned(g Group, topics []string) bool {
	for _, m := range g.Members {
		for _, a := range m.Assignment {
			if slices.Contains(topics, a.Topic) {
				return true
			}
		}
	}
	return false
}

// group renders the accumulated state.
func (a *groupAcc) group(name, coordinator string, topicNames map[string]string) Group {
	g := Group{Group: name, Type: "classic", State: "Empty", StateTimestamp: -1, Coordinator: coordinator, MetadataOffset: a.metadataOffset}
	switch {
	case a.consumer:
		g.Type, g.ProtocolType, g.Generation, g.AssignmentEpoch = "consumer", "consumer", a.epoch, a.assignmentEpoch
		for id, m := range a.members {
			mm := Member{MemberID: id, MemberEpoch: -1}
			if m.meta != nil {
				mm.GroupInstanceID, mm.ClientID, mm.ClientHost = m.meta.InstanceID, m.meta.ClientID, m.meta.ClientHost
				mm.RebalanceTimeoutMs, mm.Subscribed = m.meta.RebalanceTimeoutMs, m.meta.SubscribedTopicNames
			}
			if m.current != nil {
				mm.MemberEpoch, mm.State = m.current.MemberEpoch, memberState(m.current.State)
				for _, t := range m.current.Assigned {
					topic := topicNames[segment.TopicIDString(t.TopicID)]
					if topic == "" {
						topic = segment.TopicIDString(t.TopicID)
					}
					mm.Assignment = append(mm.Assignment, TopicPartitions{topic, t.Partitions})
				}
			}
			g.Members = append(g.Members, mm)
		}
		// ConsumerGroup.maybeUpdateGroupState.
		switch {
		case len(g.Members) == 0:
			g.State = "Empty"
		case a.assignmentEpoch != a.epoch:
			g.State = "Assigning"
		default:
			g.State = "Stable"
			for _, m := range g.Members {
				if m.MemberEpoch != a.assignmentEpoch {
					g.State = "Reconciling"
					break
				}
			}
		}
	case a.classic != nil:
		c := a.classic
		g.ProtocolType, g.Protocol, g.Generation, g.Leader, g.StateTimestamp = c.ProtocolType, c.Protocol, c.Generation, c.Leader, c.CurrentStateTimestamp
		for _, m := range c.Members {
			g.Members = append(g.Members, Member{MemberID: m.MemberID, GroupInstanceID: m.GroupInstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				SessionTimeoutMs: m.SessionTimeout, RebalanceTimeoutMs: m.RebalanceTimeout, MemberEpoch: -1, Assignment: m.Assignment})
		}
		// ClassicGroup.fromRecord: Empty without members, else Stable.
		if len(g.Members) > 0 {
			g.State = "Stable"
		}
	}
	slices.SortFunc(g.Members, func(a, b Member) int { return cmp.Compare(a.MemberID, b.MemberID) })
	if len(a.offsets) > 0 {
		g.Offsets = make([]CommittedOffset, 0, len(a.offsets))
	}
	for tp, c := range a.offsets {
		g.Offsets = append(g.Offsets, CommittedOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: c.offset, LeaderEpoch: c.leaderEpoch,
			Metadata: c.metadata, CommitTimestamp: c.commitTimestamp, ExpireTimestamp: c.expireTimestamp, RecordOffset: c.recordOffset})
	}
	slices.SortFunc(g.Offsets, func(a, b CommittedOffset) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return g
}

// memberState names MemberState's ids (KIP-848).
func memberState(s int8) string {
	switch s {
	case 0:
		return "Stable"
	case 1:
		return "UnrevokedPartitions"
	case 2:
		return "UnreleasedPartitions"
	case 127:
		return "Unknown"
	}
	return fmt.Sprintf("State(%d)", s)
}
