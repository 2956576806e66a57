package psm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// NumBatchesToRetain is ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the
// de-duplication window per producer.
const NumBatchesToRetain = 5

// Kafka defaults (TransactionLogConfig, KIP-854).
const (
	DefaultProducerIDExpirationMs              = 86400000 // producer.id.expiration.ms
	DefaultProducerIDExpirationCheckIntervalMs = 600000   // producer.id.expiration.check.interval.ms
	DefaultTxnTimeoutMs                        = 15 * 60 * 1000
)

// Snapshot selection for Options.FromSnapshot.
const (
	// SnapshotLatest loads the newest usable snapshot at or below the end,
	// as a restarting broker does (truncateAndReload).
	SnapshotLatest int64 = -1
	// SnapshotNone replays the whole log from the log start offset.
	SnapshotNone int64 = -2
)

// NowFromClock asks Manager.Load to take "now" from the clock mode.
const NowFromClock int64 = -1

// BatchMetadata is one retained batch of a producer (BatchMetadata.java):
// 24 bytes, a producer keeps up to five, and a broker's partition may hold
// millions of producers.
type BatchMetadata struct {
	LastSeq     int32
	OffsetDelta int32
	LastOffset  int64
	Timestamp   int64
}

// FirstSeq is BatchMetadata.firstSeq: decrementSequence(lastSeq,
// offsetDelta), computed as Kafka computes it rather than stored.
func (b BatchMetadata) FirstSeq() int32 { return decode.DecrementSequence(b.LastSeq, b.OffsetDelta) }

// FirstOffset is LastOffset - OffsetDelta.
func (b BatchMetadata) FirstOffset() int64 { return b.LastOffset - int64(b.OffsetDelta) }

// Entry is a ProducerStateEntry. Batches are oldest first, at most
// NumBatchesToRetain. CurrentTxnFirstOffset is -1 when no transaction is
// open; CoordinatorEpoch and LastTimestamp are -1 until set.
type Entry struct {
	ProducerID            int64
	Batches               []BatchMetadata
	LastTimestamp         int64
	CurrentTxnFirstOffset int64
	CoordinatorEpoch      int32
	ProducerEpoch         int16
}

// LastSeq is entry.lastSeq(): -1 without batch metadata.
func (e *Entry) LastSeq() int32 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// LastDataOffset is entry.lastDataOffset(): -1 without batch metadata.
func (e *Entry) LastDataOffset() int64 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastOffset
}

// LastOffsetDelta is entry.lastOffsetDelta(): 0 without batch metadata.
func (e *Entry) LastOffsetDelta() int32 {
	if len(e.Batches) == 0 {
		return 0
	}
	return e.Batches[len(e.Batches)-1].OffsetDelta
}

// Txn is a transaction (TxnMetadata); LastOffset is -1 while ongoing.
type Txn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// AbortedTxn is a .txnindex entry as LogSegment.recover writes it.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// Barrier is a KIP-1279 MIRROR_PID_RESET batch met during replay.
// ProducersCleared is how many producer entries it removed (0 when
// barriers are ignored).
type Barrier struct {
	Offset           int64
	ProducersCleared int
	SourceClusterID  *string
}

// anomaly is a finding of the replay: something Kafka would warn about,
// reject on the leader, or fail the log load on. offset is the batch's
// base offset (or the snapshot offset for snapshot anomalies); pid is -1
// when the anomaly is not about one producer.
func anomaly(k finding.Kind, offset, pid int64, msg string) finding.Finding {
	a := finding.New(k, msg)
	a.Offset, a.ProducerID = offset, pid
	return a
}

// ClockKind selects where "now" comes from for producer expiry.
type ClockKind int

const (
	// ClockLogTime: now is the highest batch maxTimestamp replayed so far
	// (the broker's wall clock when producers write with CreateTime), and
	// the periodic expiry check runs whenever it has advanced by the check
	// interval.
	ClockLogTime ClockKind = iota
	// ClockWall: now is the current wall-clock time, fixed for the run.
	ClockWall
	// ClockFixed: now is ClockMode.FixedMs.
	ClockFixed
)

// ClockMode is --clock: log (the zero value), now, or a fixed epoch-ms.
type ClockMode struct {
	Kind    ClockKind
	FixedMs int64
}

// ClockLog, ClockNow and ClockAt build the three modes.
func ClockLog() ClockMode             { return ClockMode{Kind: ClockLogTime} }
func ClockNow() ClockMode             { return ClockMode{Kind: ClockWall} }
func ClockAt(epochMs int64) ClockMode { return ClockMode{Kind: ClockFixed, FixedMs: epochMs} }

// ParseClockMode parses "log", "now", an epoch-ms integer or an RFC 3339
// time.
func ParseClockMode(s string) (ClockMode, error) {
	switch strings.ToLower(s) {
	case "log", "":
		return ClockLog(), nil
	case "now":
		return ClockNow(), nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return ClockMode{}, fmt.Errorf("clock %q: epoch milliseconds must not be negative", s)
		}
		return ClockAt(v), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return ClockAt(t.UnixMilli()), nil
	}
	return ClockMode{}, fmt.Errorf("clock %q: want log, now, epoch milliseconds or an RFC 3339 time", s)
}

func (c ClockMode) String() string {
	switch c.Kind {
	case ClockWall:
		return "now"
	case ClockFixed:
		return strconv.FormatInt(c.FixedMs, 10)
	}
	return "log"
}

// Options control a replay. Use DefaultOptions and change fields: the zero
// value means "up to offset 0, from the snapshot at offset 0".
type Options struct {
	// Upto is the exclusive end offset: the state before Upto, what
	// Upto.snapshot would hold. -1 replays to the log end.
	Upto int64
	// FromSnapshot is SnapshotLatest, SnapshotNone or a snapshot offset.
	FromSnapshot int64
	// IgnoreBarriers replays as if no MIRROR_PID_RESET had been written.
	IgnoreBarriers bool
	// VerifyCRC checks each replayed batch's CRC-32C.
	VerifyCRC bool
	// ReadSegments reads the segments with positional reads instead of
	// mapping them. Without VerifyCRC a replay touches little more than
	// the batch headers, a few KiB apart, so a mapped walk takes a page
	// fault for nearly every page, which costs more than copying the
	// pages out of the page cache (a mirror's read-back replays the
	// segments it has just written: 0.1 s of faults for 256 MiB on a KVM
	// guest).
	ReadSegments bool `json:"-"`
	// ProducerIDExpirationMs is producer.id.expiration.ms.
	ProducerIDExpirationMs int64
	// ProducerIDExpirationCheckIntervalMs is
	// producer.id.expiration.check.interval.ms (log clock only).
	ProducerIDExpirationCheckIntervalMs int64
	// Clock drives expiry.
	Clock ClockMode
	// HighWatermark is for the LSO; -1 means the log end offset, what the
	// high watermark reaches once every in-sync replica has the whole log.
	// A broker that loads the partition starts from its
	// replication-offset-checkpoint entry, or from 0 without one
	// (LogDirState.BrokerHighWatermark); either way it is clamped to
	// [log start, log end].
	HighWatermark int64
	// TxnTimeoutMs: an open transaction older than this (log time) is
	// hanging.
	TxnTimeoutMs int64
	// LogStartOffset is the log-start-offset-checkpoint value; -1 = none.
	// Rebuild uses max(LogStartOffset, first segment base), as LogLoader.
	LogStartOffset int64
	// CleanShutdown: the log directory holds .kafka_cleanshutdown
	// (LogDirState). With FromSnapshot SnapshotLatest, no Upto and no
	// producer snapshot left after removeStraySnapshots, Rebuild then
	// returns the state the broker starts with, which skips the rebuild:
	// empty (Result.RebuildSkipped), with a clean-shutdown-no-snapshot
	// anomaly naming what the log holds.
	CleanShutdown bool
	// Recover: with FromSnapshot SnapshotLatest and no Upto, Rebuild
	// returns the state a broker holds after the recovery LogLoader runs
	// at load (Result.Recovery): each recovered segment is replayed whole
	// (LogSegment.recover) from the snapshot the one before it wrote at
	// its end, and the state is reloaded from the snapshot the last one
	// wrote. A broker recovers a segment without its .index on any start
	// (LogLoader.loadSegmentFiles), and after an unclean shutdown
	// (Unclean) every segment from the one holding RecoveryPoint on
	// (LogLoader.recoverLog).
	Recover bool
	// Unclean: the broker's last shutdown was not clean (no
	// .kafka_cleanshutdown in the log directory), for Recover.
	Unclean bool
	// RecoveryPoint is the recovery-point-offset-checkpoint entry (-1 or
	// 0: none, every segment is recovered), for Unclean.
	RecoveryPoint int64
	// SegmentLimits reads only the first N bytes of a segment's .log,
	// keyed by its base offset: the log as it will be once a repair has
	// cut a damaged tail (kseg repair plans with it before changing a
	// byte). Segments not listed are read whole.
	SegmentLimits map[int64]int64
	// Append are batches applied after the replay has reached its end
	// (Upto, or the log end), as if the log went on with them: the log a
	// planned write leaves, replayed before the write (inject-barrier's
	// plan says what the read-back replay will say of its barrier). Each
	// must be a whole, valid batch.
	Append []*decode.Batch `json:"-"`
	// Walk, when set, holds segments' batches already framed by another
	// pass over the log (Walk): a replay takes them from it instead of
	// reading those segments again.
	Walk *Walk `json:"-"`
	// Progress, when set, is called on the replaying goroutine as the
	// replay reads on, with the bytes of the log passed since the last
	// call (at most every MiB): the .log files count in base-offset order,
	// so a replay that starts from a snapshot counts the segments before it
	// at once, and the calls add up to the log's size when the replay
	// reaches its end. A later pass over bytes already counted adds
	// nothing. It must be safe to call from several replays at once.
	Progress func(n int64)
	// Source, when set, is where the segments and snapshots the directory
	// lists are read instead of its files (a digest of the partition).
	Source Source `json:"-"`
}

// DefaultOptions are Kafka's defaults and kseg's CLI defaults.
func DefaultOptions() Options {
	return Options{
		Upto:                                -1,
		FromSnapshot:                        SnapshotLatest,
		VerifyCRC:                           true,
		ProducerIDExpirationMs:              DefaultProducerIDExpirationMs,
		ProducerIDExpirationCheckIntervalMs: DefaultProducerIDExpirationCheckIntervalMs,
		Clock:                               ClockLog(),
		HighWatermark:                       -1,
		TxnTimeoutMs:                        DefaultTxnTimeoutMs,
		LogStartOffset:                      -1,
		RecoveryPoint:                       -1,
	}
}

// Result is the rebuilt state of one partition.
type Result struct {
	Partition        string
	LogStartOffset   int64
	LogEndOffset     int64 // end of the replay: the log end, or Upto when it is lower
	HighWatermark    int64 // as used for the LSO (clamped to [logStart, logEnd])
	LastStableOffset int64
	// FirstUndecidedOffset is the first offset of the oldest ongoing
	// transaction, -1 when none.
	FirstUndecidedOffset int64
	// SnapshotLoaded is the offset of the snapshot replay started from,
	// -1 when none.
	SnapshotLoaded int64
	Producers      []Entry      // sorted by ProducerID
	Ongoing        []Txn        // sorted by FirstOffset
	Aborted        []AbortedTxn // log order
	Barriers       []Barrier
	// Anomalies are what replay found (finding kinds of the producer
	// state, and damage met on the way), in log order.
	Anomalies []finding.Finding

	// ReplayedFrom is the offset replay started at; BatchesReplayed how
	// many batches were applied; Clock the final "now" used for expiry
	// (-1 when no timestamp was seen).
	ReplayedFrom    int64
	BatchesReplayed int64
	Clock           int64
	// RebuildSkipped: the broker skips the producer-state rebuild (a clean
	// shutdown, no snapshot; Options.CleanShutdown) and starts empty;
	// ReplayedFrom is the log end and BatchesReplayed 0.
	RebuildSkipped bool
	// Recovery is the recovery a loading broker runs before it rebuilds
	// the producer state (Options.Recover); nil when it recovers nothing.
	Recovery *Recovery
}

// Recovery is what LogLoader recovers at load, as Rebuild modelled it.
type Recovery struct {
	// RecoveryPoint is the recovery point an unclean start recovers from
	// (0 without a checkpoint entry); -1 on a clean start.
	RecoveryPoint int64
	// Segments are the base offsets of the recovered segments: each is
	// replayed from the snapshot the one before it left
	// (LogLoader.recoverSegment: takeSnapshot after LogSegment.recover),
	// and the state is reloaded from the last one's
	// (ProducerStateManager.truncateAndReload), which keeps one batch per
	// producer and forgets the transactions completed above the high
	// watermark.
	Segments []int64
	// TruncatedAt is the offset where recovery cut the log (a batch that
	// fails its CRC, a torn or corrupt tail), deleting every segment
	// after it; -1 when it cut nothing.
	TruncatedAt int64
}

// HasErrors reports an anomaly of severity error.
func (r *Result) HasErrors() bool { return finding.HasErrors(r.Anomalies) }

// SnapshotEntries renders the producers as a snapshot file stores them,
// sorted by producer id.
func (r *Result) SnapshotEntries() []segment.SnapshotEntry {
	out := make([]segment.SnapshotEntry, len(r.Producers))
	for i := range r.Producers {
		out[i] = SnapshotEntryOf(&r.Producers[i])
	}
	return out
}
