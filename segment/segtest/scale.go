package segtest

import (
	"fmt"

	"github.com/kseg/kseg/decode"
)

// ProducersOptions configure Producers.
type ProducersOptions struct {
	// BatchesPerProducer is how many batches each producer writes (at
	// least 1); the producers take turns, so every producer's batches are
	// spread over the whole log.
	BatchesPerProducer int
	// TransactionalEvery makes every n-th producer transactional (0:
	// none): each of its batches is a transaction of its own, ended by a
	// COMMIT marker right after it.
	TransactionalEvery int
	// SegmentBytes is log.segment.bytes (a producer snapshot is written at
	// every roll and at the end); 0 is 64 MiB.
	SegmentBytes int64
}

// Producers writes a partition directory holding n producers, the
// dimension that makes a producer-state rebuild's memory grow: producer ids
// 1,000,000 upwards, each writing opts.BatchesPerProducer idempotent
// batches of one small record (sequences from 0, producer epochs 0–2),
// appended the way a broker appends them (segment.Appender: segments,
// .index, .timeindex, producer snapshots at every roll and at the end,
// leader-epoch-checkpoint, partition.metadata). All timestamps lie within
// a few minutes, so no producer expires in a replay with the log clock.
func Producers(dir string, n int, opts ProducersOptions) error {
	if n <= 0 {
		return fmt.Errorf("producers: %d producers", n)
	}
	per := max(opts.BatchesPerProducer, 1)
	seg := opts.SegmentBytes
	if seg <= 0 {
		seg = 64 << 20
	}
	g := &gen{}
	p, err := g.open(dir, partitionOpts{segmentBytes: seg, indexInterval: 4096, topic: 7, snapshots: true, noSync: true})
	if err != nil {
		return err
	}
	value := make([]byte, 0, 64)
	for j := range per {
		for i := range n {
			pid := int64(1_000_000 + i)
			txn := opts.TransactionalEvery > 0 && i%opts.TransactionalEvery == 0
			// A few minutes of log time in all, one producer after another.
			ts := T0 + int64(j*n+i)*int64(180_000)/int64(per*n)
			value = fmt.Appendf(value[:0], `{"producer":%d,"n":%d}`, pid, j)
			spec := decode.BatchSpec{ProducerID: pid, ProducerEpoch: int16(i % 3), BaseSequence: int32(j), Transactional: txn}
			p.batch(spec, rec(0, ts, nil, value))
			if txn {
				p.batch(decode.BatchSpec{ProducerID: pid, ProducerEpoch: int16(i % 3), BaseSequence: -1, Transactional: true, Control: true},
					rec(0, ts, decode.AppendControlKey(nil, decode.ControlCommit), decode.AppendEndTxnMarkerValue(nil, 0)))
			}
			if p.err != nil {
				_ = p.app.Close()
				return p.err
			}
		}
	}
	return p.close()
}
