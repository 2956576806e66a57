//go:build unix

package segment

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapSource maps the file window by window (read-only, shared), so the
// bytes are never copied out of the page cache. Each window is unmapped
// when its last reference goes, which keeps the mapped (and so resident)
// part of the file to the windows in use, whatever the file size.
//
// A mapping turns I/O errors and truncation under the reader into SIGBUS
// on access; see ScanOptions.Mmap for what callers must do about it.
type mmapSource struct {
	fd   int
	end  int64
	size int
}

func newMmapSource(f *os.File, end int64, size int) windowSource {
	return &mmapSource{fd: int(f.Fd()), end: end, size: size}
}

var pageSize = int64(os.Getpagesize())

// mapAlign: a window is mapped from the 2 MiB boundary at or below its
// first byte. The kernel places such a mapping at a virtual address
// congruent with the file offset, so a page cache held in 2 MiB folios
// (ext4 and xfs keep large folios) is mapped with one huge-page entry per
// folio: one fault per 2 MiB instead of one per 64 KiB of fault-around,
// and no TLB miss every 4 KiB. Mapped at page boundaries, a CRC walk over
// windows cost 4-5% more CPU than the same walk over the file mapped
// whole. The window also ends at a 2 MiB boundary (or the end of the
// scan): a last, partial 2 MiB stretch would be mapped page by page, 32
// faults for every window. The bytes outside [pos, pos+want) are mapped,
// and read only when a batch lies there.
const mapAlign = 2 << 20

func (s *mmapSource) load(pos int64, n, want int) (*Window, error) {
	off := pos &^ (mapAlign - 1)
	end := min((pos+int64(want)+mapAlign-1)&^(mapAlign-1), s.end)
	length := end - off
	if length <= 0 || pos-off+int64(n) > length {
		return nil, unix.EINVAL
	}
	mem, err := unix.Mmap(s.fd, off, int(length), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// Sequential: the kernel reads a cold segment ahead aggressively on
	// faults. (MADV_WILLNEED cost more than the faults it saved on a
	// cached file: it walks every page of the window up front.)
	_ = unix.Madvise(mem, unix.MADV_SEQUENTIAL)
	w := &Window{data: mem[pos-off:], pos: pos, src: s, mem: mem}
	w.refs.Store(1)
	return w, nil
}

func (s *mmapSource) free(w *Window) {
	_ = unix.Munmap(w.mem)
	w.mem, w.data = nil, nil
}

func (s *mmapSource) windowLen() int { return s.size }
