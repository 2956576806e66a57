package scan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// What dump checks across the batches of one .log, and how it reads on
// after structural damage.
//
// Offsets and leader epochs are not covered by a batch's CRC (the broker
// assigns and overwrites them in place), so a flipped bit there leaves a
// batch that frames and validates. What gives it away is its place in the
// log: offsets strictly increase from batch to batch and fit the
// segment's relative offsets (segment.OffsetOrder, the rule broker
// recovery cuts by), and leader epochs never go back
// (LeaderEpochFileCache.assign).
//
// Structural damage (a batch that does not frame: a corrupt length, bad
// magic, garbage) ends the scanner's run, where the broker's recovery
// truncates. Unless NoResync (or DumpLogSegments, which reads what
// kafka-dump-log reads) the run then searches forward for the next valid
// batch (segment.ResyncPast), reports the damage and the bytes it skipped,
// and scans on from there. A length that runs past the end of the file
// looks like a torn write; when a valid batch follows it, it was a corrupt
// length, and it is reported as corrupt-batch.

// logCheck follows one .log through dump.
type logCheck struct {
	f       File
	base    int64 // the segment's base offset; -1 when the file is not a segment
	order   segment.OffsetOrder
	prevPLE int32
	hasPLE  bool
	resync  bool
	// damage is the first structural damage dump read past: the summary
	// reports it (its validBytes is where recovery truncates).
	damage *segment.Tail
	out    []finding.Finding
}

func newLogCheck(f File, o *Options) *logCheck {
	lc := &logCheck{f: f, base: -1, resync: !o.NoResync && !o.DumpLogSegments}
	if f.Info.Kind == segment.KindLog && f.Info.Offset >= 0 {
		lc.base = f.Info.Offset
	}
	lc.order = segment.NewOffsetOrder(lc.base)
	return lc
}

// check returns the findings about batch b at pos given the batches
// before it. The returned slice is reused by the next call.
func (lc *logCheck) check(pos int64, b *decode.Batch) []finding.Finding {
	lc.out = lc.out[:0]
	name := filepath.Base(lc.f.Path)
	last := b.LastOffset()
	first := b.BaseOffset
	if b.IsLegacy() {
		first = last // a wrapper carries its last offset only
	}
	prevLast, backwards, outOfRange := lc.order.Check(b)
	if outOfRange {
		lc.out = append(lc.out, fileFinding(finding.OffsetOverflow, lc.f.Path, pos, b.BaseOffset,
			fmt.Sprintf("%s: batch at position %d: lastOffset %d does not fit the segment's base offset %d (relative offsets are 0..2^31-1; the broker fails the load with LogSegmentOffsetOverflowException)",
				name, pos, last, lc.base)))
	}
	if backwards {
		lc.out = append(lc.out, fileFinding(finding.OffsetOutOfOrder, lc.f.Path, pos, b.BaseOffset,
			fmt.Sprintf("%s: batch at position %d: baseOffset %d is not above the previous batch's lastOffset %d (offsets only grow in a log; baseOffset is not covered by the crc)",
				name, pos, first, prevLast)))
	}
	if !b.IsLegacy() {
		ple := b.PartitionLeaderEpoch
		switch {
		case ple < decode.NoPartitionLeaderEpoch:
			lc.out = append(lc.out, fileFinding(finding.LeaderEpochRegression, lc.f.Path, pos+12, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d: partitionLeaderEpoch %d is not an epoch (-1 or above; the field is not covered by the crc)",
					name, pos, ple)))
		case ple >= 0 && lc.hasPLE && ple < lc.prevPLE:
			lc.out = append(lc.out, fileFinding(finding.LeaderEpochRegression, lc.f.Path, pos+12, b.BaseOffset,
				fmt.Sprintf("%s: batch at position %d: partitionLeaderEpoch %d is below the previous batch's %d (leader epochs never go back in a log; the field is not covered by the crc)",
					name, pos, ple, lc.prevPLE)))
		}
		if ple >= 0 {
			lc.prevPLE, lc.hasPLE = ple, true
		}
	}
	return lc.out
}

// minOffset is the lowest offset a batch after the damage may carry.
func (lc *logCheck) minOffset() int64 { return lc.order.Next() }

// resync decides, at the end of one scanner run with tail t, whether dump
// reads on: it searches for the next valid batch after structural damage
// and, when there is one, reports the damage and the skipped bytes and
// returns where to scan from.
func (st *Run) resync(lc *logCheck, lf *segment.LogFile, t segment.Tail) (int64, bool) {
	if !lc.resync || t.Err == nil {
		return 0, false
	}
	switch t.Kind {
	case segment.TailCorrupt:
	case segment.TailTornBatch:
		if t.End < lf.Size {
			return 0, false // cut by --max-bytes: where the reader was told to stop
		}
	default:
		return 0, false
	}
	pos, found, err := segment.ResyncPast(lf, t, lc.minOffset())
	if err != nil && !errors.Is(err, segment.ErrResyncBudget) {
		return 0, false // an I/O error: the tail is reported as it is
	}
	if !found {
		return 0, false
	}
	name := filepath.Base(lc.f.Path)
	ce := *t.Err
	if t.Kind == segment.TailTornBatch {
		// A length past the end of the file with a valid batch after it:
		// the length is corrupt, not a torn write.
		var b [4]byte
		size := int64(-1)
		if _, err := lf.ReaderAt().ReadAt(b[:], t.ValidBytes+8); err == nil {
			size = int64(int32(binary.BigEndian.Uint32(b[:])))
		}
		ce.Err = fmt.Errorf("%w: batchLength %d would run past the end of the file, yet a valid batch follows at position %d: the length is corrupt, not a torn write",
			decode.ErrCorrupt, size, pos)
	}
	st.report(fileFinding(finding.CorruptBatch, lc.f.Path, ce.Pos, ce.BaseOffset,
		fmt.Sprintf("%s (validBytes %d; the broker's recovery truncates the segment here; dump resynchronised at position %d)", ce.Error(), t.ValidBytes, pos)))
	skipped := fileFinding(finding.SkippedBytes, lc.f.Path, t.ValidBytes, -1,
		fmt.Sprintf("%s: skipped %d bytes from position %d to %d that do not frame a batch; reading on from the next valid batch (offset %d or above)",
			name, pos-t.ValidBytes, t.ValidBytes, pos, lc.minOffset()))
	skipped.To = pos
	st.report(skipped)
	if lc.damage == nil {
		d := t
		d.Kind = segment.TailCorrupt
		d.Err = &ce
		lc.damage = &d
	}
	return pos, true
}

// summarise makes the summary's tail the first damage dump read past, when
// there was one: validBytes is where recovery truncates the segment, the
// tail kind says why, and the invalid bytes count everything after it.
func (lc *logCheck) summarise(sum *LogSummary) {
	if lc.damage == nil {
		return
	}
	end := sum.Tail.End
	sum.Tail = *lc.damage
	sum.Tail.End = end
}
