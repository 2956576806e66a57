package mirror

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/barrier"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/edit"
)

// DigestPlan is a mirror planned against a digest of its destination
// (kseg digest) instead of the destination's disk: what would be copied.
// Its Plan holds what a digest can tell — the destination's log, every
// one of its batches compared with the source's, where it diverges and
// what --align would cut, the copied range, its batches, records, bytes
// and barriers, and the new log end — and no file operation: the
// segments a copy rolls, its index entries, snapshots and leader epochs
// depend on the destination's files, which only a plan on its disk reads.
type DigestPlan struct {
	Plan
	// Digest describes the digest the destination was read from; Name is
	// how it was given.
	Digest *digest.Info
	Name   string
}

// PlanFromDigest plans mirroring the partition directory src into the
// partition that dst, a digest node (OpenNode on a digest file), describes,
// as PlanMirror would on the destination's disk, and changes nothing. A
// destination that is not a prefix of src is a *DivergedError unless
// opts.Align; one ending below src's log start a *GapError; a corrupt
// source batch in the range a *CorruptSourceError; another topic id an
// *edit.RefusalError.
func PlanFromDigest(src string, dst Node, opts Options) (*DigestPlan, error) {
	info := dst.Digest()
	if info == nil {
		return nil, fmt.Errorf("%s is not a digest", dst.Name())
	}
	sn, err := openDirNode(src)
	if err != nil {
		return nil, err
	}
	sid, did := sn.Identity(), dst.Identity()
	p := &DigestPlan{Digest: info, Name: dst.Name(), Plan: *newPlan(src, info.Dir, did.Topic, did.Partition, opts)}
	if sid.HasTopicID {
		p.TopicID = sid.TopicIDString()
	}
	if sid.HasTopicID && did.HasTopicID && sid.TopicID != did.TopicID {
		return nil, edit.Refuse(RefuseTopicID, dst.Name(), "its topic id %s is not the source's %s: it is not a mirror of %s", did.TopicIDString(), sid.TopicIDString(), src)
	}
	if sid.Named && did.Named && (sid.Topic != did.Topic || sid.Partition != did.Partition) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the destination %s is not named after the source %s (a KIP-1279 mirror keeps the topic name and partition)",
			info.DirName(), filepath.Base(src)))
	}
	h := info.Hash
	sc, dc, done, err := openLogs(sn, dst)
	if err != nil {
		return nil, err
	}
	defer done()
	sc.setProgress(opts.Progress)
	srcEnd, err := sn.logEnd()
	if err != nil {
		return nil, err
	}
	p.SrcLog = OffsetRange{Start: sc.Start(), End: srcEnd}
	p.DstSegments = len(info.Segments)
	if len(info.Segments) == 0 {
		p.DstLog = OffsetRange{Start: -1, End: -1}
	} else {
		p.DstLog = OffsetRange{Start: dc.Start(), End: info.LogEnd}
	}
	end, err := p.compareDigest(sc, dc, h)
	if err != nil {
		return nil, err
	}
	return p, p.copyRange(sc, end)
}

// compareDigest compares every batch of the destination with the
// source's, as PlanMirror's compare does with the destination's bytes; it
// returns the offset the copy starts at, with sc at the first batch to
// copy (or before the first batch when nothing was compared).
func (p *DigestPlan) compareDigest(sc, dc chainCursor, h digest.Hash) (int64, error) {
	sHas := sc.Next()
	if len(p.Digest.Segments) == 0 {
		return -1, nil
	}
	start := max(sc.Start(), dc.Start())
	for sHas && sc.Batch().LastOffset() < start {
		sHas = sc.Next()
	}
	var prev *batchRef
	var div *Divergence
	var removed edit.Removed
	for dc.Next() {
		b := dc.Batch()
		if div != nil {
			removed.Batches++
			removed.Bytes += b.Size()
			continue
		}
		if b.LastOffset() < start {
			r := refOf(dc)
			prev = &r
			continue
		}
		d, err := divergenceAt(dc, sc, prev, sHas, h, func() (int64, error) { return p.SrcLog.End, nil })
		if err != nil {
			return 0, err
		}
		if d != nil {
			div = d
			removed.Batches++
			removed.Bytes += b.Size()
			continue
		}
		if b.PartitionLeaderEpoch != sc.Batch().PartitionLeaderEpoch {
			p.EpochDifferences++
		}
		p.Compared++
		r := refOf(dc)
		prev = &r
		sHas = sc.Next()
	}
	if err := dc.Err(); err != nil {
		return 0, err
	}
	if dm := dc.damage(); div == nil && dm != nil {
		div = &Divergence{Offset: dm.Offset, Reason: "the destination's tail is damaged: " + dm.Message, DstFile: dm.File, DstPosition: dm.Position, SrcPosition: -1}
		if sHas {
			div.SrcFile, div.SrcPosition = sc.File(), sc.Pos()
		}
	}
	end := max(p.Digest.Segments[len(p.Digest.Segments)-1].Base, dc.Start())
	if prev != nil {
		end = max(end, prev.next())
	}
	if div == nil {
		if end < p.SrcLog.Start && !(prev == nil && end <= p.SrcLog.Start) {
			return 0, &GapError{Src: p.Src, Dst: p.Name, DstEnd: end, SrcStart: p.SrcLog.Start}
		}
		return end, nil
	}
	p.Divergence = div
	if !p.Options.Align {
		return 0, &DivergedError{Src: p.Src, Dst: p.Name, Divergence: *div}
	}
	p.alignAt(div, removed)
	for sHas && sc.Batch().LastOffset() < div.Offset {
		sHas = sc.Next()
	}
	return div.Offset, nil
}

// alignAt plans Align's cut at the divergence div as LocalLog.truncateTo
// makes it, removing what the walk counted from there on; the copy
// resumes at div's offset.
func (p *DigestPlan) alignAt(div *Divergence, removed edit.Removed) {
	removed.Offsets = max(0, p.DstLog.End-div.Offset)
	p.Truncation = &Truncation{Offset: div.Offset, Segment: -1, Position: div.DstPosition, Removed: removed, SegmentsDeleted: []int64{}}
	for _, s := range p.Digest.Segments {
		if s.Name() == div.DstFile {
			p.Truncation.Segment = s.Base
		}
		if s.Base > div.Offset {
			p.Truncation.SegmentsDeleted = append(p.Truncation.SegmentsDeleted, s.Base)
		}
	}
}

// copyRange counts the source's batches from offset from (the
// destination's end; -1 for a new log) up to Options.Upto, sc at the
// first of them (compareDigest leaves it there).
func (p *DigestPlan) copyRange(sc chainCursor, from int64) error {
	p.From, p.To = from, from
	for has := sc.Batch() != nil; has; has = sc.Next() {
		b := sc.Batch()
		if b.LastOffset() < from {
			continue
		}
		if p.Options.Upto >= 0 && b.LastOffset() >= p.Options.Upto {
			break
		}
		if !sc.crcValid() {
			return &CorruptSourceError{Path: sc.File(), Position: sc.Pos(), Offset: b.BaseOffset,
				Err: fmt.Errorf("stored 0x%08x, computed 0x%08x", b.CRC, sc.computedCRC())}
		}
		if p.From < 0 {
			p.From = b.BaseOffset
		}
		p.Copied.Batches++
		p.Copied.Bytes += b.Size()
		if b.IsLegacy() {
			p.Copied.Records++
		} else {
			p.Copied.Records += int64(b.RecordCount)
		}
		if barrier.Is(b) {
			p.Barriers = append(p.Barriers, b.BaseOffset)
		}
		p.To = b.NextOffset()
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if dm := sc.damage(); dm != nil && (p.Options.Upto < 0 || dm.Offset < p.Options.Upto) {
		return &CorruptSourceError{Path: dm.File, Position: dm.Position, Offset: dm.Offset, Kind: dm.Kind, Err: fmt.Errorf("%s", dm.Message)}
	}
	if p.From < 0 {
		p.From = max(p.To, 0)
		p.To = p.From
	}
	p.NewLogEndOffset = max(p.To, p.DstLog.End, p.From)
	if p.Copied.Batches == 0 && p.Truncation == nil {
		p.NothingToDo = true
		p.Reason = fmt.Sprintf("the destination, as the digest describes it, already holds the source up to offset %d", p.From)
	}
	return nil
}
