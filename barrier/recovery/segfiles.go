// Pass two for the segments: the orphaned indexes and the unreachable
// segments deleted, and each examined segment's .txnindex, .timeindex and
// .index rebuilt where recovery would not keep them, then its .log cut.

package recovery

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
	"github.com/kseg/kseg/segment/finding"
	"github.com/kseg/kseg/segment/plural"
)

// orphanOps deletes index files without a .log, as LogLoader does at load
// ("Found an orphaned index file").
func (rp *planner) orphanOps(orphans []segment.SegmentFiles) error {
	for _, s := range orphans {
		for _, path := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
			if path == "" {
				continue
			}
			// error, as in dump: Kafka never leaves an index without its
			// .log under its live name (it renames a segment's files to
			// .deleted before it deletes them), so the segment's data went
			// missing outside the broker.
			rp.find(finding.OrphanIndex, path, -1, "an index file without its .log (segment %d): the segment's data is missing; the broker deletes the index at load", s.BaseOffset)
			if err := rp.ops.Delete(path, "orphaned index file (no .log)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// droppedOps deletes the segments after the one cut (base cutBase),
// highest first.
func (rp *planner) droppedOps(dropped []segment.SegmentFiles, cutBase int64) error {
	slices.SortFunc(dropped, func(a, b segment.SegmentFiles) int { return cmp.Compare(b.BaseOffset, a.BaseOffset) })
	for _, s := range dropped {
		for _, path := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if path != "" {
				if err := rp.ops.Delete(path, fmt.Sprintf("segment %d follows the truncated segment %d", s.BaseOffset, cutBase)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// segmentOps plans the examined segments' files, last first: .txnindex,
// .timeindex, .index, then the .log cut. kept are the segments that
// remain, res the producer state rebuilt over them.
func (rp *planner) segmentOps(scans []*segRepair, kept []segment.SegmentFiles, res *psm.Result) error {
	p := rp.p
	for i := len(scans) - 1; i >= 0; i-- {
		sr := scans[i]
		segEnd := p.NewLogEndOffset
		for _, s := range kept {
			if s.BaseOffset > sr.files.BaseOffset {
				segEnd = s.BaseOffset
				break
			}
		}
		if err := rp.planSegment(sr, &p.Segments[i], res, segEnd); err != nil {
			return err
		}
	}
	return nil
}

// planSegment decides the files of one examined segment: .txnindex,
// .timeindex, .index, then the .log cut.
func (rp *planner) planSegment(sr *segRepair, ps *Segment, res *psm.Result, segEnd int64) error {
	cutWhy := ""
	if sr.cut != nil {
		cutWhy = fmt.Sprintf("the log is cut at position %d", sr.cut.Position)
	}
	if err := rp.txnIndexOps(sr, ps, res, segEnd, cutWhy); err != nil {
		return err
	}
	if err := rp.indexOps(sr, ps, cutWhy); err != nil {
		return err
	}
	// The .log: the valid prefix, byte for byte.
	if sr.cut != nil {
		rp.ops.Add(edit.FileOp{Name: filepath.Base(sr.files.Log), Action: edit.OpReplace, OldSize: sr.size, NewSize: sr.valid, KeepPrefix: sr.valid,
			Why: fmt.Sprintf("truncate at position %d (%s): %d bytes cut", sr.cut.Position, sr.cut.Kind, sr.size-sr.valid)})
	}
	return nil
}

// txnIndexOps rebuilds the segment's .txnindex when it is not the
// aborted transactions whose ABORT marker is in the kept part of the
// segment, below segEnd (LogSegment.updateTxnIndex). cutWhy says why the
// log is cut ("" when it is not).
func (rp *planner) txnIndexOps(sr *segRepair, ps *Segment, res *psm.Result, segEnd int64, cutWhy string) error {
	base := sr.files.BaseOffset
	var want []byte
	n := 0
	for _, a := range res.Aborted {
		if a.LastOffset >= base && a.LastOffset < segEnd {
			want = segment.AppendAbortedTxn(want, segment.AbortedTxn{Version: segment.AbortedTxnCurrentVersion, ProducerID: a.ProducerID,
				FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, LastStableOffset: a.LastStableOffset})
			n++
		}
	}
	txnName := segment.SegmentFileName(base, segment.TxnIndexSuffix)
	ps.TxnIndex = FileRepair{Action: FileNone, Entries: n}
	switch {
	case sr.files.TxnIndex == "" && n == 0:
	case sr.files.TxnIndex == "":
		ps.TxnIndex.Action, ps.TxnIndex.Reason = FileCreate, fmt.Sprintf("missing, but %d aborted transactions end in the segment", n)
		rp.find(finding.TxnIndexMissing, txnName, -1, "missing; %d aborted transactions end in segment %d", n, base)
	default:
		// A .txnindex larger than its .log allows is not read: it is
		// rebuilt (segment.MaxTxnIndexBytes).
		limit, _ := segment.MaxTxnIndexBytes(sr.files.TxnIndex)
		old, size, err := segment.ReadFileAtMost(sr.files.TxnIndex, max(limit, int64(len(want))))
		if err != nil {
			return err
		}
		if want == nil {
			want = []byte{}
		}
		ps.TxnIndex.Action = FileKeep
		if old == nil || !bytes.Equal(old, want) {
			ps.TxnIndex.Action = FileRebuild
			kind, reason := finding.TxnIndexCorrupt, fmt.Sprintf("%d bytes, more than a broker writes for the segment's .log (at most %d)", size, limit)
			if old != nil {
				kind, reason = txnIndexProblem(old, want, sr.files.TxnIndex, base)
			}
			if cutWhy != "" && txnPrefix(old, want) {
				kind, reason = finding.TxnIndexRebuilt, cutWhy
			}
			ps.TxnIndex.Reason = reason
			rp.find(kind, txnName, -1, "%s; rebuilt from the aborted transactions the producer-state replay completes (%s)", ps.TxnIndex.Reason, plural.N(n, "entry"))
		}
	}
	if ps.TxnIndex.Action == FileCreate || ps.TxnIndex.Action == FileRebuild {
		if want == nil {
			want = []byte{}
		}
		if _, err := rp.ops.Write(txnName, want, "rebuilt: "+ps.TxnIndex.Reason); err != nil {
			return err
		}
	}
	return nil
}

// indexOps rebuilds the segment's .timeindex and .index when recovery
// would not keep them (or the cut, cutWhy, calls for it).
func (rp *planner) indexOps(sr *segRepair, ps *Segment, cutWhy string) error {
	for _, f := range []struct {
		suffix  string
		have    string
		bad     string
		content []byte
		entries int
		out     *FileRepair
		kind    finding.Kind
		rebuilt finding.Kind // the kind of a rebuild the cut alone calls for
	}{
		{segment.TimeIndexSuffix, sr.files.TimeIndex, sr.timeBad, sr.timeIndex, sr.timeEntries, &ps.TimeIndex, sr.timeKind, finding.TimeIndexRebuilt},
		{segment.IndexSuffix, sr.files.Index, sr.indexBad, sr.index, sr.indexEntries, &ps.Index, sr.indexKind, finding.IndexRebuilt},
	} {
		name := segment.SegmentFileName(sr.files.BaseOffset, f.suffix)
		*f.out = FileRepair{Action: FileKeep, Entries: f.entries}
		why, kind := f.bad, f.kind
		switch {
		case why == "" && cutWhy != "":
			why, kind = cutWhy, f.rebuilt
		case kind.Severity() == finding.Info && cutWhy != "":
			why = cutWhy + "; " + why
		}
		if why == "" {
			continue
		}
		f.out.Action, f.out.Reason = FileRebuild, why
		if f.have == "" {
			f.out.Action = FileCreate
		}
		changed, err := rp.ops.Write(name, f.content, "rebuilt from the log: "+why)
		if err != nil {
			return err
		}
		if !changed {
			f.out.Action, f.out.Reason = FileKeep, ""
			continue
		}
		rp.find(kind, name, -1, "%s; rebuilt from the kept batches (%s, index.interval.bytes %d)", why, plural.N(f.entries, "entry"), rp.opts.IndexIntervalBytes)
	}
	return nil
}

// txnIndexProblem describes how an existing .txnindex differs from the
// rebuilt one, with the finding's kind and severity: dump's for what dump
// sees (txnindex-corrupt and index-sanity errors, a txnindex-partial-entry
// warning), txnindex-mismatch (an error) for entries that are not the
// aborted transactions the log completes.
func txnIndexProblem(old, want []byte, path string, base int64) (kind finding.Kind, reason string) {
	x, err := segment.ParseTxnIndex(old, path)
	switch {
	case err != nil:
		return finding.TxnIndexCorrupt, err.Error()
	case segment.SanityCheckTxnIndex(&x, base) != nil:
		return finding.IndexSanity, segment.SanityCheckTxnIndex(&x, base).Error()
	case len(x.Entries)*segment.AbortedTxnSize != len(want):
		return finding.TxnIndexMismatch, fmt.Sprintf("%s, the log has %s ending in the segment", plural.N(len(x.Entries), "entry"), plural.N(len(want)/segment.AbortedTxnSize, "aborted transaction"))
	case !bytes.Equal(old[:len(want)], want):
		return finding.TxnIndexMismatch, "its entries differ from the aborted transactions the log completes"
	}
	return finding.TxnIndexPartialEntry, fmt.Sprintf("%d trailing bytes, a partial entry", x.TrailingBytes)
}

// txnPrefix reports whether want is a prefix of old: only entries past
// the cut go.
func txnPrefix(old, want []byte) bool { return len(want) < len(old) && bytes.HasPrefix(old, want) }
