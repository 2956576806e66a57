package decode

// Codec framing, as Kafka's readers and writers see it (formats.md §5):
//
//	gzip    RFC 1952 members, one written, any number read    GzipCompression
//	snappy  xerial stream: 82 'SNAPPY' 00 | int32 1 | int32 1 | (int32 len, raw block)*
//	        or one raw snappy block                           SnappyCompression
//	lz4     04 22 4D 18 | FLG BD [contentSize] HC | (uint32le size, block [xxh32])* | 00000000 [xxh32]
//	                                                          Lz4Compression
//	zstd    standard frames                                   ZstdCompression
//
// Every length read from the input is checked against the bytes that remain
// and every decompressed size against the caller's cap, so a hostile batch
// costs memory on the order of the cap, never of what it claims to expand to.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codecs decompresses and compresses Kafka payloads. It keeps the gzip
// reader and writer, the zstd decoder and encoder and the lz4 compressor
// between calls, so decoding a segment batch after batch allocates nothing
// beyond growing the caller's output buffer.
//
// The zero value is ready to use. A Codecs is not safe for concurrent use:
// give each goroutine its own. It must not be copied after first use.
type Codecs struct {
	src bytes.Reader // the input of the streaming decoders (gzip, zstd fallback)
	out appendWriter // the output of the streaming encoders (gzip)

	gzr *gzip.Reader
	gzw *gzip.Writer

	zdec       *zstd.Decoder // DecodeAll, output bounded by zdecMax
	zdecMax    int
	zstream    *zstd.Decoder // streaming fallback for windows above the cap
	zenc       *zstd.Encoder
	lz4c       *lz4.Compressor
	lz4scratch []byte
}

// Decompress appends the decompressed form of src to dst[:0] and returns
// it, reusing dst's capacity. It never returns more than maxSize bytes
// (maxSize <= 0 means DefaultMaxDecompressed): a stream that would exceed the
// cap fails with an error wrapping ErrTooLarge. gzip, snappy and lz4 stop as
// soon as byte maxSize+1 appears, so their output buffer never grows past
// maxSize+1. zstd decodes a block (at most 128 KiB) at a time and checks the
// cap per frame, so it may hold up to about twice the cap; a zstd frame whose
// window exceeds a cap below 8 MiB is streamed instead, holding its window
// of at most 8 MiB.
//
// magic is the batch or wrapper magic. It matters for lz4, where magic 0
// frames carry Kafka's historic wrong header checksum, and for zstd, which
// Kafka accepts only in magic 2 batches.
//
// Errors wrap ErrCorrupt, ErrCRCMismatch, ErrTooLarge or ErrUnsupported.
// Framing errors with a known place in src are *CorruptError values whose
// Pos is relative to src and whose Field names the framing field (such as
// "lz4 blockSize"); errors from inside a compressed stream have no position
// and are plain wrapped sentinels. On error the returned slice is dst[:0]
// with whatever capacity was grown, so the caller can keep reusing it.
func (c *Codecs) Decompress(dst []byte, codec Compression, magic int8, src []byte, maxSize int) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxDecompressed
	}
	dst = dst[:0]
	var err error
	switch codec {
	case CompressionNone:
		if len(src) > maxSize {
			return dst, tooLarge(maxSize)
		}
		return append(dst, src...), nil
	case CompressionGzip:
		dst, err = c.gunzip(dst, src, maxSize)
	case CompressionSnappy:
		dst, err = c.unsnappy(dst, src, maxSize)
	case CompressionLZ4:
		dst, err = c.unlz4(dst, src, magic, maxSize)
	case CompressionZstd:
		if magic < 2 {
			// DeepRecordsIterator / MemoryRecordsBuilder: zstd exists only
			// from magic 2 (KIP-110).
			return dst, fmt.Errorf("%w: zstd is not allowed with magic %d", ErrUnsupported, magic)
		}
		dst, err = c.unzstd(dst, src, maxSize)
	default:
		return dst, unknownCodec(codec)
	}
	if err != nil {
		return dst[:0], err
	}
	return dst, nil
}

// Compress appends to dst[:0] the payload a Java producer would write for
// src, reusing dst's capacity: one gzip member with the JDK header, xerial
// snappy in 32 KiB blocks, a Kafka lz4 frame in 64 KiB independent blocks
// without checksums, one zstd frame without checksum. Framing bytes match
// Kafka exactly; the compressed bytes themselves come from Go compressors and
// differ from zlib, snappy-java, lz4-java and zstd-jni while decoding to the
// same data.
//
// magic selects lz4's header checksum (the broken one for magic 0). Compress
// does not refuse zstd with magic < 2, so that fixtures for that rejection
// can be built; Decompress refuses it.
func (c *Codecs) Compress(dst []byte, codec Compression, magic int8, src []byte) ([]byte, error) {
	dst = dst[:0]
	switch codec {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip:
		return c.gzip(dst, src)
	case CompressionSnappy:
		return c.snappy(dst, src), nil
	case CompressionLZ4:
		return c.lz4(dst, src, magic), nil
	case CompressionZstd:
		return c.zstd(dst, src)
	}
	return dst, unknownCodec(codec)
}

// unknownCodec mirrors CompressionType.forId's message.
func unknownCodec(codec Compression) error {
	return fmt.Errorf("%w: unknown compression type id: %d", ErrUnsupported, int8(codec))
}

func tooLarge(maxSize int) error {
	return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, maxSize)
}

// codecErr is a framing failure at pos within the compressed payload.
func codecErr(pos int, field string, class error, format string, args ...any) error {
	return corruptf(int64(pos), NoBaseOffset, field, class, format, args...)
}

// grow returns b with room for at least n more bytes and the same contents.
// Capacity at least doubles, but never beyond limit unless len(b)+n needs it,
// so a capped decoder's buffer stays within its cap. Past half the limit it
// goes straight to the limit: doubling to exactly the cap and then
// reallocating the whole buffer for the one byte that proves a bomb would
// cost a third full-size allocation and copy (found by FuzzRecords).
func grow(b []byte, n, limit int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	newCap := max(2*cap(b), 4096, need)
	if newCap > limit/2 {
		newCap = limit
	}
	newCap = max(min(newCap, limit), need)
	nb := make([]byte, len(b), newCap)
	copy(nb, b)
	return nb
}

// readCapped appends everything r yields to dst and fails with ErrTooLarge
// once more than maxSize bytes have arrived. It reads at most maxSize+1 bytes and
// never grows dst beyond that. hint sizes the first allocation.
func readCapped(dst []byte, r io.Reader, maxSize, hint int) ([]byte, error) {
	limit := maxSize + 1
	if cap(dst) == len(dst) {
		dst = grow(dst, min(max(hint, 4096), limit-len(dst)), limit)
	}
	for {
		if len(dst) == cap(dst) {
			// Full: probe for one more byte before growing, so output that
			// fits dst exactly does not reallocate it.
			var probe [1]byte
			n, err := r.Read(probe[:])
			if n > 0 {
				dst = append(grow(dst, 1, limit), probe[0])
			}
			if len(dst) > maxSize {
				return dst, tooLarge(maxSize)
			}
			if err == io.EOF {
				return dst, nil
			}
			if err != nil {
				return dst, err
			}
			continue
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > maxSize {
			return dst, tooLarge(maxSize)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// ---------------------------------------------------------------- gzip

// gunzip reads gzip members until the input ends, like GZIPInputStream
// (GzipCompression.wrapForInput): after each member's trailer, remaining
// bytes that do not form a valid gzip header end the stream silently
// (GZIPInputStream.readTrailer swallows the IOException of the next
// readHeader), so trailing garbage after a complete member is ignored as
// Kafka ignores it. Damage inside a member is an error.
func (c *Codecs) gunzip(dst, src []byte, maxSize int) ([]byte, error) {
	if len(src) == 0 {
		return dst, fmt.Errorf("%w: empty stream", ErrCorrupt)
	}
	c.src.Reset(src)
	defer c.src.Reset(nil)
	if c.gzr == nil {
		c.gzr = new(gzip.Reader)
	}
	// bytes.Reader is an io.ByteReader, so the inflater reads exactly up to
	// the end of each member and c.src is positioned at the next one.
	if err := c.gzr.Reset(&c.src); err != nil {
		return dst, gzipErr(err)
	}
	for member := 1; ; member++ {
		c.gzr.Multistream(false)
		var err error
		dst, err = readCapped(dst, c.gzr, maxSize, 4*len(src))
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return dst, err
			}
			return dst, fmt.Errorf("member %d: %w", member, gzipErr(err))
		}
		if c.src.Len() == 0 {
			return dst, nil
		}
		if err := c.gzr.Reset(&c.src); err != nil {
			return dst, nil // not a gzip header: trailing bytes, as GZIPInputStream
		}
	}
}

func gzipErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: stream ends early", ErrCorrupt)
	}
	if errors.Is(err, gzip.ErrChecksum) {
		return fmt.Errorf("%w: %v", ErrCRCMismatch, err)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// gzip writes one member with the JDK's header: GzipOutputStream is a
// GZIPOutputStream, which writes 1f 8b 08, FLG 0, MTIME 0, XFL 0 and, from
// JDK 16, OS 0xff. klauspost's writer writes the same header at the default
// level.
func (c *Codecs) gzip(dst, src []byte) ([]byte, error) {
	c.out.b = dst
	defer func() { c.out.b = nil }()
	if c.gzw == nil {
		w, err := gzip.NewWriterLevel(&c.out, gzip.DefaultCompression)
		if err != nil {
			return dst, err
		}
		c.gzw = w
	} else {
		c.gzw.Reset(&c.out)
	}
	if _, err := c.gzw.Write(src); err != nil {
		return dst, err
	}
	if err := c.gzw.Close(); err != nil {
		return dst, err
	}
	return c.out.b, nil
}

// ---------------------------------------------------------------- snappy

// xerialMagic opens a snappy-java SnappyOutputStream (SnappyCodec.MAGIC_HEADER).
var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16         // magic, version, compatible version
	xerialMagicHead = 0x82534E41 // the magic's first four bytes read as a chunk length
	xerialBlockSize = 32 << 10   // SnappyOutputStream.DEFAULT_BLOCK_SIZE
)

// unsnappy mirrors SnappyInputStream (SnappyCompression.wrapForInput):
// without the xerial magic, or with fewer than 16 bytes, the whole input is
// one raw snappy block (what non-Java producers write). With it, chunks of
// [int32 BE length][raw snappy block] follow until fewer than 4 bytes remain;
// a length equal to the magic's head starts a concatenated stream header, and
// one whose magic tail does not match ends the stream (hasNextChunk).
// s2.Decode decodes snappy blocks (it also accepts S2's extensions, which
// snappy-java would reject); each block's declared length is checked against
// the cap before anything is allocated.
func (c *Codecs) unsnappy(dst, src []byte, maxSize int) ([]byte, error) {
	if len(src) == 0 {
		return dst, codecErr(0, "snappy", ErrCorrupt, "cannot decompress empty stream")
	}
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:8], xerialMagic[:]) {
		return snappyBlock(dst, src, 0, maxSize)
	}
	if v := int32(binary.BigEndian.Uint32(src[8:])); v < 1 {
		return dst, codecErr(8, "snappy version", ErrUnsupported, "xerial stream version %d, need at least 1", v)
	}
	p := xerialHeaderLen
	for len(src)-p >= 4 {
		pos := p
		n := int32(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if uint32(n) == xerialMagicHead {
			if len(src)-p < xerialHeaderLen-4 {
				return dst, codecErr(pos, "snappy header", ErrCorrupt, "insufficient header size in a concatenated block")
			}
			if !bytes.Equal(src[p:p+4], xerialMagic[4:]) {
				return dst, nil // SnappyInputStream.hasNextChunk ends the stream here
			}
			if v := int32(binary.BigEndian.Uint32(src[p+4:])); v < 1 {
				return dst, codecErr(p+4, "snappy version", ErrUnsupported, "xerial stream version %d, need at least 1", v)
			}
			p += xerialHeaderLen - 4
			continue
		}
		if n < 0 {
			return dst, codecErr(pos, "snappy chunkSize", ErrCorrupt, "negative chunk size %d", n)
		}
		if int64(n) > int64(len(src)-p) {
			return dst, codecErr(pos, "snappy chunkSize", ErrCorrupt, "chunk of %d bytes but only %d remain", n, len(src)-p)
		}
		var err error
		if dst, err = snappyBlock(dst, src[p:p+int(n)], p, maxSize); err != nil {
			return dst, err
		}
		p += int(n)
	}
	return dst, nil
}

// snappyBlock appends the decoding of one raw snappy block found at pos.
func snappyBlock(dst, block []byte, pos, maxSize int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, codecErr(pos, "snappy block", ErrCorrupt, "invalid uncompressed length")
	}
	if n > maxSize-len(dst) {
		return dst, tooLarge(maxSize)
	}
	dst = grow(dst, n, maxSize+1)
	// s2.Decode writes in place when the slice's capacity holds n bytes.
	if _, err := s2.Decode(dst[len(dst):len(dst)+n], block); err != nil {
		return dst, codecErr(pos, "snappy block", ErrCorrupt, "%v", err)
	}
	return dst[:len(dst)+n], nil
}

// snappy writes SnappyOutputStream's framing: the 16-byte header (written
// even for empty input, on the first flush), then each 32 KiB of input as
// [int32 BE length][raw snappy block]. No end marker, no checksums.
func (c *Codecs) snappy(dst, src []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // SnappyCodec.DEFAULT_VERSION
	dst = binary.BigEndian.AppendUint32(dst, 1) // SnappyCodec.MINIMUM_COMPATIBLE_VERSION
	for len(src) > 0 {
		chunk := src[:min(len(src), xerialBlockSize)]
		src = src[len(chunk):]
		bound := s2.MaxEncodedLen(len(chunk))
		at := len(dst)
		dst = grow(dst, 4+bound, at+4+bound)[:at+4+bound]
		enc := s2.EncodeSnappy(dst[at+4:], chunk)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(enc)))
		dst = dst[:at+4+len(enc)]
	}
	return dst
}

// ---------------------------------------------------------------- lz4

const (
	lz4Magic          = 0x184D2204 // little-endian 04 22 4D 18
	lz4Incompressible = 0x80000000 // Lz4BlockOutputStream.LZ4_FRAME_INCOMPRESSIBLE_MASK
	lz4FLG            = 0x60       // version 01, independent blocks, no checksums, no size
	lz4BD             = 0x40       // block maximum size id 4: 64 KiB
	lz4BlockSize      = 64 << 10
)

// unlz4 mirrors Kafka's Lz4BlockInputStream rather than the full LZ4 frame
// specification: one frame only (later bytes are ignored); FLG must have
// version 01, independent blocks ("Dependent block stream is unsupported")
// and zero reserved bits; BD a block size id of 4..7; the header checksum is
// verified except for magic 0, whose writers still hash the magic bytes too,
// as pre-0.10 clients did (KAFKA-3160); a block checksum, when flagged, is verified; a content
// checksum, when flagged, is read and not verified. pierrec/lz4's frame
// reader would reject the magic-0 header, so the frame is parsed here and
// only blocks go to lz4.UncompressBlock.
func (c *Codecs) unlz4(dst, src []byte, magic int8, maxSize int) ([]byte, error) {
	if len(src) == 0 {
		return dst, codecErr(0, "lz4 magic", ErrCorrupt, "empty lz4 stream")
	}
	if len(src) < 6 {
		return dst, codecErr(0, "lz4 magic", ErrCorrupt, "stream ended prematurely after %d bytes", len(src))
	}
	if m := binary.LittleEndian.Uint32(src); m != lz4Magic {
		return dst, codecErr(0, "lz4 magic", ErrCorrupt, "invalid magic bytes %08x, want 04224d18", binary.BigEndian.Uint32(src))
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&0x02 != 0:
		return dst, codecErr(4, "lz4 FLG", ErrCorrupt, "reserved bits must be 0 (FLG 0x%02x)", flg)
	case flg&0x01 != 0:
		return dst, codecErr(4, "lz4 FLG", ErrUnsupported, "dictionary id is unsupported (FLG 0x%02x)", flg)
	case flg&0x20 == 0:
		return dst, codecErr(4, "lz4 FLG", ErrUnsupported, "dependent block stream is unsupported (FLG 0x%02x)", flg)
	case flg>>6 != 1:
		return dst, codecErr(4, "lz4 FLG", ErrUnsupported, "version %d unsupported (FLG 0x%02x)", flg>>6, flg)
	case bd&0x8f != 0:
		return dst, codecErr(5, "lz4 BD", ErrCorrupt, "reserved bits must be 0 (BD 0x%02x)", bd)
	case bd>>4 < 4:
		return dst, codecErr(5, "lz4 BD", ErrCorrupt, "block size id %d must be between 4 and 7", bd>>4)
	}
	blockChecksum := flg&0x10 != 0
	contentChecksum := flg&0x04 != 0
	blockMax := 1 << (2*int(bd>>4) + 8) // BD.getBlockMaximumSize
	p := 6
	if flg&0x08 != 0 { // content size, skipped
		if len(src)-p < 8 {
			return dst, codecErr(p, "lz4 contentSize", ErrCorrupt, "stream ended prematurely")
		}
		p += 8
	}
	if p >= len(src) {
		return dst, codecErr(p, "lz4 HC", ErrCorrupt, "stream ended prematurely")
	}
	if magic != 0 { // Lz4BlockInputStream.ignoreFlagDescriptorChecksum
		if want := byte(xxh32(src[4:p], 0) >> 8); src[p] != want {
			return dst, codecErr(p, "lz4 HC", ErrCRCMismatch, "stream frame descriptor corrupted: stored 0x%02x, computed 0x%02x", src[p], want)
		}
	}
	p++
	limit := maxSize + 1
	for {
		if len(src)-p < 4 {
			return dst, codecErr(p, "lz4 blockSize", ErrCorrupt, "stream ended prematurely without an end mark")
		}
		pos := p
		raw := binary.LittleEndian.Uint32(src[p:])
		p += 4
		size := int(raw &^ lz4Incompressible)
		if size == 0 { // end mark (Kafka masks the stored bit first)
			if contentChecksum {
				if len(src)-p < 4 {
					return dst, codecErr(p, "lz4 contentChecksum", ErrCorrupt, "stream ended prematurely")
				}
			}
			return dst, nil
		}
		if size > blockMax {
			return dst, codecErr(pos, "lz4 blockSize", ErrCorrupt, "block size %d exceeded max: %d", size, blockMax)
		}
		if size > len(src)-p {
			return dst, codecErr(pos, "lz4 blockSize", ErrCorrupt, "block of %d bytes but only %d remain", size, len(src)-p)
		}
		block := src[p : p+size]
		p += size
		if blockChecksum {
			if len(src)-p < 4 {
				return dst, codecErr(p, "lz4 blockChecksum", ErrCorrupt, "stream ended prematurely")
			}
			stored, computed := binary.LittleEndian.Uint32(src[p:]), xxh32(block, 0)
			if stored != computed {
				return dst, codecErr(p, "lz4 blockChecksum", ErrCRCMismatch, "block checksum mismatch: stored 0x%08x, computed 0x%08x", stored, computed)
			}
			p += 4
		}
		if raw&lz4Incompressible != 0 {
			if size > maxSize-len(dst) {
				return dst, tooLarge(maxSize)
			}
			dst = append(grow(dst, size, limit), block...)
			continue
		}
		room := min(blockMax, limit-len(dst))
		dst = grow(dst, room, limit)
		n, err := lz4.UncompressBlock(block, dst[len(dst):len(dst)+room])
		if err != nil {
			// Short of room because of the cap, or damaged? The block's
			// token stream says how much it would produce.
			if room < blockMax {
				if want, ok := lz4BlockLen(block); ok && want > room && want <= blockMax {
					return dst, tooLarge(maxSize)
				}
			}
			return dst, codecErr(pos, "lz4 block", ErrCorrupt, "%v", err)
		}
		dst = dst[:len(dst)+n]
		if len(dst) > maxSize {
			return dst, tooLarge(maxSize)
		}
	}
}

// lz4BlockLen walks an lz4 block's sequences and returns the number of
// bytes it decodes to, without decoding it.
func lz4BlockLen(b []byte) (int, bool) {
	n, i := 0, 0
	extend := func(v int) (int, bool) {
		for {
			if i >= len(b) {
				return 0, false
			}
			x := b[i]
			i++
			v += int(x)
			if x != 255 {
				return v, true
			}
		}
	}
	for i < len(b) {
		tok := b[i]
		i++
		lit := int(tok >> 4)
		if lit == 15 {
			var ok bool
			if lit, ok = extend(lit); !ok {
				return 0, false
			}
		}
		if lit > len(b)-i {
			return 0, false
		}
		i += lit
		n += lit
		if i == len(b) {
			return n, true // the last sequence has literals only
		}
		if len(b)-i < 2 {
			return 0, false
		}
		i += 2
		ml := int(tok & 15)
		if ml == 15 {
			var ok bool
			if ml, ok = extend(ml); !ok {
				return 0, false
			}
		}
		n += ml + 4
	}
	return 0, false
}

// lz4 writes what Lz4BlockOutputStream writes (Lz4Compression.wrapForOutput):
// FLG 0x60, BD 0x40 (64 KiB blocks), the header checksum, 64 KiB blocks each
// with a little-endian size whose bit 31 marks data stored raw because
// compressing did not shrink it, and the end mark 00000000. For magic 0 the
// header checksum covers the magic bytes too
// (useBrokenFlagDescriptorChecksum), giving HC 0x1a instead of 0x82.
func (c *Codecs) lz4(dst, src []byte, magic int8) []byte {
	at := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, lz4FLG, lz4BD)
	hashed := dst[at+4:]
	if magic == 0 {
		hashed = dst[at:]
	}
	dst = append(dst, byte(xxh32(hashed, 0)>>8))
	if c.lz4c == nil {
		c.lz4c = new(lz4.Compressor)
	}
	bound := lz4.CompressBlockBound(lz4BlockSize)
	if len(c.lz4scratch) < bound {
		c.lz4scratch = make([]byte, bound)
	}
	for len(src) > 0 {
		block := src[:min(len(src), lz4BlockSize)]
		src = src[len(block):]
		n, err := c.lz4c.CompressBlock(block, c.lz4scratch)
		if err != nil || n == 0 || n >= len(block) {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(block))|lz4Incompressible)
			dst = append(dst, block...)
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = append(dst, c.lz4scratch[:n]...)
	}
	return binary.LittleEndian.AppendUint32(dst, 0) // end mark
}

// xxh32 is XXH32, the checksum of the LZ4 frame format. pierrec/lz4 keeps
// its copy internal, so this is the reference algorithm written out.
func xxh32(b []byte, seed uint32) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	round := func(acc, in uint32) uint32 {
		return bits.RotateLeft32(acc+in*p2, 13) * p1
	}
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for ; len(b) >= 16; b = b[16:] {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, x := range b {
		h = bits.RotateLeft32(h+uint32(x)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}

// ---------------------------------------------------------------- zstd

// zstdStreamWindow is the largest window the streaming fallback accepts:
// 8 MiB, the window the zstd format recommends every decoder support and
// more than zstd-jni uses at Kafka's levels up to 18 when the size is
// unknown.
const zstdStreamWindow = 8 << 20

// unzstd decodes zstd frames as ZstdInputStreamNoFinalizer does
// (ZstdCompression.wrapForInput), concatenated frames included.
//
// DecodeAll decodes straight into dst and checks the cap after every block,
// so it never needs a window buffer. klauspost's decoder however refuses
// frames whose window exceeds the cap even when their output would fit: a
// zstd-jni stream at level 3 declares a 2 MiB window for a batch of any size
// above 16 KiB. Those frames, when the cap is below zstdStreamWindow, are
// decoded again as a stream, which holds the window plus at most maxSize+1
// bytes of output.
func (c *Codecs) unzstd(dst, src []byte, maxSize int) ([]byte, error) {
	if len(src) == 0 {
		return dst, fmt.Errorf("%w: empty stream", ErrCorrupt)
	}
	// klauspost gives every single-segment frame a window of at least
	// zstd.MinWindowSize and refuses windows above its limit, so the
	// decoder's limit never goes below that; the cap itself is checked on
	// the output below.
	decMax := max(maxSize, zstd.MinWindowSize)
	if c.zdec == nil || c.zdecMax != decMax {
		if err := c.zstdDecoder(decMax); err != nil {
			return dst, err
		}
	}
	out, err := c.zdec.DecodeAll(src, dst)
	if err == nil {
		if len(out) > maxSize { // DecodeAll checks decMax per frame only
			return out[:0], tooLarge(maxSize)
		}
		return out, nil
	}
	if cap(out) > cap(dst) {
		dst = out[:0]
	}
	if errors.Is(err, zstd.ErrWindowSizeExceeded) && decMax < zstdStreamWindow {
		return c.unzstdStream(dst[:0], src, maxSize)
	}
	return dst, zstdErr(err, maxSize)
}

func (c *Codecs) zstdDecoder(maxSize int) error {
	if c.zdec != nil {
		if err := c.zdec.ResetWithOptions(nil, zstd.WithDecoderMaxMemory(uint64(maxSize))); err != nil {
			return err
		}
		c.zdecMax = maxSize
		return nil
	}
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(uint64(maxSize)))
	if err != nil {
		return err
	}
	c.zdec, c.zdecMax = d, maxSize
	return nil
}

func (c *Codecs) unzstdStream(dst, src []byte, maxSize int) ([]byte, error) {
	if c.zstream == nil {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(zstdStreamWindow))
		if err != nil {
			return dst, err
		}
		c.zstream = d
	}
	// A frame that declares its size needs no window to be refused.
	var h zstd.Header
	if h.Decode(src) == nil && h.HasFCS && h.FrameContentSize > uint64(maxSize) {
		return dst, tooLarge(maxSize)
	}
	c.src.Reset(src)
	defer func() {
		_ = c.zstream.Reset(nil) // drop the reference to src
		c.src.Reset(nil)
	}()
	if err := c.zstream.Reset(&c.src); err != nil {
		return dst, zstdErr(err, maxSize)
	}
	dst, err := readCapped(dst, c.zstream, maxSize, 4*len(src))
	if err != nil && !errors.Is(err, ErrTooLarge) {
		err = zstdErr(err, maxSize)
	}
	return dst, err
}

func zstdErr(err error, maxSize int) error {
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return tooLarge(maxSize)
	case errors.Is(err, zstd.ErrWindowSizeExceeded):
		return fmt.Errorf("%w: frame window larger than both the %d-byte cap and %d bytes", ErrTooLarge, maxSize, zstdStreamWindow)
	case errors.Is(err, zstd.ErrUnknownDictionary):
		return fmt.Errorf("%w: dictionaries are unsupported: %v", ErrUnsupported, err)
	case errors.Is(err, zstd.ErrCRCMismatch):
		return fmt.Errorf("%w: %v", ErrCRCMismatch, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: stream ends early", ErrCorrupt)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// zstd writes one frame without checksum, as ZstdOutputStreamNoFinalizer
// does with zstd-jni's defaults, at klauspost's default level (close to
// zstd level 3, Kafka's default). Empty input still yields a frame, as
// closing a zstd-jni stream does.
func (c *Codecs) zstd(dst, src []byte) ([]byte, error) {
	if c.zenc == nil {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true))
		if err != nil {
			return dst, err
		}
		c.zenc = e
	}
	return c.zenc.EncodeAll(src, dst), nil
}
