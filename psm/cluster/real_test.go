package cluster_test

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/segment"
)

// realDir is a log directory of the shared real-broker fixtures; the test
// skips when the fixtures are absent.
func realDir(t *testing.T, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{testkit.RealRootOrSkip(t)}, parts...)...)
}

func loadGroups(t *testing.T, o cluster.GroupsOptions, dirs ...string) *cluster.GroupsView {
	t.Helper()
	return mustLoad(t, dirs, func(inv *cluster.Inventory) (*cluster.GroupsView, error) {
		return cluster.LoadGroups(inv, cluster.SchemaDecoder{}, o)
	})
}

// mustLoad opens the log directories dirs and loads a view of them.
func mustLoad[V any](t *testing.T, dirs []string, load func(*cluster.Inventory) (V, error)) V {
	t.Helper()
	return testkit.Must(t, load, testkit.Must(t, cluster.OpenInventory, dirs))
}

func findGroup(v *cluster.GroupsView, name string) *cluster.Group {
	for i := range v.Groups {
		if v.Groups[i].Group == name {
			return &v.Groups[i]
		}
	}
	return nil
}

func findOffset(g *cluster.Group, topic string, p int32) *cluster.CommittedOffset {
	for i := range g.Offsets {
		if g.Offsets[i].Topic == topic && g.Offsets[i].Partition == p {
			return &g.Offsets[i]
		}
	}
	return nil
}

// lastRecordWithKey returns the value of the last record of a partition
// whose key is key, reading the batches with the segment scanner and the
// record decoder only (no schema decoder): the ground truth for a
// committed offset.
func lastRecordWithKey(t *testing.T, dir string, key []byte) (offset int64, value []byte) {
	t.Helper()
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var d decode.Decoder
	offset = -1
	for _, s := range pd.Segments {
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := lf.Scanner(segment.ScanOptions{})
		for sc.Next() {
			d.Records(sc.Batch(), func(r *decode.Record) error {
				if bytes.Equal(r.Key, key) {
					offset, value = r.Offset, bytes.Clone(r.Value)
				}
				return nil
			})
		}
		lf.Close()
	}
	return offset, value
}

// iechenyb/data (ZooKeeper-mode broker, 2019): flink-group committed
// test-0921-0 sixteen times; the last record, offset 15 of
// __consumer_offsets-36, is (hex dump)
//
//	key   0001 000b "flink-group" 0009 "test-0921" 00000000
//	value 0003 0000000000000064 ffffffff 0000 0000016b64541ee3
//
// OffsetCommitValue v3: offset 0x64 = 100, leaderEpoch -1, metadata "",
// commitTimestamp 0x16b64541ee3 = 1560756362979. test-0921-0 holds
// offsets 0..1520, so the lag is 1421.
func TestRealGroupCommittedOffsetReadByHand(t *testing.T) {
	dir := realDir(t, "iechenyb__data", "kafka-logs")
	key := []byte("\x00\x01\x00\x0bflink-group\x00\x09test-0921\x00\x00\x00\x00")
	off, val := lastRecordWithKey(t, filepath.Join(dir, "__consumer_offsets-36"), key)
	if off != 15 || len(val) != 24 || binary.BigEndian.Uint16(val) != 3 {
		t.Fatalf("last commit of flink-group at offset %d, value %x", off, val)
	}
	byHand := int64(binary.BigEndian.Uint64(val[2:10]))
	tsByHand := int64(binary.BigEndian.Uint64(val[16:24]))
	if byHand != 100 || tsByHand != 1560756362979 {
		t.Fatalf("hex dump says offset %d at %d; the fixture changed?", byHand, tsByHand)
	}

	v := loadGroups(t, cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}, dir)
	g := findGroup(v, "flink-group")
	if g == nil || len(v.Groups) != 1 {
		t.Fatalf("groups %+v, want only flink-group", v.Groups)
	}
	// No GroupMetadata record: a group that only commits (assign()),
	// which the coordinator loads as an Empty classic group.
	if g.Type != "classic" || g.State != "Empty" || g.ProtocolType != "" || len(g.Members) != 0 || filepath.Base(g.Coordinator) != "__consumer_offsets-36" {
		t.Errorf("group %+v", g)
	}
	c := findOffset(g, "test-0921", 0)
	if c == nil || len(g.Offsets) != 1 {
		t.Fatalf("offsets %+v", g.Offsets)
	}
	if c.Offset != byHand || c.CommitTimestamp != tsByHand || c.LeaderEpoch != -1 || c.Metadata != "" || c.RecordOffset != off {
		t.Errorf("committed %+v, by hand offset %d at %d (record %d)", c, byHand, tsByHand, off)
	}
	if c.Log == nil || c.Log.LogStartOffset != 0 || c.Log.LogEndOffset != 1521 || c.Lag != 1521-byHand {
		t.Errorf("log %+v lag %d, want log 0..1520 and lag %d", c.Log, c.Lag, 1521-byHand)
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v", v.Findings)
	}
}

// DonaldY/kafka-2.7.1: both __consumer_offsets partitions end with
// tombstones. In -39, console-consumer-65070 committed test_topic_0603-0
// at offset 16 (value 0003 0000000000000009 …: offset 9) and wrote its
// group metadata at 17; offsets 18 and 19 are tombstones of both keys
// (valueSize -1). console-consumer-52588's metadata is tombstoned at 4,
// and -17 ends likewise. The coordinator loads no group at all.
func TestRealGroupTombstonesHonoured(t *testing.T) {
	dir := realDir(t, "DonaldY__kafka-2.7.1", "kafka-logs")
	key := []byte("\x00\x01\x00\x16console-consumer-65070\x00\x0ftest_topic_0603\x00\x00\x00\x00")
	off, val := lastRecordWithKey(t, filepath.Join(dir, "__consumer_offsets-39"), key)
	if off != 18 || val != nil {
		t.Fatalf("last record of the commit key at %d, value %x; want the tombstone at 18", off, val)
	}
	v := loadGroups(t, cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}, dir)
	if len(v.Coordinators) != 2 || len(v.Groups) != 0 || len(v.Findings) != 0 {
		t.Errorf("coordinators %v, groups %+v, findings %+v: want 2 partitions read, no group", v.Coordinators, v.Groups, v.Findings)
	}
}

// sagarrao1/kafka: two brokers of one ZooKeeper cluster (kafka-logs-1 and
// -2). Group "test" lives in __consumer_offsets-48 (on broker 2), "g2" in
// -43 (broker 1), "user-tracking-consumer" in -0: exactly the partitions
// Utils.abs(groupId.hashCode()) % 50 names. Given both directories, every
// committed partition of my_topic is found on one broker or the other.
// "test" committed my_topic-0 at 711 = its log end (lag 0); "g2"
// committed it at 2 (lag 709); first_topic is on neither disk.
func TestRealGroupsAcrossBrokers(t *testing.T) {
	d1 := realDir(t, "sagarrao1__kafka", "MultiNode", "kafka-logs-1")
	d2 := realDir(t, "sagarrao1__kafka", "MultiNode", "kafka-logs-2")
	v := loadGroups(t, cluster.GroupsOptions{Jobs: 2, PSM: psmDefaults()}, d1, d2)
	for name, part := range map[string]string{"test": "__consumer_offsets-48", "g2": "__consumer_offsets-43", "user-tracking-consumer": "__consumer_offsets-0"} {
		g := findGroup(v, name)
		if g == nil {
			t.Fatalf("group %s missing: %+v", name, v.Groups)
		}
		if filepath.Base(g.Coordinator) != part {
			t.Errorf("%s in %s, want %s", name, g.Coordinator, part)
		}
		want, err := strconv.Atoi(part[len("__consumer_offsets-"):])
		if err != nil || cluster.CoordinatorPartition(name, 50) != int32(want) {
			t.Errorf("CoordinatorPartition(%q) = %d, the files say %s", name, cluster.CoordinatorPartition(name, 50), part)
		}
		if g.ProtocolType != "consumer" || g.State != "Empty" {
			t.Errorf("%s: %+v", name, g)
		}
	}
	test := findGroup(v, "test")
	if test.Generation != 20 || len(test.Offsets) != 7 {
		t.Errorf("test: generation %d, %d offsets", test.Generation, len(test.Offsets))
	}
	for _, c := range test.Offsets {
		if c.Log == nil || c.Lag != 0 || c.Offset != c.Log.LogEndOffset {
			t.Errorf("test %s-%d committed %d, log %+v lag %d: want at the log end", c.Topic, c.Partition, c.Offset, c.Log, c.Lag)
		}
	}
	g2 := findOffset(findGroup(v, "g2"), "my_topic", 0)
	if g2 == nil || g2.Offset != 2 || g2.Log == nil || filepath.Base(filepath.Dir(g2.Log.Dir)) != "kafka-logs-2" || g2.Lag != 709 {
		t.Errorf("g2 my_topic-0: %+v", g2)
	}
	if c := findOffset(findGroup(v, "user-tracking-consumer"), "first_topic", 0); c == nil || c.Offset != 64 || c.Log != nil || c.Lag != -1 {
		t.Errorf("user-tracking-consumer first_topic-0: %+v", c)
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v", v.Findings)
	}

	// Filters.
	f := loadGroups(t, cluster.GroupsOptions{Groups: []string{"test"}, Topics: []string{"my_other_topic"}, Jobs: 1, PSM: psmDefaults()}, d1, d2)
	if len(f.Groups) != 1 || len(f.Groups[0].Offsets) != 3 {
		t.Errorf("--group test --topic my_other_topic: %+v", f.Groups)
	}
}

// rjmfernandes/flink-on-prem (Confluent 7.6, KRaft): Control Center's
// Streams group is Stable with 12 members (the StreamThreads), protocol
// "stream", generation 5; its repartition topics were purged by
// DeleteRecords (log start 1734) and the committed 1740 is inside the log.
func TestRealStreamsGroup(t *testing.T) {
	dir := realDir(t, "rjmfernandes__flink-on-prem", "data")
	v := loadGroups(t, cluster.GroupsOptions{Groups: []string{"_confluent-controlcenter-7-6-0-1"}, Jobs: 2, PSM: psmDefaults()}, dir)
	if len(v.Groups) != 1 {
		t.Fatalf("groups %+v", v.Groups)
	}
	g := v.Groups[0]
	if g.State != "Stable" || g.Protocol != "stream" || g.ProtocolType != "consumer" || g.Generation != 5 || len(g.Members) != 12 {
		t.Errorf("group: state %s protocol %s/%s generation %d members %d", g.State, g.ProtocolType, g.Protocol, g.Generation, len(g.Members))
	}
	if findMember(g, g.Leader) == nil {
		t.Errorf("leader %s is not a member", g.Leader)
	}
	assigned := 0
	for _, m := range g.Members {
		assigned += len(m.Assignment)
	}
	if assigned == 0 {
		t.Error("no member has a decoded assignment")
	}
	c := findOffset(&g, "_confluent-controlcenter-7-6-0-1-aggregatedTopicPartitionTableWindows-ONE_MINUTE-repartition", 0)
	if c == nil || c.Offset != 1740 || c.Log == nil || c.Log.LogStartOffset != 1734 || c.Lag != 0 {
		t.Errorf("repartition commit %+v (log %+v)", c, c.Log)
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v", v.Findings)
	}
}

func findMember(g cluster.Group, id string) *cluster.Member {
	for i := range g.Members {
		if g.Members[i].MemberID == id {
			return &g.Members[i]
		}
	}
	return nil
}

// No real fixture holds __transaction_state; the transactional ksqlDB
// command topics (all committed) have no open transaction, and the view
// says what it cannot answer.
func TestRealTxnsWithoutCoordinator(t *testing.T) {
	for _, d := range [][]string{{"Danielowo2000__BigDataTechnologies-Version-2", "kafka_data"}, {"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions", "kafka-data"}} {
		v := loadTxns(t, cluster.DefaultTxnsOptions(), realDir(t, d...))
		if len(v.Transactions) != 0 || len(v.Open) != 0 || len(v.Unanswerable) != 1 || len(v.Findings) != 0 {
			t.Errorf("%s: %+v", d[0], v)
		}
	}
}
