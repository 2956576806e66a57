// gzip, as Kafka's GZIPInputStream and GZIPOutputStream use it.

package decode

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

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
