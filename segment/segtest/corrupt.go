package segtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// The corruption corpus: every class of damage kseg must answer with a
// precise finding, applied to healthy partitions — orders-0 and txn-0
// from testdata/partitions, and events-0, the partition every broken
// sibling starts from (generated here without a defect). Each case states
// the finding dump must report (kind, file, exact byte position) computed
// from the layout of the healthy files, never from kseg's output, and the
// batches dump must still report around the damage.
//
// Positions follow dump's conventions: a CRC mismatch is reported at the
// batch; structural damage at the failing field (batchLength at +8, magic
// at +16); a torn or zero-filled tail at validBytes, the end of the last
// whole batch; a record-level failure at the field inside the records
// section (+61 onwards), or at the start of the records section when the
// failure is inside a compressed stream, which has no file position; an
// index finding at the entry's slot (8 or 12 bytes each); a snapshot or
// .txnindex finding at the failing field.

// Finding kinds and severities, as kseg dump reports them.
const (
	KindCRCMismatch       = "crc-mismatch"
	KindCorruptBatch      = "corrupt-batch"
	KindTornTail          = "torn-tail"
	KindZeroTail          = "zero-tail"
	KindCorruptRecords    = "corrupt-records"
	KindOffsetOrder       = "offset-out-of-order"
	KindOffsetOverflow    = "offset-overflow"
	KindEpochRegression   = "leader-epoch-regression"
	KindIndexMismatch     = "index-mismatch"
	KindTimeIndexMismatch = "timeindex-mismatch"
	KindIndexLength       = "index-length"
	KindSnapshotCorrupt   = "snapshot-corrupt"
	KindTxnIndexCorrupt   = "txnindex-corrupt"
	KindSkippedBytes      = "skipped-bytes"

	SeverityError   = "error"
	SeverityWarning = "warning"
)

// CorpusMaxDecompressed is the --max-decompressed-bytes the corpus runs
// dump with: the bombs inflate to BombSize, far above it.
const CorpusMaxDecompressed = 1 << 20

// Expect is the finding a damaged partition must produce.
type Expect struct {
	Kind     string
	File     string // base name of the file the finding is about
	Position int64
	Severity string // SeverityError (dump exits 3) or SeverityWarning (exit 0)
}

// CorruptCase is one class of damage applied to one healthy partition.
type CorruptCase struct {
	Name  string // <base>/<class>[/<detail>]
	Base  string // orders-0, txn-0 or events-0
	Class string
	// Target is the file dump is pointed at (a base name inside the
	// partition directory).
	Target string
	// Files are the damaged files' complete new contents.
	Files  map[string][]byte
	Expect Expect
	// Good are the positions, in Expect.File (a .log), of every intact
	// batch dump must still report, before and after the damage.
	Good []int64
	// Truncate is where the broker's log recovery (and kseg repair) cuts
	// Expect.File: the start of the first batch that does not frame or
	// fails its CRC, or whose offsets go back; -1 when recovery keeps every
	// byte of it (a damaged index, snapshot or record section with a valid
	// CRC, a leader epoch or offset the CRC does not cover).
	Truncate int64
	// Skipped is {from, to} of the skipped-bytes finding dump reports when
	// the damage is structural and in the middle of the log, so that it
	// reaches the batches after it only by resynchronising: from the
	// damaged batch to the next one. Nil otherwise.
	Skipped []int64
}

// Corpus is the healthy partitions and the cases built on them.
type Corpus struct {
	bases map[string]map[string][]byte // base → file name → content
	Cases []CorruptCase
}

// CorpusBases are the healthy partitions the corpus damages.
var CorpusBases = []string{BrokenPartition, "orders-0", "txn-0"}

// NewCorpus reads orders-0 and txn-0 from partitionsDir
// (testdata/partitions), generates events-0, and builds every case.
func NewCorpus(partitionsDir string) (*Corpus, error) {
	c := &Corpus{bases: map[string]map[string][]byte{}}
	for _, name := range []string{"orders-0", "txn-0"} {
		files, err := readDir(filepath.Join(partitionsDir, name))
		if err != nil {
			return nil, err
		}
		c.bases[name] = files
	}
	tmp, err := os.MkdirTemp("", "kseg-corpus-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	g := &gen{}
	// broken() with a name it does not know writes the healthy partition.
	if err := g.broken("", filepath.Join(tmp, BrokenPartition)); err != nil {
		return nil, err
	}
	if c.bases[BrokenPartition], err = readDir(filepath.Join(tmp, BrokenPartition)); err != nil {
		return nil, err
	}
	b := &corpusBuilder{c: c, g: g}
	for _, step := range []func() error{b.headerBitFlips, b.lengths, b.tails, b.records, b.codecs, b.indexes, b.stateFiles} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Write writes the case's partition — the healthy files with the damaged
// ones replaced — into dir/<base> and returns that path.
func (c *Corpus) Write(cc *CorruptCase, dir string) (string, error) {
	pd := filepath.Join(dir, cc.Base)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return "", err
	}
	for name, b := range c.bases[cc.Base] {
		if d, ok := cc.Files[name]; ok {
			b = d
		}
		if err := os.WriteFile(filepath.Join(pd, name), b, 0o644); err != nil {
			return "", err
		}
	}
	for name, d := range cc.Files {
		if _, ok := c.bases[cc.Base][name]; !ok {
			if err := os.WriteFile(filepath.Join(pd, name), d, 0o644); err != nil {
				return "", err
			}
		}
	}
	return pd, nil
}

// Healthy returns a copy of a base partition's file.
func (c *Corpus) Healthy(base, name string) []byte { return bytes.Clone(c.bases[base][name]) }

func readDir(dir string) (map[string][]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

type corpusBuilder struct {
	c *Corpus
	g *gen
}

func logName(base int64) string { return segment.SegmentFileName(base, segment.LogSuffix) }

// layout is a healthy .log split into its entries.
type layout struct {
	name string
	log  []byte
	pos  []int64
}

func (b *corpusBuilder) layout(base, name string) (layout, error) {
	log := b.c.Healthy(base, name)
	ps, err := entries(log)
	if err != nil {
		return layout{}, fmt.Errorf("%s/%s: %w", base, name, err)
	}
	l := layout{name: name, log: log}
	for _, p := range ps {
		l.pos = append(l.pos, int64(p))
	}
	return l, nil
}

// size is entry i's size; end is the end of the log.
func (l layout) size(i int) int64 {
	if i+1 < len(l.pos) {
		return l.pos[i+1] - l.pos[i]
	}
	return int64(len(l.log)) - l.pos[i]
}

// except lists every entry position but those of the given entries.
func (l layout) except(skip ...int) []int64 {
	var out []int64
	for i, p := range l.pos {
		if !slices.Contains(skip, i) {
			out = append(out, p)
		}
	}
	return out
}

// before lists the positions of the entries before entry i.
func (l layout) before(i int) []int64 { return slices.Clone(l.pos[:i]) }

func (b *corpusBuilder) add(cc CorruptCase) {
	if cc.Expect.Severity == "" {
		cc.Expect.Severity = SeverityError
	}
	if cc.Truncate == 0 {
		cc.Truncate = -1
	}
	if cc.Target == "" {
		cc.Target = cc.Expect.File
	}
	b.c.Cases = append(b.c.Cases, cc)
}

// logCase is a damaged .log of base.
// resync marks damage to entry i that dump steps over to entry i+1.
func (l layout) resync(i int) []int64 { return []int64{l.pos[i], l.pos[i+1]} }

// logCase adds a damaged .log of base; class may carry a "#detail"
// suffix that names the case but not its class.
func (b *corpusBuilder) logCase(base, class string, l layout, log []byte, want Expect, good, skipped []int64) {
	want.File = l.name
	name := base + "/" + strings.Replace(class, "#", "/", 1)
	class, _, _ = strings.Cut(class, "#")
	// Where recovery cuts: at the damaged batch. A corrupt-batch finding
	// is at a field inside it, the batch being the resynchronisation's
	// start; appended garbage sets its own.
	cut := int64(-1)
	switch want.Kind {
	case KindCRCMismatch, KindTornTail, KindZeroTail, KindOffsetOrder:
		cut = want.Position
	case KindCorruptBatch:
		if skipped != nil {
			cut = skipped[0]
		}
	}
	b.add(CorruptCase{Name: name, Base: base, Class: class, Files: map[string][]byte{l.name: log},
		Expect: want, Good: good, Skipped: skipped, Truncate: cut})
}

// headerBitFlips flips one bit in every header field of a batch in the
// middle of events-0 (the fourth, offsets 6..7 at position 321, after a
// batch ending at offset 5, all in leader epoch 2).
func (b *corpusBuilder) headerBitFlips() error {
	const base = BrokenPartition
	l, err := b.layout(base, logName(0))
	if err != nil {
		return err
	}
	const m = 3
	p := l.pos[m]
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
	const base = BrokenPartition
	l, err := b.layout(base, logName(0))
	if err != nil {
		return err
	}
	const m = 3
	p := l.pos[m]
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

// indexes damages events-0's .index (entries (5, 214) and (9, 428)) and
// .timeindex (three 12-byte entries).
func (b *corpusBuilder) indexes() error {
	const base = BrokenPartition
	idxName := segment.SegmentFileName(0, segment.IndexSuffix)
	tidxName := segment.SegmentFileName(0, segment.TimeIndexSuffix)
	idx := b.c.Healthy(base, idxName)
	tidx := b.c.Healthy(base, tidxName)
	log := b.c.Healthy(base, logName(0))
	if len(idx) != 16 || len(tidx) != 36 {
		return fmt.Errorf("events-0 indexes are %d and %d bytes, want 16 and 36", len(idx), len(tidx))
	}
	file := func(class, name string, content []byte, want Expect) {
		want.File = name
		b.add(CorruptCase{Name: base + "/" + class, Base: base, Class: class, Files: map[string][]byte{name: content}, Expect: want})
	}
	// A length that is not a whole number of entries: the finding is at
	// the partial entry.
	file("index-length", idxName, append(bytes.Clone(idx), 1, 2, 3), Expect{Kind: KindIndexLength, Position: 16})
	file("timeindex-length", tidxName, append(bytes.Clone(tidx), 1, 2, 3, 4, 5), Expect{Kind: KindIndexLength, Position: 36})
	// An entry (relative offset 11) whose position lies past the end of
	// the log: the third slot, byte 16.
	past := binary.BigEndian.AppendUint32(bytes.Clone(idx), 11)
	past = binary.BigEndian.AppendUint32(past, uint32(len(log)+4096))
	file("index-entry-past-eof", idxName, past, Expect{Kind: KindIndexMismatch, Position: 16})
	// The two entries swapped: each still matches the log, but the second
	// slot (byte 8) goes backwards.
	swapped := append(bytes.Clone(idx[8:16]), idx[0:8]...)
	file("index-out-of-order", idxName, swapped, Expect{Kind: KindIndexMismatch, Position: 8})
	tswapped := append(append(bytes.Clone(tidx[12:24]), tidx[0:12]...), tidx[24:]...)
	file("timeindex-out-of-order", tidxName, tswapped, Expect{Kind: KindTimeIndexMismatch, Position: 12})
	return nil
}

// stateFiles damages producer snapshots (orders-0's 26.snapshot) and a
// transaction index (txn-0's 11.txnindex, two entries).
func (b *corpusBuilder) stateFiles() error {
	snapName := segment.SegmentFileName(26, segment.SnapshotSuffix)
	snap := b.c.Healthy("orders-0", snapName)
	if len(snap) < segment.SnapshotHeaderSize+segment.SnapshotEntrySize {
		return fmt.Errorf("orders-0 %s is %d bytes", snapName, len(snap))
	}
	file := func(base, class, name string, content []byte, want Expect) {
		want.File = name
		b.add(CorruptCase{Name: base + "/" + class, Base: base, Class: class, Files: map[string][]byte{name: content}, Expect: want})
	}
	badCRC := bytes.Clone(snap)
	badCRC[segment.SnapshotHeaderSize+20] ^= 0x10 // inside the first entry: the CRC at 2 no longer matches
	file("orders-0", "snapshot-bad-crc", snapName, badCRC, Expect{Kind: KindSnapshotCorrupt, Position: 2})
	badVersion := bytes.Clone(snap)
	binary.BigEndian.PutUint16(badVersion, 2)
	file("orders-0", "snapshot-bad-version", snapName, badVersion, Expect{Kind: KindSnapshotCorrupt, Position: 0})

	txnName := segment.SegmentFileName(11, segment.TxnIndexSuffix)
	txn := b.c.Healthy("txn-0", txnName)
	if len(txn) != 2*segment.AbortedTxnSize {
		return fmt.Errorf("txn-0 %s is %d bytes, want two entries", txnName, len(txn))
	}
	for _, e := range []int{0, 1} {
		bad := bytes.Clone(txn)
		bad[e*segment.AbortedTxnSize] = 1 // the high byte, all Kafka reads of the version
		file("txn-0", fmt.Sprintf("txnindex-bad-version/entry-%d", e), txnName, bad,
			Expect{Kind: KindTxnIndexCorrupt, Position: int64(e * segment.AbortedTxnSize)})
	}
	return nil
}

// Classes lists the damage classes of the corpus, sorted.
func (c *Corpus) Classes() []string {
	set := map[string]bool{}
	for _, cc := range c.Cases {
		set[cc.Class] = true
	}
	out := slices.Collect(maps.Keys(set))
	sort.Strings(out)
	return out
}
