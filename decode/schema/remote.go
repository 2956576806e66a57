package schema

import (
	"strconv"
	"strings"
)

// remote-log-metadata state names (RemoteLogSegmentState,
// RemotePartitionDeleteState).
var (
	segmentStates = []string{"COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED"}
	deleteStates  = []string{"DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED"}
)

func stateName(names []string, v int64) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return "null" // RemoteLogSegmentState.forId returns null for an unknown id
}

// RemoteLogMetadataInvalid is the message of the exception Kafka's
// RemoteLogMetadataSerde.deserialize throws for a record that decodes but
// that the storage API's constructors refuse (RemoteLogSegmentMetadata,
// RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata,
// RemoteLogSegmentMetadataSnapshot), as getMessage() returns it.
type RemoteLogMetadataInvalid string

func (e RemoteLogMetadataInvalid) Error() string { return string(e) }

// RemoteLogMetadataString renders a __remote_log_metadata record as
// kafka-dump-log's --remote-log-metadata-decoder prints it: the toString()
// of the object RemoteLogMetadataSerde builds (RemoteLogSegmentMetadata,
// RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata,
// RemoteLogSegmentMetadataSnapshot). ok is false for other records. err is
// a RemoteLogMetadataInvalid where Kafka's transforms and constructors
// throw: an unknown state id (forId gives null, and
// Objects.requireNonNull throws), a negative start offset, an end offset
// below it, no segment leader epoch.
func (d *Decoded) RemoteLogMetadataString() (s string, ok bool, err error) {
	if d.Topic != RemoteLogMetadata || d.Value == nil || d.ValueMessage == nil {
		return "", false, nil
	}
	if msg := d.remoteInvalid(); msg != "" {
		return "", true, RemoteLogMetadataInvalid(msg)
	}
	s, ok = d.remoteString()
	return s, ok, nil
}

// remoteInvalid is the message of the first check Kafka's
// fromApiMessageAndVersion fails, in Kafka's order, or "".
func (d *Decoded) remoteInvalid() string {
	v := d.Value
	state := func(name string, names []string, message string) string {
		if n, _ := v.Int(name); n < 0 || int(n) >= len(names) {
			return message
		}
		return ""
	}
	// The segment checks of RemoteLogSegmentMetadata's constructor (the
	// snapshot's checks only the epochs).
	segment := func(offsets bool) string {
		start, _ := v.Int("startOffset")
		end, _ := v.Int("endOffset")
		switch {
		case offsets && start < 0:
			return "Unexpected start offset = " + strconv.FormatInt(start, 10) + ". StartOffset for a remote segment cannot be negative"
		case offsets && end < start:
			return "Unexpected end offset = " + strconv.FormatInt(end, 10) +
				". EndOffset for a remote segment cannot be less than startOffset = " + strconv.FormatInt(start, 10)
		case len(v.Structs("segmentLeaderEpochs")) == 0:
			return "segmentLeaderEpochs can not be null or empty"
		}
		return ""
	}
	switch d.ValueMessage.Name {
	case "RemoteLogSegmentMetadataRecord":
		// Built in state COPY_SEGMENT_STARTED first, then updated with a
		// RemoteLogSegmentMetadataUpdate carrying the record's state.
		if msg := segment(true); msg != "" {
			return msg
		}
		return state("remoteLogSegmentState", segmentStates, "state can not be null")
	case "RemoteLogSegmentMetadataUpdateRecord":
		return state("remoteLogSegmentState", segmentStates, "state can not be null")
	case "RemotePartitionDeleteMetadataRecord":
		// Objects.requireNonNull(state) without a message: getMessage()
		// is null, which the tool's string concatenation prints.
		return state("remotePartitionDeleteState", deleteStates, "null")
	case "RemoteLogSegmentMetadataSnapshotRecord":
		if msg := state("remoteLogSegmentState", segmentStates, "state can not be null"); msg != "" {
			return msg
		}
		return segment(false)
	}
	return ""
}

// remoteString is the toString() of a record remoteInvalid accepts.
func (d *Decoded) remoteString() (string, bool) {
	v := d.Value
	i := func(name string) string { return remoteInt(v, name) }
	st := func(name string, names []string) string { n, _ := v.Int(name); return stateName(names, n) }
	switch d.ValueMessage.Name {
	case "RemoteLogSegmentMetadataRecord":
		return "RemoteLogSegmentMetadata{remoteLogSegmentId=" + remoteSegmentID(v.Struct("remoteLogSegmentId")) +
			", startOffset=" + i("startOffset") + ", endOffset=" + i("endOffset") +
			", brokerId=" + i("brokerId") + ", maxTimestampMs=" + i("maxTimestampMs") +
			", eventTimestampMs=" + i("eventTimestampMs") + ", segmentLeaderEpochs=" + segmentLeaderEpochs(v) +
			", segmentSizeInBytes=" + i("segmentSizeInBytes") + ", customMetadata=" + customMetadata(v) +
			", state=" + st("remoteLogSegmentState", segmentStates) + ", txnIdxEmpty=" + txnIdxEmpty(v) + "}", true
	case "RemoteLogSegmentMetadataUpdateRecord":
		return "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=" + remoteSegmentID(v.Struct("remoteLogSegmentId")) +
			", customMetadata=" + customMetadata(v) + ", state=" + st("remoteLogSegmentState", segmentStates) +
			", eventTimestampMs=" + i("eventTimestampMs") + ", brokerId=" + i("brokerId") + "}", true
	case "RemotePartitionDeleteMetadataRecord":
		return "RemotePartitionDeleteMetadata{topicPartition=" + topicIDPartition(v.Struct("topicIdPartition")) +
			", state=" + st("remotePartitionDeleteState", deleteStates) +
			", eventTimestampMs=" + i("eventTimestampMs") + ", brokerId=" + i("brokerId") + "}", true
	case "RemoteLogSegmentMetadataSnapshotRecord":
		id, _ := v.UUID("segmentId")
		return "RemoteLogSegmentMetadataSnapshot{segmentId=" + id.String() +
			", startOffset=" + i("startOffset") + ", endOffset=" + i("endOffset") +
			", maxTimestampMs=" + i("maxTimestampMs") + ", segmentLeaderEpochs=" + segmentLeaderEpochs(v) +
			", segmentSizeInBytes=" + i("segmentSizeInBytes") + ", customMetadata=" + customMetadata(v) +
			", state=" + st("remoteLogSegmentState", segmentStates) + ", txnIdxEmpty=" + txnIdxEmpty(v) + "}", true
	}
	return "", false
}

// remoteInt renders an integer field as Long.toString would.
func remoteInt(s *Struct, name string) string {
	n, _ := s.Int(name)
	return strconv.FormatInt(n, 10)
}

// topicIDPartition renders TopicIdPartition.toString: topicId:topic-partition.
func topicIDPartition(s *Struct) string {
	id, _ := s.UUID("id")
	name, _ := s.String("name")
	return id.String() + ":" + name + "-" + remoteInt(s, "partition")
}

// remoteSegmentID renders RemoteLogSegmentId.toString.
func remoteSegmentID(s *Struct) string {
	id, _ := s.UUID("id")
	return "RemoteLogSegmentId{topicIdPartition=" + topicIDPartition(s.Struct("topicIdPartition")) + ", id=" + id.String() + "}"
}

// customMetadata renders the Optional<CustomMetadata>; a null field is
// empty.
func customMetadata(v *Struct) string {
	if x, _ := v.Get("customMetadata"); x != nil {
		b, _ := v.Bytes("customMetadata")
		return "Optional[CustomMetadata{" + strconv.Itoa(len(b)) + " bytes}]"
	}
	return "Optional.empty"
}

// segmentLeaderEpochs renders the TreeMap<Integer, Long> Kafka builds:
// {epoch=offset, …} in epoch order, filled by HashMap.put, so the last
// entry of an epoch listed twice wins.
func segmentLeaderEpochs(v *Struct) string {
	es := v.Structs("segmentLeaderEpochs")
	type kv struct{ k, v int64 }
	var list []kv
	for _, e := range es {
		le, _ := e.Int("leaderEpoch")
		off, _ := e.Int("offset")
		list = append(list, kv{le, off})
	}
	for a := 1; a < len(list); a++ { // stable: equal epochs keep their order
		for b := a; b > 0 && list[b].k < list[b-1].k; b-- {
			list[b], list[b-1] = list[b-1], list[b]
		}
	}
	var sb strings.Builder
	sb.WriteByte('{')
	for n, e := range list {
		if n+1 < len(list) && e.k == list[n+1].k {
			continue
		}
		if sb.Len() > 1 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(e.k, 10) + "=" + strconv.FormatInt(e.v, 10))
	}
	sb.WriteByte('}')
	return sb.String()
}

// txnIdxEmpty (KAFKA-16780, Kafka 4.0) renders the record's tagged
// txnIndexEmpty, false when absent; the toString() of
// RemoteLogSegmentMetadata and of the snapshot ends with it.
func txnIdxEmpty(v *Struct) string {
	b, _ := v.Bool("txnIndexEmpty")
	return strconv.FormatBool(b)
}
