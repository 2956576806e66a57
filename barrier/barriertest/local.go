package barriertest

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

// Rebase moves batches (whole log entries, in order) so that the first
// starts at offset next, keeping their offset deltas, and sets their
// partitionLeaderEpoch to epoch: what a leader's append assigns to
// batches its producers sent. Both fields lie outside the CRC, so the
// batches stay valid. The input is not changed.
func Rebase(batches [][]byte, next int64, epoch int32) [][]byte {
	if len(batches) == 0 {
		return nil
	}
	delta := next - int64(binary.BigEndian.Uint64(batches[0]))
	out := make([][]byte, len(batches))
	for i, raw := range batches {
		b := append([]byte(nil), raw...)
		binary.BigEndian.PutUint64(b, uint64(int64(binary.BigEndian.Uint64(b))+delta))
		binary.BigEndian.PutUint32(b[12:], uint32(epoch))
		out[i] = b
	}
	return out
}

// LatestEpoch is the latest leader epoch of a partition directory: the
// last leader-epoch-checkpoint entry, else 0.
func LatestEpoch(tb testing.TB, dir string) int32 {
	tb.Helper()
	pd := segtest.OpenDir(tb, dir)
	if pd.LeaderEpochCheckpoint == "" {
		return 0
	}
	e, err := segment.ReadLeaderEpochCheckpoint(pd.LeaderEpochCheckpoint)
	if err != nil {
		tb.Fatal(err)
	}
	if len(e) == 0 {
		return 0
	}
	return e[len(e)-1].Epoch
}

// AppendLocal appends batches written by the partition's own producers
// (after a failover: a cluster's local writes) to the partition directory
// dir, as its leader would: rebased to the log end and the latest leader
// epoch, through segment.ResumeAppender (the active segment and its
// indexes continued, rolled per opts), with the .txnindex entries of
// their ABORT markers as a producer-state replay of the whole log
// computes them. It returns the offsets written, [from, end).
func AppendLocal(tb testing.TB, dir string, batches [][]byte, opts segment.AppenderOptions) (from, end int64) {
	tb.Helper()
	return AppendAt(tb, dir, batches, opts, -1)
}

// AppendAt is AppendLocal in leader epoch epoch (-1: the latest).
func AppendAt(tb testing.TB, dir string, batches [][]byte, opts segment.AppenderOptions, epoch int32) (from, end int64) {
	tb.Helper()
	m := psm.NewManager(psm.DefaultOptions())
	for _, e := range Entries(tb, dir) {
		b, err := decode.ParseBatch(e.Raw)
		if err != nil {
			tb.Fatal(err)
		}
		_ = m.ApplyBatch(&b)
	}
	a, err := segment.ResumeAppender(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	from = a.LogEndOffset()
	if epoch < 0 {
		epoch = LatestEpoch(tb, dir)
	}
	local := Rebase(batches, from, epoch)
	for i, raw := range local {
		if err := a.Append(raw); err != nil {
			tb.Fatalf("local batch %d: %v", i, err)
		}
		b, _ := decode.ParseBatch(raw)
		n := len(m.Aborted())
		_ = m.ApplyBatch(&b)
		for _, t := range m.Aborted()[n:] {
			if err := a.AppendAbortedTxn(segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: t.ProducerID,
				FirstOffset: t.FirstOffset, LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset}); err != nil {
				tb.Fatalf("local batch %d: %v", i, err)
			}
		}
	}
	end = a.LogEndOffset()
	if err := a.Close(); err != nil {
		tb.Fatal(err)
	}
	return from, end
}

// AppendRaw appends raw bytes to the last .log of dir and nothing else
// (no index, no check): for partitions broken on purpose.
func AppendRaw(tb testing.TB, dir string, raw []byte) {
	tb.Helper()
	pd := segtest.OpenDir(tb, dir)
	last := pd.Segments[len(pd.Segments)-1]
	f, err := os.OpenFile(last.Log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(raw); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Entry is one batch of a partition directory with where it lies.
type Entry struct {
	Raw        []byte
	BaseOffset int64
	Log        string // path of the .log
	Position   int64
}

// Entries reads every batch of a partition directory, in order.
func Entries(tb testing.TB, dir string) []Entry {
	tb.Helper()
	pd := segtest.OpenDir(tb, dir)
	var out []Entry
	for _, s := range pd.Segments {
		if s.Log == "" {
			continue
		}
		b, err := os.ReadFile(s.Log)
		if err != nil {
			tb.Fatal(err)
		}
		for pos := int64(0); pos < int64(len(b)); {
			batch, err := decode.ParseBatch(b[pos:])
			if err != nil {
				tb.Fatalf("%s position %d: %v", s.Log, pos, err)
			}
			n := batch.Size()
			out = append(out, Entry{Raw: b[pos : pos+n], BaseOffset: batch.BaseOffset, Log: s.Log, Position: pos})
			pos += n
		}
	}
	return out
}

func mkdir(tb testing.TB, d string) string {
	tb.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		tb.Fatal(err)
	}
	return d
}
