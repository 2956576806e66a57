package digest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Info is what a digest says about its partition (the newest section's
// facts, for a digest of several sections).
type Info struct {
	// FormatVersion and KsegVersion are the newest section's header.
	FormatVersion int
	KsegVersion   string
	Hash          Hash
	Topic         string // "" when the directory's name is not <topic>-<partition>
	Partition     int32
	// TopicID is partition.metadata's topic id (HasTopicID false when the
	// file was absent or did not parse).
	TopicID    [16]byte
	HasTopicID bool
	// Dir is the partition directory's absolute path, on Host.
	Dir  string
	Host string
	// Taken is when the newest section was written; FirstTaken when the
	// first was.
	Taken, FirstTaken time.Time
	Sections          int
	// From is the first section's From (-1: it digests the whole log);
	// Start the offset its first batch starts at (-1 for a whole log).
	From, Start int64
	// LogStartCheckpoint and HighWatermark are the partition's entries in
	// its log directory's log-start-offset-checkpoint and
	// replication-offset-checkpoint (-1: none); CleanShutdown the
	// .kafka_cleanshutdown marker.
	LogStartCheckpoint int64
	HighWatermark      int64
	CleanShutdown      bool
	// Live: a broker held the partition while the newest section was
	// taken (it ends at the last whole batch).
	Live bool
	// LogEnd is the log end offset (-1: no segment).
	LogEnd    int64
	Segments  []SegmentInfo
	Snapshots []Snapshot
	// Batches counts the batch records of every section.
	Batches int64
}

// DirName is the partition directory's base name.
func (i *Info) DirName() string {
	if k := strings.LastIndexAny(i.Dir, `/\`); k >= 0 {
		return i.Dir[k+1:]
	}
	return i.Dir
}

// Snapshot is a producer snapshot as the digest recorded it.
type Snapshot struct {
	Offset  int64
	Path    string // on the digested machine
	Hash    []byte
	Content []byte
}

// Entries decodes the snapshot's bytes (as segment.ReadProducerSnapshot
// decodes the file's, the error naming the file).
func (s *Snapshot) Entries() ([]segment.SnapshotEntry, error) {
	e, err := segment.ParseProducerSnapshot(s.Content)
	var ce *decode.CorruptError
	if errors.As(err, &ce) && ce.Path == "" {
		ce.Path = s.Path
	}
	return e, err
}

// section is one section of a digest file.
type section struct {
	start, end int64 // file positions of its header and of its trailer's end
	body       int64 // the first block
	facts      int64 // the first facts block
	trailer    int64 // the trailer's position (the end of the blocks)
	version    int
	kseg       string
	hash       Hash
	p          partitionRec
	f          factsRec
}

type partitionRec struct {
	topic      string
	partition  int32
	hasID      bool
	topicID    [16]byte
	dir, host  string
	taken      int64
	from, x    int64
	anchor     *anchor
	anchorPos  int64
	logStart   int64
	hw         int64
	clean      bool
	live       bool
	recordsPos int64
}

type segRec struct {
	SegmentInfo
	block int64 // absolute file position of its first block; 0: not in the section
}

type factsRec struct {
	logEnd    int64
	batches   int64
	segs      []segRec
	snapshots []Snapshot
}

// piece is a run of a segment's records in one section: the records of a
// section from x of the next one on are superseded.
type piece struct {
	sec   int
	block int64
	upto  int64
}

type segView struct {
	SegmentInfo
	pieces []piece
}

// Digest is an open digest file.
type Digest struct {
	path     string
	f        *os.File
	r        io.ReaderAt
	size     int64
	sections []*section
	view     []segView
	info     Info
}

// Open opens the digest file path and checks its structure: the header of
// every section (a format version this kseg reads), the trailers, the
// partition and facts records, and that every section continues the ones
// before it. Its batch records are checked as they are read (Scan).
func Open(path string) (*Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	d, err := open(f, path, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	d.f = f
	return d, nil
}

// OpenReaderAt opens a digest held by r (size bytes); path names it in
// errors.
func OpenReaderAt(r io.ReaderAt, size int64, path string) (*Digest, error) {
	return open(r, path, size)
}

func open(r io.ReaderAt, path string, size int64) (*Digest, error) {
	d := &Digest{path: path, r: r, size: size}
	fail := func(pos int64, class error, expected, found string) error {
		return &FormatError{Path: path, Pos: pos, Expected: expected, Found: found, Err: class}
	}
	// The first header first: a future version is said as such, whatever
	// follows it.
	if _, err := d.header(0); err != nil {
		return nil, err
	}
	end := size
	for end > 0 {
		if end < trailerSize {
			return nil, fail(end, ErrTruncated, "the 32-byte trailer that ends a section", fmt.Sprintf("%d bytes", end))
		}
		var t [trailerSize]byte
		if _, err := r.ReadAt(t[:], end-trailerSize); err != nil {
			return nil, err
		}
		if string(t[24:]) != trailerMagic {
			return nil, fail(end, ErrTruncated, "the end of a section (a 32-byte trailer ending in \"kdigest\\n\")",
				fmt.Sprintf("%q: the digest was cut short, or the file is not one", t[24:]))
		}
		if got := xxh3.Hash(t[:16]); got != binary.BigEndian.Uint64(t[16:]) {
			return nil, fail(end-trailerSize+16, ErrCorrupt, fmt.Sprintf("the trailer's checksum %016x", binary.BigEndian.Uint64(t[16:])), fmt.Sprintf("%016x", got))
		}
		factsRel, length := binary.BigEndian.Uint64(t[0:]), binary.BigEndian.Uint64(t[8:])
		if length > uint64(end) || length < trailerSize+uint64(len(headerPrefix)) || factsRel >= length-trailerSize {
			return nil, fail(end-trailerSize, ErrCorrupt, fmt.Sprintf("a section length of at most %d bytes and the facts inside it", end),
				fmt.Sprintf("length %d, facts at %d", length, factsRel))
		}
		start := end - int64(length)
		s, err := d.header(start)
		if err != nil {
			return nil, err
		}
		s.end, s.trailer, s.facts = end, end-trailerSize, start+int64(factsRel)
		if s.facts < s.body {
			return nil, fail(end-trailerSize, ErrCorrupt, "the facts after the section's header", fmt.Sprintf("facts at byte %d", s.facts))
		}
		d.sections = append([]*section{s}, d.sections...)
		end = start
	}
	for _, s := range d.sections {
		if err := d.readPartition(s); err != nil {
			return nil, err
		}
		if err := d.readFacts(s); err != nil {
			return nil, err
		}
	}
	if err := d.checkSections(); err != nil {
		return nil, err
	}
	d.view = d.buildView(len(d.sections))
	d.fillInfo()
	return d, nil
}

// header reads the header line of the section at start.
func (d *Digest) header(start int64) (*section, error) {
	buf := make([]byte, maxHeaderLine)
	n, err := d.r.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	fail := func(pos int64, class error, expected, found string) error {
		return &FormatError{Path: d.path, Pos: pos, Expected: expected, Found: found, Err: class}
	}
	if !bytes.HasPrefix(buf, []byte(headerPrefix)) {
		found := fmt.Sprintf("%q", buf[:min(len(buf), len(headerPrefix))])
		if len(buf) < len(headerPrefix) && bytes.HasPrefix([]byte(headerPrefix), buf) {
			return nil, fail(start+int64(len(buf)), ErrTruncated, fmt.Sprintf("the header line %q", headerPrefix+"…"), "the end of the file")
		}
		return nil, fail(start, ErrNotDigest, fmt.Sprintf("the header line %q", headerPrefix+"<version> <hash> kseg <version>"), found)
	}
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		if len(buf) < maxHeaderLine {
			return nil, fail(start+int64(len(buf)), ErrTruncated, "the end of the header line (a newline)", "the end of the file")
		}
		return nil, fail(start, ErrCorrupt, fmt.Sprintf("a header line of at most %d bytes", maxHeaderLine), "no newline")
	}
	fields := strings.Fields(string(buf[len(headerPrefix):nl]))
	vpos := start + int64(len(headerPrefix))
	if len(fields) == 0 {
		return nil, fail(vpos, ErrCorrupt, "the format version", "nothing")
	}
	v, err := strconv.Atoi(fields[0])
	if err != nil || v < 1 {
		return nil, fail(vpos, ErrCorrupt, "the format version (a positive number)", strconv.Quote(fields[0]))
	}
	s := &section{start: start, body: start + int64(nl) + 1, version: v}
	if len(fields) >= 4 && fields[2] == "kseg" {
		s.kseg = fields[3]
	}
	if v > FormatVersion {
		by := ""
		if s.kseg != "" {
			by = fmt.Sprintf(", written by kseg %s", s.kseg)
		}
		return nil, fail(vpos, ErrVersion, fmt.Sprintf("format version %d or lower (this kseg reads %d; a newer kseg reads this digest)", FormatVersion, FormatVersion),
			fmt.Sprintf("format version %d%s", v, by))
	}
	if len(fields) < 4 || fields[2] != "kseg" {
		return nil, fail(vpos, ErrCorrupt, "\"<version> <hash> kseg <kseg version>\"", strconv.Quote(string(buf[len(headerPrefix):nl])))
	}
	h, err := ParseHash(fields[1])
	if err != nil {
		return nil, fail(vpos+int64(len(fields[0]))+1, ErrCorrupt, "a hash name (xxh3-128 or sha256)", strconv.Quote(fields[1]))
	}
	s.hash = h
	return s, nil
}

// records calls fn for each record of the blocks from pos to limit; fn
// reads its record from the dec (positioned after the tag) and returns
// false to stop.
func (d *Digest) records(pos, limit int64, fn func(tag byte, c *dec) bool) error {
	br := newBlockReader(d.r, d.path, pos, limit)
	for {
		if err := br.next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		c := &dec{b: br.buf, base: br.base, path: d.path}
		for c.more() {
			tag := c.u8("a record tag")
			if !fn(tag, c) {
				return c.err
			}
			if c.err != nil {
				return c.err
			}
		}
	}
}

// recordsUntil is records for a reader that stops at the one record it
// needs: fn returns false at it (or with c.err set, at a failure). A
// section whose blocks end before fn stops is a FormatError at missingAt
// expecting want.
func (d *Digest) recordsUntil(pos, limit, missingAt int64, want, none string, fn func(tag byte, c *dec) bool) error {
	stopped := false
	err := d.records(pos, limit, func(tag byte, c *dec) bool {
		stopped = !fn(tag, c)
		return !stopped
	})
	if err != nil {
		return err
	}
	if !stopped {
		return &FormatError{Path: d.path, Pos: missingAt, Expected: want, Found: none, Err: ErrCorrupt}
	}
	return nil
}

// readPartition reads the section's partition record.
func (d *Digest) readPartition(s *section) error {
	return d.recordsUntil(s.body, s.facts, s.body, "the partition record ('P')", "no record", func(tag byte, c *dec) bool {
		if tag != tagPartition {
			c.off--
			c.fail(ErrCorrupt, "the partition record ('P') first in the section", fmt.Sprintf("a record tagged 0x%02x", tag))
			return false
		}
		p := &s.p
		p.topic = c.str("topic")
		p.partition = int32(c.varint("partition"))
		if c.u8("topic id flag") == 1 {
			copy(p.topicID[:], c.fixed(16, "topic id"))
			p.hasID = true
		}
		p.dir = c.str("directory")
		p.host = c.str("host")
		p.taken = c.varint("time taken")
		p.from = c.varint("from")
		p.x = c.varint("first offset")
		if c.u8("anchor flag") == 1 {
			p.anchorPos = c.pos()
			a := &anchor{}
			a.base = c.varint("anchor baseOffset")
			a.last = c.varint("anchor lastOffset")
			a.size = int64(c.uvarint("anchor size"))
			a.crc = c.u32("anchor crc")
			a.hash = append([]byte(nil), c.fixed(s.hash.Size(), "anchor hash")...)
			p.anchor = a
		}
		p.logStart = c.varint("log start checkpoint")
		p.hw = c.varint("high watermark")
		fl := c.u8("partition flags")
		p.clean, p.live = fl&pCleanShutdown != 0, fl&pLive != 0
		p.recordsPos = c.pos()
		return false
	})
}

// readFacts reads the section's snapshot and facts records.
func (d *Digest) readFacts(s *section) error {
	return d.recordsUntil(s.facts, s.trailer, s.trailer, "the facts record ('F') before the trailer", "none", func(tag byte, c *dec) bool {
		switch tag {
		case tagSnapshot:
			sn := Snapshot{Offset: c.varint("snapshot offset"), Path: c.str("snapshot path")}
			sn.Hash = append([]byte(nil), c.fixed(s.hash.Size(), "snapshot hash")...)
			sn.Content = append([]byte(nil), c.bytes("snapshot bytes")...)
			if c.err == nil && !bytes.Equal(s.hash.Sum(nil, sn.Content), sn.Hash) {
				c.fail(ErrCorrupt, "snapshot bytes whose hash is the one recorded", "other bytes")
			}
			s.f.snapshots = append(s.f.snapshots, sn)
			return true
		case tagFacts:
			s.f.logEnd = c.varint("log end offset")
			s.f.batches = int64(c.uvarint("batches"))
			n := c.uvarint("segments")
			if c.err == nil && n > uint64(len(c.b)-c.off) {
				c.fail(ErrCorrupt, "a segment count the block can hold", fmt.Sprint(n))
				return false
			}
			prev := int64(0)
			for i := uint64(0); i < n && c.err == nil; i++ {
				at := c.pos()
				var r segRec
				r.Base = prev + c.varint("segment base offset")
				prev = r.Base
				r.Size = int64(c.uvarint("segment size"))
				r.Modified = c.varint("segment modification time")
				bp := c.uvarint("segment block position")
				if bp > 0 {
					r.block = s.start + int64(bp) - 1
					if r.block < s.body || r.block >= s.facts {
						c.err = &FormatError{Path: d.path, Pos: at, Expected: "a segment's first block inside the section", Found: fmt.Sprintf("byte %d", r.block), Err: ErrCorrupt}
					}
				}
				if i > 0 && r.Base <= s.f.segs[len(s.f.segs)-1].Base {
					c.err = &FormatError{Path: d.path, Pos: at, Expected: "segments in increasing base offsets", Found: fmt.Sprint(r.Base), Err: ErrCorrupt}
				}
				s.f.segs = append(s.f.segs, r)
			}
			return false
		}
		c.off--
		c.fail(ErrCorrupt, "a snapshot ('N') or facts ('F') record", fmt.Sprintf("a record tagged 0x%02x", tag))
		return false
	})
}

// checkSections checks that each section continues the ones before it:
// the same partition and hash, an incremental section (From), starting
// at or below the end of the ones before it, whose anchor is the batch
// they hold just before its first.
func (d *Digest) checkSections() error {
	first := d.sections[0]
	for j := 1; j < len(d.sections); j++ {
		s := d.sections[j]
		fail := func(pos int64, expected, found string) error {
			return &FormatError{Path: d.path, Pos: pos, Expected: expected, Found: found, Err: ErrContinuation}
		}
		if s.p.topic != first.p.topic || s.p.partition != first.p.partition || s.p.hasID != first.p.hasID || s.p.topicID != first.p.topicID {
			return fail(s.body, fmt.Sprintf("a section of %s", first.p.name()), s.p.name())
		}
		if s.hash != first.hash {
			return fail(s.start, fmt.Sprintf("a section hashed with %s", first.hash), s.hash.String())
		}
		if s.p.from < 0 {
			return fail(s.body, "an incremental section (one continuing from an offset) after the first", "a digest of the whole log")
		}
		prev := d.sections[j-1]
		if s.p.x > prev.f.logEnd && prev.f.logEnd >= 0 {
			return fail(s.body, fmt.Sprintf("a section that starts at or below %d, where the digest before it ends", prev.f.logEnd),
				fmt.Sprintf("one that starts at %d: offsets %d..%d are in neither", s.p.x, prev.f.logEnd, s.p.x-1))
		}
		if s.p.anchor != nil {
			if err := d.checkAnchor(j); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *partitionRec) name() string {
	id := "no topic id"
	if p.hasID {
		id = "topic id " + segment.TopicIDString(p.topicID)
	}
	return fmt.Sprintf("%s-%d (%s)", p.topic, p.partition, id)
}

// checkAnchor finds section j's anchor among the batches of the sections
// before it.
func (d *Digest) checkAnchor(j int) error {
	s := d.sections[j]
	a := s.p.anchor
	view := d.buildView(j)
	si := -1
	for i := range view {
		if view[i].Base <= a.base {
			si = i
		}
	}
	var last *Entry
	var lastHash []byte
	if si >= 0 {
		sc := d.scanView(view, si)
		for sc.Next() {
			e := sc.Entry()
			if e.Batch.BaseOffset >= s.p.x {
				break
			}
			cp := *e
			last = &cp
			lastHash = append(lastHash[:0], sc.Hash()...)
		}
		if err := sc.Err(); err != nil {
			sc.Close()
			return err
		}
		sc.Close()
	}
	fail := func(found string) error {
		return &FormatError{Path: d.path, Pos: s.p.anchorPos,
			Expected: fmt.Sprintf("the batch the digest before this section holds just before offset %d: baseOffset %d, %d bytes, crc 0x%08x", s.p.x, a.base, a.size, a.crc),
			Found:    found + " (the log changed below the earlier digest's end — truncated at a failover, or rewritten: take a whole digest)", Err: ErrContinuation}
	}
	if last == nil {
		return fail("no batch there")
	}
	b := &last.Batch
	if b.BaseOffset != a.base || b.LastOffset() != a.last || b.Size() != a.size || b.CRC != a.crc || !bytes.Equal(lastHash, a.hash) {
		return fail(fmt.Sprintf("baseOffset %d, %d bytes, crc 0x%08x", b.BaseOffset, b.Size(), b.CRC))
	}
	return nil
}

// buildView lists the segments of the newest of the first k sections,
// each with its pieces in the sections that hold it.
func (d *Digest) buildView(k int) []segView {
	newest := d.sections[k-1]
	// A section supersedes, from its first offset on, every section
	// before it: each holds what lies below the first offsets of all the
	// sections after it.
	upto := make([]int64, k)
	upto[k-1] = math.MaxInt64
	for j := k - 2; j >= 0; j-- {
		upto[j] = min(upto[j+1], d.sections[j+1].p.x)
	}
	view := make([]segView, len(newest.f.segs))
	for i, sr := range newest.f.segs {
		view[i].SegmentInfo = sr.SegmentInfo
		for j := 0; j < k; j++ {
			upto := upto[j]
			for _, r := range d.sections[j].f.segs {
				if r.Base == sr.Base && r.block > 0 {
					view[i].pieces = append(view[i].pieces, piece{sec: j, block: r.block, upto: upto})
				}
			}
		}
	}
	return view
}

func (d *Digest) fillInfo() {
	first, s := d.sections[0], d.sections[len(d.sections)-1]
	p := &s.p
	d.info = Info{FormatVersion: s.version, KsegVersion: s.kseg, Hash: s.hash, Topic: p.topic, Partition: p.partition,
		TopicID: p.topicID, HasTopicID: p.hasID, Dir: p.dir, Host: p.host, Taken: time.UnixMilli(p.taken),
		FirstTaken: time.UnixMilli(first.p.taken), Sections: len(d.sections), From: first.p.from, Start: -1,
		LogStartCheckpoint: p.logStart, HighWatermark: p.hw, CleanShutdown: p.clean, Live: p.live, LogEnd: s.f.logEnd,
		Snapshots: s.f.snapshots}
	if first.p.from >= 0 {
		d.info.Start = first.p.x
	}
	for _, v := range d.view {
		d.info.Segments = append(d.info.Segments, v.SegmentInfo)
	}
	for _, sec := range d.sections {
		d.info.Batches += sec.f.batches
	}
}

// Info is what the digest says about its partition.
func (d *Digest) Info() *Info { return &d.info }

// Path is the digest file's path.
func (d *Digest) Path() string { return d.path }

// Close closes the file.
func (d *Digest) Close() error {
	if d.f != nil {
		return d.f.Close()
	}
	return nil
}
