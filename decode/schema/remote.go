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

// RemoteLogMetadataString renders a __remote_log_metadata record as
// kafka-dump-log's --remote-log-metadata-decoder prints it: the toString()
// of the object RemoteLogMetadataSerde builds (RemoteLogSegmentMetadata,
// RemoteLogSegmentMetadataUpdate, RemotePartitionDeleteMetadata,
// RemoteLogSegmentMetadataSnapshot). ok is false for other records.
func (d *Decoded) RemoteLogMetadataString() (string, bool) {
	if d.Topic != RemoteLogMetadata || d.Value == nil || d.ValueMessage == nil {
		return "", false
	}
	v := d.Value
	i := func(s *Struct, name string) string { n, _ := s.Int(name); return strconv.FormatInt(n, 10) }
	// TopicIdPartition.toString: topicId:topic-partition.
	tip := func(s *Struct) string {
		id, _ := s.UUID("id")
		name, _ := s.String("name")
		return id.String() + ":" + name + "-" + i(s, "partition")
	}
	segID := func(s *Struct) string {
		id, _ := s.UUID("id")
		return "RemoteLogSegmentId{topicIdPartition=" + tip(s.Struct("topicIdPartition")) + ", id=" + id.String() + "}"
	}
	// customMetadata is Optional<CustomMetadata>; a null field is empty.
	custom := func() string {
		if x, _ := v.Get("customMetadata"); x != nil {
			b, _ := v.Bytes("customMetadata")
			return "Optional[CustomMetadata{" + strconv.Itoa(len(b)) + " bytes}]"
		}
		return "Optional.empty"
	}
	// segmentLeaderEpochs is a TreeMap<Integer, Long>: {epoch=offset, …}
	// in epoch order.
	epochs := func() string {
		es := v.Structs("segmentLeaderEpochs")
		type kv struct{ k, v int64 }
		var list []kv
		for _, e := range es {
			le, _ := e.Int("leaderEpoch")
			off, _ := e.Int("offset")
			list = append(list, kv{le, off})
		}
		for a := 1; a < len(list); a++ {
			for b := a; b > 0 && list[b].k < list[b-1].k; b-- {
				list[b], list[b-1] = list[b-1], list[b]
			}
		}
		var sb strings.Builder
		sb.WriteByte('{')
		for n, e := range list {
			if n > 0 && e.k == list[n-1].k {
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
	st := func(name string, names []string) string { n, _ := v.Int(name); return stateName(names, n) }
	switch d.ValueMessage.Name {
	case "RemoteLogSegmentMetadataRecord":
		return "RemoteLogSegmentMetadata{remoteLogSegmentId=" + segID(v.Struct("remoteLogSegmentId")) +
			", startOffset=" + i(v, "startOffset") + ", endOffset=" + i(v, "endOffset") +
			", brokerId=" + i(v, "brokerId") + ", maxTimestampMs=" + i(v, "maxTimestampMs") +
			", eventTimestampMs=" + i(v, "eventTimestampMs") + ", segmentLeaderEpochs=" + epochs() +
			", segmentSizeInBytes=" + i(v, "segmentSizeInBytes") + ", customMetadata=" + custom() +
			", state=" + st("remoteLogSegmentState", segmentStates) + "}", true
	case "RemoteLogSegmentMetadataUpdateRecord":
		return "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=" + segID(v.Struct("remoteLogSegmentId")) +
			", customMetadata=" + custom() + ", state=" + st("remoteLogSegmentState", segmentStates) +
			", eventTimestampMs=" + i(v, "eventTimestampMs") + ", brokerId=" + i(v, "brokerId") + "}", true
	case "RemotePartitionDeleteMetadataRecord":
		return "RemotePartitionDeleteMetadata{topicPartition=" + tip(v.Struct("topicIdPartition")) +
			", state=" + st("remotePartitionDeleteState", deleteStates) +
			", eventTimestampMs=" + i(v, "eventTimestampMs") + ", brokerId=" + i(v, "brokerId") + "}", true
	case "RemoteLogSegmentMetadataSnapshotRecord":
		id, _ := v.UUID("segmentId")
		return "RemoteLogSegmentMetadataSnapshot{segmentId=" + id.String() +
			", startOffset=" + i(v, "startOffset") + ", endOffset=" + i(v, "endOffset") +
			", maxTimestampMs=" + i(v, "maxTimestampMs") + ", segmentLeaderEpochs=" + epochs() +
			", segmentSizeInBytes=" + i(v, "segmentSizeInBytes") + ", customMetadata=" + custom() +
			", state=" + st("remoteLogSegmentState", segmentStates) + "}", true
	}
	return "", false
}
