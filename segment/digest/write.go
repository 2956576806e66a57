package digest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// Options tune Write.
type Options struct {
	// Hash is the batch hash (XXH3 when zero).
	Hash Hash
	// From, when not negative, writes an incremental section: the batches
	// from the one holding offset From on (the first whose lastOffset is
	// at least From), for appending to an earlier digest of the partition
	// that holds the batches before it. The section names the batch just
	// before its first (its anchor), which a reader checks against the
	// earlier digest. -1 digests the whole log.
	From int64
	// Version is kseg's version, written in the header.
	Version string
	// Host names the machine, written in the partition record.
	Host string
	// Now is when the digest is taken (time.Now when zero).
	Now time.Time
	// Mmap maps the segments instead of reading them.
	Mmap bool
	// Live: a broker holds the partition (its log directory's .lock) and
	// appends to it while it is read. A torn tail of the last segment is
	// then an append in flight, not damage: the digest ends at the last
	// whole batch (Summary.InFlight says how many bytes it left out).
	Live bool
	// Progress, when set, is told the bytes of the batches read (every
	// MiB or so).
	Progress func(n int64)
}

// SegmentInfo is a segment as a digest records it.
type SegmentInfo struct {
	Base     int64
	Size     int64
	Modified int64 // the .log's modification time, Unix milliseconds
}

// Name is the segment's .log file name.
func (s SegmentInfo) Name() string { return segment.SegmentFileName(s.Base, segment.LogSuffix) }

// Summary says what Write wrote.
type Summary struct {
	Topic     string
	Partition int32
	Hash      Hash
	Segments  int
	Snapshots int
	Batches   int64
	// LogBytes are the bytes of the batches digested; Bytes the digest's.
	LogBytes int64
	Bytes    int64
	// Start is the offset of the first batch digested (the log end when
	// there is none); End the log end offset.
	Start, End int64
	// InFlight are the bytes of a live partition's last segment after its
	// last whole batch, left out (Options.Live).
	InFlight int64
}

// anchor is the batch before an incremental section's first.
type anchor struct {
	base, last int64
	size       int64
	crc        uint32
	hash       []byte
}

func anchorOf(h Hash, raw []byte) *anchor {
	b, err := decode.ParseBatch(raw)
	if err != nil {
		return nil
	}
	return &anchor{base: b.BaseOffset, last: b.LastOffset(), size: b.Size(), crc: b.CRC, hash: h.Sum(nil, Covered(raw))}
}

// Covered is the part of a framed entry its CRC covers, the bytes the
// digest hashes: [21, end) of a v2 batch, [16, end) of a v0/v1 message.
// The fields before it (baseOffset, batchLength, partitionLeaderEpoch,
// magic and the CRC itself) are recorded as they are.
func Covered(raw []byte) []byte {
	if len(raw) > 16 && raw[16] >= 2 {
		return raw[21:]
	}
	return raw[16:]
}

// Write writes a digest of the partition directory dir to w.
func Write(w io.Writer, dir string, opts Options) (*Summary, error) {
	if opts.Hash == 0 {
		opts.Hash = XXH3
	}
	if opts.Hash.Size() == 0 {
		return nil, fmt.Errorf("digest: unknown hash %d", opts.Hash)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment.SegmentFiles
	var infos []SegmentInfo
	for s := range pd.Logs() {
		st, err := os.Stat(s.Log)
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
		infos = append(infos, SegmentInfo{Base: s.BaseOffset, Size: st.Size(), Modified: st.ModTime().UnixMilli()})
	}
	wr := &writer{opts: opts, pd: pd, segs: segs, infos: infos, e: newEncoder(w, opts.Hash),
		sum: &Summary{Topic: pd.Topic, Partition: pd.Partition, Hash: opts.Hash, Segments: len(segs), Start: -1}}
	if err := wr.run(); err != nil {
		return nil, err
	}
	wr.sum.Bytes = wr.e.written
	return wr.sum, nil
}

type writer struct {
	opts  Options
	pd    *segment.PartitionDir
	segs  []segment.SegmentFiles
	infos []SegmentInfo
	e     *encoder
	sum   *Summary

	blockPos []int64 // per segment, +1 (0: not in this section)
	segNext  []int64 // per segment, the greatest next offset framed (-1: none)
	pending  int64   // progress not yet told
}

func (wr *writer) progress(n int64) {
	if wr.opts.Progress == nil {
		return
	}
	wr.pending += n
	if wr.pending >= 1<<20 {
		wr.opts.Progress(wr.pending)
		wr.pending = 0
	}
}

func (wr *writer) run() error {
	// Where the section starts, and its anchor.
	si, pos, x, anc, err := wr.start()
	if err != nil {
		return err
	}
	e := wr.e
	e.header(wr.opts.Version)
	e.blk = wr.partitionRecord(e.blk, x, anc)
	wr.blockPos = make([]int64, len(wr.segs))
	wr.segNext = make([]int64, len(wr.segs))
	for i := range wr.segNext {
		wr.segNext[i] = -1
	}
	if anc != nil && si < len(wr.segs) && pos > 0 {
		wr.segNext[si] = anc.last + 1
	}
	for i := si; i < len(wr.segs); i++ {
		start := int64(0)
		if i == si {
			start = pos
		}
		if err := wr.segment(i, start); err != nil {
			return err
		}
	}
	if wr.pending > 0 && wr.opts.Progress != nil {
		wr.opts.Progress(wr.pending)
	}
	end, err := wr.logEnd(si)
	if err != nil {
		return err
	}
	if wr.sum.Start < 0 {
		wr.sum.Start = max(x, end)
		if x < 0 {
			wr.sum.Start = end
		}
	}
	wr.sum.End = end
	// The facts: snapshots, then the log end and the segment table.
	e.flush()
	factsPos := e.written
	for _, s := range wr.pd.Snapshots {
		b, err := segment.ReadFile(s.Path)
		if err != nil {
			return err
		}
		r := append(e.blk, tagSnapshot)
		r = binary.AppendVarint(r, s.Offset)
		r = appendString(r, s.Path)
		r = e.h.Sum(r, b)
		r = appendBytes(r, b)
		e.blk = r
		e.maybeFlush()
		wr.sum.Snapshots++
	}
	e.facts(end, wr.sum.Batches, wr.infos, wr.blockPos)
	e.trailer(factsPos)
	return e.err
}

// partitionRecord is the section's first record.
func (wr *writer) partitionRecord(b []byte, x int64, anc *anchor) []byte {
	pd := wr.pd
	b = append(b, tagPartition)
	b = appendString(b, pd.Topic)
	b = binary.AppendVarint(b, int64(pd.Partition))
	var meta segment.PartitionMetadata
	hasID := false
	if pd.PartitionMetadata != "" {
		if m, err := segment.ReadPartitionMetadata(pd.PartitionMetadata); err == nil {
			meta, hasID = m, true
		}
	}
	if hasID {
		b = append(b, 1)
		b = append(b, meta.TopicID[:]...)
	} else {
		b = append(b, 0)
	}
	abs, err := filepath.Abs(pd.Path)
	if err != nil {
		abs = pd.Path
	}
	b = appendString(b, abs)
	b = appendString(b, wr.opts.Host)
	b = binary.AppendVarint(b, wr.opts.Now.UnixMilli())
	b = binary.AppendVarint(b, max(wr.opts.From, -1))
	b = binary.AppendVarint(b, x)
	if anc == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, anc.base)
		b = binary.AppendVarint(b, anc.last)
		b = binary.AppendUvarint(b, uint64(anc.size))
		b = be.AppendUint32(b, anc.crc)
		b = append(b, anc.hash...)
	}
	ls, _ := segment.CheckpointOffset(pd, segment.LogStartOffsetCheckpointName)
	hw, _ := segment.CheckpointOffset(pd, segment.ReplicationOffsetCheckpointName)
	b = binary.AppendVarint(b, ls)
	b = binary.AppendVarint(b, hw)
	flags := byte(0)
	if pd.Topic != "" {
		if _, err := os.Stat(filepath.Join(segment.LogDirOf(pd.Path), segment.CleanShutdownName)); err == nil {
			flags |= pCleanShutdown
		}
	}
	if wr.opts.Live {
		flags |= pLive
	}
	return append(b, flags)
}

// start finds where the section starts: the whole log, or (From) the
// segment and position of the first batch whose lastOffset is at least
// From, that batch's baseOffset (x) and the batch before it (the anchor).
// x is -1 for a whole-log digest.
func (wr *writer) start() (si int, pos, x int64, anc *anchor, err error) {
	from := wr.opts.From
	if from < 0 || len(wr.segs) == 0 {
		return 0, 0, -1, nil, nil
	}
	// The last segment whose base is at most From.
	for i := range wr.segs {
		if wr.segs[i].BaseOffset <= from {
			si = i
		}
	}
	var prevRaw []byte
	for i := si; i < len(wr.segs); i++ {
		found, p, next, last, err := wr.find(i, from)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		if last != nil {
			prevRaw = last
		}
		if found || i == len(wr.segs)-1 {
			if prevRaw == nil && i > 0 && p == 0 {
				if prevRaw, err = lastBatch(wr.segs[i-1]); err != nil {
					return 0, 0, 0, nil, err
				}
			}
			if prevRaw != nil {
				anc = anchorOf(wr.opts.Hash, prevRaw)
			}
			return i, p, next, anc, nil
		}
	}
	return 0, 0, -1, nil, nil
}

// find scans segment i for the first batch whose lastOffset is at least
// from: its position and baseOffset, and the batch before it in the
// segment (nil when none was read). Not found: the end of the segment's
// valid bytes, and the offset after its last batch.
func (wr *writer) find(i int, from int64) (found bool, pos, x int64, prev []byte, err error) {
	seg := wr.segs[i]
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return false, 0, 0, nil, err
	}
	defer lf.Close()
	start := int64(0)
	if seg.Index != "" && from > seg.BaseOffset {
		if idx, err := segment.ReadOffsetIndex(seg.Index, seg.BaseOffset); err == nil && len(idx.Entries) > 0 {
			// The entry names the last offset of the batch at its position;
			// the batch holding from starts at or after the entry below it.
			if e := idx.Lookup(from - 1); e.Offset < from && e.Position > 0 && int64(e.Position) < lf.Size {
				start = int64(e.Position)
			}
		}
	}
	for _, s := range []int64{start, 0} {
		sc := lf.Scanner(segment.ScanOptions{Start: s, BufferSize: 256 << 10})
		x = seg.BaseOffset
		ok := true
		for sc.Next() {
			b := sc.Batch()
			if s > 0 && prev == nil && b.LastOffset() >= from {
				ok = false // the index pointed past the batch: rescan from 0
				break
			}
			if b.LastOffset() >= from {
				sc.Close()
				return true, sc.Pos(), b.BaseOffset, prev, nil
			}
			prev = append(prev[:0], b.Raw...)
			x = max(x, b.NextOffset())
		}
		if ok {
			err := sc.Err()
			pos := sc.Tail().ValidBytes
			sc.Close()
			return false, pos, x, prev, err
		}
		sc.Close()
		prev = nil
	}
	return false, 0, 0, nil, errors.New("unreachable")
}

// lastBatch is the last batch that frames in seg.
func lastBatch(seg segment.SegmentFiles) ([]byte, error) {
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{BufferSize: 256 << 10})
	defer sc.Close()
	var last []byte
	for sc.Next() {
		last = append(last[:0], sc.Batch().Raw...)
	}
	return last, sc.Err()
}

// segment writes segment i from byte start.
func (wr *writer) segment(i int, start int64) (err error) {
	seg, e := wr.segs[i], wr.e
	wr.blockPos[i] = e.segmentStart(wr.infos[i], start) + 1
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return err
	}
	defer lf.Close()
	sc := lf.CRCScanner(segment.ScanOptions{Start: start, Mmap: wr.opts.Mmap}, true)
	defer sc.Close()
	if wr.opts.Mmap {
		// A mapped segment truncated under the read faults: an error.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(interface{ Addr() uintptr }); !ok {
					panic(r)
				}
				err = fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", seg.Log, r)
			}
		}()
	}
	for sc.Next() {
		b := sc.Batch()
		if wr.sum.Start < 0 {
			wr.sum.Start = b.BaseOffset
		}
		e.batch(b.Raw, sc.CRCValid())
		wr.sum.Batches++
		wr.sum.LogBytes += b.Size()
		wr.segNext[i] = max(wr.segNext[i], b.NextOffset())
		wr.progress(b.Size())
		if e.err != nil {
			return e.err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	t := sc.Tail()
	if wr.opts.Live && i == len(wr.segs)-1 && (t.Kind == segment.TailTornHeader || t.Kind == segment.TailTornBatch) {
		wr.sum.InFlight = t.InvalidBytes()
		t = segment.Tail{Kind: segment.TailClean, ValidBytes: t.ValidBytes, End: t.ValidBytes}
	}
	e.tail(t)
	return e.err
}

// logEnd is the log end offset (LogSegment.readNextOffset of the last
// segment holding a batch, at least the last segment's base), as
// verify-chain's cursor finds it.
func (wr *writer) logEnd(si int) (int64, error) {
	if len(wr.segs) == 0 {
		return -1, nil
	}
	end := wr.segs[len(wr.segs)-1].BaseOffset
	for i := len(wr.segs) - 1; i >= 0; i-- {
		n := wr.segNext[i]
		if i < si {
			raw, err := lastBatchNext(wr.segs[i])
			if err != nil {
				return 0, err
			}
			n = raw
		}
		if n >= 0 {
			return max(end, n), nil
		}
	}
	return end, nil
}

// lastBatchNext is the greatest next offset of the batches that frame in
// seg, -1 when none does.
func lastBatchNext(seg segment.SegmentFiles) (int64, error) {
	lf, err := segment.OpenLog(seg.Log)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	n := int64(-1)
	for sc.Next() {
		n = max(n, sc.Batch().NextOffset())
	}
	return n, sc.Err()
}
