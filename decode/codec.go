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
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
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
		var err error
		if len(dst) == cap(dst) {
			// Full: probe for one more byte before growing, so output that
			// fits dst exactly does not reallocate it.
			var probe [1]byte
			var n int
			if n, err = r.Read(probe[:]); n > 0 {
				dst = append(grow(dst, 1, limit), probe[0])
			}
		} else {
			var n int
			n, err = r.Read(dst[len(dst):cap(dst)])
			dst = dst[:len(dst)+n]
		}
		switch {
		case len(dst) > maxSize:
			return dst, tooLarge(maxSize)
		case err == io.EOF:
			return dst, nil
		case err != nil:
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

// ---------------------------------------------------------------- snappy

// ---------------------------------------------------------------- lz4

// ---------------------------------------------------------------- zstd
