package segment

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// A Window is a stretch of a .log that a Scanner reads batches out of:
// either a buffer filled by one positional read or a read-only memory
// mapping. Batch.Raw slices alias it.
//
// The scanner holds a reference to the window it is reading and drops it
// when it moves to the next one; a window whose last reference is dropped
// is reused (a buffer) or unmapped (a mapping). A caller that hands batches
// to other goroutines calls Retain on Scanner.Window() for each batch and
// Release when done with it, so the bytes stay valid however far the
// scanner has moved on. A caller that never calls Retain sees the plain
// contract: Raw is valid until the next call to Next.
type Window struct {
	data []byte // file bytes from pos
	pos  int64
	refs atomic.Int32
	src  windowSource
	mem  []byte // the whole buffer or mapping, for src.free
}

// Retain adds a reference: the window's bytes stay valid until the
// matching Release.
func (w *Window) Retain() { w.refs.Add(1) }

// Release drops a reference taken with Retain. It is safe to call from any
// goroutine.
func (w *Window) Release() {
	if w.refs.Add(-1) == 0 {
		w.src.free(w)
	}
}

// contains reports whether [pos, pos+n) lies inside the window.
func (w *Window) contains(pos int64, n int) bool {
	return pos >= w.pos && pos+int64(n) <= w.pos+int64(len(w.data))
}

// windowSource produces windows: load returns a window holding at least
// the n bytes at pos (and up to want), with one reference.
type windowSource interface {
	load(pos int64, n, want int) (*Window, error)
	free(w *Window)
	// windowLen is the standard window length.
	windowLen() int
}

// preadSource fills pooled buffers with ReadAt. Buffers of the standard
// size go back to a small free list when released, so a scan reuses one
// buffer when nobody retains windows and a few when a pipeline does.
type preadSource struct {
	r    io.ReaderAt
	size int
	mu   sync.Mutex
	pool [][]byte
}

// maxPooledWindows bounds the free list; buffers beyond it are left to the
// garbage collector.
const maxPooledWindows = 16

func (s *preadSource) load(pos int64, n, want int) (*Window, error) {
	var buf []byte
	s.mu.Lock()
	if k := len(s.pool); k > 0 && cap(s.pool[k-1]) >= want {
		buf = s.pool[k-1][:want]
		s.pool = s.pool[:k-1]
	}
	s.mu.Unlock()
	if buf == nil {
		// A window of the standard size, so that it can be pooled; but a
		// file (or the rest of one) smaller than that gets a buffer of its
		// size: dumping a thousand small partitions must not allocate and
		// clear a megabyte for each.
		c := want
		if want >= s.size/2 {
			c = max(want, s.size)
		}
		buf = make([]byte, want, c)
	}
	got, err := s.r.ReadAt(buf, pos)
	if got < want && err == nil {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && !(err == io.EOF && got >= n) {
		s.put(buf)
		return nil, err
	}
	w := &Window{data: buf[:got], pos: pos, src: s, mem: buf}
	w.refs.Store(1)
	return w, nil
}

func (s *preadSource) put(buf []byte) {
	if cap(buf) != s.size {
		return // an oversized buffer for one huge batch: not kept
	}
	s.mu.Lock()
	if len(s.pool) < maxPooledWindows {
		s.pool = append(s.pool, buf[:0])
	}
	s.mu.Unlock()
}

func (s *preadSource) free(w *Window) { s.put(w.mem) }
func (s *preadSource) windowLen() int { return s.size }

// newWindowSource picks the source: a sliding memory mapping when asked
// for, supported and worth it (the file is larger than one window),
// positional reads otherwise.
func newWindowSource(r io.ReaderAt, end int64, opts ScanOptions, size int) windowSource {
	if opts.Mmap && end > int64(size) {
		if f, ok := r.(*os.File); ok {
			if s := newMmapSource(f, end, size); s != nil {
				return s
			}
		}
	}
	return &preadSource{r: r, size: size}
}
