package kafkatest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// WritePartition writes batches (whole log entries with broker-assigned
// offsets, as RawBatches returns them) into dir as the partition directory
// <dir>/<topic>-<partition> and returns its path. It is
// WritePartitionWith(tb, dir, topic, partition, batches, segment.AppenderOptions{})
// with StartOffset set to the first batch's base offset. With the broker
// defaults that is one segment, 00000000000000000000.log for a log starting
// at 0.
func WritePartition(tb testing.TB, dir, topic string, partition int32, batches [][]byte) string {
	tb.Helper()
	return WritePartitionWith(tb, dir, topic, partition, batches, segment.AppenderOptions{})
}

// WritePartitionWith writes the partition directory with segment.Appender,
// as a broker appending the batches one at a time would. The Appender
// writes the .log segments (rolled per opts.SegmentBytes and the index
// limits), sparse .index/.timeindex files built by LogSegment's rules and
// trimmed as on a clean shutdown, leader-epoch-checkpoint (one
// "<epoch> <startOffset>" per leader epoch change, "0\n1\n0 0\n" for a kfake
// partition) and partition.metadata if opts.TopicID is set. WritePartitionWith
// adds the .txnindex entries a broker writes for ABORT markers (see
// AbortedTxns). When opts.StartOffset is 0 and the first batch starts later,
// the log starts at that batch. It writes no producer snapshot.
func WritePartitionWith(tb testing.TB, dir, topic string, partition int32, batches [][]byte, opts segment.AppenderOptions) string {
	tb.Helper()
	pdir := filepath.Join(dir, segment.PartitionDirNameFor(topic, partition))
	if opts.StartOffset == 0 && len(batches) > 0 {
		b, err := decode.ParseBatch(batches[0])
		if err != nil {
			tb.Fatalf("kafkatest: batch 0: %v", err)
		}
		opts.StartOffset = b.BaseOffset
	}
	aborted, err := AbortedTxns(batches)
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	byMarker := make(map[int64]segment.AbortedTxn, len(aborted))
	for _, t := range aborted {
		byMarker[t.LastOffset] = t
	}
	a, err := segment.OpenAppender(pdir, opts)
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	for i, raw := range batches {
		if err := a.Append(raw); err != nil {
			tb.Fatalf("kafkatest: batch %d: %v", i, err)
		}
		b, _ := decode.ParseBatch(raw) // Append parsed it already
		if t, ok := byMarker[b.BaseOffset]; ok && b.IsControl() {
			if err := a.AppendAbortedTxn(t); err != nil {
				tb.Fatalf("kafkatest: batch %d: %v", i, err)
			}
		}
	}
	if err := a.Close(); err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	return pdir
}

// AbortedTxns returns the .txnindex entries a broker writes while appending
// batches, one per ABORT marker, in log order (UnifiedLog.append →
// ProducerStateManager). Each entry has these fields:
//   - ProducerID: the producer of the marker.
//   - FirstOffset: the first offset of that producer's ongoing transaction,
//     or the marker's own offset when there is none
//     (ProducerAppendInfo.appendEndTxnMarker: currentTxnFirstOffset.orElse).
//   - LastOffset: the marker offset.
//   - LastStableOffset: the first offset of the earliest transaction of
//     another producer still ongoing, else the marker offset + 1
//     (ProducerStateManager.lastStableOffset/findNextIncompleteTxn).
//
// A transaction starts at a producer's first transactional data batch after
// its previous marker. Control batches other than COMMIT/ABORT are ignored.
func AbortedTxns(batches [][]byte) ([]segment.AbortedTxn, error) {
	var (
		out     []segment.AbortedTxn
		dec     decode.Decoder
		ongoing = map[int64]int64{} // producer id → first offset of its open transaction
	)
	for i, raw := range batches {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", i, err)
		}
		if b.IsLegacy() || !b.IsTransactional() {
			continue
		}
		if !b.IsControl() {
			if _, ok := ongoing[b.ProducerID]; !ok {
				ongoing[b.ProducerID] = b.BaseOffset
			}
			continue
		}
		typ, n := decode.ControlType(-1), 0
		err = dec.Records(&b, func(r *decode.Record) error {
			if n++; n > 1 {
				return nil // a control batch has one record; Kafka reads the first
			}
			_, t, err := decode.ParseControlKey(r.Key)
			typ = t
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("batch %d at offset %d: %w", i, b.BaseOffset, err)
		}
		if typ != decode.ControlAbort && typ != decode.ControlCommit {
			continue
		}
		first, ok := ongoing[b.ProducerID]
		if !ok {
			first = b.BaseOffset
		}
		if typ == decode.ControlAbort {
			lso := b.BaseOffset + 1
			for pid, off := range ongoing {
				if pid != b.ProducerID && off < lso {
					lso = off
				}
			}
			out = append(out, segment.AbortedTxn{
				ProducerID:       b.ProducerID,
				FirstOffset:      first,
				LastOffset:       b.BaseOffset,
				LastStableOffset: lso,
			})
		}
		delete(ongoing, b.ProducerID)
	}
	return out, nil
}
