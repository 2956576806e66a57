package segment

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
)

// Broker defaults the Appender mirrors (ServerLogConfigs).
const (
	// DefaultSegmentBytes is log.segment.bytes' default, 1 GiB.
	DefaultSegmentBytes = 1 << 30
	// DefaultIndexIntervalBytes is index.interval.bytes' default.
	DefaultIndexIntervalBytes = 4096
	// DefaultSegmentMs is segment.ms' default (log.roll.hours = 168).
	DefaultSegmentMs = 7 * 24 * 60 * 60 * 1000
)

// AppenderOptions configure an Appender. The zero value is the broker's
// defaults.
type AppenderOptions struct {
	// SegmentBytes is segment.bytes: a new segment is rolled when the
	// active .log would grow beyond it. 0 means DefaultSegmentBytes.
	SegmentBytes int64
	// IndexIntervalBytes is index.interval.bytes. 0 means
	// DefaultIndexIntervalBytes; any positive value is used as is (1
	// indexes every batch but the first of each segment).
	IndexIntervalBytes int
	// SegmentMs is segment.ms: a segment is rolled when an entry's
	// maxTimestamp is more than SegmentMs after the maxTimestamp of the
	// segment's first batch (LogSegment.timeWaitedForRoll; the broker's
	// wall-clock fallback for segments without timestamps is not
	// modelled). 0 means DefaultSegmentMs; negative disables time rolls.
	SegmentMs int64
	// MaxIndexSize is segment.index.bytes: a segment is also rolled when
	// its offset index holds MaxIndexSize/8 entries or its time index
	// MaxIndexSize/12-1 (TimeIndex#isFull keeps the last slot for the
	// entry written on roll). 0 means DefaultMaxIndexSize.
	MaxIndexSize int
	// StartOffset is the base offset of the first segment, the log start
	// offset of a new log (0 for a topic created empty).
	StartOffset int64
	// TopicID, when set, is written to partition.metadata on Close.
	TopicID *[16]byte
	// OnRoll, when set, is called at each roll with the new segment's base
	// offset, after the old segment has been completed and before the first
	// byte of the new one is written: where UnifiedLog.roll takes its
	// producer snapshot (named by the new base offset).
	OnRoll func(newBaseOffset int64) error
	// NoSync leaves out every fsync: for data generated for tests and
	// benchmarks, which no crash has to find intact (thousands of
	// partitions, each a dozen fsyncs, take minutes on a busy disk).
	NoSync bool
}

// Appender writes a partition directory the way a broker's log does when
// it appends one batch at a time (UnifiedLog.append → LogSegment.append):
// the .log of the active segment, a sparse .index and .timeindex maintained
// with LogSegment's rules, rolls by size (and by index capacity or relative
// offset overflow), the .txnindex entries it is handed, the
// leader-epoch-checkpoint and partition.metadata.
//
// It does not assign offsets, validate producer state or compute aborted
// transactions: batches arrive as the leader would have written them, and
// AppendAbortedTxn receives the .txnindex entries a producer-state manager
// computed.
//
// Index files are written at their exact size (the broker preallocates the
// active segment's indexes and trims them on roll and close; a cleanly
// closed log has them trimmed), when a segment is rolled and on Close.
type Appender struct {
	dir  string
	opts AppenderOptions

	roll     RollConfig
	seg      *activeSegment
	segments []int64
	next     int64 // log end offset: one past the last offset appended
	appended bool

	epochs []EpochEntry // the leader epoch cache
	sawV2  bool
	closed bool
}

// activeSegment is the segment being appended to: its open .log, and
// LogSegment's in-memory state of it (IndexBuilder).
type activeSegment struct {
	*IndexBuilder
	f *os.File
	w *bufio.Writer

	txn           []byte
	lastTxnOffset int64
	hasTxn        bool
}

// ErrSegmentsExist is returned by OpenAppender for a directory that
// already holds segments: the Appender writes new logs only.
var ErrSegmentsExist = errors.New("partition directory already holds log segments")

// OpenAppender creates dir if needed and starts a log in it whose first
// segment has base offset opts.StartOffset. A directory that already holds
// a .log file is refused (ErrSegmentsExist).
func OpenAppender(dir string, opts AppenderOptions) (*Appender, error) {
	opts = opts.withDefaults()
	switch {
	case opts.SegmentBytes < decode.LogOverhead+decode.MinLegacyRecordSize:
		return nil, fmt.Errorf("segment bytes %d is too small", opts.SegmentBytes)
	case opts.IndexIntervalBytes < 0:
		return nil, fmt.Errorf("index interval bytes %d is negative", opts.IndexIntervalBytes)
	case opts.MaxIndexSize < TimeIndexEntrySize*2:
		return nil, fmt.Errorf("max index size %d is too small", opts.MaxIndexSize)
	case opts.StartOffset < 0:
		return nil, fmt.Errorf("start offset %d is negative", opts.StartOffset)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if fi, ok := ParseFileName(e.Name()); ok && fi.Kind == KindLog {
			return nil, fmt.Errorf("%s: %w", dir, ErrSegmentsExist)
		}
	}
	a := &Appender{dir: dir, opts: opts, roll: opts.rollConfig(), next: opts.StartOffset}
	if err := a.openSegment(opts.StartOffset); err != nil {
		return nil, err
	}
	return a, nil
}

// rollConfig is what the Appender's rolls read (LogSegment.shouldRoll).
// withDefaults fills the zero fields with the broker's defaults
// (segment.bytes, index.interval.bytes, segment.index.bytes, segment.ms).
func (o AppenderOptions) withDefaults() AppenderOptions {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.IndexIntervalBytes == 0 {
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if o.MaxIndexSize == 0 {
		o.MaxIndexSize = DefaultMaxIndexSize
	}
	if o.SegmentMs == 0 {
		o.SegmentMs = DefaultSegmentMs
	}
	return o
}

func (o AppenderOptions) rollConfig() RollConfig {
	return RollConfig{SegmentBytes: o.SegmentBytes, SegmentMs: o.SegmentMs, MaxIndexSize: o.MaxIndexSize}
}

// Dir is the partition directory.
func (a *Appender) Dir() string { return a.dir }

// LogEndOffset is one past the last offset appended (the start offset
// before any append).
func (a *Appender) LogEndOffset() int64 { return a.next }

// ActiveBaseOffset is the base offset of the segment being appended to.
func (a *Appender) ActiveBaseOffset() int64 { return a.seg.Base() }

// ActiveSize is the size of the active segment's .log in bytes.
func (a *Appender) ActiveSize() int64 { return a.seg.Size() }

// Segments lists the base offsets of every segment written so far,
// the active one last.
func (a *Appender) Segments() []int64 { return append([]int64(nil), a.segments...) }

// LeaderEpochs is the leader epoch cache as it stands: what Close writes to
// leader-epoch-checkpoint.
func (a *Appender) LeaderEpochs() []EpochEntry { return append([]EpochEntry(nil), a.epochs...) }

func (a *Appender) openSegment(base int64) error {
	p := filepath.Join(a.dir, SegmentFileName(base, LogSuffix))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	a.seg = &activeSegment{IndexBuilder: NewIndexBuilder(base, a.opts.IndexIntervalBytes), f: f, w: bufio.NewWriterSize(f, 1<<20)}
	a.segments = append(a.segments, base)
	return nil
}

// Append writes one complete log entry: a v2 batch, or a v0/v1 (wrapper)
// message, whose offsets are already assigned. Offsets must be above
// everything appended before. When the active segment cannot take the
// entry it is rolled first (LogSegment.shouldRoll: size, index capacity,
// relative offset overflow); the new segment is named after the entry's
// first offset — its baseOffset for v2, the wrapper offset (its last
// offset) for v0/v1, as LogAppendInfo.firstOrLastOffsetOfFirstBatch — or
// the log end offset if that is larger.
func (a *Appender) Append(batch []byte) error { return a.AppendChunk([][]byte{batch}) }

// AppendChunk appends several entries at once, as a follower appends a
// fetched chunk (UnifiedLog.appendAsFollower → LogSegment.append): one
// roll decision for the chunk (its size, largest offset and highest
// maxTimestamp), one offset-index entry for it when its turn has come
// (the chunk's largest offset at its first position), and the time-index
// entry names the last offset of its batch with the highest maxTimestamp
// (shallowOffsetOfMaxTimestamp). Append is AppendChunk of one entry, a
// leader's append.
func (a *Appender) AppendChunk(batches [][]byte) error {
	if a.closed {
		return errors.New("appender is closed")
	}
	if len(batches) == 0 {
		return nil
	}
	var size, first, last, maxTs, maxTsOffset int64
	maxTs = math.MinInt64
	parsed := make([]decode.Batch, len(batches))
	for i, raw := range batches {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			return fmt.Errorf("append: %w", err)
		}
		bs := b.Size()
		if int64(len(raw)) != bs {
			return fmt.Errorf("append: %d bytes hold an entry of %d bytes and more; each entry must be one batch", len(raw), bs)
		}
		if b.LastOffset() < b.BaseOffset {
			return fmt.Errorf("append: batch at offset %d has negative lastOffsetDelta %d", b.BaseOffset, b.LastOffsetDelta)
		}
		next := a.next
		if i > 0 {
			next = last + 1
		}
		if (a.appended || i > 0) && b.BaseOffset < next {
			// UnifiedLog: UnexpectedAppendOffsetException.
			return fmt.Errorf("append: batch offset %d is below the log end offset %d", b.BaseOffset, next)
		}
		if b.BaseOffset < a.opts.StartOffset {
			return fmt.Errorf("append: batch offset %d is below the log start offset %d", b.BaseOffset, a.opts.StartOffset)
		}
		if i == 0 {
			first = b.BaseOffset
		}
		last = b.LastOffset()
		if b.MaxTimestamp > maxTs {
			maxTs, maxTsOffset = b.MaxTimestamp, last
		}
		size += bs
		parsed[i] = b
	}
	if size > a.opts.SegmentBytes {
		// RecordBatchTooLargeException: a batch must fit in a segment.
		return fmt.Errorf("append: entry of %d bytes is larger than the segment size %d", size, a.opts.SegmentBytes)
	}
	if a.roll.ShouldRoll(a.seg.IndexBuilder, size, last, maxTs) {
		if err := a.rollTo(max(first, a.next)); err != nil {
			return err
		}
		if last-a.seg.Base() > math.MaxInt32 {
			return fmt.Errorf("append: offsets %d..%d do not fit in one segment", first, last)
		}
	}
	s := a.seg
	for _, raw := range batches {
		if _, err := s.w.Write(raw); err != nil {
			return err
		}
	}
	if err := s.AppendChunk(size, last, maxTs, maxTsOffset); err != nil {
		return err
	}
	a.next = last + 1
	a.appended = true
	for i := range parsed {
		if b := &parsed[i]; b.Magic >= 2 {
			a.sawV2 = true
			a.epochs = AssignLeaderEpoch(a.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
		} else {
			// UnifiedLog.append: a message-format regression clears the cache.
			a.epochs = nil
		}
	}
	return nil
}

// rollTo completes the active segment and opens one at newBase. An empty
// active segment is replaced rather than kept (UnifiedLog.roll deletes an
// empty segment it would otherwise leave behind).
func (a *Appender) rollTo(newBase int64) error {
	if a.seg.Size() == 0 {
		s := a.seg
		if err := s.f.Close(); err != nil {
			return err
		}
		if err := os.Remove(s.f.Name()); err != nil {
			return err
		}
		a.segments = a.segments[:len(a.segments)-1]
		return a.openSegment(newBase)
	}
	if err := a.finishSegment(); err != nil {
		return err
	}
	if a.opts.OnRoll != nil {
		if err := a.opts.OnRoll(newBase); err != nil {
			return err
		}
	}
	return a.openSegment(newBase)
}

// finishSegment is LogSegment.onBecomeInactiveSegment / close: the final
// time-index entry, then every file flushed and written at its exact size.
func (a *Appender) finishSegment() error {
	s := a.seg
	if err := s.Finish(); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	if !a.opts.NoSync {
		if err := s.f.Sync(); err != nil {
			return err
		}
	}
	if err := s.f.Close(); err != nil {
		return err
	}
	write := func(suffix string, b []byte) error {
		return a.writeFile(SegmentFileName(s.Base(), suffix), b)
	}
	index, timeIndex, err := s.Encode()
	if err != nil {
		return err
	}
	if err := write(IndexSuffix, index); err != nil {
		return err
	}
	if err := write(TimeIndexSuffix, timeIndex); err != nil {
		return err
	}
	if s.hasTxn {
		// TransactionIndex creates its file on the first append only.
		if err := write(TxnIndexSuffix, s.txn); err != nil {
			return err
		}
	}
	return nil
}

// AppendAbortedTxn appends an entry to the active segment's .txnindex
// (LogSegment.updateTxnIndex), the segment holding the ABORT marker just
// appended. Entries must have strictly increasing LastOffset
// (TransactionIndex#append) and LastOffset must be in the active segment.
func (a *Appender) AppendAbortedTxn(t AbortedTxn) error {
	if a.closed {
		return errors.New("appender is closed")
	}
	s := a.seg
	if s.hasTxn && t.LastOffset <= s.lastTxnOffset {
		return fmt.Errorf("txnindex: last offset %d is not above the previous entry's %d", t.LastOffset, s.lastTxnOffset)
	}
	if t.LastOffset < s.Base() || t.LastOffset >= a.next {
		return fmt.Errorf("txnindex: last offset %d is outside the active segment [%d, %d)", t.LastOffset, s.Base(), a.next)
	}
	s.txn = AppendAbortedTxn(s.txn, t)
	s.lastTxnOffset, s.hasTxn = t.LastOffset, true
	return nil
}

// Close completes the active segment (its final time-index entry, trimmed
// indexes), writes leader-epoch-checkpoint when any v2 batch was appended
// and partition.metadata when a topic id was given, and fsyncs the
// directory.
func (a *Appender) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	if err := a.finishSegment(); err != nil {
		return err
	}
	if a.sawV2 {
		if err := a.writeFile(LeaderEpochCheckpointName, EncodeLeaderEpochCheckpoint(a.epochs)); err != nil {
			return err
		}
	}
	if a.opts.TopicID != nil {
		pm := PartitionMetadata{Version: 0, TopicID: *a.opts.TopicID}
		if err := a.writeFile(PartitionMetadataName, EncodePartitionMetadata(pm)); err != nil {
			return err
		}
	}
	if a.opts.NoSync {
		return nil
	}
	return syncDir(a.dir)
}

// writeFile writes a file of the partition directory atomically (durably
// unless NoSync).
func (a *Appender) writeFile(name string, b []byte) error {
	return writeFileAtomicSync(filepath.Join(a.dir, name), b, 0o644, true, !a.opts.NoSync)
}

// WriteProducerSnapshotFile is segment.WriteProducerSnapshotFile into the
// partition directory, without fsync under NoSync.
func (a *Appender) WriteProducerSnapshotFile(path string, entries []SnapshotEntry, force bool) error {
	return writeFileAtomicSync(path, EncodeProducerSnapshot(entries), 0o644, force, !a.opts.NoSync)
}

// RecoveredSegment is what LogSegment.recover rebuilds for one segment:
// where it cuts it (Recover), and the indexes of the batches it keeps.
type RecoveredSegment struct {
	Recovery
	Index     []byte // the .index, trimmed
	TimeIndex []byte // the .timeindex, trimmed, with the final entry
	// Stop describes why recovery stopped before the end (the cut's
	// damage), nil when every byte was valid or only zero bytes follow.
	Stop error
}

// RebuildIndexes returns the .index and .timeindex LogSegment.recover
// builds for the .log at logPath with the given index.interval.bytes
// (used as is: 0 indexes every batch but the first), with IndexBuilder's
// rules over the batches recovery keeps (Recover). For batches appended
// one at a time this is exactly what LogSegment.append wrote
// (formats.md §7.1).
func RebuildIndexes(logPath string, baseOffset int64, indexIntervalBytes int) (index, timeindex []byte, err error) {
	r, err := RecoverIndexes(logPath, baseOffset, indexIntervalBytes)
	return r.Index, r.TimeIndex, err
}

// RecoverIndexes is RebuildIndexes with the rest of what recovery learns.
func RecoverIndexes(logPath string, baseOffset int64, indexIntervalBytes int) (RecoveredSegment, error) {
	var r RecoveredSegment
	if indexIntervalBytes < 0 {
		return r, fmt.Errorf("index interval bytes %d is negative", indexIntervalBytes)
	}
	ib := NewIndexBuilder(baseOffset, indexIntervalBytes)
	var ierr error
	rec, err := Recover(logPath, baseOffset, RecoverOptions{OnBatch: func(_ int64, b *decode.Batch) bool {
		ierr = ib.Append(b.Size(), b.LastOffset(), b.MaxTimestamp)
		return ierr == nil
	}})
	if err != nil {
		return r, err
	}
	if ierr != nil {
		return r, fmt.Errorf("%s: %w", logPath, ierr)
	}
	r.Recovery = *rec
	if c := rec.Cut; c != nil && c.Err != nil {
		r.Stop = c.Err
	}
	if err := ib.Finish(); err != nil {
		return r, err
	}
	r.Index, r.TimeIndex, err = ib.Encode()
	return r, err
}
