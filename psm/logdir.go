// The log directory's checkpoints and shutdown marker as a broker's load
// reads them: the log start offset, the high watermark, a log start above
// the log end (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd), and
// the rebuild a clean shutdown without a snapshot skips
// (UnifiedLog.rebuildProducerState).

package psm

import (
	"fmt"
	"math"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// LogDirCheckpoints reads the partition's entries in its log directory's
// log-start-offset-checkpoint and replication-offset-checkpoint (the high
// watermark Partition.createLog restores). Each is -1 when the file or the
// entry is absent; a file that does not parse is an error.
func LogDirCheckpoints(dir *segment.PartitionDir) (logStart, highWatermark int64, err error) {
	if logStart, err = segment.CheckpointOffset(dir, segment.LogStartOffsetCheckpointName); err != nil {
		return -1, -1, err
	}
	if highWatermark, err = segment.CheckpointOffset(dir, segment.ReplicationOffsetCheckpointName); err != nil {
		return logStart, -1, err
	}
	return logStart, highWatermark, nil
}

// LogDirState is what a loading broker reads about one partition in its
// log directory, outside the partition directory.
type LogDirState struct {
	// LogStartOffset and HighWatermark are the partition's entries in
	// log-start-offset-checkpoint and replication-offset-checkpoint, -1
	// when the file or the entry is absent.
	LogStartOffset, HighWatermark int64
	// CleanShutdown: the log directory holds .kafka_cleanshutdown, so the
	// broker takes its last shutdown as clean (LogManager.loadLogs:
	// hadCleanShutdown) and skips recovery.
	CleanShutdown bool
	// RecoveryPoint is the partition's entry in
	// recovery-point-offset-checkpoint, -1 when the file or the entry is
	// absent: after an unclean shutdown LogLoader.recoverLog recovers the
	// segments from the one holding it on.
	RecoveryPoint int64
}

// ReadLogDirState reads the log directory of dir. A checkpoint that does
// not parse is an error; the other fields are still filled.
func ReadLogDirState(dir *segment.PartitionDir) (LogDirState, error) {
	ls, hw, err := LogDirCheckpoints(dir)
	st := LogDirState{LogStartOffset: ls, HighWatermark: hw, RecoveryPoint: -1, CleanShutdown: segment.CleanShutdownPresent(dir)}
	if err == nil {
		st.RecoveryPoint, err = segment.CheckpointOffset(dir, segment.RecoveryPointCheckpointName)
	}
	return st, err
}

// BrokerHighWatermark is the high watermark a broker gives the partition
// when it loads it: the checkpoint entry, else 0
// (Partition.createLog: offsetCheckpoints.fetch(...).getOrElse(0L)), which
// UnifiedLog.updateHighWatermark then raises to the log start offset. A
// leader moves it up as its in-sync replicas catch up (at once when it is
// the only one).
func (s LogDirState) BrokerHighWatermark() int64 {
	if s.HighWatermark < 0 {
		return 0
	}
	return s.HighWatermark
}

// skipRebuild turns the state replayed from the log (m) into the one a
// broker starts with when it skips the rebuild after a clean shutdown
// with no producer snapshot (UnifiedLog.rebuildProducerState): no
// producers, no transactions, lastMapOffset at the log end, so the LSO is
// the high watermark. The anomalies of the log stay, except the hanging
// and open transactions the broker no longer knows; what it forgets is one
// clean-shutdown-no-snapshot anomaly. The aborted transactions stay: they
// are the .txnindex files' (the broker does not rewrite those).
func (r *rebuilder) skipRebuild(m *Manager, fresh func() *Manager, leo int64) *Manager {
	log := m.State()
	e := fresh()
	e.anomalies = e.anomalies[:0]
	for _, a := range m.anomalies {
		if a.Kind != finding.HangingTransaction && a.Kind != finding.OpenTransaction {
			e.anomalies = append(e.anomalies, a)
		}
	}
	e.aborted = m.aborted
	e.clock = m.clock
	e.SetMapEndOffset(leo)
	if a, ok := CleanShutdownLoss(log); ok {
		e.Report(a)
	}
	return e
}

// logStartAboveEnd is the log-start-above-log-end finding
// (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd).
func logStartAboveEnd(logStart, leo int64) finding.Finding {
	return anomaly(finding.LogStartAboveLogEnd, logStart, -1,
		fmt.Sprintf("the log start offset %d (log-start-offset-checkpoint) is above the log end offset %d: a broker loading the partition deletes every segment and its producer state (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd) and starts an empty log at %d; segments or the checkpoint were changed outside the broker",
			logStart, leo, logStart))
}

// CheckLogStart is the log-start-above-log-end finding for dir, whose
// log-start-offset-checkpoint entry lies above its log end offset; nil
// when it does not (or there is no entry).
func CheckLogStart(dir *segment.PartitionDir) (*finding.Finding, error) {
	st, err := ReadLogDirState(dir)
	if err != nil || st.LogStartOffset < 0 {
		return nil, err
	}
	leo, err := LogEndOffset(dir)
	if err != nil || st.LogStartOffset <= leo {
		return nil, err
	}
	a := logStartAboveEnd(st.LogStartOffset, leo)
	return &a, nil
}

// SkipsRebuild reports whether a broker loading dir skips the
// producer-state rebuild (UnifiedLog.rebuildProducerState): its last
// shutdown was clean (cleanShutdown, LogDirState.CleanShutdown) and no
// producer snapshot survives removeStraySnapshots. It then starts with no
// producer state; CleanShutdownLoss says what that forgets.
func SkipsRebuild(dir *segment.PartitionDir, cleanShutdown bool) bool {
	if !cleanShutdown {
		return false
	}
	_, kept := newRebuilder(dir, DefaultOptions()).snapshotCandidates(-1, math.MaxInt64, func(finding.Finding) {})
	return kept == 0
}

// CleanShutdownLoss is the clean-shutdown-no-snapshot finding for a
// partition whose log, replayed, gives the state log, when its log
// directory holds .kafka_cleanshutdown and no producer snapshot survives
// removeStraySnapshots: rebuildProducerState then skips the log scan (the
// upgrade short-cut) and takes empty snapshots at the bases of the last
// two segments and at the log end, so the broker forgets every producer
// and open transaction, now and at every later restart. ok is false when
// the log holds none (nothing is lost).
func CleanShutdownLoss(log *Result) (finding.Finding, bool) {
	if len(log.Producers) == 0 && len(log.Ongoing) == 0 {
		return finding.Finding{}, false
	}
	pid := int64(-1)
	if len(log.Producers) > 0 {
		pid = log.Producers[0].ProducerID
	}
	txns := "no open transaction"
	if n := len(log.Ongoing); n > 0 {
		t := log.Ongoing[0]
		pid = t.ProducerID
		txns = fmt.Sprintf("%d open transaction(s) (oldest: producer %d from offset %d), which hold the last stable offset at %d; the broker's last stable offset is its high watermark (%d here), so read_committed consumers read their records as committed, and a later ABORT marker no longer aborts them (no .txnindex entry)",
			n, t.ProducerID, t.FirstOffset, log.LastStableOffset, log.HighWatermark)
	}
	return anomaly(finding.CleanShutdownNoSnapshot, log.LogEndOffset, pid,
		fmt.Sprintf("the log directory holds %s and the partition has no producer snapshot: a broker starting now skips the producer-state rebuild (UnifiedLog.rebuildProducerState, hadCleanShutdown) and writes empty snapshots up to the log end %d, forgetting what the log holds: %d producer(s) and %s. Before starting the broker, write the snapshot (kseg repair, or kseg replay-psm --from-snapshot none --write-snapshot DIR) or remove %s so that the broker rebuilds from the log",
			segment.CleanShutdownName, log.LogEndOffset, len(log.Producers), txns, segment.CleanShutdownName)), true
}
