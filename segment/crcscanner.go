package segment

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/kseg/kseg/decode"
)

// CRCScanner is a Scanner whose framing and CRC checks run on a second
// goroutine, ahead of the caller: a caller that consumes batches in log
// order (a producer-state replay, a lockstep comparison of two logs) then
// costs the CRC walk of the file rather than the walk plus its own work.
// Kafka's own loader does the two in one thread (LogSegment.recover calls
// batch.ensureValid() and then producerStateManager.update per batch); the
// order and the per-batch verdicts are the same, only the CPU they run on
// differs.
//
// Batches arrive in file order with the verdict of their CRC check
// (CRCValid), the same Tail and Err as the Scanner's. Work in flight is
// bounded (crcChunks chunks of at most crcChunkBytes), so memory stays
// flat whatever the file size. With one CPU (GOMAXPROCS=1) or a file
// smaller than a window it is a plain Scanner checking CRCs inline.
//
// With ScanOptions.Mmap the helper goroutine turns a memory fault (the
// file truncated under the scan) into Err; the caller's goroutine touches
// Batch().Raw too and must run with debug.SetPanicOnFault(true) as the
// Scanner's contract says.
type CRCScanner struct {
	// inline: no helper goroutine.
	sc       *Scanner
	checkCRC bool

	// pipelined
	out   chan []crcItem
	free  chan []crcItem
	stop  chan struct{}
	wg    sync.WaitGroup
	chunk []crcItem
	i     int

	cur     *crcItem
	inl     crcItem
	tail    Tail
	err     error
	closed  bool
	stopped bool // stop is closed
}

type crcItem struct {
	b   decode.Batch
	pos int64
	ok  bool
	win *Window
}

const (
	// crcChunkBytes and crcChunkBatches bound one hand-over from the
	// helper: large enough that the channel costs nothing per batch, small
	// enough that the caller starts early.
	crcChunkBytes   = 1 << 20
	crcChunkBatches = 256
	// crcChunks is how many chunks the helper may run ahead.
	crcChunks = 4
)

// CRCScanner starts a scan of the file whose batches' CRCs are checked
// ahead of the caller (when checkCRC; otherwise CRCValid is always true
// and the helper only frames).
func (l *LogFile) CRCScanner(opts ScanOptions, checkCRC bool) *CRCScanner {
	sc := l.Scanner(opts)
	c := &CRCScanner{sc: sc, checkCRC: checkCRC}
	if runtime.GOMAXPROCS(0) < 2 || sc.end-sc.pos <= int64(sc.src.windowLen()) {
		return c
	}
	c.out = make(chan []crcItem, crcChunks)
	c.free = make(chan []crcItem, crcChunks+2)
	c.stop = make(chan struct{})
	c.wg.Add(1)
	go c.run()
	return c
}

// run is the helper goroutine: frame, check, hand over in chunks.
func (c *CRCScanner) run() {
	defer c.wg.Done()
	defer close(c.out)
	sc := c.sc
	var chunk []crcItem
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			c.err = fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", sc.path, e)
			releaseItems(chunk)
			sc.Close()
		}
	}()
	debug.SetPanicOnFault(true)
	chunk = c.newChunk()
	var n int64
	for sc.Next() {
		b := sc.Batch()
		w := sc.Window()
		w.Retain()
		chunk = append(chunk, crcItem{b: *b, pos: sc.Pos(), ok: !c.checkCRC || b.CRCValid(), win: w})
		n += b.Size()
		if n < crcChunkBytes && len(chunk) < crcChunkBatches {
			continue
		}
		select {
		case c.out <- chunk:
		case <-c.stop:
			releaseItems(chunk)
			sc.Close()
			return
		}
		chunk, n = c.newChunk(), 0
	}
	if len(chunk) > 0 {
		select {
		case c.out <- chunk:
		case <-c.stop:
			releaseItems(chunk)
			return
		}
	}
	// Written before close(c.out), which the caller waits for.
	c.tail, c.err = sc.Tail(), sc.Err()
}

func (c *CRCScanner) newChunk() []crcItem {
	select {
	case ch := <-c.free:
		return ch[:0]
	default:
		return make([]crcItem, 0, crcChunkBatches)
	}
}

func releaseItems(items []crcItem) {
	for i := range items {
		items[i].win.Release()
		items[i].win = nil
	}
}

// Next advances to the next batch; false at the end of the scanned range,
// on damage or on an I/O error (see Tail and Err).
func (c *CRCScanner) Next() bool {
	if c.out == nil {
		if c.closed || !c.sc.Next() {
			c.cur = nil
			return false
		}
		b := c.sc.Batch()
		c.inl = crcItem{b: *b, pos: c.sc.Pos(), ok: !c.checkCRC || b.CRCValid()}
		c.cur = &c.inl
		return true
	}
	c.releaseCur()
	for c.i >= len(c.chunk) {
		if c.chunk != nil {
			select {
			case c.free <- c.chunk:
			default:
			}
			c.chunk = nil
		}
		if c.closed {
			return false
		}
		ch, ok := <-c.out
		if !ok {
			c.closed = true
			return false
		}
		c.chunk, c.i = ch, 0
	}
	c.cur = &c.chunk[c.i]
	c.i++
	return true
}

func (c *CRCScanner) releaseCur() {
	if c.cur != nil && c.cur.win != nil {
		c.cur.win.Release()
		c.cur.win = nil
	}
	c.cur = nil
}

// Batch is the current batch; its Raw is valid until the next call to
// Next (or Close).
func (c *CRCScanner) Batch() *decode.Batch { return &c.cur.b }

// Pos is the file position of the current batch.
func (c *CRCScanner) Pos() int64 { return c.cur.pos }

// CRCValid is the current batch's CRC verdict (Batch.CRCValid).
func (c *CRCScanner) CRCValid() bool { return c.cur.ok }

// Tail describes how the scan ended; valid once Next has returned false
// and Err is nil.
func (c *CRCScanner) Tail() Tail {
	if c.out == nil {
		return c.sc.Tail()
	}
	return c.tail
}

// Err is the I/O error (or memory fault) that stopped the scan, if any.
func (c *CRCScanner) Err() error {
	if c.out == nil {
		return c.sc.Err()
	}
	return c.err
}

// Close stops the helper and releases every window; needed for a scan
// abandoned midway, harmless after the end. Safe to call more than once.
func (c *CRCScanner) Close() {
	if c.out == nil {
		c.closed = true
		c.sc.Close()
		return
	}
	c.releaseCur()
	if c.chunk != nil {
		releaseItems(c.chunk[c.i:])
		c.chunk = nil
	}
	if !c.stopped {
		c.stopped = true
		close(c.stop)
		for ch := range c.out {
			releaseItems(ch)
		}
		c.wg.Wait()
	}
	c.closed = true
}
