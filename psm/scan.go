// The log as replay reads it: the segments from a start offset on, each
// framed by segment's scanner (CRCs checked where asked), cut where the
// rebuild's segment limits or a damaged tail end it, and the log end
// offset.

package psm

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime/debug"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// batchVisitor sees every batch in [start, end) with its decoded control
// record (nil for data and empty control batches). Returning false stops.
type batchVisitor func(b *decode.Batch, ctl *decode.Control, ctlTs int64) bool

// scan walks the batches of [start, end) in log order, as
// rebuildProducerState reads them: from the segment holding start, the
// first batch whose lastOffset >= start (LogSegment.translateOffset), and
// stopping before the first batch whose lastOffset >= end (end < 0: the
// log end). Findings (CRC mismatches, damaged tails, undecodable control
// records) go to m. It sets r.leo and r.stopped.
func (r *rebuilder) scan(m *Manager, start, end int64, barriersOnly bool, visit batchVisitor) error {
	r.leo, r.stopped = r.logStart, false
	if len(r.segs) > 0 {
		r.leo = r.segs[len(r.segs)-1].BaseOffset
	}
	first := 0
	for i := range r.segs {
		if r.segs[i].BaseOffset <= start {
			first = i
		}
	}
	for i := first; i < len(r.segs); i++ {
		seg := r.segs[i]
		if end >= 0 && seg.BaseOffset >= end && i > first {
			r.stopped = true
			return nil
		}
		done, err := r.scanSegment(m, i, seg, r.segmentStart(i, start), end, barriersOnly, visit)
		if err != nil {
			return err
		}
		if done && r.truncatedAt < 0 {
			return nil
		}
		if r.afterSegment != nil {
			r.afterSegment(i)
		}
		if done {
			return nil // recovery cut the log here and deleted the segments after it
		}
	}
	return nil
}

// segmentStart is where the scan of segment i starts: start, except in a
// segment recovery replays, which LogSegment.recover reads from its first
// batch whatever the log start (and whose producer state it keeps).
func (r *rebuilder) segmentStart(i int, start int64) int64 {
	if r.recovered != nil && r.recovered[i] {
		return min(start, r.segs[i].BaseOffset)
	}
	return start
}

// startPosition uses the segment's offset index to skip to the batch
// holding start, as LogSegment.translateOffset does; the entry is used only
// if the batch at its position really ends at the indexed offset.
func startPosition(lf *segment.LogFile, seg segment.SegmentFiles, start, limit int64) int64 {
	if seg.Index == "" || start <= seg.BaseOffset {
		return 0
	}
	size := lf.Size
	if limit > 0 {
		size = min(size, limit)
	}
	idx, err := segment.ReadOffsetIndex(seg.Index, seg.BaseOffset)
	if err != nil || len(idx.Entries) == 0 {
		return 0
	}
	e := idx.Lookup(start)
	if e.Position <= 0 || int64(e.Position) >= size {
		return 0
	}
	sc := lf.Scanner(segment.ScanOptions{Start: int64(e.Position), BufferSize: 64 << 10, Limit: size})
	if !sc.Next() || sc.Batch().LastOffset() != e.Offset {
		return 0
	}
	return int64(e.Position)
}

// scanSegment replays one segment. It reads the way the CRC floor does:
// the segment is mapped (no copy out of the page cache) and framed and
// CRC-checked on a second core (segment.CRCScanner) while the state
// machine runs here, in log order, as LogSegment.recover runs it.
func (r *rebuilder) scanSegment(m *Manager, segIdx int, seg segment.SegmentFiles, start, end int64, barriersOnly bool, visit batchVisitor) (done bool, err error) {
	sc, err := r.openSegment(seg, start, r.opts.VerifyCRC && !barriersOnly)
	if err != nil || sc == nil {
		return false, err
	}
	defer sc.Close()
	// A mapped segment that a broker truncates under the replay faults on
	// access: an error for the segment instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			done, err = false, faultError(seg.Log, e)
		}
	}()
	name := filepath.Base(seg.Log)
	recovered := r.recovered != nil && r.recovered[segIdx] && !barriersOnly
	segEnd := seg.BaseOffset // the segment's next offset so far (LogSegment.readNextOffset)
	for sc.Next() {
		b := sc.Batch()
		if r.segStart != nil && r.segStart[segIdx]+sc.Pos() >= r.next {
			r.progress(segIdx, sc.Pos())
		}
		last := b.LastOffset()
		if last < start {
			r.leo = max(r.leo, b.NextOffset())
			continue
		}
		if end >= 0 && last >= end {
			r.stopped = true
			return true, nil
		}
		if recovered && r.opts.VerifyCRC && !sc.CRCValid() {
			// LogSegment.recover: ensureValid throws, the segment is cut
			// before this batch, and LogLoader.recoverLog deletes the
			// segments after it.
			m.Report(anomaly(finding.CRCMismatch, b.BaseOffset, pidOf(b),
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; the broker's recovery truncates the log here and deletes the segments after it (LogSegment.recover, LogLoader.recoverLog): the state shown is the one after that cut",
					name, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
			r.truncate(segEnd)
			return true, nil
		}
		r.leo = max(r.leo, b.NextOffset())
		segEnd = max(segEnd, b.NextOffset())
		if barriersOnly && (!b.IsControl() || b.HasProducerID()) {
			continue
		}
		if !barriersOnly && r.opts.VerifyCRC && !sc.CRCValid() {
			m.Report(anomaly(finding.CRCMismatch, b.BaseOffset, pidOf(b),
				fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; applied anyway (the broker's recovery would truncate the log here)",
					name, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
		}
		var ctl *decode.Control
		ts := b.MaxTimestamp
		if b.IsControl() && b.RecordCount > 0 {
			var ok bool
			ctl, ts, ok = m.decodeControl(b, name, sc.Pos())
			if !ok {
				m.SetMapEndOffset(b.NextOffset())
				continue
			}
		} else if barriersOnly {
			continue
		}
		if !visit(b, ctl, ts) {
			r.stopped = true
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if r.segStart != nil {
		r.progress(segIdx, math.MaxInt64-r.segStart[segIdx])
	}
	return r.segmentTail(m, seg, sc.Tail(), recovered, barriersOnly, segEnd), nil
}

// segmentTail reports the tail of the segment seg that the scan ended
// at, t (zeros, bytes that do not frame a batch), and, for a segment the
// broker recovers, cuts the log at segEnd, after the last batch: done then
// says the log ends there.
func (r *rebuilder) segmentTail(m *Manager, seg segment.SegmentFiles, t segment.Tail, recovered, barriersOnly bool, segEnd int64) (done bool) {
	name := filepath.Base(seg.Log)
	switch t.Kind {
	case segment.TailClean:
		return false
	case segment.TailZeroFilled:
		if !barriersOnly {
			m.Report(anomaly(finding.ZeroTail, r.leo, -1,
				fmt.Sprintf("%s: %d zero bytes after position %d (a preallocated segment; the broker truncates them)", name, t.InvalidBytes(), t.ValidBytes)))
		}
	default:
		msg := fmt.Sprintf("%s: replay stopped at position %d: %d bytes do not frame a batch", name, t.ValidBytes, t.InvalidBytes())
		if t.Err != nil {
			msg = fmt.Sprintf("%s (replay of this segment stopped; %d bytes not read)", t.Err.Error(), t.InvalidBytes())
		}
		if recovered && r.segs[len(r.segs)-1].BaseOffset != seg.BaseOffset {
			msg += "; the broker's recovery truncates the log here and deletes the segments after it (LogLoader.recoverLog): the state shown is the one after that cut"
		}
		m.Report(anomaly(finding.CorruptLog, r.leo, -1, msg))
	}
	if recovered {
		// LogSegment.recover cuts the bytes that do not frame a batch
		// (zeros included) and recoverLog deletes the segments after it.
		r.truncate(segEnd)
		return true
	}
	return false
}

// truncate records that recovery cut the log at end, the next offset of
// the segment it cut: the log end from then on.
func (r *rebuilder) truncate(end int64) {
	r.truncatedAt, r.leo = end, end
}

// openSegment starts the scan of seg for a replay from start: its file,
// mapped, its CRCs checked on a second core, from the batch the offset
// index points to; or the Source's scan. nil: a SegmentLimits cut it to
// nothing.
func (r *rebuilder) openSegment(seg segment.SegmentFiles, start int64, checkCRC bool) (SegmentScanner, error) {
	if r.opts.Source != nil {
		return r.opts.Source.ScanSegment(seg)
	}
	limit, limited := r.opts.SegmentLimits[seg.BaseOffset]
	if limited && limit <= 0 {
		return nil, nil // cut to nothing
	}
	// The Walk's record of the segment, when there is one and no CRC is to
	// be checked (a walk checks none).
	if ws := r.opts.Walk.segment(seg.Log); ws != nil && !limited && !checkCRC && ws.readsFrom(start, seg.BaseOffset) {
		return &walkSource{s: ws}, nil
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return nil, err
	}
	sc := lf.CRCScanner(segment.ScanOptions{Start: startPosition(lf, seg, start, limit), Limit: limit, Mmap: !r.opts.ReadSegments}, checkCRC)
	return &fileScanner{CRCScanner: sc, lf: lf}, nil
}

// fileScanner is a segment's CRCScanner with its file, closed together.
type fileScanner struct {
	*segment.CRCScanner
	lf *segment.LogFile
}

func (f *fileScanner) Close() {
	f.CRCScanner.Close()
	f.lf.Close()
}

// faultError is the error for a memory fault e met reading the mapped
// file path (a broker truncated it under the read); any other panic goes
// on.
func faultError(path string, e any) error {
	if _, ok := e.(interface{ Addr() uintptr }); !ok {
		panic(e)
	}
	return fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", path, e)
}

func pidOf(b *decode.Batch) int64 {
	if b.HasProducerID() {
		return b.ProducerID
	}
	return -1
}

// logEnd is the offset after the last batch of the last segment, or its
// base offset when it holds none: LogSegment.readNextOffset, what
// LogLoader.recoverLog and deleteSegmentsIfLogStartGreaterThanLogEnd take
// as the log end. It reads the last segment's batch headers from its last
// offset-index entry on (the whole segment when it has no index), mapped:
// only the headers are touched, where positional reads copied every byte
// of an index-less 1 GiB segment once more before the replay read it.
func (r *rebuilder) logEnd() (end int64, err error) {
	if len(r.segs) == 0 {
		return r.logStart, nil
	}
	seg := r.segs[len(r.segs)-1]
	if r.opts.Source != nil {
		sc, err := r.opts.Source.ScanSegment(seg)
		if err != nil {
			return 0, err
		}
		defer sc.Close()
		end = seg.BaseOffset
		for sc.Next() {
			end = max(end, sc.Batch().NextOffset())
		}
		return end, sc.Err()
	}
	limit, limited := r.opts.SegmentLimits[seg.BaseOffset]
	if limited && limit <= 0 {
		return seg.BaseOffset, nil
	}
	if ws := r.opts.Walk.segment(seg.Log); ws != nil && !limited && ws.readsFrom(math.MaxInt64, seg.BaseOffset) {
		return ws.end(seg.BaseOffset), nil
	}
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{Start: startPosition(lf, seg, math.MaxInt64, limit), Limit: limit, Mmap: !r.opts.ReadSegments})
	defer sc.Close()
	// A mapped segment truncated under the read faults: an error, as in
	// scanSegment.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			end, err = 0, faultError(seg.Log, e)
		}
	}()
	end = seg.BaseOffset
	for sc.Next() {
		end = max(end, sc.Batch().NextOffset())
	}
	return end, sc.Err()
}

// LogEndOffset is the log end offset a loading broker finds in dir (the
// last segment's next offset).
func LogEndOffset(dir *segment.PartitionDir) (int64, error) {
	return newRebuilder(dir, DefaultOptions()).logEnd()
}
