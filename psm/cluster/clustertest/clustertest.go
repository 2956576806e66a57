// Package clustertest writes log directories for the whole-broker views
// (kseg groups, kseg txns): internal-topic partitions (__consumer_offsets,
// __transaction_state) whose records franz-go's kmsg encodes as the
// coordinators write them, data partitions, meta.properties and the log
// directory's checkpoints. testdata/gen uses Generate for the bundled
// example directories; the tests of psm/cluster and cmd use the builders
// with data partitions produced by real clients through kfake.
//
// Everything Generate writes is deterministic (fixed timestamps, producer
// ids and topic ids).
package clustertest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// T0 is the clock of the generated directories (segtest's).
const T0 int64 = 1700000000000

// KV is one record's key and value (nil value: a tombstone).
type KV struct {
	Key, Value []byte
}

// OffsetCommit is an OffsetCommitKey v1 / OffsetCommitValue v3 record, what
// a 2.1+ coordinator writes for a commit.
func OffsetCommit(group, topic string, partition int32, offset int64, leaderEpoch int32, metadata string, commitTs int64) KV {
	k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: partition}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: offset, LeaderEpoch: leaderEpoch, Metadata: metadata, CommitTimestamp: commitTs}
	return KV{k.AppendTo(nil), v.AppendTo(nil)}
}

// OffsetTombstone deletes a committed offset.
func OffsetTombstone(group, topic string, partition int32) KV {
	k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: partition}
	return KV{k.AppendTo(nil), nil}
}

// Member is a classic consumer-protocol member.
type Member struct {
	ID, ClientID, Host string
	Assigned           map[string][]int32
}

// GroupMetadata is a GroupMetadataKey v2 / GroupMetadataValue v3 record of
// a classic consumer group ("consumer" protocol type, assignor protocol).
func GroupMetadata(group, protocol string, generation int32, leader string, stateTs int64, members []Member) KV {
	k := kmsg.GroupMetadataKey{Version: 2, Group: group}
	v := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: generation, CurrentStateTimestamp: stateTs}
	if protocol != "" {
		v.Protocol = &protocol
	}
	if leader != "" {
		v.Leader = &leader
	}
	for _, m := range members {
		a := kmsg.ConsumerMemberAssignment{Version: 0}
		for _, t := range sortedKeys(m.Assigned) {
			a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: t, Partitions: m.Assigned[t]})
		}
		v.Members = append(v.Members, kmsg.GroupMetadataValueMember{MemberID: m.ID, ClientID: m.ClientID, ClientHost: m.Host,
			RebalanceTimeoutMillis: 300000, SessionTimeoutMillis: 45000, Assignment: a.AppendTo(nil)})
	}
	return KV{k.AppendTo(nil), v.AppendTo(nil)}
}

// Txn is a TransactionLogKey v0 / TransactionLogValue v0 record.
func Txn(id string, pid int64, epoch int16, state kmsg.TransactionState, timeoutMs int32, partitions map[string][]int32, startTs, updateTs int64) KV {
	k := kmsg.TxnMetadataKey{Version: 0, TransactionalID: id}
	v := kmsg.TxnMetadataValue{Version: 0, ProducerID: pid, ProducerEpoch: epoch, TimeoutMillis: timeoutMs, State: state,
		LastUpdateTimestamp: updateTs, StartTimestamp: startTs}
	for _, t := range sortedKeys(partitions) {
		v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: t, Partitions: partitions[t]})
	}
	return KV{k.AppendTo(nil), v.AppendTo(nil)}
}

func sortedKeys(m map[string][]int32) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// Batch encodes records as one uncompressed, non-transactional batch at
// baseOffset, one millisecond apart from ts, as a coordinator appends them
// (producer id -1, leader epoch 0).
func Batch(baseOffset, ts int64, recs ...KV) []byte {
	specs := make([]decode.RecordSpec, len(recs))
	for i, r := range recs {
		specs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: ts + int64(i), Key: r.Key, Value: r.Value}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: baseOffset, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, specs)
	if err != nil {
		panic(err) // only encoding of valid specs happens here
	}
	return b
}

// TxnBatch is a transactional data batch of n records of producer pid.
func TxnBatch(baseOffset, ts, pid int64, epoch int16, seq int32, n int) []byte {
	specs := make([]decode.RecordSpec, n)
	for i := range specs {
		specs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: ts + int64(i), Key: fmt.Appendf(nil, "k%d", baseOffset+int64(i)), Value: fmt.Appendf(nil, "v%d", baseOffset+int64(i))}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: baseOffset, Transactional: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, specs)
	if err != nil {
		panic(err)
	}
	return b
}

// DataBatch is a non-transactional batch of n records without a producer.
func DataBatch(baseOffset, ts int64, n int) []byte {
	specs := make([]decode.RecordSpec, n)
	for i := range specs {
		specs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: ts + int64(i), Value: fmt.Appendf(nil, "v%d", baseOffset+int64(i))}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: baseOffset, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, specs)
	if err != nil {
		panic(err)
	}
	return b
}

// Marker is a COMMIT or ABORT control batch of producer pid.
func Marker(offset, ts, pid int64, epoch int16, commit bool, coordinatorEpoch int32) []byte {
	typ := decode.ControlAbort
	if commit {
		typ = decode.ControlCommit
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: offset, Transactional: true, Control: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, typ), Value: decode.AppendEndTxnMarkerValue(nil, coordinatorEpoch)}})
	if err != nil {
		panic(err)
	}
	return b
}

// WritePartition writes batches as <logDir>/<topic>-<partition> with
// segment.Appender (a broker's append path); the log starts at the first
// batch's base offset. topicID may be nil.
func WritePartition(logDir, topic string, partition int32, topicID *[16]byte, batches ...[]byte) (string, error) {
	dir := filepath.Join(logDir, segment.PartitionDirNameFor(topic, partition))
	opts := segment.AppenderOptions{TopicID: topicID}
	if len(batches) > 0 {
		b, err := decode.ParseBatch(batches[0])
		if err != nil {
			return "", err
		}
		opts.StartOffset = b.BaseOffset
	}
	a, err := segment.OpenAppender(dir, opts)
	if err != nil {
		return "", err
	}
	for i, raw := range batches {
		if err := a.Append(raw); err != nil {
			a.Close()
			return "", fmt.Errorf("%s batch %d: %w", dir, i, err)
		}
	}
	return dir, a.Close()
}

// WriteMetaProperties writes a KRaft meta.properties (version 1) for node.
func WriteMetaProperties(logDir string, node int32, clusterID string) error {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	s := fmt.Sprintf("#\n#Tue Nov 14 22:13:20 UTC 2023\nnode.id=%d\nversion=1\ncluster.id=%s\n", node, clusterID)
	return os.WriteFile(filepath.Join(logDir, "meta.properties"), []byte(s), 0o644)
}
