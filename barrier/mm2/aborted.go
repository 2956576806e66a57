package mm2

import (
	"cmp"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// abortedSet is the aborted transactions of a partition, by producer:
// the [FirstOffset, LastOffset] of each, sorted. A batch of producer p at
// baseOffset o belongs to an aborted transaction when one of p's ranges
// holds o (a transaction's batches lie between its first offset and its
// ABORT marker).
type abortedSet map[int64][][2]int64

func (a abortedSet) has(pid, offset int64) bool {
	rs := a[pid]
	if len(rs) == 0 {
		return false
	}
	i, _ := slices.BinarySearchFunc(rs, offset, func(r [2]int64, o int64) int {
		switch {
		case r[1] < o:
			return -1
		case r[0] > o:
			return 1
		}
		return 0
	})
	return i < len(rs) && rs[i][0] <= offset && offset <= rs[i][1]
}

// txnState is what a replay of a partition's producer state says about
// its transactions: the aborted ones, and the first offset of the oldest
// still open (the last stable offset with the high watermark at the log
// end; -1 when none is open).
type txnState struct {
	aborted      abortedSet
	firstOpen    int64
	transactions bool
}

// replayTxns replays the producer state of a partition from its log start
// (psm.Rebuild, batch headers and markers only, mapped, no CRC checks:
// the comparison checks them) for its transactions' fates, which a consumer
// learns from the markers (read_committed: the fetch response's
// abortedTransactions, built from the .txnindex the replay rebuilds).
func replayTxns(pd *segment.PartitionDir, logStart int64) (txnState, error) {
	opts := psm.DefaultOptions()
	opts.FromSnapshot = psm.SnapshotNone
	opts.VerifyCRC = false
	opts.LogStartOffset = logStart
	res, err := psm.Rebuild(pd, opts)
	if err != nil {
		return txnState{}, err
	}
	st := txnState{aborted: abortedSet{}, firstOpen: res.FirstUndecidedOffset}
	for _, a := range res.Aborted {
		st.aborted[a.ProducerID] = append(st.aborted[a.ProducerID], [2]int64{a.FirstOffset, a.LastOffset})
		st.transactions = true
	}
	for pid := range st.aborted {
		slices.SortFunc(st.aborted[pid], func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	}
	if st.firstOpen >= 0 {
		st.transactions = true
	}
	return st, nil
}
