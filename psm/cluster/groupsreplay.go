package cluster

import (
	"fmt"

	"github.com/kseg/kseg/segment/finding"
)

// groupsReplay replays one __consumer_offsets partition, keeping only the
// latest value per key (what the log cleaner keeps), as
// GroupMetadataManager.loadGroupsAndOffsets does. A group whose state is
// all tombstoned is forgotten at once (forget), so memory follows the live
// keys, not every group name the log ever held: a __consumer_offsets of
// short-lived groups (console consumers, test runs) holds millions.
type groupsReplay struct {
	dec      Decoder
	dir      string
	groups   map[string]*groupAcc
	pending  map[int64][]pendingCommit // transactional offset commits by producer id
	skipped  map[string]int
	findings []finding.Finding
	// fast: dec is SchemaDecoder, whose reading of an offset commit
	// commitInPlace repeats without allocating; topics interns the
	// topic names it keys offsets by (one string per topic, not one per
	// committed partition).
	fast   bool
	topics map[string]string
}

type pendingCommit struct {
	group     string
	tp        TopicPartition
	c         offsetAcc
	tombstone bool
}

type groupAcc struct {
	classic         *ClassicGroupValue
	metadataOffset  int64
	consumer        bool // KIP-848 ConsumerGroupMetadata seen
	epoch           int32
	assignmentEpoch int32
	members         map[string]*memberAcc
	offsets         map[TopicPartition]offsetAcc
}

// offsetAcc is a committed offset as the replay keeps it: what
// CommittedOffset says beyond its key, without the cross-check's fields
// (a __consumer_offsets holds millions of live keys).
type offsetAcc struct {
	offset, commitTimestamp, expireTimestamp, recordOffset int64
	metadata                                               string
	leaderEpoch                                            int32
}

type memberAcc struct {
	meta    *ConsumerGroupMemberValue
	current *CurrentMemberAssignmentValue
}

// deleted: nothing of the group is left (its metadata and every offset
// were tombstoned): the coordinator would not load it.
func (a *groupAcc) deleted() bool {
	return a.classic == nil && !a.consumer && len(a.offsets) == 0 && len(a.members) == 0
}

func newGroupsReplay(dec Decoder, dir string) *groupsReplay {
	_, fast := dec.(SchemaDecoder)
	return &groupsReplay{dec: dec, dir: dir, groups: map[string]*groupAcc{}, pending: map[int64][]pendingCommit{}, skipped: map[string]int{},
		fast: fast, topics: map[string]string{}}
}

// forget drops a group nothing is left of, after a tombstone: the
// coordinator would not load it, and keeping its entry would make memory
// grow with every group name ever seen.
func (r *groupsReplay) forget(name string) {
	if a := r.groups[name]; a != nil && a.deleted() {
		delete(r.groups, name)
	}
}

func (r *groupsReplay) acc(name string) *groupAcc {
	a := r.groups[name]
	if a == nil {
		a = &groupAcc{metadataOffset: -1, members: map[string]*memberAcc{}, offsets: map[TopicPartition]offsetAcc{}}
		r.groups[name] = a
	}
	return a
}

func (r *groupsReplay) apply(rec *record) error {
	if r.fast && !rec.Transactional && r.commitInPlace(rec) {
		return nil
	}
	gr, err := r.dec.ConsumerOffsets(rec.Key, rec.Value)
	if err != nil {
		r.findings = append(r.findings, undecodable(ConsumerOffsetsTopic, r.dir, rec.Offset, err))
		return nil
	}
	switch gr.Kind {
	case GroupRecordUnknown:
		r.skipped[fmt.Sprintf("key version %d", gr.KeyVersion)]++
		return nil
	case GroupRecordSkipped:
		r.skipped[gr.SkippedType]++
		return nil
	case GroupRecordOffsetCommit:
		r.offsetCommit(&gr, rec)
		return nil
	}
	a := r.acc(gr.Group)
	if gr.Tombstone {
		defer r.forget(gr.Group)
	}
	a.replay(&gr, rec.Offset)
	return nil
}

// commitInPlace applies the usual record of __consumer_offsets, a
// non-transactional offset commit (or its tombstone), as offsetCommit
// does but read without allocating: group and topic looked up by their
// bytes (a string is made for a group or topic met for the first time),
// the value read straight into the offset's entry. false, with nothing
// done, for any other record: the decoder reads it.
func (r *groupsReplay) commitInPlace(rec *record) bool {
	g, t, p, ok := offsetCommitKeyFields(rec.Key)
	if !ok {
		return false
	}
	var c offsetAcc
	tombstone := rec.Value == nil
	if !tombstone {
		if !typedOffsetValue(rec.Value, &c) {
			return false
		}
		c.recordOffset = rec.Offset
	}
	a := r.groups[string(g)]
	if a == nil {
		if tombstone {
			return true // commit would make the group and forget it again
		}
		a = r.acc(string(g))
	}
	topic, ok := r.topics[string(t)]
	if !ok {
		topic = string(t)
		r.topics[topic] = topic
	}
	if tombstone {
		delete(a.offsets, TopicPartition{topic, p})
		r.forget(string(g))
		return true
	}
	a.offsets[TopicPartition{topic, p}] = c
	return true
}

// offsetCommit applies an OffsetCommit record, or holds a transactional
// one until its producer's marker (GroupMetadataManager
// pendingTransactionalOffsetCommits).
func (r *groupsReplay) offsetCommit(gr *GroupRecord, rec *record) {
	tp := TopicPartition{gr.Topic, gr.Partition}
	var c offsetAcc
	tombstone := gr.Tombstone || gr.Offset == nil
	if !tombstone {
		v := gr.Offset
		c = offsetAcc{offset: v.Offset, leaderEpoch: v.LeaderEpoch, metadata: v.Metadata,
			commitTimestamp: v.CommitTimestamp, expireTimestamp: v.ExpireTimestamp, recordOffset: rec.Offset}
	}
	if rec.Transactional {
		r.pending[rec.ProducerID] = append(r.pending[rec.ProducerID], pendingCommit{gr.Group, tp, c, tombstone})
		return
	}
	r.commit(gr.Group, tp, c, tombstone)
}

// replay applies a group's own record (not an offset commit), found at
// offset, as GroupCoordinatorShard replays it.
func (a *groupAcc) replay(gr *GroupRecord, offset int64) {
	switch gr.Kind {
	case GroupRecordGroupMetadata:
		if gr.Tombstone {
			a.classic, a.metadataOffset = nil, -1
			return
		}
		a.classic, a.metadataOffset = gr.Classic, offset
	case GroupRecordConsumerGroupMetadata:
		if gr.Tombstone {
			// The group is deleted (GroupCoordinatorShard replays a
			// tombstone by removing the group).
			a.consumer, a.epoch, a.members = false, 0, map[string]*memberAcc{}
			return
		}
		a.consumer, a.epoch, a.metadataOffset = true, gr.ConsumerGroupEpoch, offset
	case GroupRecordConsumerGroupTargetAssignmentMetadata:
		if !gr.Tombstone {
			a.assignmentEpoch = gr.AssignmentEpoch
		}
	case GroupRecordConsumerGroupTargetAssignmentMember:
		// The target assignment is the coordinator's intent; the view
		// shows members' current assignments.
	case GroupRecordConsumerGroupMember, GroupRecordConsumerGroupCurrentMemberAssignment:
		a.replayMember(gr)
	}
}

// replayMember applies a KIP-848 member's record: its metadata or its
// current assignment; the member goes when both are tombstoned.
func (a *groupAcc) replayMember(gr *GroupRecord) {
	m := a.members[gr.MemberID]
	if m == nil {
		m = &memberAcc{}
		a.members[gr.MemberID] = m
	}
	if gr.Kind == GroupRecordConsumerGroupMember {
		if gr.Tombstone {
			delete(a.members, gr.MemberID)
			return
		}
		m.meta = gr.Member
	} else if gr.Tombstone {
		m.current = nil
		if m.meta == nil {
			// Both of the member's records are gone.
			delete(a.members, gr.MemberID)
		}
	} else {
		m.current = gr.Current
	}
}

func (r *groupsReplay) commit(group string, tp TopicPartition, c offsetAcc, tombstone bool) {
	a := r.acc(group)
	if tombstone {
		delete(a.offsets, tp)
		r.forget(group)
		return
	}
	a.offsets[tp] = c
}

// marker applies (commit) or drops (abort) a producer's pending
// transactional offset commits.
func (r *groupsReplay) marker(pid int64, commit bool, _ int64) {
	ps := r.pending[pid]
	delete(r.pending, pid)
	if !commit {
		return
	}
	for _, p := range ps {
		r.commit(p.group, p.tp, p.c, p.tombstone)
	}
}
