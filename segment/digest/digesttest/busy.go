// Package digesttest writes digests of synthetic busy partitions, for the
// size tests and the benchmarks of kseg digest and of verify-chain over
// digests: a digest of a 100 GiB log is written in seconds, without the
// log (digest.Builder).
package digesttest

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/digest"
)

// T0 is the first batch's timestamp.
const T0 int64 = 1700000000000

// BusyLog is a synthetic busy partition, batch after batch as a broker
// appends them: 16 idempotent producers and 8 transactional ones
// (transactions of 1 to 4 batches, then a COMMIT or, one time in seven,
// an ABORT marker) interleaved at random, a tenth of the batches from
// producers without idempotence, a codec picked per batch, timestamps a
// few milliseconds apart, the leader epoch bumped now and then. Every
// data batch is Size bytes of 100-byte records, whose bytes are random:
// a digest hashes them, whatever they are.
type BusyLog struct {
	rng    *rand.Rand
	size   int
	next   int64
	ts     int64
	ple    int32
	idem   []*producer
	txn    []*producer
	codecs decode.Codecs
	buf    []byte
	body   []byte
	// HeadersOnly makes Next return a data batch's 61-byte header alone.
	HeadersOnly bool
}

type producer struct {
	id      int64
	epoch   int16
	seq     int32
	txnLeft int
}

// NewBusyLog is the busy log of batches of size bytes, from seed.
func NewBusyLog(size int, seed uint64) *BusyLog {
	l := &BusyLog{rng: rand.New(rand.NewPCG(seed, 7)), size: max(size, 62), ts: T0, ple: 5}
	for i := range 16 {
		l.idem = append(l.idem, &producer{id: 4_000_000 + int64(i)*7919, epoch: int16(i % 3)})
	}
	for i := range 8 {
		l.txn = append(l.txn, &producer{id: 9_100_000_000 + int64(i)*104729})
	}
	l.body = make([]byte, l.size)
	for i := range l.body {
		l.body[i] = byte(l.rng.Uint32())
	}
	return l
}

// Next returns the next batch's bytes (valid until the next call) and
// whether it is a control batch (always whole).
func (l *BusyLog) Next() (raw []byte, control bool) {
	r := l.rng
	if r.IntN(2000) == 0 {
		l.ple++
	}
	l.ts += int64(r.IntN(5))
	for _, p := range l.txn {
		if p.txnLeft == 0 && p.seq > 0 && r.IntN(3) == 0 {
			p.txnLeft = -1
			typ := decode.ControlCommit
			if r.IntN(7) == 0 {
				typ = decode.ControlAbort
			}
			b, err := l.codecs.AppendBatch(l.buf[:0], decode.BatchSpec{BaseOffset: l.next, PartitionLeaderEpoch: l.ple, Transactional: true, Control: true,
				ProducerID: p.id, ProducerEpoch: p.epoch, BaseSequence: -1},
				[]decode.RecordSpec{{Timestamp: l.ts, Key: decode.AppendControlKey(nil, typ), Value: decode.AppendEndTxnMarkerValue(nil, 17)}})
			if err != nil {
				panic(err)
			}
			l.buf = b
			l.next++
			return b, true
		}
	}
	records := max(1, (l.size-61)/100)
	pid, epoch, seq, txn := int64(-1), int16(-1), int32(-1), false
	switch k := r.IntN(10); {
	case k == 0:
	case k < 7:
		p := l.idem[r.IntN(len(l.idem))]
		pid, epoch, seq = p.id, p.epoch, p.seq
		p.seq += int32(records)
	default:
		p := l.txn[r.IntN(len(l.txn))]
		if p.txnLeft <= 0 {
			p.txnLeft = 1 + r.IntN(4)
		}
		p.txnLeft--
		pid, epoch, seq, txn = p.id, p.epoch, p.seq, true
		p.seq += int32(records)
	}
	be := binary.BigEndian
	b := l.buf[:0]
	b = be.AppendUint64(b, uint64(l.next))
	b = be.AppendUint32(b, uint32(l.size-12))
	b = be.AppendUint32(b, uint32(l.ple))
	b = append(b, 2, 0, 0, 0, 0)
	attrs := uint16(r.IntN(5))
	if txn {
		attrs |= decode.AttrTransactional
	}
	b = be.AppendUint16(b, attrs)
	b = be.AppendUint32(b, uint32(records-1))
	b = be.AppendUint64(b, uint64(l.ts))
	span := int64(r.IntN(3))
	b = be.AppendUint64(b, uint64(l.ts+span))
	l.ts += span
	b = be.AppendUint64(b, uint64(pid))
	b = be.AppendUint16(b, uint16(epoch))
	b = be.AppendUint32(b, uint32(seq))
	b = be.AppendUint32(b, uint32(records))
	if !l.HeadersOnly {
		b = append(b, l.body[:l.size-61]...)
		be.PutUint32(b[17:], decode.CRC32C(b[21:]))
	}
	l.buf = b
	l.next += int64(records)
	return b, false
}

// Options shape a busy digest.
type Options struct {
	BatchSize int
	Batches   int64
	// SegmentBytes rolls a segment (1 GiB when 0).
	SegmentBytes int64
	Hash         digest.Hash
	Seed         uint64
	// HeadersOnly stands each data batch's hash in for the hash of its
	// bytes (an xxh3 of its header): the digest of a log too large to
	// write, read as fast as a real one.
	HeadersOnly bool
	Topic       string
	Partition   int32
}

// Write writes the digest of a busy log to w and returns the log's bytes.
func Write(w io.Writer, o Options) (logBytes int64, err error) {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 1 << 30
	}
	if o.Hash == 0 {
		o.Hash = digest.XXH3
	}
	if o.Topic == "" {
		o.Topic = "busy"
	}
	l := NewBusyLog(o.BatchSize, o.Seed+1)
	l.HeadersOnly = o.HeadersOnly
	b := digest.NewBuilder(w, digest.Partition{Topic: o.Topic, Partition: o.Partition, Dir: "/data/" + o.Topic + "-0",
		Taken: time.UnixMilli(T0), LogStartCheckpoint: -1}, o.Hash, "test")
	seg := o.SegmentBytes + 1
	var fake []byte
	for range o.Batches {
		raw, control := l.Next()
		size := int64(binary.BigEndian.Uint32(raw[8:])) + 12
		if seg+size > o.SegmentBytes {
			b.Segment(digest.SegmentInfo{Base: int64(binary.BigEndian.Uint64(raw)), Size: o.SegmentBytes, Modified: T0})
			seg = 0
		}
		switch {
		case control || !o.HeadersOnly:
			b.Batch(raw, true)
		default:
			v := xxh3.Hash128(raw).Bytes()
			fake = append(fake[:0], v[:]...)
			for len(fake) < o.Hash.Size() {
				fake = append(fake, v[:]...)
			}
			b.Header(raw, fake[:o.Hash.Size()])
		}
		seg += size
		logBytes += size
	}
	return logBytes, b.Close()
}

// CountWriter counts the bytes written to it, and keeps none.
type CountWriter struct{ N int64 }

func (c *CountWriter) Write(p []byte) (int, error) { c.N += int64(len(p)); return len(p), nil }
