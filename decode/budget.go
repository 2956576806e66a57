package decode

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Budget bounds the decompressed bytes that the decoders sharing it hold
// at once. The cap on one batch (Decoder.MaxDecompressed) bounds what a
// decoder holds; decoders on every core, each at the cap, would hold the
// cap times the cores (a deep dump of valid zstd batches near the cap took
// 4 GB at GOMAXPROCS=16). With a Budget, a decoder decompresses a batch
// within what it holds of the budget, and holds more only when the batch
// needs it: it asks for four times as much, up to the cap, and decodes
// the batch again. A decoder that cannot have more at once gives back
// what it holds and its buffer, then waits: waiting decoders hold
// nothing, so the budget, at least the cap, always serves the oldest
// waiter once the others give back theirs (each decoder gives back
// everything at Release, which its owner calls when it goes idle).
// Decompression is deterministic, so a batch decoded again gives what a
// decoder without a budget gives, errors included: a batch above the cap
// fails with the cap's ErrTooLarge.
type Budget struct {
	mu      sync.Mutex
	cond    *sync.Cond
	total   int64
	free    int64
	waiting int
}

// BudgetBase is what a decoder with a Budget first tries a batch with,
// and keeps (its buffer) when it goes idle: most batches are smaller.
const BudgetBase = 1 << 20

// NewBudget returns a budget of total bytes (at least BudgetBase).
func NewBudget(total int64) *Budget {
	total = max(total, BudgetBase)
	b := &Budget{total: total, free: total}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// tryAcquire takes n bytes if they are free and no decoder waits.
func (b *Budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiting > 0 || b.free < n {
		return false
	}
	b.free -= n
	return true
}

// acquire takes n bytes (at most total), waiting for them.
func (b *Budget) acquire(n int64) {
	n = min(n, b.total)
	b.mu.Lock()
	b.waiting++
	for b.free < n {
		b.cond.Wait()
	}
	b.waiting--
	b.free -= n
	b.mu.Unlock()
}

func (b *Budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Release gives back what d holds of its Budget, and drops a
// decompression buffer larger than BudgetBase. Call it when the decoder
// goes idle; without a Budget it does nothing.
func (d *Decoder) Release() {
	if d.Budget == nil {
		return
	}
	d.Budget.release(d.held)
	d.held = 0
	if cap(d.buf) > BudgetBase {
		d.buf = nil
	}
	if cap(d.inner) > BudgetBase {
		d.inner = nil
	}
	// The last record's key, value and headers alias the buffer: they
	// would keep it alive.
	d.rec = Record{}
	clear(d.headers[:cap(d.headers)])
}

// decompress is Codecs.Decompress into dst at the decoder's cap, within
// its Budget when it has one.
func (d *Decoder) decompress(dst []byte, codec Compression, magic int8, src []byte) ([]byte, error) {
	limit := d.max()
	if d.Budget == nil {
		return d.codecs.Decompress(dst, codec, magic, src, limit)
	}
	// The size the payload declares, where its framing has one, so that
	// a batch is decoded once; a declaration that lies is only a start.
	want := min(max(d.held, BudgetBase, sizeHint(codec, src)), int64(limit))
	for {
		if want > d.held {
			if !d.Budget.tryAcquire(want - d.held) {
				// Give back everything before waiting: a waiter holds
				// nothing, so waiters cannot hold each other up.
				d.Budget.release(d.held)
				d.held, dst, d.buf, d.inner = 0, nil, nil, nil
				d.Budget.acquire(want)
			}
			d.held = want
		}
		out, err := d.codecs.Decompress(dst, codec, magic, src, int(want))
		if err == nil || !errors.Is(err, ErrTooLarge) || want >= int64(limit) {
			return out, err
		}
		dst = out[:0]
		want = min(4*want, int64(limit))
	}
}

// sizeHint is the decompressed size a payload's framing declares: a zstd
// frame's content size, a gzip member's ISIZE (the last, modulo 2^32); 0
// when it declares none.
func sizeHint(codec Compression, src []byte) int64 {
	switch codec {
	case CompressionZstd:
		var h zstd.Header
		if h.Decode(src) == nil && h.HasFCS {
			return int64(min(h.FrameContentSize, 1<<40))
		}
	case CompressionGzip:
		if len(src) >= 18 {
			return int64(binary.LittleEndian.Uint32(src[len(src)-4:]))
		}
	}
	return 0
}
