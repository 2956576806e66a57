package cmd

import (
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// dumpProgress drives the progress line of `kseg dump`: bytes of every
// file to dump, and partitions (directories) done. It advances once per
// file, not per batch, so the decode loop stays untouched; a partition of
// many segments still moves the line segment by segment.
type dumpProgress struct {
	p     *progress
	sizes []int64
	// lastOfDir[i]: files[i] is the last file of its partition directory,
	// so a partition is done after it.
	lastOfDir []bool
}

// newDumpProgress starts the progress line for files. It stats each file
// only when the line can be shown at all.
func newDumpProgress(s *Streams, g *globalOptions, files []dumpFile) *dumpProgress {
	d := &dumpProgress{}
	if s == nil || !s.ErrTTY || (g != nil && g.quiet) {
		d.p = newProgress(s, g, "", 0) // disabled: no stat, no goroutine
		return d
	}
	d.sizes = make([]int64, len(files))
	d.lastOfDir = make([]bool, len(files))
	var total, dirs int64
	for i, f := range files {
		if st, err := os.Stat(f.path); err == nil {
			d.sizes[i] = st.Size()
			total += st.Size()
		}
		dir := filepath.Dir(f.path)
		if _, ok := segment.ParsePartitionDir(filepath.Base(dir)); !ok {
			continue // a loose file, or a log directory's own checkpoint files
		}
		if i == 0 || filepath.Dir(files[i-1].path) != dir {
			dirs++
		}
		d.lastOfDir[i] = i == len(files)-1 || filepath.Dir(files[i+1].path) != dir
	}
	if dirs < 2 {
		dirs = 0 // one partition: the bytes say it all
	}
	d.p = newItemProgress(s, g, "dumping", total, dirs, "partitions")
	return d
}

// fileDone records that files[i] was dumped. It is safe to call from
// several goroutines (the --jobs workers): it only reads d and adds
// atomically.
func (d *dumpProgress) fileDone(i int) {
	if d.sizes == nil {
		return
	}
	d.p.Add(d.sizes[i])
	if d.lastOfDir[i] {
		d.p.ItemDone()
	}
}

// Done erases the line.
func (d *dumpProgress) Done() { d.p.Done() }
