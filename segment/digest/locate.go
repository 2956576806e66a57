package digest

import (
	"bytes"
	"hash/crc32"

	"github.com/kseg/kseg/decode"
)

// The CRCs of Kafka's batches are linear over GF(2): for two byte strings
// a and b of one length, crc(a) xor crc(b) is the CRC register that the
// difference a xor b leaves, from zero. A difference in one byte v at
// position j of an m-byte region leaves tab[v] shifted through m-1-j zero
// bytes, and a zero byte's shift can be undone (the high byte of tab[i]
// names i), so the syndrome crc(a) xor crc(b) is walked back one byte at a
// time until it is tab[v] for some v: j and v are then found in one pass
// over the region. The hash of the other side's bytes decides between
// candidates (a syndrome can walk back to tab[v] by chance about once in
// 2^24 bytes).

type crcTable struct {
	tab *crc32.Table
	inv [256]byte // inv[tab[i] >> 24] = i
}

func newCRCTable(tab *crc32.Table) *crcTable {
	t := &crcTable{tab: tab}
	for i := range 256 {
		t.inv[tab[i]>>24] = byte(i)
	}
	return t
}

var (
	castagnoliTable = newCRCTable(crc32.MakeTable(crc32.Castagnoli))
	ieeeTable       = newCRCTable(crc32.IEEETable)
)

// unshift undoes one zero byte's step of the register.
func (t *crcTable) unshift(r uint32) uint32 {
	i := t.inv[r>>24]
	return (r^t.tab[i])<<8 | uint32(i)
}

// LocateChange finds the first byte where a batch whose bytes are raw
// differs from a batch of the same length and header that the digest
// knows by its computed CRC (otherCRC) and the h-hash of its CRC-covered
// bytes (otherHash), when the two differ in exactly one byte past the
// header: its position in the batch, and ok. A difference of more than
// one byte is not located (ok false).
func LocateChange(raw []byte, otherCRC uint32, otherHash []byte, h Hash) (int, bool) {
	if len(raw) <= 16 {
		return 0, false
	}
	region := Covered(raw)
	off := len(raw) - len(region)
	hdr := 61
	t, crc := castagnoliTable, decode.CRC32C(region)
	if raw[16] < 2 {
		hdr = legacyHeader(raw[16])
		t, crc = ieeeTable, crc32.ChecksumIEEE(region)
	}
	s := crc ^ otherCRC
	if s == 0 {
		return 0, false
	}
	type cand struct {
		j int
		v byte
	}
	var cands []cand
	m := len(region)
	r := s
	for k := 0; k < m; k++ {
		if v := t.inv[r>>24]; v != 0 && t.tab[v] == r {
			if j := m - 1 - k; off+j >= hdr {
				cands = append(cands, cand{j, v})
			}
		}
		r = t.unshift(r)
	}
	other := append([]byte(nil), region...)
	for i := len(cands) - 1; i >= 0; i-- { // the first byte first
		c := cands[i]
		other[c.j] ^= c.v
		if bytes.Equal(h.Sum(nil, other), otherHash) {
			return off + c.j, true
		}
		other[c.j] ^= c.v
	}
	return 0, false
}
