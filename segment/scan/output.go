package scan

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// What a printer's fork renders on a worker, and how it reaches the real
// streams in file order (pipeline.go).

// Writer is where a printer writes: its buffered stdout, or the buffer
// of one job on a worker (Sink).
type Writer interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
	Flush() error
}

// BatchOut is what a worker's printer rendered for one job: stdout bytes
// (Out) and the stderr writes made between them (Errs), in order.
type BatchOut struct {
	Out  []byte
	Errs []ErrWrite
	// Gaps are the record offsets a printer saw, for a printer's own
	// non-consecutive offsets report (kafka-dump-log's).
	Gaps OffsetGaps
}

// ErrWrite is a stderr write B made after the first At bytes of stdout.
type ErrWrite struct {
	At int
	B  []byte
}

func (b *BatchOut) reset() {
	b.Out, b.Errs = b.Out[:0], b.Errs[:0]
	b.Gaps.Reset()
}

// largeOut is a printer's output buffer (256 KiB): a job's output above
// it is handed to the stream whole.
const largeOut = 256 << 10

// Emit replays b on the real streams: stdout bytes to out, and each
// stderr write after flushing out, as the serial printers do.
func (b *BatchOut) Emit(out Writer, errw io.Writer) {
	last := 0
	for _, e := range b.Errs {
		out.Write(b.Out[last:e.At])
		last = e.At
		out.Flush()
		errw.Write(e.B)
	}
	if rest := b.Out[last:]; len(rest) > largeOut {
		// Large: flush what is buffered, and bufio then hands rest to
		// the stream whole instead of copying a buffer's worth first.
		out.Flush()
		out.Write(rest)
	} else {
		out.Write(rest)
	}
}

// Sink is a worker's Writer: it appends to the current job's BatchOut, B
// (a printer's fork may append to B.Out itself, saving a copy).
type Sink struct{ B *BatchOut }

func (s *Sink) Write(p []byte) (int, error) { s.B.Out = append(s.B.Out, p...); return len(p), nil }
func (s *Sink) WriteString(p string) (int, error) {
	s.B.Out = append(s.B.Out, p...)
	return len(p), nil
}
func (s *Sink) WriteByte(c byte) error { s.B.Out = append(s.B.Out, c); return nil }
func (s *Sink) Flush() error           { return nil }

// Stderr is the worker's stderr: writes recorded in order with the
// stdout bytes.
func (s *Sink) Stderr() io.Writer { return sinkErr{s} }

type sinkErr struct{ s *Sink }

func (e sinkErr) Write(p []byte) (int, error) {
	e.s.B.Errs = append(e.s.B.Errs, ErrWrite{At: len(e.s.B.Out), B: append([]byte(nil), p...)})
	return len(p), nil
}

// OffsetGaps follows record offsets within one batch: the First and Last
// seen, and the Pairs (previous, next) that are not consecutive inside
// it. Whether the batch's first record follows the previous batch's last
// is decided when batches are committed in order.
type OffsetGaps struct {
	Seen        bool
	First, Last int64
	Pairs       [][2]int64
	Count       int64 // len(Pairs) when pairs are not kept
}

func (g *OffsetGaps) Reset() { g.Seen, g.Pairs, g.Count = false, g.Pairs[:0], 0 }

// Add records offset off; keep keeps the pair, not just the count.
func (g *OffsetGaps) Add(off int64, keep bool) {
	if !g.Seen {
		g.Seen, g.First = true, off
	} else if off != g.Last+1 {
		g.Count++
		if keep {
			g.Pairs = append(g.Pairs, [2]int64{g.Last, off})
		}
	}
	g.Last = off
}

// buffers recycles printers' output buffers: a log-directory dump makes a
// printer per partition.
var buffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, largeOut) }}

// NewBuffer is a pooled buffered writer on w, for a printer's stdout.
func NewBuffer(w io.Writer) *bufio.Writer {
	b := buffers.Get().(*bufio.Writer)
	b.Reset(w)
	return b
}

// ReleaseBuffer flushes *w and, when it came from NewBuffer, returns it to
// the pool, leaving a writer that refuses further writes.
func ReleaseBuffer(w *Writer) error {
	err := (*w).Flush()
	if b, ok := (*w).(*bufio.Writer); ok {
		b.Reset(nil)
		buffers.Put(b)
		*w = closedWriter{}
	}
	return err
}

// closedWriter is a printer's writer after ReleaseBuffer.
type closedWriter struct{}

var errPrinterClosed = errors.New("printer used after Close")

func (closedWriter) Write([]byte) (int, error)       { return 0, errPrinterClosed }
func (closedWriter) WriteString(string) (int, error) { return 0, errPrinterClosed }
func (closedWriter) WriteByte(byte) error            { return errPrinterClosed }
func (closedWriter) Flush() error                    { return nil }
