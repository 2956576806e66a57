// snappy in Kafka's xerial framing (SnappyInputStream, SnappyOutputStream):
// a 16-byte header, then length-prefixed snappy blocks.

package decode

import (
	"bytes"
	"encoding/binary"

	"github.com/klauspost/compress/s2"
)

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
