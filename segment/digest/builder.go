package digest

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/kseg/kseg/segment"
)

// Partition is who a Builder's digest is of.
type Partition struct {
	Topic      string
	Partition  int32
	TopicID    [16]byte
	HasTopicID bool
	Dir, Host  string
	Taken      time.Time
	// LogStartCheckpoint is the log-start-offset-checkpoint entry (-1:
	// none).
	LogStartCheckpoint int64
}

// Builder writes a digest from batch facts, without a log: what a
// generator of large test and benchmark digests needs (a digest of a
// 100 GiB log is written in seconds, without the log). Write is the
// digest of a directory.
type Builder struct {
	e       *encoder
	infos   []SegmentInfo
	block   []int64
	batches int64
	seg     bool
	next    int64
	err     error
}

// NewBuilder starts a whole-log digest of p, hashed with h, on w.
func NewBuilder(w io.Writer, p Partition, h Hash, version string) *Builder {
	b := &Builder{e: newEncoder(w, h)}
	e := b.e
	e.header(version)
	r := append(e.blk, tagPartition)
	r = appendString(r, p.Topic)
	r = binary.AppendVarint(r, int64(p.Partition))
	if p.HasTopicID {
		r = append(r, 1)
		r = append(r, p.TopicID[:]...)
	} else {
		r = append(r, 0)
	}
	r = appendString(r, p.Dir)
	r = appendString(r, p.Host)
	r = binary.AppendVarint(r, p.Taken.UnixMilli())
	r = binary.AppendVarint(r, -1) // from
	r = binary.AppendVarint(r, -1) // first offset
	r = append(r, 0)               // no anchor
	r = binary.AppendVarint(r, p.LogStartCheckpoint)
	r = binary.AppendVarint(r, -1) // high watermark
	e.blk = append(r, 0)
	return b
}

// Segment starts a segment (its .log's size and modification time as the
// digest records them), ending the one before with a clean tail.
func (b *Builder) Segment(s SegmentInfo) {
	b.endSegment()
	b.infos = append(b.infos, s)
	b.block = append(b.block, b.e.segmentStart(s, 0)+1)
	b.seg = true
}

func (b *Builder) endSegment() {
	if b.seg {
		b.e.tail(segment.Tail{Kind: segment.TailClean})
		b.seg = false
	}
}

// Batch adds the whole batch raw (its CRC checked as the scanner checks
// it).
func (b *Builder) Batch(raw []byte, crcValid bool) {
	if !b.seg {
		b.err = fmt.Errorf("digest: a batch before the first segment")
		return
	}
	b.e.batch(raw, crcValid)
	b.count(raw)
}

// Header adds a v2 batch known by its 61-byte header and the hash of its
// CRC-covered bytes, its CRC taken as valid: a batch of a log that is not
// written.
func (b *Builder) Header(hdr, hash []byte) {
	if !b.seg || len(hdr) < 61 || len(hash) != b.e.h.Size() || hdr[16] != 2 || be.Uint16(hdr[21:])&0x20 != 0 {
		b.err = fmt.Errorf("digest: a header needs a segment, 61 bytes of a v2 data batch and a %d-byte hash", b.e.h.Size())
		return
	}
	b.e.header61 = hash
	b.e.batch(hdr[:61], true)
	b.e.header61 = nil
	b.count(hdr)
}

func (b *Builder) count(hdr []byte) {
	b.batches++
	b.next = max(b.next, int64(be.Uint64(hdr))+int64(int32(be.Uint32(hdr[23:])))+1)
	b.e.maybeFlush()
}

// Close ends the digest: the last segment's tail, the facts (its log end
// is the offset after the last batch), the trailer.
func (b *Builder) Close() error {
	if b.err != nil {
		return b.err
	}
	e := b.e
	b.endSegment()
	e.flush()
	factsPos := e.written
	end := int64(-1)
	if len(b.infos) > 0 {
		end = max(b.infos[len(b.infos)-1].Base, b.next)
	}
	e.facts(end, b.batches, b.infos, b.block)
	e.trailer(factsPos)
	return e.err
}

// Written is the number of bytes written so far.
func (b *Builder) Written() int64 { return b.e.written + int64(len(b.e.blk)) }
