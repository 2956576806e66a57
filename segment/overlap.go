package segment

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/segment/finding"
)

// Overlap is a segment whose offsets run into the next segment's: its
// batches reach past the next segment's base offset. Kafka never writes
// one (a roll starts the new segment at the log end offset), and its
// LogLoader loads one as it is: no step compares a segment's offsets with
// the next's, so after a clean or an unclean start both segments stay and
// the log end is the last segment's. A fetch of an offset both hold reads
// the next segment (LogSegments.floorSegment), while a consumer reading on
// from the overlapping segment gets its copies and then skips to the
// offset after them; the log cleaner and retention meet offsets that go
// backwards. What leaves one: a write through a second hard link to a
// segment file, a copy of a segment into the wrong directory.
type Overlap struct {
	// Segment and Next are the base offsets of the two segments.
	Segment, Next int64
	// Log is the overlapping segment's .log, NextLog the next one's.
	Log, NextLog string
	// NextOffset is the overlapping segment's next offset
	// (LogSegment.readNextOffset): offsets [Next, NextOffset) are in both.
	NextOffset int64
	// Position is where LogSegment.truncateTo(Next) cuts the overlapping
	// segment: the first batch whose lastOffset reaches Next.
	Position int64
	// Straddles: the batch at Position begins below Next, so its offsets
	// below Next exist only in this segment.
	Straddles bool
}

// Finding is the segment-overlap finding of o.
func (o Overlap) Finding() finding.Finding {
	msg := fmt.Sprintf("%s holds offsets up to %d, past the base offset %d of the next segment %s: offsets %d..%d are in both. A broker loads them as they are (LogLoader compares no segment with the next): a fetch of those offsets reads %s, a consumer reading on from %s gets its copies and skips the next segment's, and the log cleaner and retention meet offsets that go backwards",
		filepath.Base(o.Log), o.NextOffset-1, o.Next, filepath.Base(o.NextLog), o.Next, o.NextOffset-1, filepath.Base(o.NextLog), filepath.Base(o.Log))
	if o.Straddles {
		msg += fmt.Sprintf("; the batch at position %d begins below %d, so its offsets below it exist only here", o.Position, o.Next)
	} else {
		msg += fmt.Sprintf("; kseg repair cuts %s at position %d, where LogSegment.truncateTo(%d) would", filepath.Base(o.Log), o.Position, o.Next)
	}
	f := finding.New(finding.SegmentOverlap, msg)
	f.File, f.Position, f.Offset = o.Log, o.Position, o.Next
	return f
}

// SegmentOverlaps finds the segments of d (those with a .log) whose
// offsets run into the next segment's. Each segment but the last is read
// from its last offset-index entry on (the whole segment when it has no
// usable index): a few KiB per segment.
func SegmentOverlaps(d *PartitionDir) ([]Overlap, error) {
	logs := slices.Collect(d.Logs())
	var out []Overlap
	for i := 0; i+1 < len(logs); i++ {
		s, next := logs[i], logs[i+1]
		end, err := nextOffset(s)
		if err != nil {
			return nil, err
		}
		if end <= next.BaseOffset {
			continue
		}
		o := Overlap{Segment: s.BaseOffset, Next: next.BaseOffset, Log: s.Log, NextLog: next.Log, NextOffset: end}
		if o.Position, o.Straddles, err = truncatePosition(s.Log, next.BaseOffset); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// nextOffset is LogSegment.readNextOffset of s: the offset after its last
// batch that frames (its base offset when it holds none), read from its
// last offset-index entry on when a batch starts there.
func nextOffset(s SegmentFiles) (int64, error) {
	lf, err := OpenLog(s.Log)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	start := lastIndexPosition(s, lf.Size)
	for {
		sc := lf.Scanner(ScanOptions{Start: start, BufferSize: 64 << 10})
		end, n := s.BaseOffset, 0
		for sc.Next() {
			end = max(end, sc.Batch().NextOffset())
			n++
		}
		err := sc.Err()
		sc.Close()
		if err != nil {
			return 0, err
		}
		if n > 0 || start == 0 {
			return end, nil
		}
		start = 0 // no batch frames at the indexed position: read it all
	}
}

// lastIndexPosition is the position of s's last offset-index entry, 0 when
// there is none or it does not point into the log.
func lastIndexPosition(s SegmentFiles, logSize int64) int64 {
	if s.Index == "" {
		return 0
	}
	f, err := OpenFile(s.Index)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < OffsetIndexEntrySize || fi.Size()%OffsetIndexEntrySize != 0 {
		return 0
	}
	var e [OffsetIndexEntrySize]byte
	if _, err := f.ReadAt(e[:], fi.Size()-OffsetIndexEntrySize); err != nil && err != io.EOF {
		return 0
	}
	pos := int64(binary.BigEndian.Uint32(e[4:]))
	if pos <= 0 || pos >= logSize {
		return 0
	}
	return pos
}

// truncatePosition is where LogSegment.truncateTo(offset) cuts the log:
// the position of the first batch whose lastOffset reaches offset
// (translateOffset), and whether that batch begins below offset.
func truncatePosition(log string, offset int64) (int64, bool, error) {
	lf, err := OpenLog(log)
	if err != nil {
		return 0, false, err
	}
	defer lf.Close()
	sc := lf.Scanner(ScanOptions{BufferSize: 64 << 10})
	defer sc.Close()
	for sc.Next() {
		if b := sc.Batch(); b.LastOffset() >= offset {
			return sc.Pos(), b.BaseOffset < offset, nil
		}
	}
	return lf.Size, false, sc.Err()
}
