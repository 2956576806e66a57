package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kseg/kseg/psm/cluster"
	"github.com/kseg/kseg/psm/cluster/clustertest"
)

// TestGroupsMemoryTracksLiveKeys: replaying a __consumer_offsets partition
// keeps what is live, not every group the log ever named. The partition,
// generated here, holds 40,000 short-lived groups (each a GroupMetadata
// and an offset commit, both tombstoned later, as a console consumer's
// group is deleted) and 10 live ones; the replay must end holding the 10,
// and its heap must not grow with the dead groups (it used to keep an entry
// for every one: 48 MiB here, gigabytes on a real cluster's log).
func TestGroupsMemoryTracksLiveKeys(t *testing.T) {
	const dead, live, perBatch = 40_000, 10, 1000
	start := time.Now()
	var kvs []clustertest.KV
	for i := range dead {
		g := fmt.Sprintf("console-consumer-%06d", i)
		kvs = append(kvs,
			clustertest.GroupMetadata(g, "range", 1, "", clustertest.T0, nil),
			clustertest.OffsetCommit(g, "orders", int32(i%8), int64(i), 0, "", clustertest.T0),
			clustertest.OffsetTombstone(g, "orders", int32(i%8)),
			clustertest.KV{Key: clustertest.GroupMetadata(g, "", 0, "", 0, nil).Key})
	}
	for i := range live {
		kvs = append(kvs, clustertest.OffsetCommit(fmt.Sprintf("live-%d", i), "orders", 0, 42, 0, "", clustertest.T0))
	}
	var batches [][]byte
	for i := 0; i < len(kvs); i += perBatch {
		batches = append(batches, clustertest.Batch(int64(i), clustertest.T0, kvs[i:min(i+perBatch, len(kvs))]...))
	}
	ld := t.TempDir()
	dir, err := clustertest.WritePartition(ld, cluster.ConsumerOffsetsTopic, 0, nil, batches...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records generated in %v", len(kvs), time.Since(start))

	groups, retained, err := cluster.ReplayGroupsRetained(dir, cluster.SchemaDecoder{})
	if err != nil {
		t.Fatal(err)
	}
	if groups != live {
		t.Errorf("the replay holds %d groups at the end, want the %d live ones", groups, live)
	}
	const limit = 4 << 20
	if retained > limit {
		t.Errorf("the replay retains %d KiB of heap for %d live groups (limit %d KiB): memory grows with the dead groups", retained>>10, live, limit>>10)
	}

	v := loadGroups(t, cluster.GroupsOptions{Jobs: 1, PSM: psmDefaults()}, ld)
	if len(v.Groups) != live || v.Groups[0].Group != "live-0" || v.Groups[0].Offsets[0].Offset != 42 || len(v.Findings) != 0 {
		t.Errorf("LoadGroups: %d groups, findings %v", len(v.Groups), v.Findings)
	}
	t.Logf("replayed in %v in all, %d KiB retained", time.Since(start), retained>>10)
}
