package mm2test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/segment"
)

// Case is a committed fixture under <out>/mm2: a replica of the shared
// source (or of its own, Source), with one fault planted or none.
type Case struct {
	Name string
	// Options plays MM2; Fault is the one planted.
	Options Options
	// Verify are the flags verify-mm2 checks it with beyond the
	// directories (an isolation level).
	Verify []string
	// Compacted: the case has its own source, keyed, compacted after
	// MM2 copied it (below offset 90).
	Compacted bool
	// Want is what verify-mm2 reports: the finding kinds, "" for none.
	Want string
}

// FixtureGroups are the consumer groups the fixtures checkpoint.
var FixtureGroups = []Group{{Name: "billing", Upstream: 60}, {Name: "audit", Upstream: 97}, {Name: "reports", Upstream: 128}}

// fixtureOptions are the MM2 settings of every fixture: small polls and
// offset.lag.max 20, so that a 130-offset source has a few syncs.
func fixtureOptions(f Fault) Options {
	return Options{MaxPollRecords: 20, OffsetLagMax: 20, CommitEvery: 2, SegmentBytes: 4096, Groups: FixtureGroups, Fault: f}
}

// Cases are the fixtures Generate writes: a clean replica, one per fault
// verify-mm2 reports, and replicas whose source holds what MM2 does not
// copy.
var Cases = []Case{
	{Name: "clean", Options: fixtureOptions(Fault{})},
	{Name: "missing", Options: fixtureOptions(Fault{Kind: Lose, At: 40, N: 6}), Want: "missing-records"},
	{Name: "duplicates", Options: fixtureOptions(Fault{Kind: Restart, At: 70, N: 12}), Want: "duplicate-records"},
	{Name: "reordered", Options: fixtureOptions(Fault{Kind: Reorder, At: 5}), Want: "reordered"},
	{Name: "foreign", Options: fixtureOptions(Fault{Kind: Foreign, At: 30, N: 3}), Want: "foreign-records"},
	{Name: "reset", Options: fixtureOptions(Fault{Kind: Reset, N: 8}), Want: "source-reset"},
	{Name: "timestamp", Options: fixtureOptions(Fault{Kind: Timestamp, At: 100, N: 2}), Want: "timestamp-mismatch"},
	{Name: "sync-mismatch", Options: fixtureOptions(Fault{Kind: SyncAhead, At: 50}), Want: "sync-mismatch"},
	{Name: "checkpoint-ahead", Options: fixtureOptions(Fault{Kind: CheckpointAhead, N: 25}), Want: "checkpoint-ahead"},
	{Name: "checkpoint-unmirrored", Options: fixtureOptions(Fault{Kind: CheckpointUnmirrored}), Want: "checkpoint-unmirrored"},
	{Name: "read-committed", Options: func() Options { o := fixtureOptions(Fault{}); o.ReadCommitted = true; return o }(),
		Verify: []string{"--isolation-level", "read_committed"}},
	{Name: "compacted", Options: fixtureOptions(Fault{}), Compacted: true, Want: "compacted-upstream"},
}

// FixtureSource are the options of the shared source: 120 records, with
// committed, aborted and open transactions.
var FixtureSource = SourceOptions{Records: 120, Transactions: true}

// Generate writes the fixtures under outDir/mm2, replacing it:
//
//	source/orders-0                              the source (cluster A)
//	<case>/A.orders-0                            the replica (cluster B)
//	<case>/mm2-offset-syncs.B.internal-0         its offset syncs
//	<case>/A.checkpoints.internal-0              its checkpoints
//	compacted/orders-0                           the compacted case's own source
//	clean/heartbeats-0, clean/A.heartbeats-0, clean/mm2-{configs,offsets,status}.A.internal-0
//	                                             MM2's other topics, for dump
func Generate(outDir string) error {
	root := filepath.Join(outDir, "mm2")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	src := filepath.Join(root, "source", "orders-0")
	if _, err := WriteSource(src, FixtureSource); err != nil {
		return err
	}
	for _, c := range Cases {
		if err := c.write(root, src); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return writeOtherTopics(filepath.Join(root, "clean"))
}

// Dirs are a case's directories under root: source, replica, offset
// syncs, checkpoints.
func (c Case) Dirs(root string) (src, tgt, syncs, cps string) {
	dir := filepath.Join(root, c.Name)
	src = filepath.Join(root, "source", "orders-0")
	if c.Compacted {
		src = filepath.Join(dir, "orders-0")
	}
	return src, filepath.Join(dir, "A.orders-0"), filepath.Join(dir, "mm2-offset-syncs.B.internal-0"), filepath.Join(dir, "A.checkpoints.internal-0")
}

func (c Case) write(root, shared string) error {
	src, tgt, syncs, cps := c.Dirs(root)
	from := shared
	if c.Compacted {
		full, err := os.MkdirTemp("", "kseg-mm2-compacted-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(full)
		from = filepath.Join(full, "orders-0")
		if _, err := WriteSource(from, SourceOptions{Records: 120, Keys: 25}); err != nil {
			return err
		}
	}
	if _, err := Replicate(from, Paths{Target: tgt, OffsetSyncs: syncs, Checkpoints: cps}, c.Options); err != nil {
		return err
	}
	if c.Compacted {
		return Compact(from, src, 90)
	}
	return nil
}

// writeOtherTopics writes MM2's heartbeats and its dedicated workers'
// Connect topics, as MirrorHeartbeatTask and Connect's backing stores
// write them.
func writeOtherTopics(dir string) error {
	var hb [][2][]byte
	for i := range 3 {
		r := &mm2.Record{Kind: mm2.Heartbeats, Heartbeat: &mm2.Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: T0 + int64(i)*1000}}
		k, v, err := r.Encode()
		if err != nil {
			return err
		}
		hb = append(hb, [2][]byte{k, v})
	}
	const src = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	topics := map[string][][2][]byte{
		"heartbeats-0":   hb,
		"A.heartbeats-0": hb[:2],
		"mm2-configs.A.internal-0": {
			{[]byte("connector-MirrorSourceConnector"), fmt.Appendf(nil, `{"properties":{"connector.class":%q,"source.cluster.alias":"A","target.cluster.alias":"B","topics":"orders","offset.lag.max":"20"}}`, src)},
			{[]byte("task-MirrorSourceConnector-0"), []byte(`{"properties":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.assigned.partitions":"orders-0"}}`)},
			{[]byte("commit-MirrorSourceConnector"), []byte(`{"tasks":1}`)},
			{[]byte("target-state-MirrorSourceConnector"), []byte(`{"state":"STARTED","state.v2":"STARTED"}`)},
		},
		"mm2-offsets.A.internal-0": {
			{[]byte(`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"orders"}]`), []byte(`{"offset":129}`)},
		},
		"mm2-status.A.internal-0": {
			{[]byte("status-connector-MirrorSourceConnector"), []byte(`{"state":"RUNNING","trace":null,"worker_id":"10.0.0.5:8083","generation":1}`)},
			{[]byte("status-task-MirrorSourceConnector-0"), []byte(`{"state":"RUNNING","trace":null,"worker_id":"10.0.0.5:8083","generation":1}`)},
		},
	}
	for name, recs := range topics {
		if err := writeRecords(filepath.Join(dir, name), recs); err != nil {
			return err
		}
	}
	return nil
}

// writeRecords writes one record per batch, as a producer with
// linger.ms=0 sending now and then does.
func writeRecords(dir string, recs [][2][]byte) error {
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentMs: -1})
	if err != nil {
		return err
	}
	for i, kv := range recs {
		raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: int64(i), PartitionLeaderEpoch: 1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]decode.RecordSpec{{Timestamp: T0 + int64(i)*1000, Key: kv[0], Value: kv[1]}})
		if err != nil {
			return err
		}
		if err := a.Append(raw); err != nil {
			return err
		}
	}
	return a.Close()
}
