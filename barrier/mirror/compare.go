package mirror

import (
	"bytes"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/digest"
)

// headerOf is the fixed part of an entry as its fields give it: the 61
// bytes of a v2 batch header (attrs the stored 16 bits of its
// attributes), the 18 or 26 of a v0/v1 message. A digest records each of
// these fields, so the bytes are the batch's own.
func headerOf(b *decode.Batch, attrs uint16, buf []byte) []byte {
	if b.Raw != nil {
		n := decode.RecordBatchOverhead
		if b.IsLegacy() {
			n = legacyHeaderLen(b.Magic)
		}
		return b.Raw[:min(n, len(b.Raw))]
	}
	return b.AppendHeader(buf[:0], attrs)
}

func legacyHeaderLen(magic int8) int {
	if magic == 1 {
		return 26
	}
	return 18
}

// diffBatches compares two batches as sameBatch does (everything but
// partitionLeaderEpoch): -1 when they match, else the index of the first
// differing byte. When neither holds the bytes where they differ (two
// digests, or a digest and a batch that differ in more than one byte of
// their records), located is false and the index is the first byte of the
// records, where the difference starts at the earliest. h is the hash a
// digest among the two carries.
func diffBatches(x, y batchView, h digest.Hash) (i int, located bool) {
	xb, yb := x.batch(), y.batch()
	if xb.Raw != nil && yb.Raw != nil {
		return sameBatch(xb.Raw, yb.Raw), true
	}
	// The headers, byte for byte (a digest records every field of them).
	hx, hy := x.header(), y.header()
	n := min(len(hx), len(hy))
	if i := sameBatch(hx[:n], hy[:n]); i >= 0 {
		return i, true
	}
	if len(hx) != len(hy) || xb.Size() != yb.Size() {
		return n, true
	}
	if h == 0 {
		return len(hx), false
	}
	sx, sy := x.hash(h), y.hash(h)
	if sx != nil && bytes.Equal(sx, sy) {
		return -1, true
	}
	switch {
	case xb.Raw != nil && sy != nil:
		if j, ok := digest.LocateChange(xb.Raw, y.computedCRC(), sy, h); ok {
			return j, true
		}
	case yb.Raw != nil && sx != nil:
		if j, ok := digest.LocateChange(yb.Raw, x.computedCRC(), sx, h); ok {
			return j, true
		}
	}
	return len(hx), false
}

// sameButOffsetV reports two batches equal in every byte but baseOffset
// (and partitionLeaderEpoch), as sameButOffset does.
func sameButOffsetV(x, y batchView, h digest.Hash) bool {
	xb, yb := x.batch(), y.batch()
	if xb.Raw != nil && yb.Raw != nil {
		return sameButOffset(xb.Raw, yb.Raw)
	}
	if xb.Size() != yb.Size() || xb.Magic != yb.Magic || h == 0 {
		return false
	}
	hx, hy := x.header(), y.header()
	cx := append(append([]byte(nil), hy[:8]...), hx[8:]...)
	if sameBatch(cx, hy) >= 0 {
		return false
	}
	sx, sy := x.hash(h), y.hash(h)
	return sx != nil && bytes.Equal(sx, sy)
}
