package cluster_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/psm/cluster/clustertest"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

func loadMetadata(t *testing.T, at int64, dirs ...string) *cluster.MetadataView {
	t.Helper()
	return mustLoad(t, dirs, func(inv *cluster.Inventory) (*cluster.MetadataView, error) {
		return cluster.LoadMetadata(inv, cluster.MetadataOptions{At: at})
	})
}

func topicByName(im *cluster.MetadataImage, name string) *cluster.TopicImage {
	for i := range im.Topics {
		if im.Topics[i].Name == name {
			return &im.Topics[i]
		}
	}
	return nil
}

func diskRow(v *cluster.MetadataView, topic string, p int32) []cluster.DiskPartition {
	var out []cluster.DiskPartition
	for _, d := range v.Disk {
		if d.Topic == topic && d.Partition == p {
			out = append(out, d)
		}
	}
	return out
}

func findingKinds(fs []finding.Finding) map[finding.Kind][]string {
	m := map[finding.Kind][]string{}
	for _, f := range fs {
		m[f.Kind] = append(m[f.Kind], f.Subject)
	}
	return m
}

// eric-kimm/stock-market-pipeline: __cluster_metadata-0 holds only two
// snapshots (83088-7 and 194445-15), no log segment. In the newer one, at
// byte 4660, the PartitionRecord of stock-trades reads (hex)
//
//	01 03 02 | 00000000 | 8c8e17e9c1d949ea984f7ca1e8559f31 | 02 00000001 | 02 00000001 | 01 | 01 | 00000001 | 00 | 00000016 | 00000016
//
// frame 1, apiKey 3 (PartitionRecord), version 2, partition 0, topic id
// jI4X6cHZSeqYT3yh6FWfMQ (stock-trades-0/partition.metadata's), replicas
// [1], isr [1], no removing or adding replicas, leader 1, recovery state
// 0, leader epoch 22, partition epoch 22. stock-trades-0's
// leader-epoch-checkpoint ends at epoch 28 (testing-0: 24, image 18), and
// the metadata log's own leader-epoch-checkpoint has epoch 18 from offset
// 199046, past the snapshot: records are missing at the end.
func TestRealMetadataSnapshotOnly(t *testing.T) {
	dir := realDir(t, "eric-kimm__stock-market-pipeline", "kafka", "data")
	v := loadMetadata(t, -1, dir)
	im := v.Image
	if filepath.Base(im.Snapshot) != "00000000000000194445-0000000015.checkpoint" || im.Offset != 194445 || len(im.Brokers) != 1 || im.Brokers[0].ID != 1 {
		t.Fatalf("image: snapshot %s offset %d brokers %+v", im.Snapshot, im.Offset, im.Brokers)
	}
	st := topicByName(im, "stock-trades")
	if st == nil || st.ID != "jI4X6cHZSeqYT3yh6FWfMQ" || len(st.Partitions) != 1 {
		t.Fatalf("stock-trades: %+v", st)
	}
	if p := st.Partitions[0]; p.Leader != 1 || p.LeaderEpoch != 22 || p.PartitionEpoch != 22 || !slices.Equal(p.Replicas, []int32{1}) || !slices.Equal(p.ISR, []int32{1}) {
		t.Errorf("stock-trades-0: %+v, the hex dump says leader 1, epochs 22", p)
	}
	if tp := topicByName(im, "testing"); tp == nil || tp.ID != "RZ9e6ESCRnGbAVQU9j2WXA" || tp.Partitions[0].LeaderEpoch != 18 {
		t.Errorf("testing: %+v", tp)
	}
	k := findingKinds(v.Findings)
	if !slices.Equal(k[finding.LeaderEpochAhead], []string{"stock-trades-0", "testing-0"}) || len(k[finding.ImageIncomplete]) != 1 || len(k[finding.OrphanPartition]) != 0 {
		t.Errorf("findings %v", k)
	}
	for _, d := range diskRow(v, "stock-trades", 0) {
		if d.DiskLeaderEpoch != 28 || d.ImageLeaderEpoch != 22 || d.Status != "epoch-ahead" {
			t.Errorf("disk row %+v", d)
		}
	}

	// --at 83088: the older snapshot; stock-trades-0 was then in epoch 6.
	old := loadMetadata(t, 83088, dir)
	if filepath.Base(old.Image.Snapshot) != "00000000000000083088-0000000007.checkpoint" || old.Image.Offset != 83088 {
		t.Fatalf("--at 83088: %s at %d", old.Image.Snapshot, old.Image.Offset)
	}
	if p := topicByName(old.Image, "stock-trades").Partitions[0]; p.LeaderEpoch != 6 {
		t.Errorf("--at 83088: stock-trades-0 %+v", p)
	}
}

// Niloufar1171/LDI-POC: a log of 4929 records from offset 0, no snapshot.
// TestTopicPatient's id in the image is the one its partition.metadata
// holds (B3_HiNPgSQ6oxG9ZZ6ED5A), so the directory is no orphan; the
// broker ended in controlled shutdown, fenced, with no partition leader.
// The registrations and the producer id block, read from the record values
// by hand (frame version 1, apiKey, record version, then the fields):
//
//	offset 5 (batch at byte 236)  01 1b 00 | 00000001 | 6b3e3096577140b78bd77abbb7a1bb0c | 00 |
//	    02 0b "CONTROLLER" 0d "e06a9e9dd037" 2385 …
//	  RegisterControllerRecord v0: controller 1, incarnation
//	  az4wlldxQLeL13q7t6G7DA, one endpoint CONTROLLER://e06a9e9dd037:9093
//	offset 8 (batch at byte 626)  01 00 03 | 00000001 | 00 | b5ae51e15b5442f6a096db88cd20fd86 |
//	    0000000000000008 | 02 0a "PLAINTEXT" 06 "kafka" 2384 …
//	  RegisterBrokerRecord v3: broker 1, incarnation ta5R4VtUQvagltuIzSD9hg,
//	  broker epoch 8, PLAINTEXT://kafka:9092
//	offset 4871  01 11 01 | 00000001 | 0000000000000008 | 01 01 01 01
//	  BrokerRegistrationChangeRecord v1, tag 1 InControlledShutdown = 1
//	offset 4926  01 11 00 | 00000001 | 0000000000000008 | 01 00 01 01
//	  BrokerRegistrationChangeRecord v0, tag 0 Fenced = 1 (FENCE)
//	offset 907   01 0f 00 | 00000001 | 0000000000000008 | 00000000000003e8
//	  ProducerIdsRecord: broker 1, epoch 8, next producer id 1000
func TestRealMetadataLogOnly(t *testing.T) {
	dir := realDir(t, "Niloufar1171__LDI-POC")
	v := loadMetadata(t, -1, dir)
	im := v.Image
	if im.Snapshot != "" || im.Offset != 4929 || im.LogStartOffset != 0 {
		t.Fatalf("image at %d from %q (log start %d)", im.Offset, im.Snapshot, im.LogStartOffset)
	}
	tp := topicByName(im, "TestTopicPatient")
	pm, err := segment.ReadPartitionMetadata(filepath.Join(dir, "TestTopicPatient-0", "partition.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if tp == nil || tp.ID != segment.TopicIDString(pm.TopicID) || tp.ID != "B3_HiNPgSQ6oxG9ZZ6ED5A" {
		t.Fatalf("TestTopicPatient %+v, partition.metadata %s", tp, segment.TopicIDString(pm.TopicID))
	}
	if rows := diskRow(v, "TestTopicPatient", 0); len(rows) != 1 || rows[0].Status != "ok" {
		t.Errorf("disk %+v", rows)
	}
	b := im.Brokers[0]
	if b.ID != 1 || !b.Fenced || !b.InControlledShutdown || tp.Partitions[0].Leader != -1 {
		t.Errorf("broker %+v, leader %d", b, tp.Partitions[0].Leader)
	}
	if b.Epoch != 8 || b.IncarnationID != "ta5R4VtUQvagltuIzSD9hg" || len(b.Endpoints) != 1 ||
		b.Endpoints[0] != (cluster.Endpoint{Name: "PLAINTEXT", Host: "kafka", Port: 9092, SecurityProtocol: b.Endpoints[0].SecurityProtocol}) {
		t.Errorf("broker registration %+v", b)
	}
	if len(im.Controllers) != 1 {
		t.Fatalf("controllers %+v", im.Controllers)
	}
	if c := im.Controllers[0]; c.ID != 1 || c.IncarnationID != "az4wlldxQLeL13q7t6G7DA" || len(c.Endpoints) != 1 ||
		c.Endpoints[0].Name != "CONTROLLER" || c.Endpoints[0].Host != "e06a9e9dd037" || c.Endpoints[0].Port != 9093 {
		t.Errorf("controller registration %+v", c)
	}
	if p := im.ProducerIDs; p == nil || *p != (cluster.ProducerIDBlock{BrokerID: 1, BrokerEpoch: 8, NextProducerID: 1000}) {
		t.Errorf("producer ids %+v", p)
	}
	if len(findingKinds(v.Findings)[finding.OrphanPartition]) != 0 {
		t.Errorf("orphans %+v", v.Findings)
	}
}

// rjmfernandes/flink-on-prem: the fixture README says customers-0 and
// products-0 were left out (files of 4 MiB or more), and of connect-offsets
// only 8, 14 and 19, of connect-status 0, 1, 2 and 4 were committed. Those
// replicas, assigned to node 1, are missing; every directory present
// holds its topic's current id. The log directory's
// recovery-point-offset-checkpoint still lists them ("customers 0 17081",
// "connect-status 3 0"): the broker had them, and the finding says so.
func TestRealMetadataMissingReplicas(t *testing.T) {
	dir := realDir(t, "rjmfernandes__flink-on-prem", "data")
	v := loadMetadata(t, -1, dir)
	missing := map[string]bool{}
	for _, f := range v.Findings {
		if f.Kind != finding.MissingReplica {
			continue
		}
		missing[f.Subject] = true
		switch f.Subject {
		case "customers-0", "connect-status-3":
			want := map[string]string{"customers-0": "(recovery point 17081)", "connect-status-3": "(recovery point 0)"}[f.Subject]
			if !strings.Contains(f.Message, "recovery-point-offset-checkpoint still lists it "+want+": the broker had this replica") {
				t.Errorf("%s: %s", f.Subject, f.Message)
			}
		}
	}
	for _, want := range []string{"customers-0", "products-0", "connect-status-3", "connect-offsets-0"} {
		if !missing[want] {
			t.Errorf("%s not reported missing", want)
		}
	}
	for _, present := range []string{"orders-0", "connect-offsets-8", "connect-status-4", "_schemas-0"} {
		if missing[present] {
			t.Errorf("%s reported missing", present)
		}
	}
	k := findingKinds(v.Findings)
	if len(k[finding.OrphanPartition]) != 0 || len(k[finding.LeaderEpochAhead]) != 0 || len(k[finding.ImageIncomplete]) != 0 {
		t.Errorf("findings %v", k)
	}
	if filepath.Base(v.Image.Snapshot) != "00000000000000014926-0000000001.checkpoint" || v.Image.Offset != 17027 {
		t.Errorf("image from %s at %d", v.Image.Snapshot, v.Image.Offset)
	}
}

// checongbinh/mirco_book_shop: the metadata log's first segment was
// deleted (log start 23880) after snapshots at 31117 and 38296: the image
// is complete from the newer snapshot; before the first snapshot it
// cannot be built.
func TestRealMetadataAfterRetention(t *testing.T) {
	dir := realDir(t, "checongbinh20011990__mirco_book_shop", "data")
	v := loadMetadata(t, -1, dir)
	if v.Image.SnapshotEndOffset != 38296 || v.Image.LogStartOffset != 23880 || v.Image.Offset != 42950 || len(findingKinds(v.Findings)[finding.ImageIncomplete]) != 0 {
		t.Errorf("image %+v findings %v", v.Image, findingKinds(v.Findings))
	}
	if topicByName(v.Image, "email") == nil {
		t.Error("no topic email (email-0 is on disk)")
	}
	early := loadMetadata(t, 30000, dir)
	if early.Image.Snapshot != "" || len(findingKinds(early.Findings)[finding.ImageIncomplete]) != 1 {
		t.Errorf("--at 30000: snapshot %q findings %v", early.Image.Snapshot, findingKinds(early.Findings))
	}
}

// The bundled broker-1: "events" deleted and recreated while events-0 on
// disk is the first one (orphan, and the new replica missing), and
// orders-0 written in leader epoch 2 while the metadata says 0. Before
// the deletion (--at EventsRemovedAt) events-0 matches. healthy: nothing.
func TestMetadataBundled(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "logdirs")
	v := loadMetadata(t, -1, filepath.Join(root, "broker-1"))
	k := findingKinds(v.Findings)
	if !slices.Equal(k[finding.OrphanPartition], []string{"events-0"}) || !slices.Equal(k[finding.MissingReplica], []string{"events-0"}) ||
		!slices.Equal(k[finding.LeaderEpochAhead], []string{"orders-0"}) || len(v.Findings) != 3 {
		t.Errorf("broker-1 findings %v", k)
	}
	// The checkpoint's "events 0" is the orphan directory's (the first
	// events): it says nothing of the new events-0.
	for _, f := range v.Findings {
		if f.Kind == finding.MissingReplica && strings.Contains(f.Message, "recovery-point") {
			t.Errorf("missing events-0 credited with the orphan's checkpoint entry: %s", f.Message)
		}
	}
	ev := topicByName(v.Image, "events")
	if ev == nil || ev.ID != segment.TopicIDString([16]byte(repeat(clustertest.EventsNewID))) {
		t.Errorf("events %+v", ev)
	}
	im := v.Image
	if im.SnapshotEndOffset != clustertest.MetadataSnapshotAt || len(im.Brokers) != 2 || len(im.Configs) != 1 || len(im.ACLs) != 1 || len(im.Quotas) != 1 ||
		im.ProducerIDs == nil || im.ProducerIDs.NextProducerID != 5000 || len(im.Features) != 1 || im.Features[0].Level != 19 {
		t.Errorf("image %+v", im)
	}
	if q := im.Quotas[0]; q.Entity != "user=billing" || q.Key != "consumer_byte_rate" || q.Value != 1048576 {
		t.Errorf("quota %+v", q)
	}
	if co := topicByName(im, "__consumer_offsets"); co == nil || len(co.Partitions) != 50 || co.Partitions[5].Replicas[0] != 1 || co.Partitions[6].Replicas[0] != 2 {
		t.Errorf("__consumer_offsets %+v", co)
	}

	before := loadMetadata(t, clustertest.EventsRemovedAt, filepath.Join(root, "broker-1"))
	if ev := topicByName(before.Image, "events"); ev == nil || ev.ID != segment.TopicIDString([16]byte(repeat(clustertest.EventsOldID))) {
		t.Errorf("--at %d: events %+v", clustertest.EventsRemovedAt, ev)
	}
	if k := findingKinds(before.Findings); len(k[finding.OrphanPartition]) != 0 || len(k[finding.MissingReplica]) != 0 {
		t.Errorf("--at %d: findings %v", clustertest.EventsRemovedAt, k)
	}

	h := loadMetadata(t, -1, filepath.Join(root, "healthy"))
	if len(h.Findings) != 0 {
		t.Errorf("healthy: %+v", h.Findings)
	}
	for _, d := range h.Disk {
		if d.Status != "ok" {
			t.Errorf("healthy disk row %+v", d)
		}
	}
	h.FilterTopics([]string{"orders"})
	if len(h.Image.Topics) != 1 || !strings.HasPrefix(h.Disk[0].Topic, "orders") || len(h.Disk) != 1 {
		t.Errorf("FilterTopics: %+v %+v", h.Image.Topics, h.Disk)
	}
}

func repeat(b byte) []byte {
	out := make([]byte, 16)
	for i := range out {
		out[i] = b
	}
	return out
}

// --at OFFSET shows the image at OFFSET, but the disk is the disk of now:
// what records after OFFSET did to it is not a finding. The healthy
// directory at offset 30, before __transaction_state (record 54), orders
// (56) and payments (58) were created, used to report their directories
// as orphans of deleted topics (exit 3 on a healthy disk).
func TestMetadataAtBeforeTopicsExisted(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "logdirs", "healthy")
	v := loadMetadata(t, 30, dir)
	if v.Image.Offset != 30 || topicByName(v.Image, "orders") != nil {
		t.Fatalf("image at %d has orders: %+v", v.Image.Offset, topicByName(v.Image, "orders"))
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v", v.Findings)
	}
	for _, name := range []string{"orders", "payments", "__transaction_state"} {
		if rows := diskRow(v, name, 0); len(rows) != 1 || rows[0].Status != "created-later" {
			t.Errorf("%s-0: %+v, want created-later", name, rows)
		}
	}
	if rows := diskRow(v, "__consumer_offsets", 5); len(rows) != 1 || rows[0].Status != "ok" {
		t.Errorf("__consumer_offsets-5 (created at 3): %+v", rows)
	}
}

// A partition whose leader epoch rose after --at, and one moved off the
// node after --at: node 1's disk (leader epoch 3 in moves-0's checkpoint,
// no gone-0) is what those later records made it. At the end the same
// disk is clean; only a disk epoch above every epoch the log records is
// ahead.
func TestMetadataAtLaterChanges(t *testing.T) {
	ld := t.TempDir()
	id := func(n byte) *[16]byte { var b [16]byte; b[15] = n; return &b }
	uuid := func(n byte) schema.UUID { return schema.UUID(*id(n)) }
	part := func(topic byte, replicas ...int32) []byte {
		return clustertest.Meta("PartitionRecord", map[string]any{"PartitionId": int32(0), "TopicId": uuid(topic), "Replicas": clustertest.Ints(replicas...),
			"Isr": clustertest.Ints(replicas...), "RemovingReplicas": clustertest.Ints(), "AddingReplicas": clustertest.Ints(), "Leader": replicas[0],
			"LeaderEpoch": int32(0), "PartitionEpoch": int32(0)})
	}
	recs := [][]byte{
		clustertest.Meta("FeatureLevelRecord", map[string]any{"Name": "metadata.version", "FeatureLevel": int16(19)}),
		clustertest.Meta("TopicRecord", map[string]any{"Name": "moves", "TopicId": uuid(1)}), part(1, 1),
		clustertest.Meta("TopicRecord", map[string]any{"Name": "gone", "TopicId": uuid(2)}), part(2, 1),
		// offset 5: moves-0's leader epoch 0 → 3; gone-0 moved to node 2
		clustertest.Meta("PartitionChangeRecord", map[string]any{"PartitionId": int32(0), "TopicId": uuid(1), "Leader": int32(1)}),
		clustertest.Meta("PartitionChangeRecord", map[string]any{"PartitionId": int32(0), "TopicId": uuid(1), "Leader": int32(1)}),
		clustertest.Meta("PartitionChangeRecord", map[string]any{"PartitionId": int32(0), "TopicId": uuid(1), "Leader": int32(1)}),
		clustertest.Meta("PartitionChangeRecord", map[string]any{"PartitionId": int32(0), "TopicId": uuid(2), "Replicas": clustertest.Ints(2), "Isr": clustertest.Ints(2), "Leader": int32(2)}),
	}
	if _, err := clustertest.WriteMetadata(ld, clustertest.T0, 1, 0, clustertest.MetaBatch(0, clustertest.T0, 1, recs...)); err != nil {
		t.Fatal(err)
	}
	if err := clustertest.WriteMetaProperties(ld, 1, "c"); err != nil {
		t.Fatal(err)
	}
	data := clustertest.DataBatch(0, clustertest.T0, 2)
	data[12], data[13], data[14], data[15] = 0, 0, 0, 3 // partitionLeaderEpoch 3, outside the CRC
	if _, err := clustertest.WritePartition(ld, "moves", 0, id(1), data); err != nil {
		t.Fatal(err)
	}

	end := loadMetadata(t, -1, ld)
	if p := topicByName(end.Image, "moves").Partitions[0]; p.LeaderEpoch != 3 || len(end.Findings) != 0 {
		t.Fatalf("at the end: moves-0 %+v, findings %+v (want epoch 3 after three leader changes, no finding)", p, end.Findings)
	}
	at := loadMetadata(t, 5, ld)
	if len(at.Findings) != 0 {
		t.Errorf("--at 5: findings %+v", at.Findings)
	}
	if rows := diskRow(at, "moves", 0); len(rows) != 1 || rows[0].Status != "ok" || rows[0].DiskLeaderEpoch != 3 || rows[0].ImageLeaderEpoch != 0 {
		t.Errorf("--at 5: moves-0 %+v", rows)
	}
	if rows := diskRow(at, "gone", 0); len(rows) != 1 || rows[0].Status != "unassigned-later" {
		t.Errorf("--at 5: gone-0 %+v, want unassigned-later", rows)
	}

	// An epoch the log never reaches is ahead at any offset.
	data[15] = 4
	os.RemoveAll(filepath.Join(ld, "moves-0"))
	if _, err := clustertest.WritePartition(ld, "moves", 0, id(1), data); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{5, -1} {
		if k := findingKinds(loadMetadata(t, off, ld).Findings); !slices.Equal(k[finding.LeaderEpochAhead], []string{"moves-0"}) {
			t.Errorf("--at %d with disk epoch 4: findings %v", off, k)
		}
	}
}
