// Pass one: every segment read as LogSegment.recover reads it (every CRC,
// the offsets' order), a damaged tail refused or cut as RepairTail asks
// (LogLoader.recoverLog), and the producer state at the log end.

package barrier

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
)

// batchMeta is what the planner keeps of a batch.
type batchMeta struct {
	Base, Last int64
	Pos, Size  int64
	Magic      int8
	PLE        int32
	MaxTs      int64
	Records    int32
	Control    bool
	Txn        bool
	PID        int64
	Epoch      int16
	Barrier    bool
	MarkerType decode.ControlType // for transaction markers
}

func metaOf(b *decode.Batch, pos int64) batchMeta {
	m := batchMeta{Base: b.BaseOffset, Last: b.LastOffset(), Pos: pos, Size: b.Size(), Magic: b.Magic,
		PLE: b.PartitionLeaderEpoch, MaxTs: b.MaxTimestamp, Records: b.RecordCount, Control: b.IsControl(),
		Txn: b.IsTransactional(), PID: b.ProducerID, Epoch: b.ProducerEpoch, MarkerType: -1}
	if m.Records < 0 {
		m.Records = 1
	}
	if t, ok := ControlTypeOf(b); ok {
		m.MarkerType = t
		m.Barrier = t == decode.ControlMirrorPidReset
	}
	return m
}

// segScan is pass 1's account of one segment.
type segScan struct {
	files   segment.SegmentFiles
	size    int64
	valid   int64 // where recovery would truncate: end of the last good batch
	next    int64 // offset after the last good batch; the base when none
	framed  int64 // offset after the last batch that frames, damaged ones included
	lost    int64 // batches that frame after the cut
	batches int64
	records int64
	last    *batchMeta
	cut     *segment.Cut // where recovery cuts it, nil when nowhere
	bad     *CorruptTailError
}

// scanSegment walks one .log as LogSegment.recover does (segment.Recover:
// every CRC, the offsets' order, the transaction markers), handing each
// batch recovery keeps to fn (nil: none) until fn returns false, and the
// bytes read to progress (nil: none).
func scanSegment(files segment.SegmentFiles, fn func(m *batchMeta) bool, progress func(int64)) (*segScan, error) {
	s := &segScan{files: files}
	r, err := segment.Recover(files.Log, files.BaseOffset, segment.RecoverOptions{Progress: progress, OnBatch: func(pos int64, b *decode.Batch) bool {
		m := metaOf(b, pos)
		s.last = &m
		s.records += int64(m.Records)
		return fn == nil || fn(&m)
	}})
	if err != nil {
		return nil, err
	}
	s.size, s.valid, s.next, s.batches, s.cut = r.Size, r.ValidBytes, r.NextOffset, r.Batches, r.Cut
	s.framed, s.lost = max(r.FramedEnd, r.NextOffset), r.Lost
	if c := r.Cut; c != nil && c.Kind.Damage() {
		s.bad = &CorruptTailError{Segment: files.BaseOffset, Path: files.Log, ValidBytes: c.Position, Kind: c.Kind, Err: c.Err, Message: c.Message}
	}
	return s, nil
}

// rebuild replays producer state up to upto (exclusive; -1 = log end).
func (pl *planner) rebuild(upto int64) (*psm.Result, error) {
	o := psm.DefaultOptions()
	o.Upto = upto
	o.LogStartOffset = pl.logStart
	// Pass 1 checked every CRC already (and a failing batch ends the log
	// the plan works on).
	o.VerifyCRC = false
	return psm.Rebuild(pl.pd, o)
}

// readLogStart is the partition's log-start-offset-checkpoint entry; -1
// when absent (a warning when unreadable): the log then starts at its
// first segment.
func (pl *planner) readLogStart() int64 {
	ls, err := segment.CheckpointOffset(pl.pd, segment.LogStartOffsetCheckpointName)
	if err != nil {
		pl.warnf("%s unreadable (%v); log start taken from the first segment", filepath.Join(pl.logDir, segment.LogStartOffsetCheckpointName), err)
	}
	return ls
}

// open lists the partition's segments with a .log (warning about
// leftovers and orphaned index files) and reads its log start offset.
func (pl *planner) open() ([]segment.SegmentFiles, error) {
	p := pl.p
	pd, err := segment.OpenPartitionDir(pl.dir)
	if err != nil {
		return nil, err
	}
	pl.pd = pd
	journalTemp, err := edit.CheckLeftovers(pd, "kseg injection")
	if err != nil {
		return nil, err
	}
	if journalTemp != "" {
		// The journal is written before anything else: a crash while
		// writing it left the partition untouched.
		pl.warnf("%s is left from an injection interrupted before it changed anything; applying the plan removes it (a dry run leaves it)", journalTemp)
	}
	var segs []segment.SegmentFiles
	for _, s := range pd.Segments {
		if s.Log == "" {
			pl.warnf("orphaned index files at base offset %d (no .log); the broker deletes them at load", s.BaseOffset)
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, edit.Refuse(edit.RefuseNotPartition, pl.dir, "no .log segment")
	}
	p.Segments = len(segs)
	pl.logStart = pl.readLogStart()
	return segs, nil
}

// passOne reads every segment and checks every CRC (LogSegment.recover's
// checks). A damaged segment is refused (its *CorruptTailError) unless
// RepairTail, which cuts it where recovery would: kept are the segments
// up to it, dropped those after it. It sets the log end.
func (pl *planner) passOne(segs []segment.SegmentFiles) (kept, dropped []*segScan, err error) {
	p, o := pl.p, pl.opts
	scans := make([]*segScan, len(segs))
	for i, s := range segs {
		if scans[i], err = scanSegment(s, nil, o.Progress); err != nil {
			return nil, nil, err
		}
	}
	kept = scans
	for i, s := range scans {
		if s.bad == nil {
			continue
		}
		if !o.RepairTail {
			return nil, nil, s.bad
		}
		// LogLoader.recoverLog: the segment is truncated at validBytes and
		// every later segment deleted.
		kept, dropped = scans[:i+1], scans[i+1:]
		p.TailRepair = &TailRepair{Segment: s.files.BaseOffset, Path: s.files.Log, Position: s.valid, Kind: s.cut.Kind.String(),
			Bytes: s.size - s.valid, Message: s.cut.Message, LogEndOffset: s.framed}
		for _, d := range dropped {
			p.TailRepair.SegmentsDropped = append(p.TailRepair.SegmentsDropped, d.files.BaseOffset)
			p.TailRepair.LogEndOffset = max(p.TailRepair.LogEndOffset, d.framed)
		}
		break
	}
	for _, s := range kept[:len(kept)-1] {
		if s.cut != nil && s.cut.Kind == segment.CutZeroFilled {
			pl.warnf("%s: %d zero bytes after position %d in a segment that is not the last", filepath.Base(s.files.Log), s.size-s.valid, s.valid)
		}
	}
	p.LogEndOffset = kept[len(kept)-1].next
	return kept, dropped, nil
}

// replayEnd is the producer state at the (recovered) log end end, recorded
// in the plan; an error anomaly of the replay is a warning.
func (pl *planner) replayEnd(end int64) (*psm.Result, error) {
	p := pl.p
	upto := int64(-1)
	if p.TailRepair != nil {
		upto = end
	}
	r0, err := pl.rebuild(upto)
	if err != nil {
		return nil, fmt.Errorf("rebuilding producer state: %w", err)
	}
	p.LogStartOffset = r0.LogStartOffset
	p.LastStableOffset = r0.LastStableOffset
	p.FirstUndecidedOffset = r0.FirstUndecidedOffset
	p.Producers = len(r0.Producers)
	for _, t := range r0.Ongoing {
		p.Ongoing = append(p.Ongoing, TxnRef{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset})
	}
	var first *finding.Finding
	for i, a := range r0.Anomalies {
		if a.IsError() {
			p.ReplayAnomalies++
			if first == nil {
				first = &r0.Anomalies[i]
			}
		}
	}
	if first != nil {
		more := ""
		if p.ReplayAnomalies > 1 {
			more = fmt.Sprintf(" and %d more", p.ReplayAnomalies-1)
		}
		pl.warnf("producer-state replay found %s at offset %d%s (see kseg replay-psm)", first.Kind, first.Offset, more)
	}
	return r0, nil
}
