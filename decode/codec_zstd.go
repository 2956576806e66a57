// zstd, as Kafka's ZstdFactory streams it: a frame whose window a decoder
// must hold, decoded whole or as a stream.

package decode

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

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
