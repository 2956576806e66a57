package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// Action is what a FileOp does to its file.
type Action string

// File operation actions.
const (
	OpReplace Action = "replace"
	OpCreate  Action = "create"
	OpDelete  Action = "delete"
	// OpAppend keeps the file's first OldSize bytes and writes NewSize -
	// OldSize bytes (Content, then Sources) after them, in place: no
	// backup copy, no staged copy (see append.go).
	OpAppend Action = "append"
)

// FileOp is one file of the partition directory that changes. New content
// is KeepPrefix bytes of the current file followed by Content, then the
// Sources (a .log keeps its prefix; every other file is Content alone);
// an append's is the first OldSize bytes followed by Content, then the
// Sources (KeepPrefix 0). The engine fills in the hashes before it touches
// anything, and they are what a resumed run checks every file against (an
// append's: the fingerprint of its kept bytes and the appended bytes'
// hash, see OpAppend).
type FileOp struct {
	Name       string `json:"name"`
	Action     Action `json:"action"`
	Why        string `json:"why"`
	OldSize    int64  `json:"oldSize"` // -1 for create
	NewSize    int64  `json:"newSize"` // -1 for delete
	KeepPrefix int64  `json:"keepPrefix,omitempty"`
	Content    []byte `json:"content,omitempty"`
	// Sources follow Content in the new content (a mirror's copied
	// batches).
	Sources []SourceRange `json:"sources,omitempty"`
	// Verbatim: the Sources of a .log are copied as bytes, not as record
	// batches, whose CRCs the staging read-back would otherwise check: a
	// restore puts back what a file held before an edit, damaged or not
	// (a repair's backup holds the batch that failed its CRC).
	Verbatim  bool   `json:"verbatim,omitempty"`
	OldSHA256 string `json:"oldSha256,omitempty"`
	NewSHA256 string `json:"newSha256,omitempty"`
	// NewFraming, for a created copy identified by its sources
	// (bySources), is the SHA-256 of its batches' framing as its staging
	// read-back verified them (framingOf): what identifies the committed
	// file when its sources are gone (the source's retention deleted the
	// segments before a rerun or a rollback).
	NewFraming string `json:"newFraming,omitempty"`
	// Perm, UID and GID are what the new file gets: the old file's (a
	// created file: 0644 and the partition directory's owner). UID/GID
	// are -1 when unknown.
	Perm uint32 `json:"perm,omitempty"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`

	// Staged is the staged file as this run read it back and verified it
	// (the size and modification time after its fsync), nil when this run
	// did not stage it. A check after the commit compares the committed
	// file with it (os.SameFile, size, modification time): the rename
	// moves that inode, whose bytes the read-back verified.
	Staged os.FileInfo `json:"-"`

	// headSHA256 is the SHA-256 of the kept prefix followed by Content,
	// taken by seal in the same read as OldSHA256 when the new content
	// has Sources (whose hash waits for the staged copy; see stage). ""
	// when unknown (an op read back from a journal).
	headSHA256 string
}

// SourceRange is a byte range of another file, copied into a FileOp's new
// content after its Content: the batches a mirror copies from its source
// segments, which are never held in memory (or in the journal).
type SourceRange struct {
	Path string `json:"path"`
	Pos  int64  `json:"pos"`
	Len  int64  `json:"len"`
}

// CopyBytes is what an edit of ops copies from the start (Options.Progress
// counts up to it): a backup of every file that is replaced or deleted,
// and the new content of every file that is replaced or created; of an
// append, the appended bytes alone.
func CopyBytes(ops []FileOp) int64 {
	var n int64
	for _, op := range ops {
		if op.Action == OpAppend {
			n += max(0, op.NewSize-op.OldSize)
			continue
		}
		if op.Action != OpCreate && op.OldSize > 0 {
			n += op.OldSize
		}
		if op.Action != OpDelete && op.NewSize > 0 {
			n += op.NewSize
		}
	}
	return n
}

// progressStep is how much of a long copy is made between calls to
// Options.Progress.
const progressStep = 4 << 20

// copyN copies n bytes (n < 0: to the end of r) from r to w in steps of
// progressStep, reporting each to progress (nil: one copy). Each step is
// still one io.Copy of a limited reader, so that into an *os.File it stays
// copy_file_range on Linux.
func copyN(w io.Writer, r io.Reader, n int64, progress func(int64)) (int64, error) {
	if progress == nil {
		if n < 0 {
			return io.Copy(w, r)
		}
		return io.Copy(w, io.LimitReader(r, n))
	}
	var done int64
	for n < 0 || done < n {
		step := int64(progressStep)
		if n >= 0 {
			step = min(step, n-done)
		}
		m, err := io.Copy(w, io.LimitReader(r, step))
		done += m
		if m > 0 {
			progress(m)
		}
		if err != nil || m < step {
			return done, err
		}
	}
	return done, nil
}

// copyRange copies r to w. Into an *os.File this is copy_file_range on
// Linux: the bytes never pass through user space.
func copyRange(w io.Writer, r SourceRange) error {
	return copyRangeProgress(w, r, nil)
}

// copyRangeProgress is copyRange reporting to progress (nil: none).
func copyRangeProgress(w io.Writer, r SourceRange, progress func(int64)) error {
	f, err := segment.OpenFile(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(r.Pos, io.SeekStart); err != nil {
		return err
	}
	n, err := copyN(w, f, r.Len, progress)
	if err != nil {
		return err
	}
	if n != r.Len {
		return fmt.Errorf("%s: %d bytes at position %d, need %d (did it change?)", r.Path, n, r.Pos, r.Len)
	}
	return nil
}

// checkStaged reads a staged file back once, in chunks: its SHA-256
// (sum), the SHA-256 of its first keep+len(content) bytes (head), and
// checks on the way that those bytes after the first keep are content,
// that the first keep are prefixFrom's (when prefixFrom is not ""), and
// that the rest is the source ranges, byte for byte, and nothing more.
// With batches (the staged file is a .log), each source range must also
// be whole record batches whose CRCs verify in the staged copy: the
// bytes that will be committed are checked, not only the source as the
// plan read it.
//
// With skipKeep the first keep bytes are neither read nor hashed: sum and
// head cover the bytes after them (an append's read-back of what it
// appended). With noHash nothing is hashed, and sum and head are "".
func checkStaged(staged, prefixFrom string, keep int64, skipKeep, noHash bool, content []byte, srcs []SourceRange, batches bool, watch func(pos int64, batch []byte)) (sum, head string, err error) {
	f, err := segment.OpenFile(staged)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	total := keep + int64(len(content))
	for _, r := range srcs {
		total += r.Len
	}
	chunk := int(min(total+1, stageChunk))
	// SHA-256 is the slowest part of the read-back (about 1.2 GB/s with
	// SHA-NI, CRC-32C and the comparison several times that): it runs on
	// a goroutine of its own, fed the chunks this one reads and checks.
	var hs *chunkHasher
	if !noHash {
		hs = newChunkHasher(chunk)
		defer hs.stop()
	}
	var want []byte
	cr := &chunkReader{f: f, name: staged, hs: hs, size: chunk}
	next := cr.next
	// against checks the next n bytes of the staged file against
	// [at, at+n) of path.
	against := func(path string, at, n int64, bw *batchWalk) error {
		src, err := segment.OpenFile(path)
		if err != nil {
			return err
		}
		defer src.Close()
		for done := int64(0); done < n; {
			k := int(min(n-done, int64(chunk)))
			if cap(want) < k {
				want = make([]byte, chunk)
			}
			w := want[:k]
			if _, err := src.ReadAt(w, at+done); err != nil {
				return fmt.Errorf("%s: %d bytes at position %d: %w (did it change?)", path, k, at+done, err)
			}
			b, err := next(k)
			if err != nil {
				return err
			}
			if !bytes.Equal(b, w) {
				return Refuse(RefuseChanged, path, "the staged copy differs from bytes %d..%d of it (did it change?)", at+done, at+done+int64(k))
			}
			if bw != nil {
				if err := bw.write(b); err != nil {
					return Refuse(RefuseChanged, path, "%v; it changed since the plan read it", err)
				}
			}
			done += int64(k)
		}
		if bw != nil {
			if err := bw.finish(); err != nil {
				return Refuse(RefuseChanged, path, "%v; it changed since the plan read it", err)
			}
		}
		return nil
	}
	switch {
	case skipKeep:
		cr.pos = keep
	case prefixFrom != "":
		if err := against(prefixFrom, 0, keep, nil); err != nil {
			return "", "", err
		}
	default:
		for cr.pos < keep {
			if _, err := next(int(min(keep-cr.pos, int64(chunk)))); err != nil {
				return "", "", err
			}
		}
	}
	for done := 0; done < len(content); {
		k := min(len(content)-done, chunk)
		b, err := next(k)
		if err != nil {
			return "", "", err
		}
		if !bytes.Equal(b, content[done:done+k]) {
			return "", "", Refuse(RefuseChanged, staged, "the staged copy does not hold the planned content")
		}
		done += k
	}
	if hs != nil {
		head = hs.sum()
	}
	for _, r := range srcs {
		var bw *batchWalk
		if batches {
			bw = &batchWalk{pos: r.Pos, shift: cr.pos - r.Pos, watch: watch}
		}
		if err := against(r.Path, r.Pos, r.Len, bw); err != nil {
			return "", "", err
		}
	}
	var one [1]byte
	if n, err := f.ReadAt(one[:], cr.pos); n > 0 || !errors.Is(err, io.EOF) {
		return "", "", Refuse(RefuseChanged, staged, "the staged copy is longer than planned (%d bytes)", cr.pos)
	}
	if hs == nil {
		return "", "", nil
	}
	return hs.sum(), head, nil
}

// chunkReader reads a file from pos on in chunks, handing each to the
// hasher when there is one; a chunk stays valid until the next read.
type chunkReader struct {
	f     *os.File
	name  string
	hs    *chunkHasher // nil: nothing is hashed
	plain []byte       // the one buffer without a hasher
	size  int
	pos   int64
}

// next reads the file's next n bytes.
func (r *chunkReader) next(n int) ([]byte, error) {
	var b []byte
	if r.hs != nil {
		b = r.hs.buffer()[:n]
	} else {
		if cap(r.plain) < n {
			r.plain = make([]byte, max(n, r.size))
		}
		b = r.plain[:n]
	}
	if _, err := r.f.ReadAt(b, r.pos); err != nil {
		if r.hs != nil {
			r.hs.free <- b[:cap(b)]
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: ends before position %d: the copy is short", r.name, r.pos+int64(n))
		}
		return nil, err
	}
	if r.hs != nil {
		r.hs.chunks <- b
	}
	r.pos += int64(n)
	return b, nil
}

// chunkHasher hashes chunks on a goroutine of its own, in the order they
// are sent; sum is the hash of every chunk sent so far.
type chunkHasher struct {
	chunks chan []byte // chunks to hash; nil asks for the sum so far
	sums   chan string
	free   chan []byte // hashed chunks' buffers, for reuse
	size   int
	made   int
}

// chunksInFlight bounds the chunks read ahead of the hasher.
const chunksInFlight = 4

func newChunkHasher(size int) *chunkHasher {
	c := &chunkHasher{chunks: make(chan []byte, chunksInFlight), sums: make(chan string), free: make(chan []byte, chunksInFlight+1), size: size}
	go func() {
		h := sha256.New()
		for b := range c.chunks {
			if b == nil {
				c.sums <- hex.EncodeToString(h.Sum(nil))
				continue
			}
			h.Write(b)
			c.free <- b[:cap(b)]
		}
		close(c.sums)
	}()
	return c
}

// buffer is a free chunk buffer: a hashed one, or a new one while fewer
// than chunksInFlight+1 exist.
func (c *chunkHasher) buffer() []byte {
	if c.made <= chunksInFlight {
		select {
		case b := <-c.free:
			return b
		default:
			c.made++
			return make([]byte, c.size)
		}
	}
	return <-c.free
}

// sum waits for every chunk sent and returns their hash.
func (c *chunkHasher) sum() string {
	c.chunks <- nil
	return <-c.sums
}

// stop ends the hasher's goroutine.
func (c *chunkHasher) stop() {
	close(c.chunks)
	for range c.sums {
	}
}

// batchWalk checks bytes streaming past (in chunks of any size) as a
// sequence of whole record batches, each of whose CRC verifies: CRC-32C
// over [21, end) of a v2 batch (DefaultRecordBatch), CRC-32/IEEE from the
// magic byte on of a v0/v1 message (LegacyRecord). Both keep the magic
// byte at position 16 and the length after the 12-byte log overhead.
type batchWalk struct {
	hdr  [v2CRCStart]byte
	nhdr int   // header bytes collected
	need int   // header bytes the current batch has before its CRC'd bytes
	left int64 // bytes of the current batch after its header
	crc  uint32
	want uint32
	tab  *crc32.Table
	pos  int64 // the current batch's position in the source file
	size int64
	// watch, when set, is told every batch that verifies, at its position
	// in the staged file (pos+shift); acc holds the start of a batch that
	// spans chunks.
	watch func(pos int64, batch []byte)
	shift int64
	acc   []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	// v2CRCStart is where a v2 batch's CRC'd bytes start (its
	// attributes).
	v2CRCStart = 21
	// legacyMinLength is the least length of a v0 message after the log
	// overhead (LegacyRecord.RECORD_OVERHEAD_V0).
	legacyMinLength = 14
	// logOverhead is the offset and length before every batch or
	// message (Records.LOG_OVERHEAD); recordBatchOverhead a v2 batch's
	// header (DefaultRecordBatch.RECORD_BATCH_OVERHEAD).
	logOverhead         = 12
	recordBatchOverhead = 61
)

func (w *batchWalk) write(b []byte) error {
	chunk, from := b, 0 // the current batch's bytes in this chunk start at from
	for len(b) > 0 {
		if w.left == 0 {
			if w.need == 0 {
				from = len(chunk) - len(b)
				w.need = logOverhead + 5 // up to and including magic
			}
			n := copy(w.hdr[w.nhdr:w.need], b)
			w.nhdr += n
			b = b[n:]
			if w.nhdr < w.need {
				continue
			}
			if w.nhdr == logOverhead+5 {
				length := int64(int32(binary.BigEndian.Uint32(w.hdr[8:12])))
				w.size = logOverhead + length
				magic := w.hdr[16]
				switch {
				case magic >= 2 && length >= recordBatchOverhead-logOverhead:
					w.need, w.tab = v2CRCStart, castagnoli
					continue
				case magic < 2 && length >= legacyMinLength:
					w.tab = crc32.IEEETable
					w.want = binary.BigEndian.Uint32(w.hdr[12:16])
					w.crc = crc32.Update(0, w.tab, w.hdr[16:17])
					w.left = w.size - int64(w.nhdr)
				default:
					return fmt.Errorf("the staged copy holds no batch at position %d (length %d, magic %d)", w.pos, length, magic)
				}
			} else {
				w.want = binary.BigEndian.Uint32(w.hdr[17:21])
				w.crc = 0
				w.left = w.size - int64(w.nhdr)
			}
			if w.left > 0 {
				continue
			}
		}
		n := int(min(w.left, int64(len(b))))
		w.crc = crc32.Update(w.crc, w.tab, b[:n])
		w.left -= int64(n)
		b = b[n:]
		if w.left == 0 {
			pos := w.pos
			if err := w.done(); err != nil {
				return err
			}
			if w.watch != nil {
				batch := chunk[from : len(chunk)-len(b)]
				if len(w.acc) > 0 {
					w.acc = append(w.acc, batch...)
					batch, w.acc = w.acc, w.acc[:0]
				}
				w.watch(pos+w.shift, batch)
			}
		}
	}
	if w.watch != nil && (w.nhdr != 0 || w.left != 0) {
		w.acc = append(w.acc, chunk[from:]...)
	}
	return nil
}

// done closes the current batch.
func (w *batchWalk) done() error {
	if w.crc != w.want {
		return fmt.Errorf("the staged copy of the batch at position %d fails its CRC (stored 0x%08x, computed 0x%08x)", w.pos, w.want, w.crc)
	}
	w.pos += w.size
	w.nhdr, w.need = 0, 0
	return nil
}

// finish reports a range that ends inside a batch.
func (w *batchWalk) finish() error {
	if w.nhdr != 0 || w.left != 0 {
		return fmt.Errorf("the staged copy ends inside the batch at position %d", w.pos)
	}
	return nil
}

// stageChunk is what checkStaged reads at a time.
const stageChunk = 1 << 20

// contentHash hashes content followed by the source ranges.
func contentHash(content []byte, srcs []SourceRange) (string, error) {
	h := sha256.New()
	h.Write(content)
	for _, r := range srcs {
		if err := copyRange(h, r); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile hashes a whole file, and, when keep >= 0, also the content
// "first keep bytes of the file, then extra, then the source ranges" in
// the same read.
func hashFile(path string, keep int64, extra []byte, srcs []SourceRange) (whole, derived string, size int64, err error) {
	f, err := segment.OpenFile(path)
	if err != nil {
		return "", "", 0, err
	}
	defer f.Close()
	hw, hd := sha256.New(), sha256.New()
	if keep >= 0 {
		n, err := io.CopyN(hw, f, keep)
		size = n
		if err != nil {
			return "", "", 0, fmt.Errorf("%s: %w (need %d bytes)", path, err, keep)
		}
		// Both hashes start with the same keep bytes: the derived one
		// continues from a copy of the state, instead of hashing the
		// prefix (a whole segment, for an append) a second time.
		state, err := hw.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return "", "", 0, err
		}
		if err := hd.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
			return "", "", 0, err
		}
	}
	n, err := io.Copy(hw, f)
	if err != nil {
		return "", "", 0, err
	}
	size += n
	if keep >= 0 {
		hd.Write(extra)
		for _, r := range srcs {
			if err := copyRange(hd, r); err != nil {
				return "", "", 0, err
			}
		}
		derived = hex.EncodeToString(hd.Sum(nil))
	}
	return hex.EncodeToString(hw.Sum(nil)), derived, size, nil
}

// fileState is what a file is, compared with an operation's old and new
// content.
type fileState int

const (
	stateOther fileState = iota // neither
	stateOld                    // the content before the injection (or absent for a create)
	stateNew                    // the content after it (or absent for a delete)
	stateTorn                   // an append interrupted: the old content and part of the new
)

// classify compares the file of op with its old and new hashes.
func classify(dir string, op *FileOp) (fileState, error) {
	path := filepath.Join(dir, op.Name)
	if op.Action == OpAppend {
		return classifyAppend(path, op)
	}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		switch op.Action {
		case OpCreate:
			return stateOld, nil
		case OpDelete:
			return stateNew, nil
		}
		return stateOther, nil
	}
	if err != nil {
		return stateOther, err
	}
	if st.Size() != op.OldSize && st.Size() != op.NewSize {
		return stateOther, nil
	}
	if bySources(op) {
		// Its bytes are the source ranges, or it is not this edit's; with
		// the sources gone, its batches' framing as the read-back saw it.
		if st.Size() == op.NewSize {
			same, gone := sameAsSources(path, op.Sources)
			if same || (gone && op.NewFraming != "" && framingOf(path) == op.NewFraming) {
				return stateNew, nil
			}
		}
		return stateOther, nil
	}
	sum, _, _, err := hashFile(path, -1, nil, nil)
	if err != nil {
		return stateOther, err
	}
	switch {
	case op.Action != OpCreate && sum == op.OldSHA256:
		return stateOld, nil
	case op.Action != OpDelete && sum == op.NewSHA256:
		return stateNew, nil
	}
	return stateOther, nil
}

// bySources reports a created file whose new content is source ranges
// alone, copied (a mirror's new segment): the staging read-back compares
// every byte with them, and the engine identifies the file by them instead
// of by a hash of the whole copy (NewSHA256 ""), which cost more CPU than
// the copy itself. A journal of an older kseg, with the hash, is still
// read by the hash.
func bySources(op *FileOp) bool {
	return op.Action == OpCreate && op.NewSHA256 == "" && len(op.Content) == 0 && op.KeepPrefix == 0 && len(op.Sources) > 0
}

// sameAsSources reports whether path holds exactly the source ranges,
// one after the other; gone, that a source range could not be read (its
// file deleted or shortened since), so that nothing could be compared.
func sameAsSources(path string, srcs []SourceRange) (same, gone bool) {
	f, err := segment.OpenFile(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	a, b := make([]byte, stageChunk), make([]byte, stageChunk)
	pos := int64(0)
	for _, r := range srcs {
		s, err := segment.OpenFile(r.Path)
		if err != nil {
			return false, errors.Is(err, os.ErrNotExist)
		}
		for done := int64(0); done < r.Len; {
			k := int(min(r.Len-done, stageChunk))
			_, err1 := f.ReadAt(a[:k], pos)
			_, err2 := s.ReadAt(b[:k], r.Pos+done)
			if err2 != nil {
				s.Close()
				return false, errors.Is(err2, io.EOF)
			}
			if err1 != nil || !bytes.Equal(a[:k], b[:k]) {
				s.Close()
				return false, false
			}
			done += int64(k)
			pos += int64(k)
		}
		s.Close()
	}
	var one [1]byte
	n, err := f.ReadAt(one[:], pos)
	return n == 0 && errors.Is(err, io.EOF), false
}

// framing hashes the framing of a .log's batches in order: each batch's
// position, size and stored CRC (a v2 batch's, or a v0/v1 message's).
// Over batches whose CRCs verify, it identifies their bytes as well as
// their CRC-32Cs do, for the cost of hashing 20 bytes a batch.
type framing struct{ h hash.Hash }

func newFraming() *framing { return &framing{h: sha256.New()} }

func (f *framing) add(pos int64, batch []byte) {
	var rec [20]byte
	binary.BigEndian.PutUint64(rec[0:], uint64(pos))
	binary.BigEndian.PutUint64(rec[8:], uint64(len(batch)))
	if len(batch) > v2CRCStart && batch[16] >= 2 {
		copy(rec[16:], batch[17:21])
	} else if len(batch) >= logOverhead+4 {
		copy(rec[16:], batch[12:16])
	}
	f.h.Write(rec[:])
}

func (f *framing) sum() string { return hex.EncodeToString(f.h.Sum(nil)) }

// framingOf is the framing of the .log at path if every one of its
// batches verifies its CRC and the last ends at the end of the file; ""
// otherwise.
func framingOf(path string) string {
	lf, err := segment.OpenLog(path)
	if err != nil {
		return ""
	}
	defer lf.Close()
	sc := lf.Scanner(segment.ScanOptions{})
	defer sc.Close()
	fr := newFraming()
	for sc.Next() {
		b := sc.Batch()
		if !b.CRCValid() {
			return ""
		}
		fr.add(sc.Pos(), b.Raw)
	}
	if sc.Err() != nil || sc.Tail().Kind != segment.TailClean {
		return ""
	}
	return fr.sum()
}

// syncDir fsyncs a directory so that a create, rename or unlink in it is
// durable (Kafka: Utils.flushDir after atomicMoveWithFallback).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return d.Close()
}

// syncFile fsyncs a regular file kseg wrote earlier (a backup an
// interrupted run left), refusing anything else without blocking on it.
func syncFile(path string) error {
	f, err := segment.OpenFile(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}

// within reports whether path is dir or inside it, after resolving
// symbolic links of the longest existing prefix of each.
func within(path, dir string) bool {
	rp, rd := RealPath(path), RealPath(dir)
	rel, err := filepath.Rel(rd, rp)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// RealPath makes path absolute and resolves the symbolic links of its
// longest existing prefix; the rest is appended as it is.
func RealPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
