package clustertest

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/segment"
)

// CommitsLog writes out/__consumer_offsets-0 holding n offset commits
// (OffsetCommitKey v1 / OffsetCommitValue v3) over keys live keys: groups
// of 10 partitions of topic "orders", each group committing its 10
// partitions in one batch, the groups in turn, every group with a
// GroupMetadata record (one member, range assignor) before its first
// commit. The scale benchmarks' __consumer_offsets (scalegen -dim groups).
func CommitsLog(out string, n, keys int) error {
	const perGroup = 10
	ngroups := max(keys/perGroup, 1)
	w, err := newWriter(out, "__consumer_offsets")
	if err != nil {
		return err
	}
	group := func(g int) string { return fmt.Sprintf("bench-group-%07d", g) }
	written, round := 0, 0
	for written < n {
		for g := 0; g < ngroups && written < n; g++ {
			name := group(g)
			var kvs []KV
			if round == 0 {
				m := Member{ID: name + "-member-0-5f1c7e0e", ClientID: "consumer-" + name + "-1", Host: "/10.0.0.1",
					Assigned: map[string][]int32{"orders": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}
				if err := w.batch(GroupMetadata(name, "range", 1, m.ID, T0, []Member{m})); err != nil {
					return err
				}
			}
			for p := 0; p < perGroup && written < n; p++ {
				kvs = append(kvs, OffsetCommit(name, "orders", int32(p), int64(round*1000+p), 5, "", T0+int64(written)))
				written++
			}
			if err := w.batch(kvs...); err != nil {
				return err
			}
		}
		round++
	}
	return w.close()
}

// TxnLog writes out/__transaction_state-0 holding n transactional ids,
// each moving through Empty, then Ongoing, PrepareCommit, CompleteCommit
// three times (ten records per id), one record per batch as the
// transaction coordinator appends them, the ids in turn. The scale
// benchmarks' __transaction_state (scalegen -dim txns).
func TxnLog(out string, n int) error {
	w, err := newWriter(out, "__transaction_state")
	if err != nil {
		return err
	}
	states := []kmsg.TransactionState{kmsg.TransactionStateEmpty,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit,
		kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit, kmsg.TransactionStateCompleteCommit}
	parts := map[string][]int32{"orders": {3}, "payments": {1}}
	for step, st := range states {
		for i := range n {
			ts := T0 + int64(step*n+i)
			var ps map[string][]int32
			if st != kmsg.TransactionStateEmpty && st != kmsg.TransactionStateCompleteCommit {
				ps = parts
			}
			kv := Txn("bench-txn-"+strconv.Itoa(i), 2_000_000+int64(i), int16(step/3), st, 60000, ps, ts, ts)
			if err := w.batch(kv); err != nil {
				return err
			}
		}
	}
	return w.close()
}

// writer appends coordinator batches to one internal-topic partition.
type writer struct {
	app  *segment.Appender
	next int64
	ts   int64
}

func newWriter(out, topic string) (*writer, error) {
	dir := filepath.Join(out, segment.PartitionDirNameFor(topic, 0))
	// offsets.topic.segment.bytes and transaction.state.log.segment.bytes
	// default to 100 MiB.
	a, err := segment.OpenAppender(dir, segment.AppenderOptions{SegmentBytes: 100 << 20, IndexIntervalBytes: 4096, NoSync: true})
	if err != nil {
		return nil, err
	}
	return &writer{app: a, ts: T0}, nil
}

func (w *writer) batch(kvs ...KV) error {
	raw := Batch(w.next, w.ts, kvs...)
	w.next += int64(len(kvs))
	w.ts += int64(len(kvs))
	return w.app.Append(raw)
}

func (w *writer) close() error { return w.app.Close() }
