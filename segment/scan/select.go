package scan

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// What dump's filters select beyond batches. --offsets, --producer-id and
// --control-only choose batches of a .log; every other file of the dump is
// narrowed to the entries that concern those batches, so that
// "dump --offsets 5000:5002 DIR" prints the two batches and the index,
// time-index, snapshot … entries about them, not every entry of every file:
//
//   - an entry that names a producer (a producer snapshot's entry, a
//     .txnindex aborted transaction) is selected by its producerId under
//     --producer-id;
//   - an entry spans offsets: an .index or .timeindex entry its offset, a
//     snapshot entry its producer's last batch (lastOffset-offsetDelta ..
//     lastOffset, ProducerStateEntry), an aborted transaction firstOffset
//     .. lastOffset, a leader epoch its startOffset up to the next epoch's,
//     an offset checkpoint its offset; under --offsets it is selected when
//     that span meets FROM:TO;
//   - under --producer-id (for an entry that names no producer) and
//     --control-only (for any entry but an aborted transaction, which is
//     about its ABORT marker, a control batch), an entry is selected when
//     its span meets a batch selected in the same partition directory's
//     .log files earlier in this dump: dump walks a partition's segments
//     before its snapshots and checkpoint, and a segment's .log before its
//     indexes. An offset checkpoint of a log directory (one offset per
//     partition, read before the partitions) names no batch: none of its
//     entries is selected then.
//
// Files without entries (partition.metadata, meta.properties …) are shown
// whole. Findings are never filtered: a CRC mismatch outside the selection
// is still corruption. Every file's summary counts what was selected and
// says how much was scanned.

// entrySpan is the offsets [lo, hi] an entry concerns; ok is false for an
// entry that concerns none (a snapshot entry without batch metadata).
type entrySpan struct {
	lo, hi int64
	ok     bool
}

func spanOf(lo, hi int64) entrySpan { return entrySpan{lo: lo, hi: hi, ok: true} }

// selectedBatches records the batches selected in each partition
// directory, for the entries of its other files. Only --producer-id and
// --control-only need it (--offsets alone is a range).
type selectedBatches struct {
	dirs map[string]*dirSelection
}

// dirSelection is one directory's selected batches: [baseOffset,
// lastOffset] spans in scan order. In a healthy log they are disjoint and
// ascending; overlapping says one began at or below the one before it (a
// damaged log), and then every span is looked at.
type dirSelection struct {
	spans       [][2]int64
	overlapping bool
}

// needsBatches: the filters select entries by the batches selected.
func (o *Options) needsBatches() bool { return o.HasProducerFilter || o.ControlOnly }

// noteBatch records b, found at the scan of file, when the filters select
// it.
func (st *Run) noteBatch(file string, b *decode.Batch) {
	if !st.o.needsBatches() || !st.o.BatchSelected(b) {
		return
	}
	if st.sel.dirs == nil {
		st.sel.dirs = map[string]*dirSelection{}
	}
	dir := filepath.Clean(filepath.Dir(file))
	ds := st.sel.dirs[dir]
	if ds == nil {
		ds = &dirSelection{}
		st.sel.dirs[dir] = ds
	}
	base, last := b.BaseOffset, b.LastOffset()
	if b.IsLegacy() {
		base = last // a v0/v1 wrapper is known by its last inner offset
	}
	if n := len(ds.spans); n > 0 && base <= ds.spans[n-1][1] {
		ds.overlapping = true
	}
	ds.spans = append(ds.spans, [2]int64{base, last})
}

// meetsSelected: a selected batch of file's directory holds an offset of
// [lo, hi].
func (st *Run) meetsSelected(file string, lo, hi int64) bool {
	ds := st.sel.dirs[filepath.Clean(filepath.Dir(file))]
	if ds == nil {
		return false
	}
	if ds.overlapping {
		for _, s := range ds.spans {
			if s[0] <= hi && s[1] >= lo {
				return true
			}
		}
		return false
	}
	// The first span ending at or after lo is the only one that can
	// begin at or before hi.
	i, _ := slices.BinarySearchFunc(ds.spans, lo, func(s [2]int64, lo int64) int { return cmp.Compare(s[1], lo) })
	return i < len(ds.spans) && ds.spans[i][0] <= hi
}

// entryRule is how the filters reach one kind of entry.
type entryRule int

const (
	// ruleByBatches: --producer-id and --control-only select the entry
	// by the batches it meets.
	ruleByBatches entryRule = iota
	// ruleProducer: the entry names a producer (a snapshot entry);
	// --control-only selects it by the batches it meets.
	ruleProducer
	// ruleAbort: an aborted transaction: it names a producer and is
	// about a control batch.
	ruleAbort
	// rulePartitions: an offset checkpoint entry of a log directory:
	// it names no batch of this dump.
	rulePartitions
)

// entrySelected applies the filters to one entry of file: its span, and
// its producerId for the rules that have one.
func (st *Run) entrySelected(file string, rule entryRule, sp entrySpan, producerID int64) bool {
	o := st.o
	st.fileEntries++
	if !o.Filtered() {
		st.fileSelected++
		return true
	}
	ok := func() bool {
		if o.FromOffset != math.MinInt64 || o.ToOffset != math.MaxInt64 {
			if !sp.ok || sp.hi < o.FromOffset || sp.lo > o.ToOffset {
				return false
			}
		}
		lo, hi := max(sp.lo, o.FromOffset), min(sp.hi, o.ToOffset)
		if o.HasProducerFilter {
			switch rule {
			case ruleProducer, ruleAbort:
				if producerID != o.ProducerID {
					return false
				}
			case rulePartitions:
				return false
			default:
				if !sp.ok || !st.meetsSelected(file, lo, hi) {
					return false
				}
			}
		}
		if o.ControlOnly {
			switch rule {
			case ruleAbort:
			case rulePartitions:
				return false
			default:
				if !sp.ok || !st.meetsSelected(file, lo, hi) {
					return false
				}
			}
		}
		return true
	}()
	if ok {
		st.fileSelected++
	}
	return ok
}

// HasEntries: files of kind hold entries the filters select
// (Run.entrySelected).
func HasEntries(k segment.FileKind) bool {
	switch k {
	case segment.KindIndex, segment.KindTimeIndex, segment.KindTxnIndex, segment.KindProducerSnapshot,
		segment.KindLeaderEpochCheckpoint, segment.KindRecoveryPointCheckpoint, segment.KindLogStartOffsetCheckpoint,
		segment.KindReplicationOffsetCheckpoint, segment.KindCleanerOffsetCheckpoint:
		return true
	}
	return false
}
