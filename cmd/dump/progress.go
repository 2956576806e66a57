package dump

import (
	"math"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/cmd/internal/ui"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/scan"
)

// dumpProgress drives the progress line of `kseg dump` (the engine's
// scan.Progress): bytes of every
// file to dump, and partitions (directories) done. A .log advances it as
// its batches are read (every dumpProgressStep bytes: one comparison per
// batch, an atomic add per MiB), so a single segment of gigabytes moves
// the line; other files count when they are done.
type dumpProgress struct {
	p     *ui.Progress
	sizes []int64
	// lastOfDir[i]: files[i] is the last file of its partition directory,
	// so a partition is done after it.
	lastOfDir []bool
	// reported[i]: bytes of files[i] added to the line so far. Each file
	// is dumped by one goroutine, which alone touches its entry.
	reported []int64
}

// dumpProgressStep is how far a .log is read between updates.
const dumpProgressStep = 1 << 20

// newDumpProgress starts the progress line for files. It stats each file
// only when the line can be shown at all.
func newDumpProgress(s *ui.Streams, files []scan.File) *dumpProgress {
	d := &dumpProgress{}
	if s == nil || !s.ErrTTY || s.Quiet {
		d.p = ui.NewProgress(s, "", 0) // disabled: no stat, no goroutine
		return d
	}
	d.sizes = make([]int64, len(files))
	d.lastOfDir = make([]bool, len(files))
	d.reported = make([]int64, len(files))
	var total, dirs int64
	for i, f := range files {
		if st, err := os.Stat(f.Path); err == nil {
			d.sizes[i] = st.Size()
			total += st.Size()
		}
		dir := filepath.Dir(f.Path)
		if _, ok := segment.ParsePartitionDir(filepath.Base(dir)); !ok {
			continue // a loose file, or a log directory's own checkpoint files
		}
		if i == 0 || filepath.Dir(files[i-1].Path) != dir {
			dirs++
		}
		d.lastOfDir[i] = i == len(files)-1 || filepath.Dir(files[i+1].Path) != dir
	}
	if dirs < 2 {
		dirs = 0 // one partition: the bytes say it all
	}
	d.p = ui.NewItemProgress(s, "dumping", total, dirs, "partitions")
	return d
}

// on reports whether the line is shown.
func (d *dumpProgress) on() bool { return d != nil && d.sizes != nil }

// FileDone records that files[i] was dumped. It is safe to call from
// several goroutines (the --jobs workers): it only reads d and adds
// atomically.
func (d *dumpProgress) FileDone(i int) {
	if d == nil || d.sizes == nil {
		return
	}
	if n := d.sizes[i] - d.reported[i]; n > 0 {
		d.p.Add(n)
	}
	d.reported[i] = d.sizes[i]
	if d.lastOfDir[i] {
		d.p.ItemDone()
	}
}

// Scanned records that files[i] has been read up to byte pos, and returns
// the position at which to call it again (never, when the line is off).
func (d *dumpProgress) Scanned(i int, pos int64) int64 {
	if d == nil || d.sizes == nil {
		return math.MaxInt64
	}
	if n := min(pos, d.sizes[i]) - d.reported[i]; n > 0 {
		d.p.Add(n)
		d.reported[i] += n
	}
	return pos + dumpProgressStep
}

// Done erases the line.
func (d *dumpProgress) Done() { d.p.Done() }
