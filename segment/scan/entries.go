package scan

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// siblingLog is the .log of the segment an index file belongs to.
func siblingLog(f File) string {
	return filepath.Join(filepath.Dir(f.Path), segment.SegmentFileName(f.Info.Offset, segment.LogSuffix))
}

func (st *Run) dumpOffsetIndex(f File) error {
	idx, err := segment.ReadOffsetIndex(f.Path, f.Info.Offset)
	if err != nil {
		return err
	}
	kafka := st.o.DumpLogSegments
	if idx.Slots == 0 {
		st.p.IndexNote(f, "is empty.")
		if kafka {
			return nil // dumpIndex returns after "is empty."
		}
	}
	if st.o.IndexSanityCheck {
		if err := segment.SanityCheckOffsetIndex(&idx); err != nil {
			if kafka {
				return st.kafkaIndexCorrupt(err)
			}
			st.reportIndexCorrupt(f, err)
		} else if idx.Slots > 0 {
			st.p.IndexNote(f, "passed sanity check.")
		}
		if kafka {
			return nil // dumpIndex returns: no entries, no verification
		}
	}
	var verified func() error
	if st.o.VerifyIndex {
		verified = st.verifyAgainstLog(f, &idx, nil)
	}
	for _, e := range idx.Entries {
		if st.entrySelected(f.Path, ruleByBatches, spanOf(e.Offset, e.Offset), 0) {
			st.p.OffsetIndexEntry(f, e)
		}
	}
	return st.endIndex(f, idx.Length, idx.TrailingBytes(), entrySize(false), verified)
}

func (st *Run) dumpTimeIndex(f File) error {
	tidx, err := segment.ReadTimeIndex(f.Path, f.Info.Offset)
	if err != nil {
		return err
	}
	if st.o.IndexSanityCheck {
		kafka := st.o.DumpLogSegments
		if err := segment.SanityCheckTimeIndex(&tidx); err != nil {
			if kafka {
				return st.kafkaIndexCorrupt(err)
			}
			st.reportIndexCorrupt(f, err)
		} else {
			st.p.IndexNote(f, "passed sanity check.")
		}
		if kafka {
			return nil // dumpTimeIndex returns: no entries, no verification
		}
	}
	var verified func() error
	if st.o.VerifyIndex {
		verified = st.verifyAgainstLog(f, nil, &tidx)
	}
	for _, e := range tidx.Entries {
		if st.entrySelected(f.Path, ruleByBatches, spanOf(e.Offset, e.Offset), 0) {
			st.p.TimeIndexEntry(f, e)
		}
	}
	return st.endIndex(f, tidx.Length, tidx.TrailingBytes(), entrySize(true), verified)
}

// endIndex ends an index of length bytes: its trailing bytes, not a whole
// entry of size bytes, are reported, and its verification against the log
// (when verified is set) is waited for.
func (st *Run) endIndex(f File, length, trailing, size int64, verified func() error) error {
	if trailing != 0 {
		st.report(fileFinding(finding.IndexLength, f.Path, length-trailing, -1,
			fmt.Sprintf("%s: %d bytes is not a multiple of %d: %d trailing bytes", filepath.Base(f.Path), length, size, trailing)))
	}
	if verified != nil {
		return verified()
	}
	return nil
}

// reportIndexCorrupt reports a failed sanity check with Kafka's own
// CorruptIndexException text when there is one.
func (st *Run) reportIndexCorrupt(f File, err error) {
	ce, ok := decode.AsCorrupt(err)
	if !ok {
		st.report(fileFinding(finding.IndexSanity, f.Path, -1, -1, err.Error()))
		return
	}
	msg := ce.Error()
	if km, ok := decode.KafkaMessage(err); ok {
		msg = km
	}
	st.report(fileFinding(finding.IndexSanity, f.Path, ce.Pos, -1, msg))
}

// kafkaIndexCorrupt: sanityCheck() throws CorruptIndexException, which
// stops kafka-dump-log (dumplog.go).
func (st *Run) kafkaIndexCorrupt(err error) error {
	msg := err.Error()
	if km, ok := decode.KafkaMessage(err); ok {
		msg = km
	}
	return st.kafkaStop(msg)
}

// verifyAgainstLog starts checking an index file against its log on
// another goroutine, so that the walk over the log runs beside the
// printing of the entries; the function it returns waits for the check
// and reports what it found (after the entries, as before). The sibling
// .timeindex, when this run dumps it later, is checked in the same walk
// (segment.VerifyIndexes checks both in one pass): its problems wait for
// its turn in st.verified.
func (st *Run) verifyAgainstLog(f File, idx *segment.OffsetIndex, tidx *segment.TimeIndex) func() error {
	logPath := siblingLog(f)
	if sv := st.verified[f.Path]; sv != nil {
		delete(st.verified, f.Path)
		if sv.matches(idx, tidx) {
			return func() error {
				st.reportVerified(f, tidx != nil, logPath, sv.probs)
				return nil
			}
		}
	}
	var later *segment.TimeIndex
	if idx != nil {
		path, ok := st.later[filepath.Join(filepath.Dir(f.Path), segment.SegmentFileName(f.Info.Offset, segment.TimeIndexSuffix))]
		if ok {
			if t, err := segment.ReadTimeIndex(path, f.Info.Offset); err == nil {
				later = &t
			}
		}
	}
	type result struct {
		probs []segment.IndexProblem
		err   error
	}
	done := make(chan result, 1)
	go func() {
		lf, err := segment.OpenLog(logPath)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer lf.Close()
		// kafka output reports what kafka-dump-log reports, which knows no
		// time-index entry inside a batch; the other outputs accept the ones
		// brokers wrote (segment.TimeIndexOffsetOK).
		probs, err := segment.VerifyIndexesWith(lf, idx, cmp.Or(tidx, later), segment.VerifyOptions{DumpLogSegments: st.o.DumpLogSegments})
		done <- result{probs, err}
	}()
	return func() error {
		r := <-done
		if r.err != nil {
			if errors.Is(r.err, fs.ErrNotExist) {
				st.report(fileFinding(finding.OrphanIndex, f.Path, -1, -1,
					fmt.Sprintf("%s: cannot verify: %s does not exist", filepath.Base(f.Path), filepath.Base(logPath))))
				return nil
			}
			return r.err
		}
		probs := r.probs
		if later != nil {
			st.stashVerified(later.Path, stash(false, nil, later.Entries, later.Length, later.Path, probs))
			probs = slices.DeleteFunc(probs, func(pr segment.IndexProblem) bool { return pr.Path == later.Path })
		}
		st.reportVerified(f, tidx != nil, logPath, probs)
		return nil
	}
}

// stashedVerify is what a walk over a segment's log found for one of its
// indexes ahead of its turn, as it read the index then: the walk that
// verified the .index, for the .timeindex; kseg check's one walk
// (walkverify.go), for both.
type stashedVerify struct {
	index   bool                 // of an .index (else a .timeindex)
	offsets []segment.IndexEntry // the .index's entries
	entries []segment.TimeIndexEntry
	length  int64
	probs   []segment.IndexProblem
}

// matches reports whether idx or tidx (the one that is not nil) is the
// index the stash was made from (a file rewritten in between is verified
// again).
func (sv *stashedVerify) matches(idx *segment.OffsetIndex, tidx *segment.TimeIndex) bool {
	if tidx != nil {
		return !sv.index && sv.length == tidx.Length && slices.Equal(sv.entries, tidx.Entries)
	}
	return sv.index && sv.length == idx.Length && slices.Equal(sv.offsets, idx.Entries)
}

// reportVerified reports the problems verification found in f (a time
// index when time).
func (st *Run) reportVerified(f File, time bool, logPath string, probs []segment.IndexProblem) {
	for i, pr := range probs {
		st.reportIndexProblem(fileFinding(pr.FindingKind(), f.Path, int64(pr.Slot)*entrySize(time), -1, pr.String()), &probs[i])
	}
	if len(probs) == 0 {
		st.p.IndexNote(f, fmt.Sprintf("verified against %s: every entry matches.", filepath.Base(logPath)))
	}
}

func entrySize(time bool) int64 {
	if time {
		return segment.TimeIndexEntrySize
	}
	return segment.OffsetIndexEntrySize
}

func (st *Run) dumpTxnIndex(f File) error {
	x, err := segment.ReadTxnIndex(f.Path)
	if err != nil {
		if _, ok := decode.AsCorrupt(err); !ok {
			return err
		}
		st.reportCorrupt(finding.TxnIndexCorrupt, mustCorrupt(err))
	}
	for _, e := range x.Entries {
		if st.entrySelected(f.Path, ruleAbort, spanOf(e.FirstOffset, e.LastOffset), e.ProducerID) {
			st.p.AbortedTxn(f, e)
		}
	}
	if x.TrailingBytes > 0 {
		st.report(fileFinding(finding.TxnIndexPartialEntry, f.Path, x.Length-int64(x.TrailingBytes), -1,
			fmt.Sprintf("%s: %d trailing bytes, a partial entry Kafka ignores", filepath.Base(f.Path), x.TrailingBytes)))
	}
	if err := segment.SanityCheckTxnIndex(&x, f.Info.Offset); err != nil {
		st.reportIndexCorrupt(f, err)
	}
	return nil
}

// unreadable ends a file that could not be read: corruption is a finding
// of kind (the file is done), anything else an error for the caller.
func (st *Run) unreadable(kind finding.Kind, err error) error {
	if ce, ok := decode.AsCorrupt(err); ok {
		st.reportCorrupt(kind, ce)
		return nil
	}
	return err
}

func mustCorrupt(err error) *decode.CorruptError {
	ce, _ := decode.AsCorrupt(err)
	return ce
}

func (st *Run) dumpSnapshot(f File) error {
	return dumpEntries(st, f, segment.ReadProducerSnapshot, finding.SnapshotCorrupt, ruleProducer,
		func(es []segment.SnapshotEntry, i int) (entrySpan, int64) {
			// The producer's last batch (ProducerStateEntry: lastOffset
			// and offsetDelta); none without batch metadata.
			e, sp := es[i], entrySpan{}
			if e.LastOffset >= 0 {
				sp = spanOf(e.LastOffset-int64(e.OffsetDelta), e.LastOffset)
			}
			return sp, e.ProducerID
		}, st.p.SnapshotEntry)
}

func (st *Run) dumpLeaderEpochs(f File) error {
	return dumpEntries(st, f, segment.ReadLeaderEpochCheckpoint, finding.CheckpointCorrupt, ruleByBatches,
		func(es []segment.EpochEntry, i int) (entrySpan, int64) {
			// An epoch holds the offsets from its startOffset to the next
			// epoch's (LeaderEpochFileCache.endOffsetFor).
			hi := int64(math.MaxInt64)
			if i+1 < len(es) {
				hi = max(es[i+1].StartOffset-1, es[i].StartOffset)
			}
			return spanOf(es[i].StartOffset, hi), 0
		}, st.p.LeaderEpoch)
}

func (st *Run) dumpOffsetCheckpoint(f File) error {
	return dumpEntries(st, f, segment.ReadOffsetCheckpoint, finding.CheckpointCorrupt, rulePartitions,
		func(es []segment.OffsetCheckpointEntry, i int) (entrySpan, int64) {
			return spanOf(es[i].Offset, es[i].Offset), 0
		}, st.p.OffsetCheckpoint)
}

// dumpEntries dumps a file of entries (a producer snapshot, a
// checkpoint): read decodes it, a corruption being a finding of kind
// corrupt, and print prints each entry the filters select by rule, at
// giving entry i's span and producer id.
func dumpEntries[E any](st *Run, f File, read func(path string) ([]E, error), corrupt finding.Kind, rule entryRule,
	at func(entries []E, i int) (entrySpan, int64), print func(File, E)) error {
	entries, err := read(f.Path)
	if err != nil {
		return st.unreadable(corrupt, err)
	}
	for i, e := range entries {
		if sp, pid := at(entries, i); st.entrySelected(f.Path, rule, sp, pid) {
			print(f, e)
		}
	}
	return nil
}

func (st *Run) dumpPartitionMetadata(f File) error {
	pm, err := segment.ReadPartitionMetadata(f.Path)
	if err != nil {
		return st.unreadable(finding.MetadataCorrupt, err)
	}
	st.p.PartitionMetadata(f, pm)
	return nil
}

// dumpTextFile shows small text files kafka-dump-log ignores
// (meta.properties, quorum-state, .kafka_cleanshutdown) line by line.
func (st *Run) dumpTextFile(f File) error {
	b, err := segment.ReadFileLimit(f.Path, segment.MaxTextFileBytes, f.Info.Kind.String())
	if err != nil {
		return st.unreadable(finding.MetadataCorrupt, err)
	}
	if f.Info.Kind == segment.KindCleanShutdown {
		if _, err := segment.ReadCleanShutdown(f.Path); err != nil {
			if ce, ok := decode.AsCorrupt(err); ok {
				st.reportCorrupt(finding.MetadataCorrupt, ce)
			}
		}
		if len(b) == 0 {
			st.p.TextLine(f, "(empty: clean shutdown marker of a pre-3.7 broker)")
			return nil
		}
	}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		st.p.TextLine(f, line)
	}
	return nil
}
