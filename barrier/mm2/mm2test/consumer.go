package mm2test

import (
	"bytes"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// consumer reads a source partition as MM2's source consumer does:
// data records only (a consumer never returns control records), in
// offset order, from a position; under read_committed without the
// records of aborted transactions and not past the last stable offset.
type consumer struct {
	pd        *segment.PartitionDir
	aborted   map[int64][][2]int64
	lso       int64 // -1: none
	committed bool

	si   int
	lf   *segment.LogFile
	sc   *segment.Scanner
	dec  decode.Decoder
	buf  []Record
	pos  int64
	done bool
}

func openConsumer(dir string, readCommitted bool) (*consumer, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	c := &consumer{pd: pd, lso: -1, committed: readCommitted, si: -1}
	if readCommitted {
		if err := c.txns(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// txns finds the aborted transactions and the first offset of the oldest
// open one, from the markers (what the fetch's abortedTransactions and the
// LSO tell a read_committed consumer).
func (c *consumer) txns() error {
	c.aborted = map[int64][][2]int64{}
	open := map[int64]int64{}
	err := c.eachBatch(func(b *decode.Batch) error {
		if !b.IsTransactional() {
			return nil
		}
		if !b.IsControl() {
			if _, ok := open[b.ProducerID]; !ok {
				open[b.ProducerID] = b.BaseOffset
			}
			return nil
		}
		first, ok := open[b.ProducerID]
		if !ok {
			return nil
		}
		delete(open, b.ProducerID)
		r, err := c.dec.FirstRecord(b)
		if err != nil {
			return err
		}
		if _, t, err := decode.ParseControlKey(r.Key); err == nil && t == decode.ControlAbort {
			c.aborted[b.ProducerID] = append(c.aborted[b.ProducerID], [2]int64{first, b.BaseOffset})
		}
		return nil
	})
	for _, f := range open {
		if c.lso < 0 || f < c.lso {
			c.lso = f
		}
	}
	return err
}

func (c *consumer) eachBatch(fn func(b *decode.Batch) error) error {
	for _, s := range c.pd.Segments {
		if s.Log == "" {
			continue
		}
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			return err
		}
		sc := lf.Scanner(segment.ScanOptions{Path: s.Log})
		for sc.Next() {
			if err := fn(sc.Batch()); err != nil {
				sc.Close()
				lf.Close()
				return err
			}
		}
		sc.Close()
		lf.Close()
	}
	return nil
}

func (c *consumer) isAborted(b *decode.Batch) bool {
	for _, r := range c.aborted[b.ProducerID] {
		if r[0] <= b.BaseOffset && b.BaseOffset <= r[1] {
			return true
		}
	}
	return false
}

// seek moves the position (KafkaConsumer.seek): the next record returned
// is the first at or after offset.
func (c *consumer) seek(offset int64) {
	c.close()
	c.si, c.buf, c.pos, c.done = -1, nil, offset, false
}

// poll returns up to max records (max.poll.records), none at the end.
func (c *consumer) poll(max int) ([]Record, error) {
	for len(c.buf) < max && !c.done {
		if err := c.more(); err != nil {
			return nil, err
		}
	}
	n := min(max, len(c.buf))
	out := slices.Clone(c.buf[:n])
	c.buf = c.buf[n:]
	return out, nil
}

// more reads the next batch into buf.
func (c *consumer) more() error {
	for c.sc == nil {
		c.si++
		if c.si >= len(c.pd.Segments) {
			c.done = true
			return nil
		}
		s := c.pd.Segments[c.si]
		if s.Log == "" {
			continue
		}
		lf, err := segment.OpenLog(s.Log)
		if err != nil {
			return err
		}
		c.lf, c.sc = lf, lf.Scanner(segment.ScanOptions{Path: s.Log})
	}
	if !c.sc.Next() {
		err := c.sc.Err()
		c.close()
		return err
	}
	b := c.sc.Batch()
	if b.IsControl() || b.LastOffset() < c.pos || (c.committed && b.IsTransactional() && c.isAborted(b)) {
		return nil
	}
	return c.dec.Records(b, func(r *decode.Record) error {
		if r.Offset < c.pos || (c.lso >= 0 && r.Offset >= c.lso) {
			if c.lso >= 0 && r.Offset >= c.lso {
				c.done = true
			}
			return nil
		}
		rec := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, decode.Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)})
		}
		c.buf = append(c.buf, rec)
		c.pos = r.Offset + 1
		return nil
	})
}

func (c *consumer) close() {
	if c.sc != nil {
		c.sc.Close()
		c.lf.Close()
		c.sc, c.lf = nil, nil
	}
}
