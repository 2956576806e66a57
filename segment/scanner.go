package segment

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/kseg/kseg/decode"
)

// TailKind classifies how a scan of a .log ended. Broker recovery
// (LogSegment.recover) truncates everything after ValidBytes; an operator
// wants to know why those bytes are there.
type TailKind int

const (
	// TailClean: the last batch ends exactly at the end of the file.
	TailClean TailKind = iota
	// TailZeroFilled: only zero bytes follow, as in a preallocated segment
	// (preallocate=true) after an unclean shutdown. A warning, not damage.
	TailZeroFilled
	// TailTornHeader: 17 or fewer non-zero bytes follow; FileLogInputStream
	// stops there silently.
	TailTornHeader
	// TailTornBatch: a batch header whose batchLength runs past the end of
	// the file: a write cut short.
	TailTornBatch
	// TailCorrupt: bytes that cannot be a batch (size below 14, bad magic,
	// a v2 batch shorter than 61 bytes) in the middle of the log.
	TailCorrupt
)

func (k TailKind) String() string { return enumName(tailKindNames[:], int(k), "TailKind") }

var tailKindNames = [...]string{TailClean: "clean", TailZeroFilled: "zero-filled", TailTornHeader: "torn-header",
	TailTornBatch: "torn-batch", TailCorrupt: "corrupt"}

// enumName is names[i], or "Type(i)" for a value outside the names.
func enumName(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// Tail is the end of a scan: everything before ValidBytes framed as batches.
type Tail struct {
	Kind       TailKind
	ValidBytes int64 // end of the last well-framed batch
	End        int64 // where the scan stopped looking (file size, or the --max-bytes limit)
	// Err describes a TailCorrupt, TailTornBatch or TailTornHeader end with
	// file and position; nil for clean and zero-filled tails.
	Err *decode.CorruptError
}

// InvalidBytes is the number of bytes after ValidBytes, what kafka-dump-log
// reports as "Found N invalid bytes at the end of …".
func (t Tail) InvalidBytes() int64 { return t.End - t.ValidBytes }

// ScanOptions tune a Scanner.
type ScanOptions struct {
	// Path names the file in errors.
	Path string
	// Start is the byte position to start at (0 for the whole file); it
	// must be a batch boundary.
	Start int64
	// Limit stops the scan at this many bytes from the start of the file
	// (kafka-dump-log --max-bytes, KIP-824); 0 means the whole file.
	Limit int64
	// BufferSize is the read-ahead window; 0 means 1 MiB (8 MiB when
	// mapped). Memory stays BufferSize plus the largest batch, whatever the
	// file size (times the windows a caller retains; see Window).
	BufferSize int
	// Mmap maps the file in sliding read-only windows instead of reading
	// it, when the platform allows and the file is larger than one window:
	// no copy out of the page cache. A mapped file that shrinks under the
	// scan (a broker truncating it) faults on access with SIGBUS, which
	// kills the process unless every goroutine touching Batch.Raw runs
	// with debug.SetPanicOnFault(true) and recovers. Only set it when the
	// caller does that.
	Mmap bool
}

// Scanner walks the entries of a .log exactly as FileLogInputStream does,
// reading through a sliding window with positional reads so a segment of
// any size is never loaded whole. It frames batches and parses headers; it
// does not verify CRCs or decode records (the caller decides).
type Scanner struct {
	r    io.ReaderAt
	path string
	end  int64

	src windowSource
	win *Window // the window being read; nil before the first read

	pos   int64 // position of the next entry
	cur   decode.Batch
	cpos  int64
	tail  Tail
	done  bool
	ioErr error
}

// NewScanner scans r, whose size is size.
func NewScanner(r io.ReaderAt, size int64, opts ScanOptions) *Scanner {
	end := size
	if opts.Limit > 0 && opts.Limit < end {
		end = opts.Limit
	}
	bs := opts.BufferSize
	if bs <= 0 {
		bs = 1 << 20
		if opts.Mmap {
			bs = 8 << 20
		}
	}
	return &Scanner{r: r, path: opts.Path, end: end, src: newWindowSource(r, end, opts, bs), pos: opts.Start}
}

// window returns the n bytes at file position pos, moving to a new window
// (from pos) when the current one does not hold them.
func (s *Scanner) window(pos int64, n int) ([]byte, error) {
	if w := s.win; w != nil && w.contains(pos, n) {
		off := pos - w.pos
		return w.data[off : off+int64(n)], nil
	}
	want := max(s.src.windowLen(), n)
	if rem := s.end - pos; int64(want) > rem {
		want = int(rem)
	}
	s.releaseWindow()
	w, err := s.src.load(pos, n, want)
	if err != nil {
		return nil, err
	}
	s.win = w
	return w.data[:n], nil
}

// releaseWindow drops the scanner's reference to its window.
func (s *Scanner) releaseWindow() {
	if s.win != nil {
		s.win.Release()
		s.win = nil
	}
}

// Window is the window holding the current batch. Retain it to keep the
// batch's Raw valid after the next call to Next (see Window).
func (s *Scanner) Window() *Window { return s.win }

// Close releases the scanner's window (unmapping it if mapped). Scanning
// to the end does that too; Close is for a scan abandoned midway. It is
// safe to call more than once.
func (s *Scanner) Close() {
	s.done = true
	s.releaseWindow()
}

// Next advances to the next batch. It returns false at the end of the
// scanned range, on damage, or on an I/O error (see Tail and Err).
func (s *Scanner) Next() bool {
	if s.done {
		return false
	}
	if s.next() {
		return true
	}
	s.releaseWindow()
	return false
}

func (s *Scanner) next() bool {
	rem := s.end - s.pos
	// FileLogInputStream.nextBatch: stop when 17 or fewer bytes remain.
	if rem <= decode.HeaderSizeUpToMagic {
		s.finish(rem, nil)
		return false
	}
	hdr, err := s.window(s.pos, decode.HeaderSizeUpToMagic)
	if err != nil {
		s.ioErr = err
		s.done = true
		return false
	}
	size := int32(binary.BigEndian.Uint32(hdr[8:]))
	if size < decode.MinLegacyRecordSize {
		base := int64(binary.BigEndian.Uint64(hdr))
		s.finish(rem, &decode.CorruptError{Path: s.path, Pos: s.pos + 8, BaseOffset: base, Field: "batchLength",
			Err: fmt.Errorf("%w: record size %d smaller than minimum record overhead (%d)", decode.ErrCorrupt, size, decode.MinLegacyRecordSize)})
		return false
	}
	total := decode.LogOverhead + int64(size)
	if total > rem {
		base := int64(binary.BigEndian.Uint64(hdr))
		s.tail = Tail{Kind: TailTornBatch, ValidBytes: s.pos, End: s.end, Err: &decode.CorruptError{Path: s.path, Pos: s.pos + 8,
			BaseOffset: base, Field: "batchLength",
			Err: fmt.Errorf("%w: batch of %d bytes runs past the end (%d bytes left)", decode.ErrTruncated, total, rem)}}
		s.done = true
		return false
	}
	raw, err := s.window(s.pos, int(total))
	if err != nil {
		s.ioErr = err
		s.done = true
		return false
	}
	b, err := decode.ParseBatch(raw)
	if err != nil {
		ce, _ := decode.AsCorrupt(err)
		s.tail = Tail{Kind: TailCorrupt, ValidBytes: s.pos, End: s.end, Err: ce.At(s.path, s.pos)}
		s.done = true
		return false
	}
	s.cur = b
	s.cpos = s.pos
	s.pos += total
	return true
}

// finish classifies the rem bytes left at s.pos.
func (s *Scanner) finish(rem int64, ce *decode.CorruptError) {
	s.done = true
	s.tail = Tail{Kind: TailClean, ValidBytes: s.pos, End: s.end}
	if rem <= 0 {
		return
	}
	zero, err := s.allZero(s.pos, s.end)
	if err != nil {
		s.ioErr = err
		return
	}
	switch {
	case zero:
		s.tail.Kind = TailZeroFilled
	case ce != nil:
		s.tail.Kind = TailCorrupt
		s.tail.Err = ce
	default:
		s.tail.Kind = TailTornHeader
		s.tail.Err = &decode.CorruptError{Path: s.path, Pos: s.pos, BaseOffset: decode.NoBaseOffset, Field: "header",
			Err: fmt.Errorf("%w: %d bytes left, too few for a batch header", decode.ErrTruncated, rem)}
	}
}

// allZero reports whether [from, to) holds only zero bytes, reading in
// window-sized chunks.
func (s *Scanner) allZero(from, to int64) (bool, error) {
	for p := from; p < to; {
		n := int64(s.src.windowLen())
		if to-p < n {
			n = to - p
		}
		b, err := s.window(p, int(n))
		if err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		p += n
	}
	return true, nil
}

// Batch is the current batch; its Raw aliases the scanner's window and is
// valid until the next call to Next.
func (s *Scanner) Batch() *decode.Batch { return &s.cur }

// Pos is the file position of the current batch.
func (s *Scanner) Pos() int64 { return s.cpos }

// Tail describes how the scan ended; valid once Next has returned false
// and Err is nil.
func (s *Scanner) Tail() Tail { return s.tail }

// Err is the I/O error that stopped the scan, if any (damage is not an
// error here; it is reported in Tail).
func (s *Scanner) Err() error {
	if s.ioErr != nil {
		return fmt.Errorf("%s: read at position %d: %w", s.path, s.pos, s.ioErr)
	}
	return nil
}

// LogFile is a .log (or KRaft .checkpoint) opened read-only for scanning.
type LogFile struct {
	Path string
	Size int64
	f    *os.File
}

// OpenLog opens path read-only. Inspection must never change a byte, so
// nothing here ever opens for writing.
func OpenLog(path string) (*LogFile, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	return &LogFile{Path: path, Size: size, f: f}, nil
}

// Scanner starts a scan of the file.
func (l *LogFile) Scanner(opts ScanOptions) *Scanner {
	if opts.Path == "" {
		opts.Path = l.Path
	}
	return NewScanner(l.f, l.Size, opts)
}

// ReaderAt exposes the file for positional reads (index verification).
func (l *LogFile) ReaderAt() io.ReaderAt { return l.f }

// Close closes the file.
func (l *LogFile) Close() error { return l.f.Close() }
