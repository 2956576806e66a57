package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// siblingLog is the .log of the segment an index file belongs to.
func siblingLog(f dumpFile) string {
	return filepath.Join(filepath.Dir(f.path), segment.SegmentFileName(f.info.Offset, segment.LogSuffix))
}

func (st *dumpState) dumpOffsetIndex(f dumpFile) error {
	idx, err := segment.ReadOffsetIndex(f.path, f.info.Offset)
	if err != nil {
		return err
	}
	kafka := st.o.output == "kafka"
	if idx.Slots == 0 {
		st.p.IndexNote(f, "is empty.")
		if kafka {
			return nil // dumpIndex returns after "is empty."
		}
	}
	if st.o.indexSanityCheck {
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
	for _, e := range idx.Entries {
		st.p.OffsetIndexEntry(f, e)
	}
	if idx.TrailingBytes() != 0 {
		st.report(fileFinding(finding.IndexLength, f.path, idx.Length-idx.TrailingBytes(), -1,
			fmt.Sprintf("%s: %d bytes is not a multiple of 8: %d trailing bytes", filepath.Base(f.path), idx.Length, idx.TrailingBytes())))
	}
	if st.o.verifyIndex {
		return st.verifyAgainstLog(f, &idx, nil)
	}
	return nil
}

func (st *dumpState) dumpTimeIndex(f dumpFile) error {
	tidx, err := segment.ReadTimeIndex(f.path, f.info.Offset)
	if err != nil {
		return err
	}
	if st.o.indexSanityCheck {
		kafka := st.o.output == "kafka"
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
	for _, e := range tidx.Entries {
		st.p.TimeIndexEntry(f, e)
	}
	if tidx.TrailingBytes() != 0 {
		st.report(fileFinding(finding.IndexLength, f.path, tidx.Length-tidx.TrailingBytes(), -1,
			fmt.Sprintf("%s: %d bytes is not a multiple of 12: %d trailing bytes", filepath.Base(f.path), tidx.Length, tidx.TrailingBytes())))
	}
	if st.o.verifyIndex {
		return st.verifyAgainstLog(f, nil, &tidx)
	}
	return nil
}

// reportIndexCorrupt reports a failed sanity check with Kafka's own
// CorruptIndexException text when there is one.
func (st *dumpState) reportIndexCorrupt(f dumpFile, err error) {
	ce, ok := decode.AsCorrupt(err)
	if !ok {
		st.report(fileFinding(finding.IndexSanity, f.path, -1, -1, err.Error()))
		return
	}
	msg := ce.Error()
	if km, ok := segment.KafkaMessage(err); ok {
		msg = km
	}
	st.report(fileFinding(finding.IndexSanity, f.path, ce.Pos, -1, msg))
}

// kafkaIndexCorrupt: sanityCheck() throws CorruptIndexException, which
// stops kafka-dump-log (dump_kafka_stop.go).
func (st *dumpState) kafkaIndexCorrupt(err error) error {
	msg := err.Error()
	if km, ok := segment.KafkaMessage(err); ok {
		msg = km
	}
	return st.kafkaStop(msg)
}

func (st *dumpState) verifyAgainstLog(f dumpFile, idx *segment.OffsetIndex, tidx *segment.TimeIndex) error {
	logPath := siblingLog(f)
	lf, err := segment.OpenLog(logPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			st.report(fileFinding(finding.OrphanIndex, f.path, -1, -1,
				fmt.Sprintf("%s: cannot verify: %s does not exist", filepath.Base(f.path), filepath.Base(logPath))))
			return nil
		}
		return err
	}
	defer lf.Close()
	// kafka output reports what kafka-dump-log reports, which knows no
	// time-index entry inside a batch; the other outputs accept the ones
	// brokers wrote (segment.TimeIndexOffsetOK).
	probs, err := segment.VerifyIndexesWith(lf, idx, tidx, segment.VerifyOptions{DumpLogSegments: st.o.output == "kafka"})
	if err != nil {
		return err
	}
	for i, pr := range probs {
		st.reportIndexProblem(fileFinding(pr.FindingKind(), f.path, int64(pr.Slot)*entrySize(tidx != nil), -1, pr.String()), &probs[i])
	}
	if len(probs) == 0 {
		st.p.IndexNote(f, fmt.Sprintf("verified against %s: every entry matches.", filepath.Base(logPath)))
	}
	return nil
}

func entrySize(time bool) int64 {
	if time {
		return segment.TimeIndexEntrySize
	}
	return segment.OffsetIndexEntrySize
}

func (st *dumpState) dumpTxnIndex(f dumpFile) error {
	x, err := segment.ReadTxnIndex(f.path)
	if err != nil {
		if _, ok := decode.AsCorrupt(err); !ok {
			return err
		}
		st.reportCorrupt(finding.TxnIndexCorrupt, mustCorrupt(err))
	}
	for _, e := range x.Entries {
		st.p.AbortedTxn(f, e)
	}
	if x.TrailingBytes > 0 {
		st.report(fileFinding(finding.TxnIndexPartialEntry, f.path, x.Length-int64(x.TrailingBytes), -1,
			fmt.Sprintf("%s: %d trailing bytes, a partial entry Kafka ignores", filepath.Base(f.path), x.TrailingBytes)))
	}
	if err := segment.SanityCheckTxnIndex(&x, f.info.Offset); err != nil {
		st.reportIndexCorrupt(f, err)
	}
	return nil
}

func mustCorrupt(err error) *decode.CorruptError {
	ce, _ := decode.AsCorrupt(err)
	return ce
}

func (st *dumpState) dumpSnapshot(f dumpFile) error {
	entries, err := segment.ReadProducerSnapshot(f.path)
	if err != nil {
		if ce, ok := decode.AsCorrupt(err); ok {
			st.reportCorrupt(finding.SnapshotCorrupt, ce)
			return nil
		}
		return err
	}
	for _, e := range entries {
		st.p.SnapshotEntry(f, e)
	}
	return nil
}

func (st *dumpState) dumpLeaderEpochs(f dumpFile) error {
	entries, err := segment.ReadLeaderEpochCheckpoint(f.path)
	if err != nil {
		if ce, ok := decode.AsCorrupt(err); ok {
			st.reportCorrupt(finding.CheckpointCorrupt, ce)
			return nil
		}
		return err
	}
	for _, e := range entries {
		st.p.LeaderEpoch(f, e)
	}
	return nil
}

func (st *dumpState) dumpOffsetCheckpoint(f dumpFile) error {
	entries, err := segment.ReadOffsetCheckpoint(f.path)
	if err != nil {
		if ce, ok := decode.AsCorrupt(err); ok {
			st.reportCorrupt(finding.CheckpointCorrupt, ce)
			return nil
		}
		return err
	}
	for _, e := range entries {
		st.p.OffsetCheckpoint(f, e)
	}
	return nil
}

func (st *dumpState) dumpPartitionMetadata(f dumpFile) error {
	pm, err := segment.ReadPartitionMetadata(f.path)
	if err != nil {
		if ce, ok := decode.AsCorrupt(err); ok {
			st.reportCorrupt(finding.MetadataCorrupt, ce)
			return nil
		}
		return err
	}
	st.p.PartitionMetadata(f, pm)
	return nil
}

// dumpTextFile shows small text files kafka-dump-log ignores
// (meta.properties, quorum-state, .kafka_cleanshutdown) line by line.
func (st *dumpState) dumpTextFile(f dumpFile) error {
	b, err := segment.ReadFile(f.path)
	if err != nil {
		return err
	}
	if f.info.Kind == segment.KindCleanShutdown {
		if _, err := segment.ReadCleanShutdown(f.path); err != nil {
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
