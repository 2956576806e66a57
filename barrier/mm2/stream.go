package mm2

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// item is one data record as the comparison sees it: what MM2 copies of
// it (MirrorSourceTask.convertRecord keeps the key, the value, the headers
// in order and the timestamp) reduced to a hash, and where it is.
type item struct {
	h   uint64 // key, value and headers (contentHash)
	ts  int64
	off int64
	// holes counts the offsets in [log start, off) that hold no record
	// (data or control): what the log cleaner removed.
	holes int64
	rank  int64 // ordinal among the stream's items
	flags uint8
}

const (
	// flagNoTimestamp: a source record without a timestamp (magic 0,
	// RecordBatch.NO_TIMESTAMP): WorkerSourceTask hands the producer null
	// (ConnectUtils.checkAndConvertTimestamp), which stamps its own clock.
	flagNoTimestamp uint8 = 1 << iota
	// flagLogAppendTime: a record of a LogAppendTime batch: its broker
	// replaced the timestamp its producer sent.
	flagLogAppendTime
)

// comparableTS reports whether a copy's timestamp must equal its
// source's: MM2 produces with the source record's timestamp
// (SourceRecord.timestamp), unless the source had none or the target's
// broker stamped its own.
func comparableTS(src, tgt *item) bool {
	return (src.flags&flagNoTimestamp) == 0 && (tgt.flags&flagLogAppendTime) == 0
}

// streamConfig says which records of a partition a stream yields.
type streamConfig struct {
	dir      string
	pd       *segment.PartitionDir
	logStart int64
	// from: yield the records at or after this offset only (a far scan
	// starts after the window); prevOff and prevHoles are the offset and
	// holes of the record before from (logStart-1 and 0 from the start).
	from, prevOff, prevHoles int64
	// rank is the rank of the first record yielded.
	rank int64
	// stop: yield the records below this offset only (-1: all), the
	// last stable offset under read_committed.
	stop int64
	// aborted: leave out the records of these aborted transactions.
	aborted abortedSet
	// txns, when set, finds the transactions' fates (aborted, and under
	// read_committed the last stable offset) the first time a
	// transactional batch is met: most partitions have none, and so pay
	// nothing for them.
	txns func() (txnState, error)
	// readCommitted: stop at the last stable offset txns finds.
	readCommitted bool
	// logAppendTimeIsReplaced: flag LogAppendTime records (the target's).
	logAppendTimeIsReplaced bool
	// findings: report damage (the main stream of each side; far scans
	// read the same bytes again and do not).
	findings bool
	progress func(int64)
}

// chunk is a slice of a stream handed from its reading goroutine to the
// comparison.
type chunk struct {
	items []item
	finds []finding.Finding
}

const chunkItems = 4096

// streamStats are a stream's counts, complete once it has ended.
type streamStats struct {
	records, control, aborted, uncommitted, logAppendTime, noTimestamp int64
	logEnd, holes                                                      int64
	// lastStable is the last stable offset the stream stopped at (-1).
	lastStable int64
}

// stream yields the data records of a partition directory in log order,
// as MM2's consumer sees them, read and hashed on a goroutine of its own
// (each batch's CRC checked there too, right before its records are
// read: one trip of its bytes through the cache, where a helper
// goroutine checking CRCs ahead costs more CPU than it saves on two
// cores already busy with both sides) ahead of the comparison.
type stream struct {
	cfg   streamConfig
	ch    chan *chunk
	free  chan *chunk
	stop  chan struct{}
	cur   *chunk
	i     int
	stats streamStats // written by the goroutine before it closes ch
	err   error       // likewise
	finds []finding.Finding
	ended bool
	// drained is closed when drainAsync is done (nil without it).
	drained chan struct{}
}

func openStream(cfg streamConfig) *stream {
	s := &stream{cfg: cfg, ch: make(chan *chunk, 4), free: make(chan *chunk, 6), stop: make(chan struct{})}
	go s.run()
	return s
}

// next returns the next record, nil at the end (then err and stats are
// set).
func (s *stream) next() *item {
	for s.cur == nil || s.i >= len(s.cur.items) {
		if s.cur != nil {
			select {
			case s.free <- s.cur:
			default:
			}
			s.cur = nil
		}
		c, ok := <-s.ch
		if !ok {
			s.ended = true
			return nil
		}
		s.finds = append(s.finds, c.finds...)
		s.cur, s.i = c, 0
	}
	it := &s.cur.items[s.i]
	s.i++
	return it
}

// close stops the goroutine and waits for it.
func (s *stream) close() {
	close(s.stop)
	for range s.ch {
	}
	s.ended = true
}

// drainAsync reads the rest of the stream on a goroutine, for its counts
// and findings only (wait collects them): the first stream of a side
// counts the whole log even when a far scan took over from it.
func (s *stream) drainAsync() {
	s.drained = make(chan struct{})
	go func() {
		defer close(s.drained)
		for c := range s.ch {
			s.finds = append(s.finds, c.finds...)
		}
		s.ended = true
	}()
}

// wait waits for drainAsync (nothing when the stream was not drained so).
func (s *stream) wait() {
	if s.drained != nil {
		<-s.drained
	}
}

// reader is the state of a stream's goroutine.
type reader struct {
	s     *stream
	c     *chunk
	dec   decode.Decoder
	prev  int64 // offset of the last record seen (data or control)
	holes int64
	rank  int64
	st    streamStats
	fast  []fastRecord
	buf   []byte // contentHash's
	// txnsRead: cfg.txns has run.
	txnsRead bool
}

func (s *stream) run() {
	r := &reader{s: s, prev: s.cfg.prevOff, holes: s.cfg.prevHoles, rank: s.cfg.rank}
	r.st.logEnd, r.st.lastStable = -1, s.cfg.stop
	defer close(s.ch)
	err := r.readMapped()
	if err == nil {
		r.st.holes = r.holes
		if r.st.logEnd > r.prev+1 {
			r.st.holes += r.st.logEnd - r.prev - 1
		}
	}
	r.flush()
	s.stats, s.err = r.st, err
}

// errStopped ends a stream closed before its end.
var errStopped = errors.New("stopped")

// readMapped reads the segments mapped (no copy out of the page cache):
// one truncated under the read faults, which becomes an error instead of
// a crash.
func (r *reader) readMapped() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			err = fmt.Errorf("%s changed while it was read (truncated by a broker?): %v", r.s.cfg.dir, e)
		}
	}()
	for i, seg := range r.s.cfg.pd.Segments {
		if seg.Log == "" {
			continue
		}
		// Start in the last segment whose base is at or below from.
		if j := nextLog(r.s.cfg.pd.Segments, i); j >= 0 && r.s.cfg.pd.Segments[j].BaseOffset <= r.s.cfg.from {
			continue
		}
		if err := r.segment(seg); err != nil {
			if errors.Is(err, errStopped) {
				return nil
			}
			return err
		}
	}
	return nil
}

// nextLog is the index of the next segment after i with a .log, or -1.
func nextLog(segs []segment.SegmentFiles, i int) int {
	for j := i + 1; j < len(segs); j++ {
		if segs[j].Log != "" {
			return j
		}
	}
	return -1
}

func (r *reader) segment(seg segment.SegmentFiles) error {
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Path: seg.Log, Mmap: true})
	defer sc.Close()
	file := filepath.Base(seg.Log)
	var told int64
	for sc.Next() {
		b := sc.Batch()
		r.st.logEnd = max(r.st.logEnd, b.NextOffset())
		if p := r.s.cfg.progress; p != nil {
			if told += b.Size(); told >= 1<<20 {
				p(told)
				told = 0
			}
		}
		if b.LastOffset() < r.s.cfg.from && b.LastOffset() < r.s.cfg.logStart {
			continue
		}
		if r.s.cfg.findings && !b.CRCValid() {
			r.report(finding.CRCMismatch, b.BaseOffset, file, sc.Pos(),
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored %d, computed %d; its records are compared as they are",
					file, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC()))
		}
		if err := r.batch(b, file, sc.Pos()); err != nil {
			return err
		}
	}
	if p := r.s.cfg.progress; p != nil && told > 0 {
		p(told)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return r.tail(sc.Tail(), file)
}

// tail reports a segment's damaged tail: the log ends there for a broker
// (LogSegment.recover truncates it), and so does the comparison.
func (r *reader) tail(t segment.Tail, file string) error {
	kind := finding.CorruptBatch
	switch t.Kind {
	case segment.TailClean, segment.TailZeroFilled:
		return nil
	case segment.TailTornHeader, segment.TailTornBatch:
		kind = finding.TornTail
	}
	msg := fmt.Sprintf("%s: %d bytes from position %d do not frame a batch; a broker truncates them", file, t.InvalidBytes(), t.ValidBytes)
	if t.Err != nil {
		msg = fmt.Sprintf("%s (validBytes %d); a broker truncates them", t.Err.Error(), t.ValidBytes)
	}
	r.report(kind, r.prev+1, file, t.ValidBytes, msg)
	return nil
}

func (r *reader) report(k finding.Kind, offset int64, file string, pos int64, msg string) {
	if !r.s.cfg.findings {
		return
	}
	f := finding.New(k, msg)
	f.PartitionDir, f.File, f.Position, f.Offset = r.s.cfg.dir, file, pos, offset
	r.chunk().finds = append(r.c.finds, f)
}

// batch yields the records of one batch the consumer would return.
func (r *reader) batch(b *decode.Batch, file string, pos int64) error {
	cfg := &r.s.cfg
	if b.IsTransactional() && cfg.txns != nil && !r.txnsRead {
		r.txnsRead = true
		st, err := cfg.txns()
		if err != nil {
			return err
		}
		cfg.aborted = st.aborted
		if cfg.readCommitted {
			cfg.stop, r.st.lastStable = st.firstOpen, st.firstOpen
		}
	}
	control := b.IsControl()
	skip := !control && b.IsTransactional() && cfg.aborted.has(b.ProducerID, b.BaseOffset)
	lat := cfg.logAppendTimeIsReplaced && b.TimestampType() == decode.LogAppendTime
	var ok bool
	if r.fast, ok = parseFast(b, r.fast); ok {
		for i := range r.fast {
			f := &r.fast[i]
			if !r.take(f.off, control, skip) {
				continue
			}
			if err := r.yield(mapHash(f.content), f.ts, f.off, lat); err != nil {
				return err
			}
		}
		return nil
	}
	err := r.dec.Records(b, func(rec *decode.Record) error {
		if !r.take(rec.Offset, control, skip) {
			return nil
		}
		return r.yield(contentHash(rec, &r.buf), rec.Timestamp, rec.Offset, lat)
	})
	if err != nil {
		if errors.Is(err, errStopped) {
			return err
		}
		r.report(finding.CorruptRecords, b.BaseOffset, file, pos,
			fmt.Sprintf("%s: batch at position %d (baseOffset %d): %v; its remaining records are skipped", file, pos, b.BaseOffset, err))
	}
	return nil
}

// take takes one record of a batch, by its offset and whether its batch
// is a control batch or an aborted transaction's: true when the stream
// yields it (then yield must follow, with its content hash: hashed only
// for a record yielded), else it is counted or passed over.
func (r *reader) take(off int64, control, skip bool) bool {
	cfg := &r.s.cfg
	if off < cfg.logStart || off <= r.prev {
		return false
	}
	r.holes += off - r.prev - 1
	r.prev = off
	switch {
	case off < cfg.from:
		return false
	case control:
		r.st.control++
		return false
	case cfg.stop >= 0 && off >= cfg.stop:
		r.st.uncommitted++
		return false
	case skip:
		r.st.aborted++
		return false
	}
	return true
}

// yield hands over the record take accepted.
func (r *reader) yield(h uint64, ts, off int64, lat bool) error {
	c := r.chunk()
	c.items = append(c.items, item{h: h, ts: ts, off: off, holes: r.holes, rank: r.rank})
	it := &c.items[len(c.items)-1]
	r.rank++
	r.st.records++
	if lat {
		it.flags |= flagLogAppendTime
		r.st.logAppendTime++
	}
	if ts == decode.NoTimestamp {
		it.flags |= flagNoTimestamp
		r.st.noTimestamp++
	}
	if len(c.items) == chunkItems {
		return r.flush()
	}
	return nil
}

func (r *reader) chunk() *chunk {
	if r.c == nil {
		select {
		case r.c = <-r.s.free:
			r.c.items, r.c.finds = r.c.items[:0], nil
		default:
			r.c = &chunk{items: make([]item, 0, chunkItems)}
		}
	}
	return r.c
}

// flush hands the chunk over; errStopped when the stream was closed.
func (r *reader) flush() error {
	if r.c == nil {
		return nil
	}
	select {
	case r.s.ch <- r.c:
		r.c = nil
		return nil
	case <-r.s.stop:
		r.c = nil
		return errStopped
	}
}
