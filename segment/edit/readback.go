// The read-back of a staged file while it is fsynced: one pass in chunks that
// hashes it (SHA-256, on a goroutine of its own), compares it with the
// planned content and the source ranges byte for byte, and walks a .log's
// copied ranges as record batches whose CRCs must verify.

package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/kseg/kseg/segment"
)

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
	cr := &chunkReader{f: f, name: staged, hs: hs, size: chunk}
	switch {
	case skipKeep:
		cr.pos = keep
	case prefixFrom != "":
		if err := cr.against(prefixFrom, 0, keep, nil); err != nil {
			return "", "", err
		}
	default:
		for cr.pos < keep {
			if _, err := cr.next(int(min(keep-cr.pos, int64(chunk)))); err != nil {
				return "", "", err
			}
		}
	}
	for done := 0; done < len(content); {
		k := min(len(content)-done, chunk)
		b, err := cr.next(k)
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
		if err := cr.against(r.Path, r.Pos, r.Len, bw); err != nil {
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

// against checks the file's next n bytes against [at, at+n) of path, and
// walks them as record batches through bw (nil: not batches).
func (r *chunkReader) against(path string, at, n int64, bw *batchWalk) error {
	src, err := segment.OpenFile(path)
	if err != nil {
		return err
	}
	defer src.Close()
	for done := int64(0); done < n; {
		k := int(min(n-done, int64(r.size)))
		if cap(r.want) < k {
			r.want = make([]byte, r.size)
		}
		w := r.want[:k]
		if _, err := src.ReadAt(w, at+done); err != nil {
			return fmt.Errorf("%s: %d bytes at position %d: %w (did it change?)", path, k, at+done, err)
		}
		b, err := r.next(k)
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

// chunkReader reads a file from pos on in chunks, handing each to the
// hasher when there is one; a chunk stays valid until the next read.
type chunkReader struct {
	f     *os.File
	name  string
	hs    *chunkHasher // nil: nothing is hashed
	plain []byte       // the one buffer without a hasher
	want  []byte       // what against compares a chunk with
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
