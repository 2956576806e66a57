// lz4 in Kafka's frame format (KafkaLZ4BlockInputStream and
// KafkaLZ4BlockOutputStream): independent blocks, a header checksum by
// xxHash32.

package decode

import (
	"encoding/binary"
	"math/bits"

	"github.com/pierrec/lz4/v4"
)

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
	fr, p, err := lz4FrameHeader(src, magic)
	if err != nil {
		return dst, err
	}
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
			if fr.contentChecksum && len(src)-p < 4 {
				return dst, codecErr(p, "lz4 contentChecksum", ErrCorrupt, "stream ended prematurely")
			}
			return dst, nil
		}
		if size > fr.blockMax {
			return dst, codecErr(pos, "lz4 blockSize", ErrCorrupt, "block size %d exceeded max: %d", size, fr.blockMax)
		}
		if size > len(src)-p {
			return dst, codecErr(pos, "lz4 blockSize", ErrCorrupt, "block of %d bytes but only %d remain", size, len(src)-p)
		}
		block := src[p : p+size]
		p += size
		if fr.blockChecksum {
			if err := lz4CheckBlock(src, p, block); err != nil {
				return dst, err
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
		if dst, err = lz4AppendBlock(dst, block, pos, fr.blockMax, maxSize); err != nil {
			return dst, err
		}
	}
}

// lz4Frame is what the frame descriptor (FLG, BD) says about the blocks
// that follow it.
type lz4Frame struct {
	blockChecksum   bool // FLG.isBlockChecksumSet
	contentChecksum bool // FLG.isContentChecksumSet
	blockMax        int  // BD.getBlockMaximumSize
}

// lz4FrameHeader reads the magic, FLG, BD, the optional content size and
// the header checksum, as Lz4BlockInputStream.readHeader does, and returns
// the position of the first block.
func lz4FrameHeader(src []byte, magic int8) (lz4Frame, int, error) {
	if len(src) == 0 {
		return lz4Frame{}, 0, codecErr(0, "lz4 magic", ErrCorrupt, "empty lz4 stream")
	}
	if len(src) < 6 {
		return lz4Frame{}, 0, codecErr(0, "lz4 magic", ErrCorrupt, "stream ended prematurely after %d bytes", len(src))
	}
	if m := binary.LittleEndian.Uint32(src); m != lz4Magic {
		return lz4Frame{}, 0, codecErr(0, "lz4 magic", ErrCorrupt, "invalid magic bytes %08x, want 04224d18", binary.BigEndian.Uint32(src))
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&0x02 != 0:
		return lz4Frame{}, 0, codecErr(4, "lz4 FLG", ErrCorrupt, "reserved bits must be 0 (FLG 0x%02x)", flg)
	case flg&0x01 != 0:
		return lz4Frame{}, 0, codecErr(4, "lz4 FLG", ErrUnsupported, "dictionary id is unsupported (FLG 0x%02x)", flg)
	case flg&0x20 == 0:
		return lz4Frame{}, 0, codecErr(4, "lz4 FLG", ErrUnsupported, "dependent block stream is unsupported (FLG 0x%02x)", flg)
	case flg>>6 != 1:
		return lz4Frame{}, 0, codecErr(4, "lz4 FLG", ErrUnsupported, "version %d unsupported (FLG 0x%02x)", flg>>6, flg)
	case bd&0x8f != 0:
		return lz4Frame{}, 0, codecErr(5, "lz4 BD", ErrCorrupt, "reserved bits must be 0 (BD 0x%02x)", bd)
	case bd>>4 < 4:
		return lz4Frame{}, 0, codecErr(5, "lz4 BD", ErrCorrupt, "block size id %d must be between 4 and 7", bd>>4)
	}
	fr := lz4Frame{
		blockChecksum:   flg&0x10 != 0,
		contentChecksum: flg&0x04 != 0,
		blockMax:        1 << (2*int(bd>>4) + 8),
	}
	p := 6
	if flg&0x08 != 0 { // content size, skipped
		if len(src)-p < 8 {
			return fr, p, codecErr(p, "lz4 contentSize", ErrCorrupt, "stream ended prematurely")
		}
		p += 8
	}
	if p >= len(src) {
		return fr, p, codecErr(p, "lz4 HC", ErrCorrupt, "stream ended prematurely")
	}
	if magic != 0 { // Lz4BlockInputStream.ignoreFlagDescriptorChecksum
		if want := byte(xxh32(src[4:p], 0) >> 8); src[p] != want {
			return fr, p, codecErr(p, "lz4 HC", ErrCRCMismatch, "stream frame descriptor corrupted: stored 0x%02x, computed 0x%02x", src[p], want)
		}
	}
	return fr, p + 1, nil
}

// lz4CheckBlock verifies the block checksum stored at src[p:] against the
// block's xxHash32.
func lz4CheckBlock(src []byte, p int, block []byte) error {
	if len(src)-p < 4 {
		return codecErr(p, "lz4 blockChecksum", ErrCorrupt, "stream ended prematurely")
	}
	stored, computed := binary.LittleEndian.Uint32(src[p:]), xxh32(block, 0)
	if stored != computed {
		return codecErr(p, "lz4 blockChecksum", ErrCRCMismatch, "block checksum mismatch: stored 0x%08x, computed 0x%08x", stored, computed)
	}
	return nil
}

// lz4AppendBlock decompresses one compressed block (read at pos) onto dst,
// never past maxSize: the output room is capped, and a block that fails
// because of the cap rather than damage is told apart by walking its
// sequences.
func lz4AppendBlock(dst, block []byte, pos, blockMax, maxSize int) ([]byte, error) {
	limit := maxSize + 1
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
	return dst, nil
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
