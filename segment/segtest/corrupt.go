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
