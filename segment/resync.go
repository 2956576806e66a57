package segment

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"

	"github.com/kseg/kseg/decode"
)

// Resynchronisation after structural damage in the middle of a .log.
//
// The broker stops reading a segment at the first entry that does not
// frame (FileLogInputStream) and LogSegment.recover truncates it there;
// kseg repair does the same. An inspection tool should also show what lies
// beyond: a corrupt length field or a few garbage bytes in the middle of
// a segment do not destroy the batches after them. Resync finds the next
// position where a batch plausibly starts, so that dump can go on from
// there and report the bytes it skipped.
//
// A candidate position p is accepted when, as FileLogInputStream would
// read it:
//
//	magic (p+16)       0, 1 or 2
//	size  (p+8)        at least 14 (LegacyRecord.RECORD_OVERHEAD_V0), and
//	                   the entry, 12+size bytes, ends within the range;
//	                   a v2 entry is at least 61 bytes
//	offset (p)         at or above MinBaseOffset (offsets only grow in a log)
//	crc                v2: CRC-32C over [p+21, end of entry) equals the
//	                   stored crc (p+17); v0/v1: CRC-32 over [p+16, end)
//	                   equals the stored crc (p+12)
//
// The CRC is the strong check: a random position passes the cheap tests
// about once in a few hundred thousand, and then the CRC with probability
// 2^-32. A v2 candidate also needs a non-negative lastOffsetDelta before
// its CRC is computed.

// ResyncOptions tune Resync.
type ResyncOptions struct {
	// MinBaseOffset is the lowest offset a candidate may carry: the last
	// good batch's lastOffset+1 (the segment's base offset when there is
	// none).
	MinBaseOffset int64
	// BufferSize is the sliding window; 0 means 1 MiB. It is allocated
	// once per call, never per candidate.
	BufferSize int
	// MaxCRCBytes bounds the bytes hashed for candidates that pass the
	// cheap checks; 0 means 64 MiB plus four times the searched range.
	// When it runs out Resync stops (found false, pos where it stopped).
	MaxCRCBytes int64
}

// ErrResyncBudget is returned when ResyncOptions.MaxCRCBytes ran out before
// a batch was found or the range was searched: adversarial bytes made too
// many positions look like batch headers.
var ErrResyncBudget = errors.New("resynchronisation gave up: too many candidate batch headers")

// Resync scans r forward byte by byte from position from for the first
// position p < end where an entry plausibly starts (see the package notes
// above for the rules) and whose whole entry lies before end. It returns
// (p, true, nil) when one is found; (end, false, nil) when there is none;
// (q, false, ErrResyncBudget) when the CRC budget ran out at position q;
// and I/O errors as they are.
//
// Work is linear in end-from plus at most MaxCRCBytes of hashing; memory
// is one window of BufferSize bytes plus a 64 KiB scratch buffer.
func Resync(r io.ReaderAt, from, end int64, opts ResyncOptions) (pos int64, found bool, err error) {
	if from < 0 {
		from = 0
	}
	if end-from < decode.LogOverhead+decode.MinLegacyRecordSize {
		return end, false, nil
	}
	bs := opts.BufferSize
	if bs <= 0 {
		bs = 1 << 20
	}
	bs = max(bs, 2*decode.RecordBatchOverhead)
	if int64(bs) > end-from {
		bs = int(end - from)
	}
	budget := opts.MaxCRCBytes
	if budget <= 0 {
		budget = 64<<20 + 4*(end-from)
	}
	rs := &resyncer{r: r, end: end, buf: make([]byte, bs), min: opts.MinBaseOffset, budget: budget}
	for p := from; end-p >= decode.LogOverhead+decode.MinLegacyRecordSize; p++ {
		// Keep the candidate's first 61 bytes (a whole v2 header) in the
		// window when the file has them.
		if p+decode.RecordBatchOverhead > rs.wend && rs.wend < end || p < rs.wpos {
			if err := rs.fill(p); err != nil {
				return p, false, err
			}
		}
		ok, err := rs.candidate(p)
		if err != nil {
			return p, false, err
		}
		if ok {
			return p, true, nil
		}
		if rs.budget < 0 {
			return p, false, ErrResyncBudget
		}
	}
	return end, false, nil
}

type resyncer struct {
	r          io.ReaderAt
	end        int64
	buf        []byte // window: file bytes [wpos, wend)
	wpos, wend int64
	scratch    []byte // for entries that run past the window
	min        int64
	budget     int64
}

// fill loads the window from p.
func (rs *resyncer) fill(p int64) error {
	n := min(int64(len(rs.buf)), rs.end-p)
	got, err := rs.r.ReadAt(rs.buf[:n], p)
	if int64(got) < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	rs.wpos, rs.wend = p, p+n
	return nil
}

// at returns the window bytes at file position p (at least n of them are
// there when the caller checked p+n <= wend).
func (rs *resyncer) at(p int64) []byte { return rs.buf[p-rs.wpos : rs.wend-rs.wpos] }

// candidate applies the rules at p.
func (rs *resyncer) candidate(p int64) (bool, error) {
	if p+decode.HeaderSizeUpToMagic > rs.wend {
		return false, nil
	}
	h := rs.at(p)
	magic := int8(h[16])
	if magic < 0 || magic > 2 {
		return false, nil
	}
	size := int32(binary.BigEndian.Uint32(h[8:]))
	if size < decode.MinLegacyRecordSize {
		return false, nil
	}
	total := decode.LogOverhead + int64(size)
	if total > rs.end-p {
		return false, nil
	}
	if int64(binary.BigEndian.Uint64(h)) < rs.min {
		return false, nil
	}
	if magic == 2 {
		if total < decode.RecordBatchOverhead || p+decode.RecordBatchOverhead > rs.wend {
			return false, nil
		}
		if int32(binary.BigEndian.Uint32(h[23:])) < 0 { // lastOffsetDelta
			return false, nil
		}
		sum, ok, err := rs.crc(p+21, p+total, castagnoli)
		return ok && sum == binary.BigEndian.Uint32(h[17:]), err
	}
	sum, ok, err := rs.crc(p+16, p+total, crc32.IEEETable)
	return ok && sum == binary.BigEndian.Uint32(h[12:]), err
}

// crc hashes file bytes [from, to), from the window where it holds them
// and through the scratch buffer beyond, charging the budget; ok is false
// when the budget does not cover it.
func (rs *resyncer) crc(from, to int64, tab *crc32.Table) (sum uint32, ok bool, err error) {
	rs.budget -= to - from
	if rs.budget < 0 {
		return 0, false, nil
	}
	if from < rs.wend {
		upto := min(to, rs.wend)
		sum = crc32.Update(sum, tab, rs.buf[from-rs.wpos:upto-rs.wpos])
		from = upto
	}
	if from >= to {
		return sum, true, nil
	}
	if rs.scratch == nil {
		rs.scratch = make([]byte, 64<<10)
	}
	for from < to {
		n := min(int64(len(rs.scratch)), to-from)
		got, err := rs.r.ReadAt(rs.scratch[:n], from)
		if int64(got) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, false, err
		}
		sum = crc32.Update(sum, tab, rs.scratch[:n])
		from += n
	}
	return sum, true, nil
}
