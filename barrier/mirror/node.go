package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/digest"
	"github.com/kseg/kseg/segment/edit"
)

// A Node is one partition of a topology as verify-chain reads it: a
// stream of batch facts (every header field, and the batch's bytes or a
// hash of them) and the partition's facts (its identity, log start and
// end, producer snapshots). A partition directory is one (OpenNode on a
// directory), and so is a digest of one (kseg digest; OpenNode on the
// digest file): VerifyEdge runs the same checks over either, and reports
// the same findings.
type Node interface {
	// Name is the node as it was given: a directory, a digest file.
	Name() string
	// Identity is the partition's topic, partition and topic id.
	Identity() Identity
	// Digest describes the digest a node was read from; nil for a
	// directory.
	Digest() *digest.Info
	// Close releases the node.
	Close() error

	// open starts a walk of the node's batches in log order.
	open() (chainCursor, error)
	// logEnd is the log end offset (-1: no segment).
	logEnd() (int64, error)
	// replayDir and source are what a producer-state replay of the node
	// reads; logStartCheckpoint its log-start-offset-checkpoint entry.
	replayDir() *segment.PartitionDir
	source() psm.Source
	logStartCheckpoint() int64
	// locate finds the file and position of the batch holding offset.
	locate(offset int64) (file string, pos int64, ok bool)
	// modified is when the segment holding offset was last written.
	modified(offset int64) (time.Time, bool)
	// hashKind is the hash the node's batches carry (0: none, it holds
	// their bytes).
	hashKind() digest.Hash
}

// Identity is what names a partition across clusters: a KIP-1279 mirror
// keeps its source's topic name, partition and topic id.
type Identity struct {
	// Topic and Partition come from the directory's name; Named is false
	// when it is not <topic>-<partition>.
	Topic     string
	Partition int32
	Named     bool
	// TopicID is partition.metadata's (HasTopicID false when absent or
	// unreadable).
	TopicID    [16]byte
	HasTopicID bool
}

// TopicIDString is the topic id as Kafka prints it.
func (i Identity) TopicIDString() string { return segment.TopicIDString(i.TopicID) }

// OpenNode opens a node of a topology: a partition directory, or a digest
// file written by kseg digest. A path that is neither is a
// *edit.RefusalError (not-partition); a digest that cannot be read is a
// *digest.FormatError.
func OpenNode(path string) (Node, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return openDirNode(path)
	}
	if !IsDigestFile(path) {
		return nil, edit.Refuse(edit.RefuseNotPartition, path, "a file that is not a kseg digest (a node is a partition directory or a digest of one)")
	}
	d, err := digest.Open(path)
	if err != nil {
		return nil, err
	}
	return NewDigestNode(path, d), nil
}

// IsDigestFile reports a regular file that starts as a kseg digest does.
func IsDigestFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	buf := make([]byte, 12)
	n, _ := io.ReadFull(f, buf)
	return bytes.Equal(buf[:n], []byte("kseg-digest "))
}

// ---- a partition directory ----

type dirNode struct {
	path string
	pd   *segment.PartitionDir
}

func openDirNode(path string) (*dirNode, error) {
	if !segment.IsPartitionDir(path) {
		return nil, edit.Refuse(edit.RefuseNotPartition, path, "not a partition directory (no .log, partition.metadata or leader-epoch-checkpoint, or the name is not <topic>-<partition>)")
	}
	pd, err := segment.OpenPartitionDir(path)
	if err != nil {
		return nil, err
	}
	return &dirNode{path: path, pd: pd}, nil
}

func (n *dirNode) Name() string         { return n.path }
func (n *dirNode) Digest() *digest.Info { return nil }
func (n *dirNode) Close() error         { return nil }

func (n *dirNode) Identity() Identity {
	var id Identity
	if nm, ok := segment.ParsePartitionDir(filepath.Base(filepath.Clean(n.path))); ok {
		id.Topic, id.Partition, id.Named = nm.Topic, nm.Partition, true
	}
	if m, err := segment.ReadPartitionMetadata(filepath.Join(n.path, segment.PartitionMetadataName)); err == nil {
		id.TopicID, id.HasTopicID = m.TopicID, true
	}
	return id
}

func (n *dirNode) open() (chainCursor, error) {
	c, err := openCursor(n.path)
	if err != nil {
		return nil, err
	}
	return &dirCursor{logCursor: c, hpos: -1}, nil
}

func (n *dirNode) logEnd() (int64, error)           { return logEnd(n.pd) }
func (n *dirNode) replayDir() *segment.PartitionDir { return n.pd }
func (n *dirNode) source() psm.Source               { return nil }
func (n *dirNode) logStartCheckpoint() int64        { return logStartOf(n.pd) }
func (n *dirNode) hashKind() digest.Hash            { return 0 }

func (n *dirNode) locate(offset int64) (string, int64, bool) { return locate(n.pd, offset) }

func (n *dirNode) modified(offset int64) (time.Time, bool) {
	var log string
	for s := range n.pd.Logs() {
		if s.BaseOffset <= offset {
			log = s.Log
		}
	}
	if log == "" {
		return time.Time{}, false
	}
	st, err := os.Stat(log)
	if err != nil {
		return time.Time{}, false
	}
	return st.ModTime(), true
}

// ---- a digest ----

type digestNode struct {
	name string
	d    *digest.Digest
	pd   *segment.PartitionDir // what the digest lists, for a replay
}

// NewDigestNode is the node of an open digest; name is how it was given.
func NewDigestNode(name string, d *digest.Digest) Node {
	info := d.Info()
	pd := &segment.PartitionDir{Path: info.Dir, Topic: info.Topic, Partition: info.Partition}
	for _, s := range info.Segments {
		pd.Segments = append(pd.Segments, segment.SegmentFiles{BaseOffset: s.Base, Log: filepath.Join(info.Dir, s.Name())})
	}
	for _, s := range info.Snapshots {
		pd.Snapshots = append(pd.Snapshots, segment.SnapshotFile{Offset: s.Offset, Path: s.Path})
	}
	return &digestNode{name: name, d: d, pd: pd}
}

func (n *digestNode) Name() string         { return n.name }
func (n *digestNode) Digest() *digest.Info { return n.d.Info() }
func (n *digestNode) Close() error         { return n.d.Close() }

func (n *digestNode) Identity() Identity {
	info := n.d.Info()
	id := Identity{TopicID: info.TopicID, HasTopicID: info.HasTopicID}
	if nm, ok := segment.ParsePartitionDir(info.DirName()); ok {
		id.Topic, id.Partition, id.Named = nm.Topic, nm.Partition, true
	}
	return id
}

func (n *digestNode) logEnd() (int64, error)           { return n.d.Info().LogEnd, nil }
func (n *digestNode) replayDir() *segment.PartitionDir { return n.pd }
func (n *digestNode) source() psm.Source               { return digestSource{n.d} }
func (n *digestNode) logStartCheckpoint() int64        { return n.d.Info().LogStartCheckpoint }
func (n *digestNode) hashKind() digest.Hash            { return n.d.Info().Hash }

func (n *digestNode) locate(offset int64) (string, int64, bool) {
	name, pos, ok, err := n.d.Locate(offset)
	if err != nil {
		return "", -1, false
	}
	return name, pos, ok
}

func (n *digestNode) modified(offset int64) (time.Time, bool) {
	var ms int64
	found := false
	for _, s := range n.d.Info().Segments {
		if s.Base <= offset {
			ms, found = s.Modified, true
		}
	}
	return time.UnixMilli(ms), found
}

// start is the node's log start: max(log-start-offset-checkpoint, the
// first segment's base) as for a directory, and no lower than the first
// batch of an incremental digest read alone.
func (n *digestNode) start() int64 {
	info := n.d.Info()
	start := int64(-1)
	if len(info.Segments) > 0 {
		start = info.Segments[0].Base
	}
	if info.LogStartCheckpoint > start {
		start = info.LogStartCheckpoint
	}
	if info.Start > start {
		start = info.Start
	}
	return start
}

func (n *digestNode) open() (chainCursor, error) {
	return &digestCursor{n: n, d: n.d, si: -1, start: n.start(), lastFound: -1}, nil
}

// digestSource serves a replay from the digest (psm.Options.Source).
type digestSource struct{ d *digest.Digest }

func (s digestSource) ScanSegment(seg segment.SegmentFiles) (psm.SegmentScanner, error) {
	for i, si := range s.d.Info().Segments {
		if si.Base == seg.BaseOffset {
			return s.d.Scan(i), nil
		}
	}
	return nil, fmt.Errorf("%s: the digest has no segment %d", s.d.Path(), seg.BaseOffset)
}

func (s digestSource) ReadSnapshot(f segment.SnapshotFile) ([]segment.SnapshotEntry, error) {
	for _, sn := range s.d.Info().Snapshots {
		if sn.Offset == f.Offset {
			return sn.Entries()
		}
	}
	return nil, fmt.Errorf("%s: %w", f.Path, os.ErrNotExist)
}

// ---- cursors ----

// openLogs starts walks of the batches of a and b (Node.open); done
// closes both.
func openLogs(a, b Node) (ca, cb chainCursor, done func(), err error) {
	if ca, err = a.open(); err != nil {
		return nil, nil, nil, err
	}
	if cb, err = b.open(); err != nil {
		ca.Close()
		return nil, nil, nil, err
	}
	return ca, cb, func() { cb.Close(); ca.Close() }, nil
}

// chainCursor is a walk of a node's batches, in log order, as the chain
// verifier reads it: logCursor over a directory, digestCursor over a
// digest. The current batch is also a batchView.
type chainCursor interface {
	batchView
	Next() bool
	Batch() *decode.Batch
	File() string
	Pos() int64
	Start() int64
	Err() error
	Close()
	damage() *cursorDamage
	setProgress(func(int64))
	setMmap(bool)
}

// batchView is what the walk compares of a batch: its header fields, its
// bytes when the node holds them, else the hash and CRC of the bytes the
// CRC covers.
type batchView interface {
	batch() *decode.Batch // Raw: the whole batch, or nil
	// header is the batch's fixed part (headerOf), valid until the view
	// moves on.
	header() []byte
	hash(h digest.Hash) []byte
	computedCRC() uint32
	crcValid() bool
}

// dirCursor is a logCursor as a chainCursor.
type dirCursor struct {
	*logCursor
	hbuf  []byte
	hseg  int   // the hash in hbuf is of the batch at hseg, hpos
	hpos  int64 // (-1: none)
	hkind digest.Hash
}

func (c *dirCursor) damage() *cursorDamage     { return c.Damage }
func (c *dirCursor) setProgress(f func(int64)) { c.progress = f }
func (c *dirCursor) setMmap(m bool)            { c.mmap = m }
func (c *dirCursor) batch() *decode.Batch      { return c.Batch() }
func (c *dirCursor) header() []byte            { return headerOf(c.Batch(), 0, nil) }
func (c *dirCursor) computedCRC() uint32       { return c.Batch().ComputeCRC() }
func (c *dirCursor) crcValid() bool            { return c.Batch().CRCValid() }

func (c *dirCursor) hash(h digest.Hash) []byte {
	if c.hseg != c.si || c.hpos != c.pos || c.hkind != h || c.hbuf == nil {
		c.hbuf, c.hseg, c.hpos, c.hkind = h.Sum(c.hbuf[:0], digest.Covered(c.Batch().Raw)), c.si, c.pos, h
	}
	return c.hbuf
}

// digestCursor walks a digest's segments as logCursor walks a
// directory's: batches below the log start skipped at the head, the walk
// ended by a damaged tail.
type digestCursor struct {
	n     *digestNode
	d     *digest.Digest
	si    int
	sc    *digest.Scanner
	start int64

	started   bool
	nextOff   int64
	segNext   int64
	segFound  bool
	lastFound int64
	Damage    *cursorDamage
	progress  func(int64)
	pending   int64
	err       error
	done      bool
	cur       *digest.Entry
	hdr       [decode.RecordBatchOverhead]byte
	file      string // the current segment's .log name
}

func (c *digestCursor) Start() int64              { return c.start }
func (c *digestCursor) Err() error                { return c.err }
func (c *digestCursor) damage() *cursorDamage     { return c.Damage }
func (c *digestCursor) setProgress(f func(int64)) { c.progress = f }
func (c *digestCursor) setMmap(bool)              {}
func (c *digestCursor) Batch() *decode.Batch      { return &c.cur.Batch }
func (c *digestCursor) batch() *decode.Batch      { return &c.cur.Batch }
func (c *digestCursor) header() []byte {
	if c.cur.Batch.Raw != nil {
		return headerOf(&c.cur.Batch, 0, nil)
	}
	return headerOf(&c.cur.Batch, c.cur.Attributes16, c.hdr[:0])
}
func (c *digestCursor) Pos() int64                     { return c.cur.Pos }
func (c *digestCursor) computedCRC() uint32            { return c.cur.ComputedCRC }
func (c *digestCursor) crcValid() bool                 { return c.cur.CRCValid }
func (c *digestCursor) File() string                   { return c.file }
func (c *digestCursor) Close()                         { c.done = true }
func (c *digestCursor) hash(h digest.Hash) []byte      { return hashAs(c.sc, &c.cur.Batch, h) }
func (c *digestCursor) count(n int64)                  { c.pending += n; c.flush(false) }
func (c *digestCursor) segments() []digest.SegmentInfo { return c.d.Info().Segments }

func (c *digestCursor) flush(all bool) {
	if c.progress != nil && (c.pending >= progressStep || all && c.pending > 0) {
		c.progress(c.pending)
		c.pending = 0
	}
}

// hashAs is the hash h of the scanner's current batch: the digest's own,
// or computed from its bytes when the digest holds them.
func hashAs(sc *digest.Scanner, b *decode.Batch, h digest.Hash) []byte {
	if h == sc.HashKind() {
		return sc.Hash()
	}
	if b.Raw != nil {
		return h.Sum(nil, digest.Covered(b.Raw))
	}
	return nil
}

func (c *digestCursor) Next() bool {
	for !c.done {
		if c.sc == nil {
			c.si++
			if c.si >= c.d.Segments() {
				c.done = true
				c.flush(true)
				return false
			}
			c.sc = c.d.Scan(c.si)
			c.file = c.segments()[c.si].Name()
			c.segNext, c.segFound = 0, false
		}
		if c.sc.Next() {
			e := c.sc.Entry()
			b := &e.Batch
			c.count(b.Size())
			c.segNext, c.segFound = max(c.segNext, b.NextOffset()), true
			if !c.started && b.LastOffset() < c.start {
				continue
			}
			c.started = true
			c.cur = e
			c.nextOff = max(c.nextOff, b.NextOffset())
			return true
		}
		if err := c.sc.Err(); err != nil {
			c.err, c.done = err, true
			return false
		}
		t := c.sc.Tail()
		name := c.segments()[c.si].Name()
		switch t.Kind {
		case segment.TailClean, segment.TailZeroFilled:
			if c.segFound {
				c.lastFound = c.segNext
			}
		default:
			next := max(c.segments()[c.si].Base, c.nextOff)
			msg := fmt.Sprintf("%s: %s tail at position %d (%d bytes do not frame a batch)", name, t.Kind, t.ValidBytes, t.InvalidBytes())
			if t.Err != nil {
				msg = t.Err.Error()
			}
			c.Damage = &cursorDamage{File: name, Position: t.ValidBytes, Offset: next, Kind: t.Kind.String(), Message: msg}
			c.done = true
		}
		c.flush(true)
		c.sc = nil
	}
	return false
}

// savedBatch is a copy of a batchView, kept after its cursor moved on.
type savedBatch struct {
	b     decode.Batch
	hdr   []byte
	hk    digest.Hash
	h     []byte
	crc   uint32
	valid bool
}

func saveBatch(v batchView, h digest.Hash) *savedBatch {
	s := &savedBatch{b: *v.batch(), crc: v.computedCRC(), valid: v.crcValid(), hk: h}
	s.hdr = append([]byte(nil), v.header()...)
	if s.b.Raw != nil {
		s.b.Raw = append([]byte(nil), s.b.Raw...)
	} else if h != 0 {
		s.h = append([]byte(nil), v.hash(h)...)
	}
	return s
}

func (s *savedBatch) batch() *decode.Batch { return &s.b }
func (s *savedBatch) header() []byte       { return s.hdr }
func (s *savedBatch) computedCRC() uint32  { return s.crc }
func (s *savedBatch) crcValid() bool       { return s.valid }
func (s *savedBatch) hash(h digest.Hash) []byte {
	if s.b.Raw != nil {
		return h.Sum(nil, digest.Covered(s.b.Raw))
	}
	if h == s.hk {
		return s.h
	}
	return nil
}

// ErrHashMismatch is two digests hashed differently: their batches cannot
// be compared.
var ErrHashMismatch = errors.New("digests made with different hashes cannot be compared (make both with the same hash)")
