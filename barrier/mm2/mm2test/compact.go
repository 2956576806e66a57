package mm2test

import (
	"bytes"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Compact writes to dst what the log cleaner leaves of the partition at
// src after cleaning the offsets below upTo (cleanup.policy=compact): of
// the records there, only the last of each key (over the whole cleaned
// range and the rest of the log, as the cleaner's offset map) survives;
// each batch keeps its baseOffset and lastOffsetDelta with the survivors'
// offset deltas (LogCleaner.cleanInto, MemoryRecords.filterTo), and a
// batch with none left goes. Tombstones are kept (delete.retention.ms has
// not passed). Data batches only: src holds no transactions.
func Compact(src, dst string, upTo int64) error {
	pd, err := segment.OpenPartitionDir(src)
	if err != nil {
		return err
	}
	last := map[string]int64{}
	var dec decode.Decoder
	if err := eachBatch(pd, func(b *decode.Batch) error {
		return dec.Records(b, func(r *decode.Record) error {
			if r.Key != nil {
				last[string(r.Key)] = r.Offset
			}
			return nil
		})
	}); err != nil {
		return err
	}
	a, err := segment.OpenAppender(dst, segment.AppenderOptions{SegmentBytes: 1 << 20, IndexIntervalBytes: 512, SegmentMs: -1})
	if err != nil {
		return err
	}
	if err := eachBatch(pd, func(b *decode.Batch) error {
		var keep []decode.RecordSpec
		if err := dec.Records(b, func(r *decode.Record) error {
			if r.Offset < upTo && r.Key != nil && last[string(r.Key)] != r.Offset {
				return nil
			}
			rs := decode.RecordSpec{OffsetDelta: int32(r.Offset - b.BaseOffset), Timestamp: r.Timestamp,
				Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
			for _, h := range r.Headers {
				rs.Headers = append(rs.Headers, decode.Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)})
			}
			keep = append(keep, rs)
			return nil
		}); err != nil {
			return err
		}
		if len(keep) == 0 {
			return nil
		}
		lod := b.LastOffsetDelta
		spec := decode.BatchSpec{BaseOffset: b.BaseOffset, PartitionLeaderEpoch: b.PartitionLeaderEpoch, Compression: b.Compression(),
			LogAppendTime: b.TimestampType() == decode.LogAppendTime, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
			BaseSequence: b.BaseSequence, LastOffsetDelta: &lod}
		if spec.LogAppendTime {
			mt := b.MaxTimestamp
			spec.MaxTimestamp = &mt
		}
		raw, err := decode.AppendBatch(nil, spec, keep)
		if err != nil {
			return err
		}
		return a.Append(raw)
	}); err != nil {
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	// The cleaner records how far it cleaned in its log directory's
	// cleaner-offset-checkpoint (LogCleanerManager).
	name, _ := segment.ParsePartitionDir(filepath.Base(filepath.Clean(dst)))
	cp := segment.EncodeOffsetCheckpoint([]segment.OffsetCheckpointEntry{{Topic: name.Topic, Partition: name.Partition, Offset: upTo}})
	return segment.WriteFileAtomic(filepath.Join(filepath.Dir(filepath.Clean(dst)), segment.CleanerOffsetCheckpointName), cp, 0o644)
}

func eachBatch(pd *segment.PartitionDir, fn func(b *decode.Batch) error) error {
	c := &consumer{pd: pd}
	return c.eachBatch(fn)
}
