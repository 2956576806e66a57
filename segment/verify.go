package segment

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/kseg/kseg/decode"
)

// IndexProblem kinds, the checks kafka-dump-log's --verify-index-only runs
// (DumpLogSegments.dumpIndex / dumpTimeIndex).
const (
	// ProblemIndexMismatch: the batch at the entry's position does not end
	// at the entry's offset ("Mismatches in :…").
	ProblemIndexMismatch = "index-mismatch"
	// ProblemIndexPosition: no batch starts at the entry's position, or the
	// position is past the end of the log.
	ProblemIndexPosition = "index-position"
	// ProblemTimeIndexNotFound: no batch ends at the entry's offset ("The
	// following indexed offsets are not found in the log").
	ProblemTimeIndexNotFound = "timeindex-offset-not-found"
	// ProblemTimeIndexTimestamp: the batch's max timestamp differs from the
	// entry's ("Found timestamp mismatch").
	ProblemTimeIndexTimestamp = "timeindex-timestamp-mismatch"
	// ProblemTimeIndexOrder: a timestamp not above the previous entry's
	// ("Found out of order timestamp").
	ProblemTimeIndexOrder = "timeindex-out-of-order"
	// ProblemIndexOrder: an offset-index entry whose offset or position is
	// not above the previous entry's. OffsetIndex#append never writes one
	// (InvalidOffsetException) and lookups binary-search the entries, so
	// such an index sends reads to the wrong place; kafka-dump-log does not
	// check it.
	ProblemIndexOrder = "index-out-of-order"
)

// IndexProblem is one failed index check.
type IndexProblem struct {
	Kind string
	Path string // the index file
	Slot int    // entry number in the index file
	// IndexOffset/IndexTimestamp come from the entry; LogOffset and
	// LogTimestamp from the log (-1 when no batch was found).
	IndexOffset    int64
	IndexTimestamp int64
	Position       int64
	LogOffset      int64
	LogTimestamp   int64
	// PrevPosition is the previous entry's position (ProblemIndexOrder,
	// whose LogOffset is the previous entry's offset).
	PrevPosition int64
}

func (p IndexProblem) String() string {
	switch p.Kind {
	case ProblemIndexMismatch:
		return fmt.Sprintf("%s: entry %d: index offset %d at position %d, but the batch there ends at log offset %d", p.Path, p.Slot, p.IndexOffset, p.Position, p.LogOffset)
	case ProblemIndexPosition:
		return fmt.Sprintf("%s: entry %d: index offset %d points at position %d, where no batch starts", p.Path, p.Slot, p.IndexOffset, p.Position)
	case ProblemTimeIndexNotFound:
		return fmt.Sprintf("%s: entry %d: indexed offset %d not found in the log (found log offset %d)", p.Path, p.Slot, p.IndexOffset, p.LogOffset)
	case ProblemTimeIndexTimestamp:
		return fmt.Sprintf("%s: entry %d: index timestamp %d, log timestamp %d (offset %d)", p.Path, p.Slot, p.IndexTimestamp, p.LogTimestamp, p.IndexOffset)
	case ProblemTimeIndexOrder:
		return fmt.Sprintf("%s: entry %d: index timestamp %d is not above the previously indexed timestamp %d", p.Path, p.Slot, p.IndexTimestamp, p.LogTimestamp)
	case ProblemIndexOrder:
		return fmt.Sprintf("%s: entry %d: index offset %d at position %d is out of order: the previous entry has offset %d at position %d (entries must increase)", p.Path, p.Slot, p.IndexOffset, p.Position, p.LogOffset, p.PrevPosition)
	}
	return p.Kind
}

// VerifyIndexes checks an offset index and a time index (either may be
// nil) against their log in one pass over the log's batch headers: linear
// in the segment size, where kafka-dump-log rescans the log once per
// time-index entry. The checks are kafka-dump-log's: an offset-index entry
// must point at the start of the batch whose lastOffset is the entry's
// offset; a time-index entry's offset must be an offset Kafka's writers put
// there for some batch (TimeIndexOffsetOK), that batch's maxTimestamp must
// be the entry's timestamp, and timestamps must increase.
//
// The log is mapped: the walk touches only each batch's header, so the
// pages of its records are never copied. A log truncated under the walk
// faults; that fault is recovered here and returned as an error.
func VerifyIndexes(log *LogFile, idx *OffsetIndex, tidx *TimeIndex) (probs []IndexProblem, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(interface{ Addr() uintptr }); !ok {
				panic(e)
			}
			probs, err = nil, fmt.Errorf("%s: the file changed while it was read (truncated by a broker?): %v", log.Path, e)
		}
	}()
	return verifyIndexes(log, idx, tidx)
}

func verifyIndexes(log *LogFile, idx *OffsetIndex, tidx *TimeIndex) ([]IndexProblem, error) {
	type slotRef struct {
		slot int
		key  int64
	}
	var probs []IndexProblem
	var byPos []slotRef
	if idx != nil {
		for i, e := range idx.Entries {
			byPos = append(byPos, slotRef{i, int64(e.Position)})
			if i > 0 {
				if p := idx.Entries[i-1]; e.Offset <= p.Offset || e.Position <= p.Position {
					probs = append(probs, IndexProblem{Kind: ProblemIndexOrder, Path: idx.Path, Slot: i, IndexOffset: e.Offset,
						Position: int64(e.Position), LogOffset: p.Offset, PrevPosition: int64(p.Position), LogTimestamp: -1})
				}
			}
		}
		sort.SliceStable(byPos, func(a, b int) bool { return byPos[a].key < byPos[b].key })
	}
	var byOff []slotRef
	if tidx != nil {
		for i, e := range tidx.Entries {
			byOff = append(byOff, slotRef{i, e.Offset})
		}
		sort.SliceStable(byOff, func(a, b int) bool { return byOff[a].key < byOff[b].key })
		prev := int64(-1)
		for i, e := range tidx.Entries {
			if prev >= e.Timestamp {
				probs = append(probs, IndexProblem{Kind: ProblemTimeIndexOrder, Path: tidx.Path, Slot: i, IndexOffset: e.Offset,
					IndexTimestamp: e.Timestamp, LogTimestamp: prev, Position: -1, LogOffset: -1})
			}
			prev = e.Timestamp
		}
	}
	ip, tp := 0, 0
	var dec decode.Decoder
	// After structural damage the scan resynchronises on the next valid
	// batch (Resync), so that entries pointing past the damage are checked
	// against what is really there.
	start, minOffset := int64(0), int64(-1)
	for {
		sc := log.Scanner(ScanOptions{Start: start, Mmap: true})
		for sc.Next() {
			b := sc.Batch()
			pos := sc.Pos()
			last := b.LastOffset()
			for ip < len(byPos) && byPos[ip].key <= pos {
				e := idx.Entries[byPos[ip].slot]
				if byPos[ip].key < pos {
					probs = append(probs, IndexProblem{Kind: ProblemIndexPosition, Path: idx.Path, Slot: byPos[ip].slot,
						IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: -1, LogTimestamp: -1})
				} else if last != e.Offset {
					probs = append(probs, IndexProblem{Kind: ProblemIndexMismatch, Path: idx.Path, Slot: byPos[ip].slot,
						IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: last, LogTimestamp: -1})
				}
				ip++
			}
			for tp < len(byOff) && byOff[tp].key <= last {
				e := tidx.Entries[byOff[tp].slot]
				switch {
				case last != e.Offset && !TimeIndexOffsetOK(&dec, b, e.Offset):
					probs = append(probs, IndexProblem{Kind: ProblemTimeIndexNotFound, Path: tidx.Path, Slot: byOff[tp].slot,
						IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: pos, LogOffset: last, LogTimestamp: -1})
				case b.MaxTimestamp != e.Timestamp:
					probs = append(probs, IndexProblem{Kind: ProblemTimeIndexTimestamp, Path: tidx.Path, Slot: byOff[tp].slot,
						IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: pos, LogOffset: last, LogTimestamp: b.MaxTimestamp})
				}
				tp++
			}
			minOffset = last + 1
		}
		if err := sc.Err(); err != nil {
			return probs, err
		}
		t := sc.Tail()
		if t.Kind != TailCorrupt && t.Kind != TailTornBatch {
			break
		}
		pos, found, err := Resync(log.ReaderAt(), t.ValidBytes+1, t.End, ResyncOptions{MinBaseOffset: minOffset})
		if err != nil && !errors.Is(err, ErrResyncBudget) {
			return probs, err
		}
		if !found {
			break
		}
		start = pos
	}
	for ; ip < len(byPos); ip++ {
		e := idx.Entries[byPos[ip].slot]
		probs = append(probs, IndexProblem{Kind: ProblemIndexPosition, Path: idx.Path, Slot: byPos[ip].slot,
			IndexOffset: e.Offset, Position: int64(e.Position), LogOffset: -1, LogTimestamp: -1})
	}
	for ; tp < len(byOff); tp++ {
		e := tidx.Entries[byOff[tp].slot]
		probs = append(probs, IndexProblem{Kind: ProblemTimeIndexNotFound, Path: tidx.Path, Slot: byOff[tp].slot,
			IndexOffset: e.Offset, IndexTimestamp: e.Timestamp, Position: -1, LogOffset: -1, LogTimestamp: -1})
	}
	sort.SliceStable(probs, func(a, b int) bool {
		if probs[a].Path != probs[b].Path {
			return probs[a].Path < probs[b].Path
		}
		return probs[a].Slot < probs[b].Slot
	})
	return probs, nil
}

// TimeIndexOffsetOK reports whether off is an offset a Kafka broker writes
// into a .timeindex entry for batch b. LogSegment.append indexes the
// segment's max timestamp with the offset its caller hands over
// (shallowOffsetOfMaxTimestamp), and that offset depends on the writer:
//
//   - the batch's lastOffset: compressed batches
//     (LogValidator.validateMessagesAndAssignOffsetsCompressed), follower
//     appends (UnifiedLog.analyzeAndValidateRecords), indexes rebuilt by
//     LogSegment.recover, and every leader append since KAFKA-16341 /
//     KAFKA-16310 (Kafka 3.8);
//   - before Kafka 3.8, for an uncompressed batch on the leader, the offset
//     of the FIRST record carrying the batch's highest timestamp
//     (LogValidator.assignOffsetsNonCompressed kept the offset where
//     record.timestamp() > maxTimestamp last held), and for a LogAppendTime
//     batch the first offset it assigned (offsetOfMaxTimestamp =
//     initialOffset).
//
// Anything else is an entry no broker wrote. Only an uncompressed v2 batch
// whose entry points inside it is decoded.
func TimeIndexOffsetOK(dec *decode.Decoder, b *decode.Batch, off int64) bool {
	if off == b.LastOffset() {
		return true
	}
	if b.IsLegacy() || off < b.BaseOffset || off > b.LastOffset() {
		return false
	}
	if b.TimestampType() == decode.LogAppendTime {
		return off == b.BaseOffset
	}
	if b.Compression() != decode.CompressionNone {
		return false
	}
	first := int64(-1)
	err := dec.Records(b, func(r *decode.Record) error {
		if first < 0 && r.Timestamp == b.MaxTimestamp {
			first = r.Offset
		}
		return nil
	})
	return err == nil && first == off
}
