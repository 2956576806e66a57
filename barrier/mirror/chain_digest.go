package mirror

import (
	"fmt"
	"time"

	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/finding"
)

// A digest describes its partition as it was when it was taken; the other
// side of an edge may have written since. Where the relation breaks only
// because of that, the edge is not diverged: the finding is digest-older
// (a warning), and what lies beyond is not compared.

// olderUpstreamDigest handles D holding data from offset on, at or beyond
// the end of U, when U is a digest: if the segment of D holding offset
// was written after U's digest was taken, U has most likely mirrored on
// since (a digest-older finding, the edge in sync as far as the digest
// goes), and true is returned. Otherwise D held the data when U's digest
// was taken, and false leaves it to be reported as beyond-upstream-end.
func (w *edgeWalk) olderUpstreamDigest(offset int64) bool {
	info, t, ok := olderDigest(w.un, w.dn, offset)
	if !ok {
		return false
	}
	f := w.dFinding(finding.DigestOlder, offset,
		"U is a digest of %s taken %s, which ends at offset %d; D holds offsets from %d on in %s, written %s, after the digest was taken: D is ahead of the digest, not diverged (take a new digest of U to compare them)",
		digestWhere(info), stamp(info.Taken), w.rep.UpstreamLog.End, offset, w.d.File(), stamp(t))
	w.add(f)
	w.rep.Status = EdgeInSync
	// Nothing of D beyond is its own, as far as anyone can tell.
	w.ownFrom = max(w.rep.DownstreamLog.End, offset)
	w.stopped = true
	return true
}

// olderDownstreamDigest handles D ending below U's log start when D is a
// digest taken before U wrote the segment holding U's log start: D has
// most likely mirrored on since (digest-older, true).
func (w *edgeWalk) olderDownstreamDigest(uStart int64) bool {
	info, t, ok := olderDigest(w.dn, w.un, uStart)
	if !ok {
		return false
	}
	w.add(finding.Finding{Kind: finding.DigestOlder, Offset: w.rep.DownstreamLog.End, ProducerID: -1, Position: -1, UpstreamPosition: -1,
		Message: fmt.Sprintf("D is a digest of %s taken %s, which ends at offset %d, below U's log start %d; U's segment holding its log start was written %s, after the digest was taken: D has most likely mirrored on since (take a new digest of D to compare them)",
			digestWhere(info), stamp(info.Taken), w.rep.DownstreamLog.End, uStart, stamp(t))})
	return true
}

// olderDigest is the digest node n was read from, when other wrote the
// segment holding offset after that digest was taken (other has most
// likely mirrored on since), with when that segment was written.
func olderDigest(n, other Node, offset int64) (*digest.Info, time.Time, bool) {
	info := n.Digest()
	if info == nil {
		return nil, time.Time{}, false
	}
	t, ok := other.modified(offset)
	if !ok || !writtenAfter(t, info.Taken) {
		return nil, time.Time{}, false
	}
	return info, t, true
}

// writtenAfter compares a modification time with the time a digest was
// taken, both in milliseconds as a digest records them: a write in the
// same millisecond is not after (the edge is then judged as it is, not
// excused).
func writtenAfter(modified, taken time.Time) bool { return modified.UnixMilli() > taken.UnixMilli() }

func digestWhere(info *digest.Info) string {
	if info.Host != "" {
		return info.Host + ":" + info.Dir
	}
	return info.Dir
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// sameAs reports two batches equal as sameBatch compares them.
func sameAs(x, y batchView, h digest.Hash) bool {
	i, _ := diffBatches(x, y, h)
	return i < 0
}
