package mirror

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// logCursor walks the batches of a partition directory in log order, one
// segment after the other, through segment.Scanner: whatever the size of
// the log, it holds one scan window (and the batch in it), never a whole
// segment. Batches that end before the log start offset are skipped, as a
// broker never serves them.
//
// It frames batches and nothing more: CRCs are the caller's to check. A
// segment whose scan ends on a torn or corrupt tail stops the cursor there
// (Damage says where); LogLoader would truncate the log at that point.
type logCursor struct {
	dir   string
	pd    *segment.PartitionDir
	segs  []segment.SegmentFiles // the segments that have a .log
	start int64                  // log start offset

	si int // index in segs of the segment being scanned
	lf *segment.LogFile
	sc *segment.CRCScanner
	// checkCRC: CRCValid is each batch's verdict, checked on a second
	// core ahead of the caller; otherwise CRCValid is always true.
	checkCRC bool
	// mmap maps the segments instead of reading them (ScanOptions.Mmap):
	// only for a caller whose goroutine runs with debug.SetPanicOnFault.
	mmap bool
	cur  *decode.Batch
	pos  int64
	// seekSeg and seekPos: the scan of segs[seekSeg] starts at seekPos
	// (seek); seekSeg is -1 otherwise.
	seekSeg int
	seekPos int64
	// nextOff is the offset after the last batch returned.
	nextOff int64
	started bool // a batch was returned
	// segNext is the greatest NextOffset of the batches framed in the
	// segment being scanned (those below the log start included), segFound
	// whether it framed any; lastFound is segNext of the last segment that
	// framed a batch and ended cleanly (-1: none). A cursor that reaches
	// the end of the log cleanly knows the log end from them (End) without
	// the header walk logEnd makes.
	segNext   int64
	segFound  bool
	lastFound int64

	// Damage is the first damaged tail met (nil when none); the cursor
	// ends there.
	Damage *cursorDamage
	// ZeroTails are segments other than the last whose tail is zero bytes.
	ZeroTails []string
	err       error
	done      bool

	// progress, when set, is told the bytes of the batches read (every
	// progressStep, and at the end of each segment); pending holds those
	// not yet told.
	progress func(n int64)
	pending  int64
}

// progressStep is how many bytes a cursor reads between progress calls.
const progressStep = 1 << 20

// count adds n bytes read, telling progress every progressStep.
func (c *logCursor) count(n int64) {
	if c.progress == nil {
		return
	}
	c.pending += n
	if c.pending >= progressStep {
		c.progress(c.pending)
		c.pending = 0
	}
}

// flush tells progress the bytes not yet told.
func (c *logCursor) flush() {
	if c.progress != nil && c.pending > 0 {
		c.progress(c.pending)
		c.pending = 0
	}
}

// cursorDamage is a torn or corrupt tail that ended a cursor.
type cursorDamage struct {
	File     string // base name of the .log
	Position int64  // validBytes: where the damage starts
	Offset   int64  // the offset the next batch would have had
	Kind     string
	Message  string
}

// openCursor lists dir and positions a cursor before its first batch.
func openCursor(dir string) (*logCursor, error) {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	c := &logCursor{dir: dir, pd: pd, si: -1, lastFound: -1, seekSeg: -1}
	c.segs = slices.Collect(pd.Logs())
	c.start = -1
	if len(c.segs) > 0 {
		c.start = c.segs[0].BaseOffset
	}
	if ls := logStartOf(pd); ls > c.start {
		c.start = ls
	}
	return c, nil
}

// seek makes a cursor that has not moved yet start at the batch at pos of
// segs[si]: the batches before it are not read (planning from the tail).
// pos must be a batch boundary.
func (c *logCursor) seek(si int, pos int64) {
	c.si, c.seekSeg, c.seekPos = si-1, si, pos
	c.started = true
}

// Start is the log start offset: max(log-start-offset-checkpoint, first
// segment base); -1 for a directory without segments.
func (c *logCursor) Start() int64 { return c.start }

// Next moves to the next batch. It returns false at the end of the log, at
// a damaged tail (Damage), or on an I/O error (Err); Batch is nil then.
func (c *logCursor) Next() bool {
	if c.advance() {
		return true
	}
	c.cur = nil
	return false
}

func (c *logCursor) advance() bool {
	for !c.done {
		if c.sc == nil {
			c.si++
			if c.si >= len(c.segs) {
				c.done = true
				return false
			}
			lf, err := segment.OpenLog(c.segs[c.si].Log)
			if err != nil {
				c.err, c.done = err, true
				return false
			}
			// Framing (and the CRC checks when asked for) run on a second
			// core while the caller compares or plans.
			opts := segment.ScanOptions{Mmap: c.mmap}
			if c.si == c.seekSeg {
				opts.Start = c.seekPos
			}
			c.lf, c.sc = lf, lf.CRCScanner(opts, c.checkCRC)
			c.segNext, c.segFound = 0, false
		}
		if c.sc.Next() {
			b := c.sc.Batch()
			c.count(b.Size())
			c.segNext, c.segFound = max(c.segNext, b.NextOffset()), true
			if !c.started && b.LastOffset() < c.start {
				// Below the log start offset (only at the head of the log:
				// later, a batch claiming such offsets is returned, for
				// the caller to report).
				continue
			}
			c.started = true
			c.cur, c.pos = b, c.sc.Pos()
			c.nextOff = max(c.nextOff, b.NextOffset())
			return true
		}
		if err := c.sc.Err(); err != nil {
			c.err, c.done = err, true
			c.closeSegment()
			return false
		}
		t := c.sc.Tail()
		name := filepath.Base(c.segs[c.si].Log)
		switch t.Kind {
		case segment.TailClean, segment.TailZeroFilled:
			if t.Kind == segment.TailZeroFilled && c.si < len(c.segs)-1 {
				c.ZeroTails = append(c.ZeroTails, name)
			}
			if c.segFound {
				c.lastFound = c.segNext
			}
		default:
			next := max(c.segs[c.si].BaseOffset, c.nextOff)
			msg := fmt.Sprintf("%s: %s tail at position %d (%d bytes do not frame a batch)", name, t.Kind, t.ValidBytes, t.InvalidBytes())
			if t.Err != nil {
				msg = t.Err.Error()
			}
			c.Damage = &cursorDamage{File: name, Position: t.ValidBytes, Offset: next, Kind: t.Kind.String(), Message: msg}
			c.done = true
		}
		c.closeSegment()
	}
	return false
}

// End is the log end offset (logEnd's answer) once the cursor has
// walked the whole log: ok is false while it has not, or when it stopped at
// a damaged tail or an I/O error (logEnd then walks the last segment's
// headers itself, stopping where its own scan stops).
func (c *logCursor) End() (end int64, ok bool) {
	if !c.done || c.err != nil || c.Damage != nil || c.sc != nil || c.si < len(c.segs) {
		return 0, false
	}
	if len(c.segs) == 0 {
		return -1, true
	}
	end = c.segs[len(c.segs)-1].BaseOffset
	if c.lastFound >= 0 {
		end = max(end, c.lastFound)
	}
	return end, true
}

func (c *logCursor) closeSegment() {
	c.flush()
	if c.sc != nil {
		c.sc.Close()
		c.sc = nil
	}
	if c.lf != nil {
		c.lf.Close()
		c.lf = nil
	}
}

// CRCValid is the current batch's CRC verdict when the cursor checks CRCs
// (see checkCRC); always true otherwise.
func (c *logCursor) CRCValid() bool { return c.sc.CRCValid() }

// Batch is the current batch, nil before the first call to Next and after
// the last; its Raw is valid until the next call to Next.
func (c *logCursor) Batch() *decode.Batch { return c.cur }

// Pos is the byte position of the current batch in its .log.
func (c *logCursor) Pos() int64 { return c.pos }

// Segment is the segment holding the current batch.
func (c *logCursor) Segment() segment.SegmentFiles { return c.segs[c.si] }

// File is the base name of the .log holding the current batch.
func (c *logCursor) File() string { return filepath.Base(c.segs[c.si].Log) }

// Err is the I/O error that ended the cursor, if any.
func (c *logCursor) Err() error { return c.err }

// Close releases the open segment.
func (c *logCursor) Close() {
	c.done = true
	c.closeSegment()
}

// logEnd is the log end offset of a partition: one past the last batch
// that frames in its last segment holding one (the last segment's base
// offset when it is empty). Only that segment is read.
func logEnd(pd *segment.PartitionDir) (int64, error) {
	end := int64(-1)
	for i := len(pd.Segments) - 1; i >= 0; i-- {
		s := pd.Segments[i]
		if s.Log == "" {
			continue
		}
		if end < 0 {
			end = s.BaseOffset
		}
		e, found, err := segmentEnd(s.Log, end)
		if err != nil {
			return 0, err
		}
		if found {
			return e, nil
		}
	}
	return end, nil
}

// segmentEnd walks the batch headers of one .log and returns one past the
// last batch that frames (at least end). The file is read, not mapped:
// batch headers lie a few KiB apart, so a mapped walk takes a page fault
// for nearly every page anyway, and faults cost more than copying the
// pages out of the page cache (on a 256 MiB segment of mixed batches, 2×
// the CPU time of reading it).
func segmentEnd(path string, end int64) (_ int64, found bool, err error) {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return 0, false, err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	for sc.Next() {
		end = max(end, sc.Batch().NextOffset())
		found = true
	}
	return end, found, sc.Err()
}

// locate finds the .log and position of the batch holding offset in pd,
// using the offset index to skip ahead; ok is false when no batch holds
// it.
func locate(pd *segment.PartitionDir, offset int64) (file string, pos int64, ok bool) {
	var seg *segment.SegmentFiles
	for s := range pd.Logs() {
		if s.BaseOffset <= offset {
			seg = &s
		}
	}
	if seg == nil {
		return "", -1, false
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return "", -1, false
	}
	defer lf.Close()
	from := int64(0)
	if seg.Index != "" {
		if x, err := segment.ReadOffsetIndex(seg.Index, seg.BaseOffset); err == nil && len(x.Entries) > 0 {
			// The entry names the last offset of the batch at its position;
			// the batch holding offset starts at or after the entry below it.
			e := x.Lookup(offset - 1)
			if e.Offset < offset && e.Position > 0 && int64(e.Position) < lf.Size {
				from = int64(e.Position)
			}
		}
	}
	for _, start := range []int64{from, 0} {
		sc := lf.Scanner(segment.ScanOptions{Start: start, BufferSize: 256 << 10})
		for sc.Next() {
			b := sc.Batch()
			if b.BaseOffset <= offset && offset <= b.LastOffset() {
				p := sc.Pos()
				sc.Close()
				return filepath.Base(seg.Log), p, true
			}
			if b.BaseOffset > offset {
				break
			}
		}
		sc.Close()
		if start == 0 {
			break
		}
	}
	return filepath.Base(seg.Log), -1, false
}

// logStartOf is the partition's log-start-offset-checkpoint entry; -1
// when there is none or it cannot be read: a broker never serves the
// batches below it, and without it the log starts at its first segment.
func logStartOf(pd *segment.PartitionDir) int64 {
	ls, _ := segment.CheckpointOffset(pd, segment.LogStartOffsetCheckpointName)
	return ls
}
