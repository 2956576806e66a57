package cluster

import (
	"encoding/binary"

	"github.com/kseg/kseg/decode/schema"
)

// The typed path of SchemaDecoder: the records the views replay by the
// million (offset commits, group metadata, transaction metadata) read by
// decode/schema's typed decoders, generated from the same schema table
// as the generic reader, into the same GroupRecord and TxnRecord the
// generic path builds from a *schema.Struct (genericConsumerOffsets,
// genericTransactionState; TestTypedDecoderAgrees compares them). Any
// record the typed decoders do not read — another record type, a value
// that does not decode, a shape they leave to the generic reader — takes
// the generic path, which gives its result or its error.

// coordinatorFraming splits a coordinator record's key (CoordinatorRecordSerde):
// the record type, the key message, the version its body is read at
// (0 for a coordinator-key message, else the record type) and the body.
func coordinatorFraming(topic string, key []byte) (rt int16, km *schema.Message, kv int16, body []byte, ok bool) {
	if len(key) < 2 {
		return 0, nil, 0, nil, false
	}
	rt = int16(binary.BigEndian.Uint16(key))
	km = schema.KeyFor(topic, rt)
	if km == nil {
		return 0, nil, 0, nil, false
	}
	kv = rt
	if km.Type == "coordinator-key" {
		kv = 0
	}
	return rt, km, kv, key[2:], true
}

// valueFraming splits a coordinator record's value: its version and body.
func valueFraming(value []byte) (int16, []byte, bool) {
	if len(value) < 2 {
		return 0, nil, false
	}
	v := int16(binary.BigEndian.Uint16(value))
	return v, value[2:], v >= 0
}

// partitionsOf is int32s of an []int32 field: never nil.
func partitionsOf(ps []int32) []int32 {
	if ps == nil {
		return []int32{}
	}
	return ps
}

func typedConsumerOffsets(key, value []byte) (GroupRecord, bool) {
	r, ok := typedOffsetsKey(key, value == nil)
	if !ok || value == nil {
		return r, ok
	}
	vv, vb, ok := valueFraming(value)
	if !ok {
		return r, false
	}
	return r, typedOffsetsValue(&r, vv, vb)
}

// typedOffsetsKey reads a __consumer_offsets key of a record type the
// views replay.
func typedOffsetsKey(key []byte, tombstone bool) (GroupRecord, bool) {
	rt, km, kv, kb, ok := coordinatorFraming(schema.ConsumerOffsets, key)
	if !ok {
		return GroupRecord{}, false
	}
	kind, ok := recordKinds[km.Name]
	if !ok {
		return GroupRecord{}, false
	}
	r := GroupRecord{Kind: kind, KeyVersion: rt, Partition: -1, Tombstone: tombstone}
	switch km.Name {
	case "OffsetCommitKey":
		k, _, ok := schema.ReadOffsetCommitKey(kb, kv)
		r.Group, r.Topic, r.Partition = k.Group, k.Topic, k.Partition
		return r, ok
	case "GroupMetadataKey":
		k, _, ok := schema.ReadGroupMetadataKey(kb, kv)
		r.Group = k.Group
		return r, ok
	case "ConsumerGroupMetadataKey":
		k, _, ok := schema.ReadConsumerGroupMetadataKey(kb, kv)
		r.Group = k.GroupId
		return r, ok
	case "ConsumerGroupMemberMetadataKey":
		k, _, ok := schema.ReadConsumerGroupMemberMetadataKey(kb, kv)
		r.Group, r.MemberID = k.GroupId, k.MemberId
		return r, ok
	case "ConsumerGroupTargetAssignmentMetadataKey":
		k, _, ok := schema.ReadConsumerGroupTargetAssignmentMetadataKey(kb, kv)
		r.Group = k.GroupId
		return r, ok
	case "ConsumerGroupTargetAssignmentMemberKey":
		k, _, ok := schema.ReadConsumerGroupTargetAssignmentMemberKey(kb, kv)
		r.Group, r.MemberID = k.GroupId, k.MemberId
		return r, ok
	case "ConsumerGroupCurrentMemberAssignmentKey":
		k, _, ok := schema.ReadConsumerGroupCurrentMemberAssignmentKey(kb, kv)
		r.Group, r.MemberID = k.GroupId, k.MemberId
		return r, ok
	}
	return r, false
}

// typedOffsetsValue reads the value of r's kind at version vv into r.
func typedOffsetsValue(r *GroupRecord, vv int16, vb []byte) bool {
	switch r.Kind {
	case GroupRecordOffsetCommit:
		v, _, ok := schema.ReadOffsetCommitValue(vb, vv)
		r.Offset = &OffsetCommitValue{Version: vv, Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata,
			CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: v.ExpireTimestamp}
		return ok
	case GroupRecordGroupMetadata:
		v, _, ok := schema.ReadGroupMetadataValue(vb, vv)
		r.Classic = classicGroup(vv, &v)
		return ok
	case GroupRecordConsumerGroupMetadata:
		v, _, ok := schema.ReadConsumerGroupMetadataValue(vb, vv)
		r.ConsumerGroupEpoch = v.Epoch
		return ok
	case GroupRecordConsumerGroupTargetAssignmentMetadata:
		v, _, ok := schema.ReadConsumerGroupTargetAssignmentMetadataValue(vb, vv)
		r.AssignmentEpoch = v.AssignmentEpoch
		return ok
	case GroupRecordConsumerGroupTargetAssignmentMember:
		v, _, ok := schema.ReadConsumerGroupTargetAssignmentMemberValue(vb, vv)
		for _, t := range v.TopicPartitions {
			r.Target = append(r.Target, TopicIDPartitions{TopicID: t.TopicId, Partitions: partitionsOf(t.Partitions)})
		}
		return ok
	case GroupRecordConsumerGroupMember:
		v, _, ok := schema.ReadConsumerGroupMemberMetadataValue(vb, vv)
		var subs []string
		if len(v.SubscribedTopicNames) > 0 {
			subs = v.SubscribedTopicNames
		}
		r.Member = &ConsumerGroupMemberValue{InstanceID: v.InstanceId, RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost,
			SubscribedTopicNames: subs, SubscribedTopicRegex: v.SubscribedTopicRegex, ServerAssignor: v.ServerAssignor, RebalanceTimeoutMs: v.RebalanceTimeoutMs}
		return ok
	case GroupRecordConsumerGroupCurrentMemberAssignment:
		v, _, ok := schema.ReadConsumerGroupCurrentMemberAssignmentValue(vb, vv)
		c := &CurrentMemberAssignmentValue{MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State}
		for _, t := range v.AssignedPartitions {
			c.Assigned = append(c.Assigned, TopicIDPartitions{TopicID: t.TopicId, Partitions: partitionsOf(t.Partitions)})
		}
		for _, t := range v.PartitionsPendingRevocation {
			c.PendingRevocation = append(c.PendingRevocation, TopicIDPartitions{TopicID: t.TopicId, Partitions: partitionsOf(t.Partitions)})
		}
		r.Current = c
		return ok
	}
	return false
}

// classicGroup is a GroupMetadataValue as the views keep it, with each
// member's assignment decoded when the protocol type is "consumer"
// (expandConsumerProtocol: int16 version, then ConsumerProtocolAssignment;
// bytes that do not decode have no assignment).
func classicGroup(vv int16, v *schema.GroupMetadataValue) *ClassicGroupValue {
	c := &ClassicGroupValue{Version: vv, ProtocolType: v.ProtocolType, Generation: v.Generation, Protocol: v.Protocol,
		Leader: v.Leader, CurrentStateTimestamp: v.CurrentStateTimestamp}
	for _, m := range v.Members {
		cm := ClassicMember{MemberID: m.MemberId, GroupInstanceID: m.GroupInstanceId, ClientID: m.ClientId, ClientHost: m.ClientHost,
			RebalanceTimeout: m.RebalanceTimeout, SessionTimeout: m.SessionTimeout}
		if v.ProtocolType == "consumer" && len(m.Assignment) >= 2 {
			if av := int16(binary.BigEndian.Uint16(m.Assignment)); av >= 0 {
				if a, _, ok := schema.ReadConsumerProtocolAssignment(m.Assignment[2:], av); ok {
					for _, tp := range a.AssignedPartitions {
						cm.Assignment = append(cm.Assignment, TopicPartitions{Topic: tp.Topic, Partitions: partitionsOf(tp.Partitions)})
					}
				}
			}
		}
		c.Members = append(c.Members, cm)
	}
	return c
}

func typedTransactionState(key, value []byte) (TxnRecord, bool) {
	_, km, kv, kb, ok := coordinatorFraming(schema.TransactionState, key)
	if !ok || km.Name != "TransactionLogKey" {
		return TxnRecord{}, false
	}
	k, _, ok := schema.ReadTransactionLogKey(kb, kv)
	if !ok {
		return TxnRecord{}, false
	}
	r := TxnRecord{TransactionalID: k.TransactionalId}
	if value == nil {
		r.Tombstone = true
		return r, true
	}
	tv := &TxnMetadataValue{}
	if !typedTxnValue(value, tv) {
		return r, false
	}
	r.Value = tv
	return r, true
}

// typedTxnValue reads a TransactionLogValue (its version, then the body)
// into dst, reusing dst.Partitions' array; dst is unchanged when it does
// not read.
func typedTxnValue(value []byte, dst *TxnMetadataValue) bool {
	vv, vb, ok := valueFraming(value)
	if !ok {
		return false
	}
	v, _, ok := schema.ReadTransactionLogValue(vb, vv)
	if !ok {
		return false
	}
	ps := dst.Partitions[:0]
	*dst = TxnMetadataValue{Version: vv, ProducerID: v.ProducerId, PreviousProducerID: v.PreviousProducerId, NextProducerID: v.NextProducerId,
		ProducerEpoch: v.ProducerEpoch, TimeoutMs: v.TransactionTimeoutMs, State: TxnState(v.TransactionStatus),
		LastUpdateTimestamp: v.TransactionLastUpdateTimestampMs, StartTimestamp: v.TransactionStartTimestampMs}
	if len(v.TransactionPartitions) == 0 {
		return true // nil, as the generic reader leaves it
	}
	if cap(ps) < len(v.TransactionPartitions) {
		ps = make([]TopicPartitions, 0, len(v.TransactionPartitions))
	}
	for _, p := range v.TransactionPartitions {
		ps = append(ps, TopicPartitions{Topic: p.Topic, Partitions: partitionsOf(p.PartitionIds)})
	}
	dst.Partitions = ps
	return true
}

// transactionLogKeyType is the record type of TransactionLogKey, the only
// key of __transaction_state (TransactionLog: version 0, a
// non-flexible transactionalId).
const transactionLogKeyType = 0

// txnKeyID is the transactional id of a __transaction_state key as the
// typed decoder reads it (record type 0, then an int16-length string;
// bytes after it are not read), without copying it: ok is false for any
// other key, which the decoders then read (and word what is wrong).
func txnKeyID(key []byte) ([]byte, bool) {
	if len(key) < 4 || binary.BigEndian.Uint16(key) != transactionLogKeyType {
		return nil, false
	}
	n := int16(binary.BigEndian.Uint16(key[2:]))
	if n < 0 || int(n) > len(key)-4 {
		return nil, false
	}
	return key[4 : 4+int(n)], true
}

// offsetCommitKeyTypes marks the record types whose key is
// OffsetCommitKey (schema.KeyFor).
var offsetCommitKeyTypes = func() (t [8]bool) {
	for rt := range t {
		if km := schema.KeyFor(schema.ConsumerOffsets, int16(rt)); km != nil && km.Name == "OffsetCommitKey" {
			t[rt] = true
		}
	}
	return t
}()

// offsetCommitKeyFields reads an OffsetCommitKey (group, topic,
// partition: two int16-length strings and an int32; bytes after them are
// not read) as the typed decoder does, without copying the strings: ok
// is false for any other key, which the decoders then read.
func offsetCommitKeyFields(key []byte) (group, topic []byte, partition int32, ok bool) {
	if len(key) < 2 {
		return nil, nil, 0, false
	}
	if rt := binary.BigEndian.Uint16(key); int(rt) >= len(offsetCommitKeyTypes) || !offsetCommitKeyTypes[rt] {
		return nil, nil, 0, false
	}
	group, b, ok := int16String(key[2:])
	if ok {
		topic, b, ok = int16String(b)
	}
	if !ok || len(b) < 4 {
		return nil, nil, 0, false
	}
	return group, topic, int32(binary.BigEndian.Uint32(b)), true
}

// int16String splits a non-null int16-length string off b.
func int16String(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, false
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	if n < 0 || n > len(b)-2 {
		return nil, nil, false
	}
	return b[2 : 2+n], b[2+n:], true
}

// typedOffsetValue reads an OffsetCommitValue into c (its recordOffset
// aside), as typedOffsetsValue does; c is unchanged when it does not read.
func typedOffsetValue(value []byte, c *offsetAcc) bool {
	vv, vb, ok := valueFraming(value)
	if !ok {
		return false
	}
	v, _, ok := schema.ReadOffsetCommitValue(vb, vv)
	if !ok {
		return false
	}
	*c = offsetAcc{offset: v.Offset, leaderEpoch: v.LeaderEpoch, metadata: v.Metadata, commitTimestamp: v.CommitTimestamp, expireTimestamp: v.ExpireTimestamp}
	return true
}

// txnPartsScratch holds where a version-0 TransactionLogValue's partitions
// lie in the value, between txnValueV0's two passes.
type txnPartsScratch struct {
	topic []byte
	ids   []byte // 4 bytes an id
}

// txnValueV0 reads a TransactionLogValue of version 0 (non-flexible, the
// layout every broker before transaction version 2 writes) into dst, as
// typedTxnValue does, without allocating: the partition arrays dst holds
// are reused, topics interned in topics, scratch holds the partitions
// between the pass that checks the value and the one that fills dst. ok
// is false, with dst unchanged, for another version or anything the
// typed decoder would not read.
func txnValueV0(value []byte, dst *TxnMetadataValue, topics map[string]string, scratch *[]txnPartsScratch) bool {
	be := binary.BigEndian
	// version, producerId, producerEpoch, transactionTimeoutMs,
	// transactionStatus, then the partitions' array length.
	const head = 2 + 8 + 2 + 4 + 1 + 4
	if len(value) < head || be.Uint16(value) != 0 {
		return false
	}
	b := value[head:]
	n := int(int32(be.Uint32(value[head-4:])))
	parts := (*scratch)[:0]
	for range max(n, 0) { // a negative length is null: no partitions
		topic, rest, ok := int16String(b)
		if !ok || len(rest) < 4 {
			return false
		}
		k := int(int32(be.Uint32(rest)))
		if k < 0 || k > (len(rest)-4)/4 {
			return false // partitionIds is not nullable
		}
		parts = append(parts, txnPartsScratch{topic: topic, ids: rest[4 : 4+4*k]})
		b = rest[4+4*k:]
	}
	*scratch = parts
	if len(b) < 16 {
		return false
	}
	ps := dst.Partitions[:0]
	*dst = TxnMetadataValue{Version: 0, ProducerID: int64(be.Uint64(value[2:])), PreviousProducerID: -1, NextProducerID: -1,
		ProducerEpoch: int16(be.Uint16(value[10:])), TimeoutMs: int32(be.Uint32(value[12:])), State: TxnState(int8(value[16])),
		LastUpdateTimestamp: int64(be.Uint64(b)), StartTimestamp: int64(be.Uint64(b[8:]))}
	if len(parts) == 0 {
		return true
	}
	if cap(ps) < len(parts) {
		ps = make([]TopicPartitions, len(parts))
	}
	ps = ps[:len(parts)]
	for i, p := range parts {
		topic, ok := topics[string(p.topic)]
		if !ok {
			topic = string(p.topic)
			topics[topic] = topic
		}
		ids := ps[i].Partitions[:0]
		if ids == nil {
			ids = make([]int32, 0, len(p.ids)/4)
		}
		for j := 0; j < len(p.ids); j += 4 {
			ids = append(ids, int32(be.Uint32(p.ids[j:])))
		}
		ps[i] = TopicPartitions{Topic: topic, Partitions: ids}
	}
	dst.Partitions = ps
	return true
}
