package segtest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Large segments for benchmarks. Fixtures above are small and hand-made;
// these are big and statistical: what a busy topic looks like after a day.
// The content is a mix a broker sees in production:
//
//	tiny     50-200 records of 40-90 bytes (metrics, sensor readings), null keys now and then
//	events   5-40 JSON documents of 0.3-3 KiB with 1-3 headers, a tombstone now and then
//	large    1-3 records of about 100 KiB (half text, half incompressible bytes)
//	markers  COMMIT / ABORT control batches ending transactions
//
// from non-idempotent producers (producerId -1), 16 idempotent producers
// and 8 transactional ones whose transactions span 1-4 batches and end
// with a COMMIT (85%) or an ABORT. Sequences continue per producer, so a
// producer-state replay sees no anomaly.
//
// Speed: encoding and compressing every batch would take minutes per GiB,
// so a pool of batches is encoded once per (kind, codec) and each batch
// written is a copy of one with its header re-stamped: baseOffset and
// partitionLeaderEpoch (outside the CRC) and producerId, producerEpoch,
// baseSequence, the transactional bit and the timestamps (inside it, so
// the CRC-32C is recomputed). One GiB takes a few seconds.

// LargeOptions configure LargeSegment and LogDir.
type LargeOptions struct {
	// Codecs are the codecs batches are compressed with, one picked per
	// batch uniformly at random; empty means all five (none, gzip, snappy,
	// lz4, zstd).
	Codecs []decode.Compression
	// Seed fixes the content: the same seed, size and codecs give the same
	// bytes.
	Seed uint64
	// StartOffset is the baseOffset of the first batch.
	StartOffset int64
	// NoLarge leaves out the batches of 100 KiB records (LogDir does for
	// partitions under 1 MiB).
	NoLarge bool
}

// LargeStats count what was written.
type LargeStats struct {
	Bytes          int64
	Batches        int64
	Records        int64
	ControlBatches int64
	Commits        int64
	Aborts         int64
	// NextOffset is the offset after the last record (the log end offset).
	NextOffset int64
	// BatchesByCodec counts data batches per codec.
	BatchesByCodec map[decode.Compression]int64
}

// LargeSegmentFile writes LargeSegment(size, opts) as the first segment of
// dir (00000000000000000000.log, which must not exist yet), creating dir,
// and returns the file's path.
func LargeSegmentFile(dir string, size int64, opts LargeOptions) (string, LargeStats, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", LargeStats{}, err
	}
	path := filepath.Join(dir, segment.SegmentFileName(0, segment.LogSuffix))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", LargeStats{}, err
	}
	st, err := LargeSegment(f, size, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, st, err
}

// LargeSegment writes v2 batches to w until at least size bytes are
// written, then closes the transactions still open with COMMIT markers, so
// the result is a little over size. w gets large writes (it is buffered
// here).
func LargeSegment(w io.Writer, size int64, opts LargeOptions) (LargeStats, error) {
	bw := bufio.NewWriterSize(w, 4<<20)
	lg, err := newLargeGen(opts)
	if err != nil {
		return LargeStats{}, err
	}
	err = lg.run(size, func(b []byte) error {
		_, err := bw.Write(b)
		return err
	})
	if err != nil {
		return lg.stats, err
	}
	return lg.stats, bw.Flush()
}

// LogDir writes a log directory of n partitions, bench-0 … bench-(n-1),
// each of about size bytes of LargeSegment content (seed opts.Seed+i;
// without 100 KiB records below 1 MiB) appended the way a broker appends
// it: segments of at most max(size/2, 1 MiB) with their .index and
// .timeindex, a .txnindex where a transaction aborted, a producer
// snapshot at every roll and at the end, leader-epoch-checkpoint and
// partition.metadata.
func LogDir(dir string, n int, size int64, opts LargeOptions) error {
	g := &gen{}
	o := opts
	o.NoLarge = o.NoLarge || size < 1<<20
	pool, err := newLargeGen(o) // one pool of batches for every partition
	if err != nil {
		return err
	}
	for i := range n {
		if err := writePartition(g, pool, filepath.Join(dir, fmt.Sprintf("bench-%d", i)), size, max(size/2, 1<<20), byte(1+i%200), opts.Seed+uint64(i)+1); err != nil {
			return err
		}
	}
	return nil
}

// Partition writes one partition directory, dir, of about size bytes of
// LargeSegment content appended the way a broker appends it, rolling a
// segment whenever the next batch would take it beyond segmentBytes: a
// partition of many segments (each with its indexes, a producer snapshot
// at every roll) such as a mirror into many destination segments writes.
// 100 KiB records are left out, so that a segment holds several batches.
func Partition(dir string, size, segmentBytes int64, opts LargeOptions) error {
	o := opts
	o.NoLarge = true
	pool, err := newLargeGen(o)
	if err != nil {
		return err
	}
	return writePartition(&gen{}, pool, dir, size, segmentBytes, 1, opts.Seed+1)
}

// writePartition appends about size bytes of the pool's batches (forked
// with seed) to a new partition directory dir, as LogDir describes.
func writePartition(g *gen, pool *largeGen, dir string, size, segmentBytes int64, topic byte, seed uint64) error {
	p, err := g.open(dir, partitionOpts{segmentBytes: segmentBytes, indexInterval: 4096, topic: topic, snapshots: true, noSync: true})
	if err != nil {
		return err
	}
	lg := pool.fork(seed)
	lg.stats.NextOffset = p.next
	err = lg.run(size, func(b []byte) error {
		p.raw(b)
		return p.err
	})
	if err != nil {
		_ = p.app.Close()
		return err
	}
	return p.close()
}

type largeKind int

const (
	kindTiny largeKind = iota
	kindEvents
	kindLarge
	numKinds
)

// template is an encoded batch to be re-stamped; count is its records.
type template struct {
	raw   []byte
	count int32
	span  int64 // maxTimestamp - baseTimestamp
}

type largeProducer struct {
	id       int64
	epoch    int16
	seq      int32
	inTxn    bool
	txnLeft  int // batches left in the open transaction
	isTxnPID bool
}

type largeGen struct {
	rng     *rand.Rand
	noLarge bool
	codecs  []decode.Compression
	pool    [numKinds][][]template // [kind][codec index][variant]
	markers [2]template            // COMMIT, ABORT
	idem    []*largeProducer
	txn     []*largeProducer
	buf     []byte
	ple     int32 // partitionLeaderEpoch: 5, then 6 from 60% of the size on
	next    int64
	ts      int64
	stats   LargeStats
	emit    func([]byte) error // where run's batches go
}

const largeVariants = 6

func newLargeGen(opts LargeOptions) (*largeGen, error) {
	codecs := opts.Codecs
	if len(codecs) == 0 {
		codecs = []decode.Compression{none, gzip, snappy, lz4, zstd}
	}
	for _, c := range codecs {
		if !c.Valid() {
			return nil, fmt.Errorf("invalid codec %d", c)
		}
	}
	lg := &largeGen{
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x6b736567)),
		noLarge: opts.NoLarge,
		codecs:  codecs,
		next:    opts.StartOffset,
		ts:      T0,
		ple:     5,
		stats:   LargeStats{NextOffset: opts.StartOffset, BatchesByCodec: map[decode.Compression]int64{}},
	}
	var c decode.Codecs
	for k := range numKinds {
		lg.pool[k] = make([][]template, len(codecs))
		for ci, codec := range codecs {
			for range largeVariants {
				recs := lg.records(k)
				raw, err := c.AppendBatch(nil, decode.BatchSpec{Compression: codec, BaseSequence: 0}, recs)
				if err != nil {
					return nil, err
				}
				lg.pool[k][ci] = append(lg.pool[k][ci], template{raw: raw, count: int32(len(recs)),
					span: recs[len(recs)-1].Timestamp - recs[0].Timestamp})
			}
		}
	}
	for i, t := range []decode.ControlType{decode.ControlCommit, decode.ControlAbort} {
		raw, err := c.AppendBatch(nil, decode.BatchSpec{Transactional: true, Control: true, BaseSequence: -1},
			[]decode.RecordSpec{{Timestamp: T0, Key: decode.AppendControlKey(nil, t), Value: decode.AppendEndTxnMarkerValue(nil, 3)}})
		if err != nil {
			return nil, err
		}
		lg.markers[i] = template{raw: raw, count: 1}
	}
	for i := range 16 {
		lg.idem = append(lg.idem, &largeProducer{id: 1000 + int64(i), epoch: int16(i % 3)})
	}
	for i := range 8 {
		lg.txn = append(lg.txn, &largeProducer{id: 5000 + int64(i), epoch: int16(i % 2), isTxnPID: true})
	}
	return lg, nil
}

// fork is a generator over the same pool of batches with its own seed and
// a fresh log: offsets from 0, producers at sequence 0.
func (lg *largeGen) fork(seed uint64) *largeGen {
	f := &largeGen{rng: rand.New(rand.NewPCG(seed, 0x6b736567)), noLarge: lg.noLarge, codecs: lg.codecs,
		pool: lg.pool, markers: lg.markers, ple: 5, ts: T0,
		stats: LargeStats{BatchesByCodec: map[decode.Compression]int64{}}}
	for _, p := range lg.idem {
		f.idem = append(f.idem, &largeProducer{id: p.id, epoch: p.epoch})
	}
	for _, p := range lg.txn {
		f.txn = append(f.txn, &largeProducer{id: p.id, epoch: p.epoch, isTxnPID: true})
	}
	return f
}

// words are the vocabulary of generated text.
var words = strings.Fields(`order shipped pending cancelled refund customer account payment card
invoice warehouse berlin paris tokyo lisbon express standard priority item quantity price discount
coupon session click view cart checkout mobile desktop android ios chrome firefox region europe asia
the a of to and in for with on at from by status update created deleted retry timeout error ok`)

func (lg *largeGen) text(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, words[lg.rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b[:n]
}

// records makes the records of one pooled batch of the given kind.
func (lg *largeGen) records(k largeKind) []decode.RecordSpec {
	r := lg.rng
	var recs []decode.RecordSpec
	ts := T0
	switch k {
	case kindTiny:
		n := 50 + r.IntN(151)
		for j := range n {
			ts += int64(r.IntN(3))
			var key []byte
			if r.IntN(10) != 0 {
				key = fmt.Appendf(nil, "sensor-%04d", r.IntN(5000))
			}
			v := fmt.Appendf(nil, `{"s":%d,"t":%d,"v":%d.%02d,"u":"%s"}`, r.IntN(5000), ts, r.IntN(400)-100, r.IntN(100),
				[...]string{"C", "kPa", "rpm", "%"}[r.IntN(4)])
			recs = append(recs, decode.RecordSpec{OffsetDelta: int32(j), Timestamp: ts, Key: key, Value: v})
		}
	case kindEvents:
		n := 5 + r.IntN(36)
		for j := range n {
			ts += int64(r.IntN(20))
			key := fmt.Appendf(nil, "customer-%06d", r.IntN(1_000_000))
			var v []byte
			if r.IntN(30) != 0 {
				v = fmt.Appendf(nil, `{"orderId":"%016x","customer":"%s","status":"%s","items":[`, r.Uint64(), key,
					[...]string{"created", "paid", "shipped", "delivered", "cancelled"}[r.IntN(5)])
				for it := range 1 + r.IntN(12) {
					if it > 0 {
						v = append(v, ',')
					}
					v = fmt.Appendf(v, `{"sku":"SKU-%05d","qty":%d,"price":%d.%02d}`, r.IntN(100000), 1+r.IntN(9), r.IntN(500), r.IntN(100))
				}
				v = append(v, `],"note":"`...)
				v = lg.text(v, len(v)+200+r.IntN(1500))
				v = append(v, `"}`...)
			}
			hs := []decode.Header{{Key: []byte("trace-id"), Value: fmt.Appendf(nil, "%032x", r.Uint64())}}
			if r.IntN(2) == 0 {
				hs = append(hs, decode.Header{Key: []byte("content-type"), Value: []byte("application/json")})
			}
			if r.IntN(5) == 0 {
				hs = append(hs, decode.Header{Key: []byte("retry"), Value: nil})
			}
			recs = append(recs, decode.RecordSpec{OffsetDelta: int32(j), Timestamp: ts, Key: key, Value: v, Headers: hs})
		}
	case kindLarge:
		n := 1 + r.IntN(3)
		for j := range n {
			ts += int64(r.IntN(50))
			v := make([]byte, 0, 100<<10+4096)
			v = lg.text(v, 50<<10+r.IntN(2048))
			blob := make([]byte, 50<<10+r.IntN(2048))
			for i := 0; i+8 <= len(blob); i += 8 {
				binary.LittleEndian.PutUint64(blob[i:], r.Uint64())
			}
			v = append(v, blob...)
			recs = append(recs, decode.RecordSpec{OffsetDelta: int32(j), Timestamp: ts, Key: fmt.Appendf(nil, "blob-%d", r.IntN(1000)), Value: v,
				Headers: []decode.Header{{Key: []byte("content-type"), Value: []byte("application/octet-stream")}}})
		}
	}
	return recs
}

// stamp copies t into lg.buf with a new header and CRC.
func (lg *largeGen) stamp(t *template, pid int64, epoch int16, seq int32, txn bool) []byte {
	b := append(lg.buf[:0], t.raw...)
	lg.buf = b
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(lg.next))
	be.PutUint32(b[12:], uint32(lg.ple))
	attrs := be.Uint16(b[21:])
	if txn {
		attrs |= decode.AttrTransactional
	} else {
		attrs &^= decode.AttrTransactional
	}
	be.PutUint16(b[21:], attrs)
	be.PutUint64(b[27:], uint64(lg.ts))
	be.PutUint64(b[35:], uint64(lg.ts+t.span))
	be.PutUint64(b[43:], uint64(pid))
	be.PutUint16(b[51:], uint16(epoch))
	be.PutUint32(b[53:], uint32(seq))
	be.PutUint32(b[17:], decode.CRC32C(b[21:]))
	lg.ts += t.span + int64(lg.rng.IntN(4))
	lg.next += int64(t.count)
	return b
}

// run emits batches until size bytes have gone out, then closes open
// transactions.
func (lg *largeGen) run(size int64, emit func([]byte) error) error {
	lg.emit = emit
	for lg.stats.Bytes < size {
		if lg.stats.Bytes >= size/5*3 {
			lg.ple = 6 // a leader change
		}
		var err error
		switch r := lg.rng.IntN(100); {
		case r < 30:
			err = lg.data(kindTiny, nil, false)
		case r < 45:
			err = lg.data(kindTiny, lg.idem[lg.rng.IntN(len(lg.idem))], false)
		case r < 70:
			err = lg.data(kindEvents, lg.idem[lg.rng.IntN(len(lg.idem))], false)
		case r < 95:
			p := lg.txn[lg.rng.IntN(len(lg.txn))]
			if !p.inTxn {
				p.inTxn, p.txnLeft = true, 1+lg.rng.IntN(4)
			}
			k := kindEvents
			if lg.rng.IntN(3) == 0 {
				k = kindTiny
			}
			if err = lg.data(k, p, true); err == nil {
				if p.txnLeft--; p.txnLeft == 0 {
					err = lg.marker(p, lg.rng.IntN(100) < 85)
				}
			}
		default:
			k := kindLarge
			if lg.noLarge {
				k = kindEvents
			}
			err = lg.data(k, lg.idem[lg.rng.IntN(len(lg.idem))], false)
		}
		if err != nil {
			return err
		}
	}
	for _, p := range lg.txn {
		if p.inTxn {
			if err := lg.marker(p, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// out emits the batch b of count records and counts it.
func (lg *largeGen) out(b []byte, count int32, control bool) error {
	if err := lg.emit(b); err != nil {
		return err
	}
	lg.stats.Bytes += int64(len(b))
	lg.stats.Batches++
	lg.stats.Records += int64(count)
	lg.stats.NextOffset = lg.next
	if control {
		lg.stats.ControlBatches++
	} else {
		lg.stats.BatchesByCodec[decode.Compression(b[22]&decode.AttrCompressionMask)]++
	}
	return nil
}

// data emits a data batch of kind k, of producer p (nil: none), in p's
// transaction when txn.
func (lg *largeGen) data(k largeKind, p *largeProducer, txn bool) error {
	vs := lg.pool[k][lg.rng.IntN(len(lg.codecs))]
	t := &vs[lg.rng.IntN(len(vs))]
	pid, epoch, seq := int64(-1), int16(-1), int32(-1)
	if p != nil {
		pid, epoch, seq = p.id, p.epoch, p.seq
		p.seq = decode.IncrementSequence(p.seq, t.count)
	}
	return lg.out(lg.stamp(t, pid, epoch, seq, txn), t.count, false)
}

// marker ends p's transaction with a COMMIT or an ABORT marker.
func (lg *largeGen) marker(p *largeProducer, commit bool) error {
	t := &lg.markers[1]
	if commit {
		t = &lg.markers[0]
		lg.stats.Commits++
	} else {
		lg.stats.Aborts++
	}
	p.inTxn = false
	return lg.out(lg.stamp(t, p.id, p.epoch, -1, true), 1, true)
}
