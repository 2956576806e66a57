package mm2

import (
	"hash/maphash"
	"unsafe"

	"github.com/kseg/kseg/decode"
)

// A record's content, for the comparison, is the v2 encoding of what MM2
// copies of it besides the timestamp (DefaultRecord.writeTo from
// keyLength on): varint keyLength (-1 for null), key, varint valueLength,
// value, varint headerCount, then per header varint keyLength, key,
// varint valueLength (-1 for null), value. Every Kafka client writes
// minimal varints (ByteUtils.writeVarint), so for nearly every record of
// an uncompressed v2 batch these are the stored bytes, hashed in place
// (parseFast); any other record is re-encoded first (contentHash).

// contentHash hashes a decoded record's content, re-encoded into buf.
func contentHash(r *decode.Record, buf *[]byte) uint64 {
	b := appendVarBytes((*buf)[:0], r.Key)
	b = appendVarBytes(b, r.Value)
	b = decode.AppendVarint(b, int32(len(r.Headers)))
	for i := range r.Headers {
		b = decode.AppendVarint(b, int32(len(r.Headers[i].Key)))
		b = append(b, r.Headers[i].Key...)
		b = appendVarBytes(b, r.Headers[i].Value)
	}
	*buf = b
	return mapHash(b)
}

// mapHash is the content hash of canonical content bytes: the runtime's
// string hash (AES-based where the CPU has AES) over all of them in one
// call. maphash.Bytes would hash them 128 bytes at a time, a call and a
// finalisation per block: a 100 KiB value cost several times its CRC.
func mapHash(c []byte) uint64 {
	if len(c) == 0 {
		return maphash.Comparable(hashSeed, "")
	}
	return maphash.Comparable(hashSeed, unsafe.String(&c[0], len(c)))
}

func appendVarBytes(dst, v []byte) []byte {
	if v == nil {
		return decode.AppendVarint(dst, -1)
	}
	return append(decode.AppendVarint(dst, int32(len(v))), v...)
}

// hashSeed is the process's seed for content hashes: both logs are read
// by the same process, so their hashes compare. Two different contents
// hash equal with probability about 2^-64.
var hashSeed = maphash.MakeSeed()

// fastRecord is a record of an uncompressed v2 data batch as parseFast
// reads it: its offset, its timestamp and its content bytes.
type fastRecord struct {
	off, ts int64
	content []byte
}

// parseFast reads the records of an uncompressed v2 data batch without
// the general decoder, keeping each record's content bytes in place. ok
// is false, with nothing read, for any other batch and for anything
// unusual (a length that does not add up, a non-minimal or overlong
// varint, bytes left over): the decoder reads that batch, and reports
// what is wrong with it.
func parseFast(b *decode.Batch, out []fastRecord) ([]fastRecord, bool) {
	out = out[:0]
	if b.IsLegacy() || b.IsControl() || b.Compression() != decode.CompressionNone || b.RecordCount < 0 {
		return out, false
	}
	p := b.Raw[decode.RecordBatchOverhead:]
	lat := b.TimestampType() == decode.LogAppendTime
	for range b.RecordCount {
		// length, attributes, timestampDelta and offsetDelta, one byte
		// each for most records (read inline), then the content.
		n, w := int32(0), 1
		if len(p) > 0 && p[0] < 0x80 {
			n = int32(p[0]>>1) ^ -int32(p[0]&1)
		} else {
			var ok bool
			if n, w, ok = varintLong(p); !ok {
				return out[:0], false
			}
		}
		if n < 1 || int(n) > len(p)-w {
			return out[:0], false
		}
		body := p[w : w+int(n)]
		p = p[w+int(n):]
		tsDelta, w1, ok1 := varlong(body[1:])
		if !ok1 {
			return out[:0], false
		}
		rest := body[1+w1:]
		var offDelta int32
		w2 := 1
		if len(rest) > 0 && rest[0] < 0x80 {
			offDelta = int32(rest[0]>>1) ^ -int32(rest[0]&1)
		} else {
			var ok bool
			if offDelta, w2, ok = varintLong(rest); !ok {
				return out[:0], false
			}
		}
		content := rest[w2:]
		if !canonicalContent(content) {
			return out[:0], false
		}
		r := fastRecord{off: b.BaseOffset + int64(offDelta), ts: b.BaseTimestamp + tsDelta, content: content}
		if lat {
			r.ts = b.MaxTimestamp
		}
		out = append(out, r)
	}
	return out, len(p) == 0
}

// canonicalContent checks that c is exactly keyLength, key, valueLength,
// value, headerCount and the headers, every varint minimal.
func canonicalContent(c []byte) bool {
	// Most records: one-byte key and value lengths (a one-byte varint is
	// minimal), no headers.
	if len(c) > 0 && c[0] < 0x80 {
		if kn := int(c[0]>>1) ^ -int(c[0]&1); kn >= -1 {
			if i := 1 + max(kn, 0); i < len(c) && c[i] < 0x80 {
				if vn := int(c[i]>>1) ^ -int(c[i]&1); vn >= -1 {
					if j := i + 1 + max(vn, 0); j == len(c)-1 && c[j] == 0 {
						return true
					}
				}
			}
		}
	}
	return canonicalContentLong(c)
}

func canonicalContentLong(c []byte) bool {
	i, ok := skipBytes(c, 0, true)
	if ok {
		i, ok = skipBytes(c, i, true)
	}
	if !ok || i >= len(c) {
		return false
	}
	hc, w := int32(0), 1
	if b := c[i]; b < 0x80 {
		hc = int32(b>>1) ^ -int32(b&1)
	} else if hc, w, ok = varintLong(c[i:]); !ok || c[i+w-1] == 0 {
		return false
	}
	if hc < 0 || int(hc) > len(c)-i {
		return false
	}
	i += w
	for range hc {
		if i, ok = skipBytes(c, i, false); !ok {
			return false
		}
		if i, ok = skipBytes(c, i, true); !ok {
			return false
		}
	}
	return i == len(c)
}

// skipBytes reads a minimal varint length at c[i:] (-1 for null when
// nullable) and skips that many bytes: the position after them. The
// usual record never gets here: canonicalContent reads its one-byte
// lengths inline.
func skipBytes(c []byte, i int, nullable bool) (int, bool) {
	if i >= len(c) {
		return 0, false
	}
	var n int32
	w := 1
	if b := c[i]; b < 0x80 {
		n = int32(b>>1) ^ -int32(b&1)
	} else {
		var ok bool
		if n, w, ok = varintLong(c[i:]); !ok || c[i+w-1] == 0 {
			return 0, false
		}
	}
	if n < -1 || (n == -1 && !nullable) || int(n) > len(c)-i-w {
		return 0, false
	}
	return i + w + max(int(n), 0), true
}

// varintLong reads a zig-zag varint of more than one byte as
// ByteUtils.readVarint: at most five bytes, the fifth without its
// continuation bit; ok is false for one that does not end or is too long.
// (The one-byte case is read inline by the callers; a non-minimal
// encoding — a last byte of 0 after others — is theirs to refuse.)
//
//go:noinline
func varintLong(p []byte) (int32, int, bool) {
	var ux uint32
	for i := 0; i < 5 && i < len(p); i++ {
		c := p[i]
		if i == 4 && c&0x80 != 0 {
			return 0, 0, false
		}
		ux |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return int32(ux>>1) ^ -int32(ux&1), i + 1, true
		}
	}
	return 0, 0, false
}

// varlong reads a zig-zag varlong: at most ten bytes.
func varlong(p []byte) (int64, int, bool) {
	var ux uint64
	for i := 0; i < 10 && i < len(p); i++ {
		c := p[i]
		ux |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return int64(ux>>1) ^ -int64(ux&1), i + 1, true
		}
	}
	return 0, 0, false
}
