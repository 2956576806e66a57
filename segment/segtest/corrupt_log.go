// The corpus's damage to .log bytes: header bit flips, lengths, tails,
// records, and compressed payloads (truncated, malformed, decompression
// bombs).

package segtest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/decode"
)

// middle is the batch of events-0 (BrokenPartition) that headerBitFlips
// and records damage: the fourth, offsets 6..7 at position 321, after a
// batch ending at offset 5, all in leader epoch 2.
const middle = 3

// middleBatch is the layout of events-0's log and the middle batch's
// position.
func (b *corpusBuilder) middleBatch() (layout, int64, error) {
	l, err := b.layout(BrokenPartition, logName(0))
	if err != nil {
		return l, 0, err
	}
	return l, l.pos[middle], nil
}

// headerBitFlips flips one bit in every header field of the middle batch
// of events-0.
func (b *corpusBuilder) headerBitFlips() error {
	const base, m = BrokenPartition, middle
	l, p, err := b.middleBatch()
	if err != nil {
		return err
	}
	prevLast := int64(5)
	flip := func(field string, at int64, bit uint, want Expect, good, skipped []int64) {
		log := bytes.Clone(l.log)
		log[at] ^= 1 << bit
		b.logCase(base, "bitflip/"+field, l, log, want, good, skipped)
	}
	crc := Expect{Kind: KindCRCMismatch, Position: p}

	// baseOffset (0..7) is not covered by the CRC. Bit 2 of its low byte
	// turns 6 into 2, at or below the previous batch's lastOffset.
	if v := int64(binary.BigEndian.Uint64(l.log[p:])) ^ 4; v > prevLast {
		return fmt.Errorf("bitflip/baseOffset: %d is above %d", v, prevLast)
	}
	flip("baseOffset", p+7, 2, Expect{Kind: KindOffsetOrder, Position: p}, l.except(), nil)
	// Bit 40 of the last batch's baseOffset: 2^40 above the segment's base
	// offset 0, beyond the int32 relative offsets.
	last := len(l.pos) - 1
	flip("baseOffset-high", l.pos[last]+2, 0, Expect{Kind: KindOffsetOverflow, Position: l.pos[last]}, l.except(), nil)
	// batchLength (8..11): bit 30 claims a gigabyte, past the end of the
	// file; the batch after it is intact.
	flip("batchLength", p+8, 6, Expect{Kind: KindCorruptBatch, Position: p + 8}, l.except(m), l.resync(m))
	// partitionLeaderEpoch (12..15), not covered by the CRC: 2 becomes 0,
	// below the previous batch's epoch.
	if l.log[p+15] != 2 {
		return fmt.Errorf("bitflip/partitionLeaderEpoch: epoch byte %d, want 2", l.log[p+15])
	}
	flip("partitionLeaderEpoch", p+15, 1, Expect{Kind: KindEpochRegression, Position: p + 12}, l.except(), nil)
	// magic (16): 2 becomes 6.
	flip("magic", p+16, 2, Expect{Kind: KindCorruptBatch, Position: p + 16}, l.except(m), l.resync(m))
	// Everything from crc (17) on is covered by the CRC-32C over [21, end)
	// or is the CRC itself: the batch frames and fails its CRC.
	for _, f := range []struct {
		name string
		at   int64
		bit  uint
	}{
		{"crc", 20, 0},
		{"attributes", 22, 4},
		{"lastOffsetDelta", 26, 0},
		{"baseTimestamp", 34, 3},
		{"maxTimestamp", 42, 3},
		{"producerId", 50, 5},
		{"producerEpoch", 52, 0},
		{"baseSequence", 56, 2},
		{"recordsCount", 60, 0},
	} {
		flip(f.name, p+f.at, f.bit, crc, l.except(), nil)
	}
	// A flipped bit in a record value: the classic CRC mismatch.
	log := bytes.Clone(l.log)
	log[l.pos[m+1]-2] ^= 1
	b.logCase(base, "crc-mismatch", l, log, crc, l.except(), nil)
	return nil
}

// lengths damages batchLength: huge, negative or too small, in the middle
// of the log (dump resynchronises on the next batch) and at the end.
func (b *corpusBuilder) lengths() error {
	for _, base := range []string{BrokenPartition, "txn-0"} {
		seg := int64(0)
		m := 3
		if base == "txn-0" {
			seg, m = 11, 2 // the ABORT marker of producer 2003 at 216
		}
		l, err := b.layout(base, logName(seg))
		if err != nil {
			return err
		}
		p := l.pos[m]
		for _, v := range []struct {
			name string
			size uint32
		}{
			{"huge", 0x7fffff00},
			{"negative", 0xffffff00},
			{"below-14", 13},
			{"below-61", 30}, // a legacy message could be this short, a v2 batch cannot
		} {
			log := bytes.Clone(l.log)
			binary.BigEndian.PutUint32(log[p+8:], v.size)
			b.logCase(base, "length/"+v.name+"-mid", l, log, Expect{Kind: KindCorruptBatch, Position: p + 8}, l.except(m), l.resync(m))
		}
		// At the last batch, a huge length is indistinguishable from a
		// torn write: nothing valid follows. A negative one is corrupt
		// wherever it is.
		last := len(l.pos) - 1
		log := bytes.Clone(l.log)
		binary.BigEndian.PutUint32(log[l.pos[last]+8:], 0x7fffff00)
		b.logCase(base, "length/huge-last", l, log, Expect{Kind: KindTornTail, Position: l.pos[last]}, l.before(last), nil)
		log = bytes.Clone(l.log)
		binary.BigEndian.PutUint32(log[l.pos[last]+8:], 0xfffffff0)
		b.logCase(base, "length/negative-last", l, log, Expect{Kind: KindCorruptBatch, Position: l.pos[last] + 8}, l.before(last), nil)
		b.c.Cases[len(b.c.Cases)-1].Truncate = l.pos[last]
	}
	return nil
}

// tails damages the end of the last segment: a torn last batch at every
// byte, a zero-filled (preallocated) tail, garbage appended.
func (b *corpusBuilder) tails() error {
	for _, base := range CorpusBases {
		var seg int64
		switch base {
		case "orders-0":
			seg = 53
		case "txn-0":
			seg = 11
		}
		l, err := b.layout(base, logName(seg))
		if err != nil {
			return err
		}
		last := len(l.pos) - 1
		lp := l.pos[last]
		for k := int64(1); k < l.size(last); k++ {
			log := bytes.Clone(l.log[:lp+k])
			// FileLogInputStream stops silently before a partial entry;
			// kseg calls the rest a torn tail, unless every byte of it is
			// zero: a preallocated tail looks exactly like that.
			want := Expect{Kind: KindTornTail, Position: lp}
			if allZeroBytes(log[lp:]) {
				want = Expect{Kind: KindZeroTail, Position: lp, Severity: SeverityWarning}
			}
			b.logCase(base, fmt.Sprintf("torn-tail#%d", k), l, log, want, l.before(last), nil)
		}
		end := int64(len(l.log))
		b.logCase(base, "zero-tail", l, append(bytes.Clone(l.log), make([]byte, 4096)...),
			Expect{Kind: KindZeroTail, Position: end, Severity: SeverityWarning}, l.except(), nil)
		for _, g := range []struct {
			name string
			tail []byte
		}{
			{"garbage-text", []byte("this is not a kafka record batch, it is what a confused process appended")},
			{"garbage-binary", binaryGarbage(64)},
		} {
			b.logCase(base, "appended/"+g.name, l, append(bytes.Clone(l.log), g.tail...), tailExpect(g.tail, end), l.except(), nil)
			b.c.Cases[len(b.c.Cases)-1].Truncate = end
		}
	}
	return nil
}

// binaryGarbage is n deterministic non-zero bytes whose would-be
// batchLength (bytes 8..11) is negative.
func binaryGarbage(n int) []byte {
	out := make([]byte, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x) | 1
	}
	out[8] = 0xff
	return out
}

// tailExpect classifies bytes appended after the last batch (at end) with
// FileLogInputStream's rules, as the scanner applies them: 17 bytes or
// fewer are a torn header; a size below 14 is corruption at the size
// field; a size running past the end is a torn batch.
func tailExpect(tail []byte, end int64) Expect {
	if allZeroBytes(tail) {
		return Expect{Kind: KindZeroTail, Position: end, Severity: SeverityWarning}
	}
	if len(tail) <= decode.HeaderSizeUpToMagic {
		return Expect{Kind: KindTornTail, Position: end}
	}
	size := int32(binary.BigEndian.Uint32(tail[8:]))
	switch {
	case size < decode.MinLegacyRecordSize:
		return Expect{Kind: KindCorruptBatch, Position: end + 8}
	case decode.LogOverhead+int64(size) > int64(len(tail)):
		return Expect{Kind: KindTornTail, Position: end}
	}
	// A whole entry: its framing decides (not used by the corpus).
	return Expect{Kind: KindCorruptBatch, Position: end + 16}
}

func allZeroBytes(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// records damages the records section of the events-0 batch at 321 (two
// uncompressed records of 22-byte bodies, each a one-byte length varint),
// keeping the CRC valid: only decoding the records finds it.
func (b *corpusBuilder) records() error {
	const base, m = BrokenPartition, middle
	l, p, err := b.middleBatch()
	if err != nil {
		return err
	}
	rec := p + decode.RecordBatchOverhead
	if l.log[rec] != 22<<1 {
		return fmt.Errorf("records: first record length varint 0x%02x, want a one-byte 22", l.log[rec])
	}
	damage := func(class string, want Expect, fn func(batch []byte)) {
		log := bytes.Clone(l.log)
		fn(log[p : p+l.size(m)])
		fixCRC(log[p : p+l.size(m)])
		b.logCase(base, class, l, log, want, l.except(), nil)
	}
	at := func(off int64) Expect { return Expect{Kind: KindCorruptRecords, Position: off} }
	damage("records/count-negative", at(p+57), func(bt []byte) { binary.BigEndian.PutUint32(bt[57:], 0xffffffff) })
	// A v2 record takes at least 7 bytes: a million cannot fit in 44.
	damage("records/count-far-above-bytes", at(p+57), func(bt []byte) { binary.BigEndian.PutUint32(bt[57:], 1000000) })
	// The first record's length varint: a fifth byte with its MSB set.
	damage("records/bad-varint-length", at(rec), func(bt []byte) { copy(bt[61:], []byte{0xff, 0xff, 0xff, 0xff, 0xff}) })
	// Its timestampDelta varlong (after length and attributes): eleven
	// bytes with the continuation bit, more than a varlong may take.
	damage("records/bad-varlong-timestamp-delta", at(rec+2), func(bt []byte) { copy(bt[63:], bytes.Repeat([]byte{0xff}, 10)) })
	// Codec ids 5..7 do not exist (CompressionType.forId): the records
	// section cannot be read.
	for id := byte(5); id <= 7; id++ {
		damage(fmt.Sprintf("records/codec-id-%d", id), at(rec), func(bt []byte) { bt[22] = bt[22]&^0x07 | id })
	}
	return nil
}

// codecs damages compressed batches: orders-0's first segment has one of
// each codec; and it appends a decompression bomb of each codec to
// events-0.
func (b *corpusBuilder) codecs() error {
	const base = "orders-0"
	l, err := b.layout(base, logName(0))
	if err != nil {
		return err
	}
	byCodec := map[decode.Compression]int{}
	for i, p := range l.pos {
		c := decode.Compression(l.log[p+22] & 0x07)
		if _, ok := byCodec[c]; !ok {
			byCodec[c] = i
		}
	}
	for _, c := range []decode.Compression{gzip, snappy, lz4, zstd} {
		if _, ok := byCodec[c]; !ok {
			return fmt.Errorf("orders-0 has no %s batch in its first segment", c)
		}
	}
	if err := b.truncatedPayloads(base, l, byCodec); err != nil {
		return err
	}
	// lz4 with dependent blocks: FLG without the block-independence bit,
	// which Kafka's KafkaLZ4BlockInputStream refuses (before it checks the
	// header checksum).
	{
		i := byCodec[lz4]
		p := l.pos[i]
		log := bytes.Clone(l.log)
		log[p+decode.RecordBatchOverhead+4] &^= 0x20
		fixCRC(log[p : p+l.size(i)])
		b.logCase(base, "lz4-dependent-blocks", l, log, Expect{Kind: KindCorruptRecords, Position: p + decode.RecordBatchOverhead + 4}, l.except(), nil)
	}
	// xerial snappy whose first chunk length is huge, or negative.
	for _, v := range []struct {
		name string
		n    uint32
	}{{"huge", 0x7fffffff}, {"negative", 0xfffffff0}} {
		i := byCodec[snappy]
		p := l.pos[i]
		log := bytes.Clone(l.log)
		binary.BigEndian.PutUint32(log[p+decode.RecordBatchOverhead+16:], v.n)
		fixCRC(log[p : p+l.size(i)])
		b.logCase(base, "snappy-bad-chunk-length/"+v.name, l, log,
			Expect{Kind: KindCorruptRecords, Position: p + decode.RecordBatchOverhead + 16}, l.except(), nil)
	}

	return b.bombs()
}

// truncatedPayloads cuts the compressed payload of orders-0's batch of
// each codec (byCodec: its index in l) in half, the batch's CRC fixed.
func (b *corpusBuilder) truncatedPayloads(base string, l layout, byCodec map[decode.Compression]int) error {
	payloadOf := func(i int) []byte {
		return l.log[l.pos[i]+decode.RecordBatchOverhead : l.pos[i]+l.size(i)]
	}
	// Where a framing failure is reported, relative to the payload: the
	// xerial stream has a 16-byte header before its first chunk length;
	// Kafka's lz4 frame (FLG 0x60: no content size) has 4 magic bytes,
	// FLG, BD and the header checksum before the first block size; gzip
	// and zstd damage is inside the compressed stream, which has no file
	// position, so it is reported at the start of the records section.
	framing := map[decode.Compression]int64{gzip: 0, snappy: 16, lz4: 7, zstd: 0}
	if f := payloadOf(byCodec[lz4])[4]; f != 0x60 {
		return fmt.Errorf("orders-0 lz4 FLG 0x%02x, want 0x60", f)
	}
	for _, c := range []decode.Compression{gzip, snappy, lz4, zstd} {
		i := byCodec[c]
		p := l.pos[i]
		pl := payloadOf(i)
		cut := pl[:len(pl)/2]
		if c == snappy && int64(len(cut)) < framing[snappy]+4 {
			return fmt.Errorf("snappy payload too short to truncate after its first chunk length")
		}
		batch := setRecords(l.log[p:p+l.size(i)], cut)
		log := append(append(bytes.Clone(l.log[:p]), batch...), l.log[p+l.size(i):]...)
		// Later batches move up by the bytes cut.
		shift := int64(len(batch)) - l.size(i)
		var good []int64
		for j, q := range l.pos {
			switch {
			case j < i:
				good = append(good, q)
			case j > i:
				good = append(good, q+shift)
			}
		}
		b.logCase(base, "compressed-truncated/"+c.String(), l, log,
			Expect{Kind: KindCorruptRecords, Position: p + decode.RecordBatchOverhead + framing[c]}, good, nil)
	}
	return nil
}

// bombs appends to events-0 a decompression bomb of each codec.
func (b *corpusBuilder) bombs() error {
	// Decompression bombs: a seventh batch appended to events-0 whose
	// records inflate to BombSize zero bytes; dump runs with
	// --max-decompressed-bytes CorpusMaxDecompressed. The cap is checked as
	// the output grows, so the finding is at the records section.
	el, err := b.layout(BrokenPartition, logName(0))
	if err != nil {
		return err
	}
	zeros := make([]byte, BombSize)
	end := int64(len(el.log))
	for _, c := range []decode.Compression{gzip, snappy, lz4, zstd} {
		bomb, err := b.g.codecs.Compress(nil, c, 2, zeros)
		if err != nil {
			return err
		}
		hdr, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: 12, PartitionLeaderEpoch: 2, ProducerID: 9000, BaseSequence: 12},
			[]decode.RecordSpec{{Timestamp: T0 + 6000, Value: []byte("x")}})
		if err != nil {
			return err
		}
		hdr[22] |= byte(c)
		batch := setRecords(hdr, bomb)
		b.logCase(BrokenPartition, "decompression-bomb/"+c.String(), el, append(bytes.Clone(el.log), batch...),
			Expect{Kind: KindCorruptRecords, Position: end + decode.RecordBatchOverhead}, el.except(), nil)
	}
	return nil
}
