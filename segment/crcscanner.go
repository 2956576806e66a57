package segment

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/kseg/kseg/decode"
)

// CRCScanner is a Scanner whose CRC checks are shared between a second
// goroutine and the caller's, ahead of the caller: a caller that consumes
// batches in log order (a producer-state replay, a lockstep comparison of
// two logs) then costs about half the CRC walk of the file on two cores,
// rather than the walk plus its own work. Kafka's own loader does the two
// in one thread (LogSegment.recover calls batch.ensureValid() and then
// producerStateManager.update per batch); the order and the per-batch
// verdicts are the same, only the CPU they run on differs.
//
// The helper goroutine frames the file into chunks (at most crcChunkBytes
// or crcChunkBatches each) and queues them in file order, at most
// crcChunks ahead of the caller; each chunk's CRCs are checked by whichever
// goroutine claims it first. The helper frames while the queue has room
// and checks the oldest unclaimed chunk when it is full; the caller, when
// the chunk it needs next is unclaimed, checks it itself, and while the
// helper is still on it, checks the youngest unclaimed one rather than
// wait. The caller's own work (the
// state machine) is usually the lighter half, so it takes the CRCs the
// helper has no time for.
//
// Batches arrive in file order with the verdict of their CRC check
// (CRCValid), the same Tail and Err as the Scanner's. Memory stays flat
// whatever the file size. With one CPU (GOMAXPROCS=1) or a file smaller
// than a window it is a plain Scanner checking CRCs inline.
//
// With ScanOptions.Mmap the helper goroutine turns a memory fault (the
// file truncated under the scan) into Err; the caller's goroutine touches
// Batch().Raw and checks CRCs too, and must run with
// debug.SetPanicOnFault(true) as the Scanner's contract says.
type CRCScanner struct {
	sc       *Scanner
	checkCRC bool
	inline   bool
	inl      crcItem
	closed   bool

	// pipelined: the queue, shared with the helper under mu.
	mu      sync.Mutex
	ready   *sync.Cond // the caller waits: a chunk queued or checked, or the end
	room    *sync.Cond // the helper waits: room in the queue, or the stop
	queue   []*crcChunk
	free    []*crcChunk
	ended   bool // the helper has queued its last chunk; tail and err are set
	stopped bool // Close asked the helper to stop
	wg      sync.WaitGroup
	tail    Tail
	err     error

	chunk *crcChunk // the caller's, taken off the queue
	i     int
	cur   *crcItem
}

type crcItem struct {
	b   decode.Batch
	pos int64
	ok  bool
	win *Window
}

// A crcChunk is a run of framed batches and where its CRC checks stand.
type crcChunk struct {
	items []crcItem
	state int
}

// Chunk states.
const (
	chunkQueued  = iota // framed, no verdicts yet
	chunkClaimed        // being checked
	chunkChecked        // every verdict in items
	chunkFailed         // the helper faulted on it: the scan ends before it
)

const (
	// crcChunkBytes and crcChunkBatches bound one chunk: large enough
	// that claiming one costs nothing next to checking it, small enough
	// that the caller starts early.
	crcChunkBytes   = 1 << 20
	crcChunkBatches = 256
	// crcChunks is how many chunks the helper may queue ahead.
	crcChunks = 4
)

// CRCScanner starts a scan of the file whose batches' CRCs are checked
// ahead of the caller (when checkCRC; otherwise CRCValid is always true
// and the helper only frames).
func (l *LogFile) CRCScanner(opts ScanOptions, checkCRC bool) *CRCScanner {
	sc := l.Scanner(opts)
	c := &CRCScanner{sc: sc, checkCRC: checkCRC}
	if runtime.GOMAXPROCS(0) < 2 || sc.end-sc.pos <= int64(sc.src.windowLen()) {
		c.inline = true
		return c
	}
	c.ready = sync.NewCond(&c.mu)
	c.room = sync.NewCond(&c.mu)
	c.wg.Add(1)
	go c.run()
	return c
}

// run is the helper goroutine: frame chunks while the queue has room,
// check the oldest unclaimed one when it is full; at the end, check what
// is left unclaimed.
func (c *CRCScanner) run() {
	defer c.wg.Done()
	var building, checking *crcChunk
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			c.sc.Close()
			c.mu.Lock()
			c.err = fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", c.sc.path, e)
			c.ended = true
			if building != nil {
				releaseItems(building.items)
			}
			if checking != nil {
				checking.state = chunkFailed
			}
			c.ready.Broadcast()
			c.mu.Unlock()
		}
	}()
	debug.SetPanicOnFault(true)
	check := func(j *crcChunk) {
		checking = j
		c.check(j)
		checking = nil
		c.mu.Lock()
		j.state = chunkChecked
		c.ready.Broadcast()
		c.mu.Unlock()
	}
	for more := true; ; {
		c.mu.Lock()
		// Frame while the queue has room (framing is cheap, and the
		// queued chunks are what the caller can take); check the oldest
		// unclaimed chunk when it is full, or once everything is framed.
		for !c.stopped && !(more && len(c.queue) < crcChunks) {
			if j := c.claim(false); j != nil {
				c.mu.Unlock()
				check(j)
				c.mu.Lock()
				continue
			}
			if !more {
				c.mu.Unlock()
				return
			}
			c.room.Wait()
		}
		if c.stopped {
			c.mu.Unlock()
			c.sc.Close()
			return
		}
		building = c.newChunk()
		c.mu.Unlock()
		more = c.frame(building)
		c.mu.Lock()
		if len(building.items) > 0 {
			building.state = chunkQueued
			if !c.checkCRC {
				building.state = chunkChecked
			}
			c.queue = append(c.queue, building)
		} else {
			c.free = append(c.free, building)
		}
		building = nil
		if !more {
			// Written under mu before ended, which the caller waits for.
			c.tail, c.err, c.ended = c.sc.Tail(), c.sc.Err(), true
		}
		c.ready.Broadcast()
		c.mu.Unlock()
	}
}

// frame fills ch with the next batches; false at the end of the scan.
func (c *CRCScanner) frame(ch *crcChunk) bool {
	var n int64
	for c.sc.Next() {
		b := c.sc.Batch()
		w := c.sc.Window()
		w.Retain()
		ch.items = append(ch.items, crcItem{b: *b, pos: c.sc.Pos(), ok: true, win: w})
		if n += b.Size(); n >= crcChunkBytes || len(ch.items) >= crcChunkBatches {
			return true
		}
	}
	return false
}

// claim claims the oldest (or, youngest, the youngest) queued chunk whose
// CRCs no one checks yet; c.mu held.
func (c *CRCScanner) claim(youngest bool) *crcChunk {
	for k := range c.queue {
		if youngest {
			k = len(c.queue) - 1 - k
		}
		if j := c.queue[k]; j.state == chunkQueued {
			j.state = chunkClaimed
			return j
		}
	}
	return nil
}

// check records the CRC verdict of every batch of j.
func (c *CRCScanner) check(j *crcChunk) {
	for i := range j.items {
		it := &j.items[i]
		it.ok = it.b.CRCValid()
	}
}

func (c *CRCScanner) newChunk() *crcChunk {
	if k := len(c.free); k > 0 {
		ch := c.free[k-1]
		c.free = c.free[:k-1]
		ch.items = ch.items[:0]
		return ch
	}
	return &crcChunk{items: make([]crcItem, 0, crcChunkBatches)}
}

func releaseItems(items []crcItem) {
	for i := range items {
		if items[i].win != nil {
			items[i].win.Release()
			items[i].win = nil
		}
	}
}

// Next advances to the next batch; false at the end of the scanned range,
// on damage or on an I/O error (see Tail and Err).
func (c *CRCScanner) Next() bool {
	if c.inline {
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
	for c.chunk == nil || c.i >= len(c.chunk.items) {
		if c.closed {
			return false
		}
		c.mu.Lock()
		if c.chunk != nil {
			c.free = append(c.free, c.chunk)
			c.chunk = nil
		}
		h := c.head()
		c.mu.Unlock()
		if h == nil {
			c.closed = true
			return false
		}
		c.chunk, c.i = h, 0
	}
	c.cur = &c.chunk.items[c.i]
	c.i++
	return true
}

// head waits for the oldest queued chunk's verdicts and takes it off the
// queue (nil at the end, or when the helper failed); c.mu held. The
// caller checks chunks too: the head when no one has claimed it, else the
// youngest unclaimed one while the helper is on the head.
func (c *CRCScanner) head() *crcChunk {
	for {
		if len(c.queue) == 0 {
			if c.ended {
				return nil
			}
			c.ready.Wait()
			continue
		}
		h := c.queue[0]
		switch h.state {
		case chunkChecked:
			c.queue = c.queue[1:]
			c.room.Signal()
			return h
		case chunkFailed:
			return nil
		}
		j := h
		if h.state == chunkQueued {
			h.state = chunkClaimed
		} else if j = c.claim(true); j == nil {
			c.ready.Wait()
			continue
		}
		c.mu.Unlock()
		c.check(j)
		c.mu.Lock()
		j.state = chunkChecked
	}
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
	t, _ := c.end()
	return t
}

// Err is the I/O error (or memory fault) that stopped the scan, if any.
func (c *CRCScanner) Err() error {
	_, err := c.end()
	return err
}

// end is how the scan ended: the inline scanner's, or what the helper
// recorded under mu.
func (c *CRCScanner) end() (Tail, error) {
	if c.inline {
		return c.sc.Tail(), c.sc.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tail, c.err
}

// Close stops the helper and releases every window; needed for a scan
// abandoned midway, harmless after the end. Safe to call more than once.
func (c *CRCScanner) Close() {
	c.closed = true
	if c.inline {
		c.sc.Close()
		return
	}
	c.releaseCur()
	if c.chunk != nil {
		releaseItems(c.chunk.items[c.i:])
		c.chunk = nil
	}
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		c.room.Broadcast()
	}
	c.mu.Unlock()
	c.wg.Wait()
	// The helper is gone: whatever is queued is no one's.
	for _, j := range c.queue {
		releaseItems(j.items)
	}
	c.queue = nil
}
