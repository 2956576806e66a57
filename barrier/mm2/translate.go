package mm2

import (
	"fmt"
	"slices"

	"github.com/kseg/kseg/segment/finding"
)

// seen is what the comparison saw at one offset of one side: the record
// there, if a data record the comparison reads is there.
type seen struct {
	off   int64
	found bool
	it    item
}

// offsetLookup records the records at a sorted set of offsets as a
// stream passes them; several streams of the same side (the main one and
// far scans) may each pass them, each with its own position (lookupPos).
type offsetLookup struct {
	at []seen
}

func newOffsetLookup(offs []int64) *offsetLookup {
	slices.Sort(offs)
	offs = slices.Compact(offs)
	l := &offsetLookup{at: make([]seen, len(offs))}
	for i, o := range offs {
		l.at[i].off = o
	}
	return l
}

// lookupPos is one stream's position in an offsetLookup.
type lookupPos struct{ i int }

// observe notes it, the next record of a stream, in l.
func (l *offsetLookup) observe(p *lookupPos, it *item) {
	if l == nil {
		return
	}
	for p.i < len(l.at) && l.at[p.i].off < it.off {
		p.i++
	}
	if p.i < len(l.at) && l.at[p.i].off == it.off {
		l.at[p.i].found, l.at[p.i].it = true, *it
	}
}

func (l *offsetLookup) get(off int64) *seen {
	i, ok := slices.BinarySearchFunc(l.at, off, func(s seen, o int64) int { return cmpInt(s.off, o) })
	if !ok {
		return nil
	}
	return &l.at[i]
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// syncRecord is an offset sync of the source partition; superseded when
// a later one's upstream offset is at or below it.
type syncRecord struct {
	up, down   int64
	superseded bool
}

// checkSyncs judges each offset sync: its upstream and downstream offsets
// must hold records of the same content (OffsetSyncWriter records the
// offset RecordMetadata gave the copy of the record it read at the
// upstream offset).
func checkSyncs(syncs []syncRecord, src, tgt *offsetLookup, srcSide, tgtSide *Side) []SyncCheck {
	out := make([]SyncCheck, 0, len(syncs))
	for _, sr := range syncs {
		s := [2]int64{sr.up, sr.down}
		c := SyncCheck{UpstreamOffset: s[0], DownstreamOffset: s[1]}
		u, d := src.get(s[0]), tgt.get(s[1])
		switch {
		case s[1] >= tgtSide.LogEnd:
			c.Kind = finding.SyncMismatch
			c.Message = fmt.Sprintf("offset sync %d -> %d: the target ends at offset %d, below its downstream offset", s[0], s[1], tgtSide.LogEnd)
		case s[0] >= srcSide.LogEnd:
			c.Kind = finding.SyncMismatch
			c.Message = fmt.Sprintf("offset sync %d -> %d: the source ends at offset %d, below its upstream offset", s[0], s[1], srcSide.LogEnd)
		case !u.found || !d.found:
			c.Kind = finding.SyncNotVerified
			c.Message = fmt.Sprintf("offset sync %d -> %d: %s", s[0], s[1], absence(u, d, srcSide, tgtSide))
		case u.it.h != d.it.h:
			c.Kind = finding.SyncMismatch
			c.Message = fmt.Sprintf("offset sync %d -> %d: the source record at %d and the target record at %d differ in key, value or headers", s[0], s[1], s[0], s[1])
		case comparableTS(&u.it, &d.it) && u.it.ts != d.it.ts:
			c.Kind = finding.SyncMismatch
			c.Message = fmt.Sprintf("offset sync %d -> %d: the source record's timestamp is %d, its copy's %d", s[0], s[1], u.it.ts, d.it.ts)
		}
		if c.Kind == finding.SyncMismatch && sr.superseded {
			c.Kind = finding.SyncNotVerified
			c.Message += "; a later sync's upstream offset is at or below it (the source topic re-created, or a task restarted), so MM2 no longer translates with it"
		}
		out = append(out, c)
	}
	return out
}

func absence(u, d *seen, src, tgt *Side) string {
	where := func(s *seen, side *Side, name string) string {
		if s.found {
			return ""
		}
		if s.off < side.LogStart {
			return fmt.Sprintf("the %s's log starts at %d, above %d; ", name, side.LogStart, s.off)
		}
		return fmt.Sprintf("the %s holds no data record MM2 reads at %d (a control record, an aborted one, or one its cleaner removed); ", name, s.off)
	}
	m := where(u, src, "source") + where(d, tgt, "target")
	return m + "not verified"
}

// crossings tracks, for each upstream offset U a checkpoint names, where
// the target last crossed it: the copy of the first source record at or
// after U that follows, in target order, copies of records before U. A
// consumer resuming there reads every record at or after U MM2 copied,
// since MM2 copies on from where it resumes; the last crossing counts,
// as a restarted task copies again from before U (OffsetSyncStore, after
// an upstream rewind, translates from its syncs after the rewind).
type crossings struct {
	us   []int64
	tgt  []int64 // target offset of the crossing, -1 when none yet
	rank []int64
}

func newCrossings(us []int64) *crossings {
	slices.Sort(us)
	us = slices.Compact(us)
	c := &crossings{us: us, tgt: make([]int64, len(us)), rank: make([]int64, len(us))}
	for i := range c.tgt {
		c.tgt[i], c.rank[i] = -1, -1
	}
	return c
}

// cross notes that target record x copies the source record at offset
// cur, which follows, in target order, a copy of the record at prev.
func (c *crossings) cross(prev, cur int64, x *item) {
	if c == nil || cur <= prev {
		return
	}
	i, _ := slices.BinarySearch(c.us, prev+1)
	for ; i < len(c.us) && c.us[i] <= cur; i++ {
		c.tgt[i], c.rank[i] = x.off, x.rank
	}
}

// checkpoint is a checkpoint record for the target partition.
type checkpoint struct {
	group      string
	up, down   int64
	logOffset  int64 // its offset in the checkpoints partition
	unmirrored bool
}

// judgeCheckpoints: each checkpoint's downstream offset must be at or
// below the exact translation of its upstream offset (Report's
// CheckpointCheck); downRank is the rank of the first target record at or
// after each downstream offset.
func judgeCheckpoints(cps []checkpoint, c *crossings, downRank *offsetRanks, tgt *Side) []CheckpointCheck {
	out := make([]CheckpointCheck, 0, len(cps))
	for _, cp := range cps {
		k := CheckpointCheck{Group: cp.group, UpstreamOffset: cp.up, DownstreamOffset: cp.down, Exact: tgt.LogEnd}
		exactRank := tgt.Records
		if i, ok := slices.BinarySearch(c.us, cp.up); ok && c.tgt[i] >= 0 {
			k.Exact, exactRank = c.tgt[i], c.rank[i]
		}
		dRank := downRank.rank(cp.down, tgt.Records)
		switch {
		case dRank <= exactRank && cp.down <= tgt.LogEnd:
			k.Behind = exactRank - dRank
		default:
			k.Ahead = dRank - exactRank
			k.Kind = finding.CheckpointAhead
			past := ""
			if cp.down > tgt.LogEnd {
				past = fmt.Sprintf(", past the target's end %d", tgt.LogEnd)
			}
			k.Message = fmt.Sprintf("group %s: checkpoint upstream %d -> downstream %d%s is past the exact translation %d: a consumer failing over there skips %s copied from at or after upstream offset %d",
				cp.group, cp.up, cp.down, past, k.Exact, records(k.Ahead), cp.up)
		}
		out = append(out, k)
	}
	return out
}

// offsetRanks records the rank of the first target record at or after
// each of a sorted set of offsets, as the target stream passes.
type offsetRanks struct {
	offs  []int64
	ranks []int64
	i     int
}

func newOffsetRanks(offs []int64) *offsetRanks {
	slices.Sort(offs)
	offs = slices.Compact(offs)
	r := &offsetRanks{offs: offs, ranks: make([]int64, len(offs))}
	for i := range r.ranks {
		r.ranks[i] = -1
	}
	return r
}

func (r *offsetRanks) observe(x *item) {
	if r == nil {
		return
	}
	for r.i < len(r.offs) && r.offs[r.i] <= x.off {
		r.ranks[r.i] = x.rank
		r.i++
	}
}

// rank is the rank recorded for off; end when no target record is at or
// after it.
func (r *offsetRanks) rank(off, end int64) int64 {
	i, ok := slices.BinarySearch(r.offs, off)
	if !ok || r.ranks[i] < 0 {
		return end
	}
	return r.ranks[i]
}
