package mm2test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/mm2"
	"github.com/kseg/kseg/segment"
)

// Paths are the partition directories Replicate writes; "" skips one.
type Paths struct {
	Target      string // the replica: <alias>.<topic>-<partition>
	OffsetSyncs string // mm2-offset-syncs.<cluster>.internal-0
	Checkpoints string // <alias>.checkpoints.internal-0
}

// FaultKind is a fault Replicate plants in the replica.
type FaultKind int

const (
	NoFault FaultKind = iota
	// Lose: the N source records from offset At are never copied (an MM2
	// pause across a retention purge, a skipped range).
	Lose
	// Restart: after copying the record at At, the task restarts and
	// resumes N records back (its last offset commit was N records
	// before): N duplicates.
	Restart
	// Reorder: the batch holding the copy of At is written after the next
	// batch.
	Reorder
	// Foreign: N records no source holds are produced to the target right
	// after the copy of At.
	Foreign
	// Reset: the target starts with N records of a previous incarnation
	// of the source topic (deleted and re-created since), with their
	// offset syncs.
	Reset
	// Timestamp: the N records from At are copied with another timestamp.
	Timestamp
	// SyncAhead: the first offset sync at or after upstream offset At
	// names the downstream offset after the right one.
	SyncAhead
	// CheckpointAhead: the checkpoints of the first group are N offsets
	// past the translation MM2 computes.
	CheckpointAhead
	// CheckpointUnmirrored: a checkpoint for a partition MM2 never
	// mirrored (<alias>.payments-0).
	CheckpointUnmirrored
)

// Fault is one planted fault.
type Fault struct {
	Kind  FaultKind
	At, N int64
}

// Group is a consumer group of the source cluster and the upstream offset
// it committed, which MirrorCheckpointTask checkpoints.
type Group struct {
	Name     string
	Upstream int64
}

// Options describe the MM2 deployment Replicate plays.
type Options struct {
	// ReadCommitted: the source consumer's isolation.level is
	// read_committed (exactly.once.support requires it).
	ReadCommitted bool
	// ExactlyOnce: the target producer is transactional, one transaction
	// per poll; AbortFirst aborts the first transaction after the copy of
	// offset AbortAt and copies its records again (MM2's own abort).
	ExactlyOnce bool
	AbortAt     int64
	// OffsetLagMax is offset.lag.max (0: 100); BatchSize the producer's
	// batch.size (0: 16384); MaxPollRecords max.poll.records (0: 500);
	// CommitEvery the polls between the task's offset commits (0: 4).
	OffsetLagMax   int64
	BatchSize      int
	MaxPollRecords int
	CommitEvery    int
	// StopAt: MM2 has copied the records below this offset only (lag); 0
	// for all.
	StopAt int64
	// LogAppendTime: the target topic's message.timestamp.type is
	// LogAppendTime.
	LogAppendTime bool
	// DropTargetSegments deletes the replica's first segments (retention).
	DropTargetSegments int
	// SegmentBytes is the replica's segment.bytes (0: twice BatchSize).
	SegmentBytes int64
	Groups       []Group
	Fault        Fault
}

// Result is what Replicate wrote.
type Result struct {
	Syncs       []mm2.OffsetSync
	Checkpoints []mm2.Checkpoint
	// Copies counts the target records that copy a source record;
	// Foreign lists the target offsets of those that do not (foreign
	// records, a previous incarnation's).
	Copies  int64
	Foreign []int64
}

// Replicate plays MirrorSourceTask over the source partition at src:
// poll (max.poll.records at a time, from the log start), convert each
// record keeping its key, value, headers and timestamp
// (convertRecord), send it through an idempotent producer that batches
// up to batch.size (a batch per poll at least, as linger.ms=0 ships what
// a poll gave), and for each record acknowledged queue an offset sync
// (OffsetSyncWriter.maybeQueueOffsetSyncs: the first of a task's
// lifetime, a skipped upstream offset, a truncated downstream, or a
// downstream offset offset.lag.max past the last sync; delayed ones go
// out at the task's offset commits). Then it plays MirrorCheckpointTask
// for opts.Groups: each group's upstream offset translated from the
// latest sync at or below it (OffsetSyncStore.translateDownstream).
func Replicate(src string, p Paths, opts Options) (*Result, error) {
	r, err := newReplicator(src, p, opts)
	if err != nil {
		return nil, err
	}
	if err := r.run(); err != nil {
		return nil, err
	}
	if err := r.close(); err != nil {
		return nil, err
	}
	if opts.DropTargetSegments > 0 {
		if err := dropSegments(p.Target, opts.DropTargetSegments); err != nil {
			return nil, err
		}
	}
	if p.Checkpoints != "" {
		if err := r.checkpoints(); err != nil {
			return nil, err
		}
	}
	return r.res, nil
}

func defaults(o *Options) {
	if o.OffsetLagMax == 0 {
		o.OffsetLagMax = 100
	}
	if o.BatchSize == 0 {
		o.BatchSize = 16384
	}
	if o.MaxPollRecords == 0 {
		o.MaxPollRecords = 500
	}
	if o.CommitEvery == 0 {
		o.CommitEvery = 4
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = int64(2 * o.BatchSize)
	}
}

// replicator is one run of MirrorSourceTask and its producer.
type replicator struct {
	opts    Options
	p       Paths
	res     *Result
	con     *consumer
	srcTP   mm2.OffsetSync // topic and partition of the source
	remote  string         // the target topic
	tgt     *segment.Appender
	syncs   *segment.Appender
	sw      *syncWriter
	pid     int64
	epoch   int16
	seq     int32
	pending []Record // the producer's open batch
	held    *heldBatch
	// committed is the last upstream offset of the task's last offset
	// commit (-1: none); acked the last upstream offset acknowledged.
	committed, acked int64
	polls            int
	restarted        bool
	aborted          bool
	planted          bool  // a one-off fault (Reorder, SyncAhead) is in
	ts               int64 // the target broker's clock, for LogAppendTime
}

type heldBatch struct {
	recs []Record
}

func newReplicator(src string, p Paths, opts Options) (*replicator, error) {
	defaults(&opts)
	con, err := openConsumer(src, opts.ReadCommitted)
	if err != nil {
		return nil, err
	}
	r := &replicator{opts: opts, p: p, res: &Result{}, con: con, pid: 900,
		committed: -1, acked: -1, ts: T0 + 1_000_000}
	r.srcTP.Topic, r.srcTP.Partition = con.pd.Topic, con.pd.Partition
	name, ok := segment.ParsePartitionDir(filepath.Base(filepath.Clean(p.Target)))
	if !ok {
		return nil, fmt.Errorf("%s: not named <topic>-<partition>", p.Target)
	}
	r.remote = name.Topic
	if r.tgt, err = segment.OpenAppender(p.Target, segment.AppenderOptions{SegmentBytes: opts.SegmentBytes, IndexIntervalBytes: 512, SegmentMs: -1}); err != nil {
		return nil, err
	}
	if p.OffsetSyncs != "" {
		if r.syncs, err = segment.OpenAppender(p.OffsetSyncs, segment.AppenderOptions{SegmentMs: -1}); err != nil {
			return nil, err
		}
	}
	r.sw = newSyncWriter(opts.OffsetLagMax)
	return r, nil
}

func (r *replicator) run() error {
	if r.opts.Fault.Kind == Reset {
		if err := r.previousIncarnation(r.opts.Fault.N); err != nil {
			return err
		}
	}
	r.con.seek(0)
	for {
		recs, err := r.con.poll(r.opts.MaxPollRecords)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		if stop, err := r.poll(recs); err != nil || stop {
			return err
		}
	}
	return r.flush()
}

// poll sends one poll's records; stop at StopAt.
func (r *replicator) poll(recs []Record) (stop bool, err error) {
	f := r.opts.Fault
	for _, rec := range recs {
		if r.opts.StopAt > 0 && rec.Offset >= r.opts.StopAt {
			return true, r.flush()
		}
		if f.Kind == Lose && rec.Offset >= f.At && rec.Offset < f.At+f.N {
			continue
		}
		if f.Kind == Timestamp && rec.Offset >= f.At && rec.Offset < f.At+f.N {
			rec.Timestamp++
		}
		if err := r.send(rec); err != nil {
			return false, err
		}
		if f.Kind == Restart && !r.restarted && rec.Offset == f.At {
			r.restarted = true
			if err := r.flush(); err != nil {
				return false, err
			}
			// Stop and start: the offsets committed say where to resume;
			// the sync writer and the producer are new.
			r.con.seek(rec.Offset - f.N + 1)
			r.sw = newSyncWriter(r.opts.OffsetLagMax)
			r.pid++
			r.seq = 0
			return false, nil
		}
	}
	if err := r.flush(); err != nil {
		return false, err
	}
	r.polls++
	if r.polls%r.opts.CommitEvery == 0 {
		// WorkerSourceTask's offset commit: the task's commit() promotes
		// the delayed syncs.
		r.committed = r.acked
		r.sw.promoteDelayed()
		if err := r.fire(); err != nil {
			return false, err
		}
	}
	return false, nil
}

// send adds a record to the producer's open batch, shipping it first when
// the record would not fit (batch.size).
func (r *replicator) send(rec Record) error {
	if len(r.pending) > 0 && size(r.pending)+recordSize(rec) > r.opts.BatchSize {
		if err := r.flush(); err != nil {
			return err
		}
	}
	r.pending = append(r.pending, rec)
	return nil
}

func recordSize(rec Record) int {
	n := 21 + len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += 4 + len(h.Key) + len(h.Value)
	}
	return n
}

func size(recs []Record) int {
	n := decode.RecordBatchOverhead
	for _, rec := range recs {
		n += recordSize(rec)
	}
	return n
}

// flush ships the open batch (under Reorder, the batch holding At waits
// for the next one).
func (r *replicator) flush() error {
	if len(r.pending) == 0 {
		if r.held != nil {
			h := r.held
			r.held = nil
			return r.ship(h.recs, true)
		}
		return nil
	}
	recs := r.pending
	r.pending = nil
	f := r.opts.Fault
	if f.Kind == Reorder && r.held == nil && !r.planted && recs[0].Offset <= f.At && f.At <= recs[len(recs)-1].Offset {
		r.planted = true
		r.held = &heldBatch{recs: recs}
		return nil
	}
	if err := r.ship(recs, true); err != nil {
		return err
	}
	if r.held != nil {
		h := r.held
		r.held = nil
		if err := r.ship(h.recs, true); err != nil {
			return err
		}
	}
	if f.Kind == Foreign && recs[0].Offset <= f.At && f.At <= recs[len(recs)-1].Offset {
		return r.foreign(f.N)
	}
	return nil
}

// ship appends one batch of copies and acknowledges its records
// (commitRecord). Under ExactlyOnce the batch is a transaction of its
// own, committed (or, once, aborted and shipped again).
func (r *replicator) ship(recs []Record, synced bool) error {
	abort := r.opts.ExactlyOnce && r.opts.AbortAt > 0 && !r.aborted && recs[len(recs)-1].Offset >= r.opts.AbortAt
	base, err := r.append(recs, r.pid, r.seq)
	if err != nil {
		return err
	}
	r.seq += int32(len(recs))
	if r.opts.ExactlyOnce {
		t := decode.ControlCommit
		if abort {
			t = decode.ControlAbort
		}
		if err := r.marker(t, base); err != nil {
			return err
		}
		if abort {
			r.aborted = true
			return r.ship(recs, synced)
		}
	}
	// commitRecord, record by record: queue a sync, fire what is pending.
	for i, rec := range recs {
		d := base + int64(i)
		r.res.Copies++
		if !synced {
			continue
		}
		r.acked = rec.Offset
		r.sw.queue(rec.Offset, d)
		if err := r.fire(); err != nil {
			return err
		}
	}
	return nil
}

func (r *replicator) append(recs []Record, pid int64, seq int32) (int64, error) {
	base := r.tgt.LogEndOffset()
	specs := make([]decode.RecordSpec, len(recs))
	for i, rec := range recs {
		specs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value, Headers: rec.Headers}
	}
	spec := decode.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: 1, ProducerID: pid, ProducerEpoch: r.epoch, BaseSequence: seq,
		Transactional: r.opts.ExactlyOnce && pid == r.pid}
	if r.opts.LogAppendTime {
		r.ts += 5
		spec.LogAppendTime, spec.MaxTimestamp = true, &r.ts
	}
	raw, err := decode.AppendBatch(nil, spec, specs)
	if err != nil {
		return 0, err
	}
	return base, r.tgt.Append(raw)
}

func (r *replicator) marker(t decode.ControlType, first int64) error {
	off := r.tgt.LogEndOffset()
	raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: off, PartitionLeaderEpoch: 1, Transactional: true, Control: true,
		ProducerID: r.pid, ProducerEpoch: r.epoch, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: r.ts, Key: decode.AppendControlKey(nil, t), Value: decode.AppendEndTxnMarkerValue(nil, 0)}})
	if err != nil {
		return err
	}
	if err := r.tgt.Append(raw); err != nil {
		return err
	}
	if t == decode.ControlAbort {
		return r.tgt.AppendAbortedTxn(segment.AbortedTxn{ProducerID: r.pid, FirstOffset: first, LastOffset: off, LastStableOffset: off + 1})
	}
	return nil
}

// foreign produces n records to the target directly (another producer).
func (r *replicator) foreign(n int64) error {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Offset: -1, Timestamp: T0 + 5, Key: fmt.Appendf(nil, "intruder-%d", i), Value: []byte("produced to the target directly")}
	}
	for i := 0; i < len(recs); i += 100 {
		part := recs[i:min(i+100, len(recs))]
		base, err := r.append(part, 7000, int32(i))
		if err != nil {
			return err
		}
		for j := range part {
			r.res.Foreign = append(r.res.Foreign, base+int64(j))
		}
	}
	return nil
}

// previousIncarnation writes n records MM2 copied from the source topic
// before it was deleted and re-created, and their syncs.
func (r *replicator) previousIncarnation(n int64) error {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Offset: int64(i), Timestamp: T0 - 100_000 + int64(i), Key: fmt.Appendf(nil, "old-%d", i), Value: []byte("before the topic was re-created")}
	}
	if err := r.ship(recs, true); err != nil {
		return err
	}
	for i := range recs {
		r.res.Foreign = append(r.res.Foreign, int64(i))
	}
	r.res.Copies -= n
	r.pid++
	r.seq = 0
	return nil
}

// fire writes the pending offset syncs (firePendingOffsetSyncs).
func (r *replicator) fire() error {
	for _, s := range r.sw.takePending() {
		s.Topic, s.Partition = r.srcTP.Topic, r.srcTP.Partition
		if f := r.opts.Fault; f.Kind == SyncAhead && !r.planted && s.UpstreamOffset >= f.At {
			r.planted = true
			s.DownstreamOffset++
		}
		r.res.Syncs = append(r.res.Syncs, s)
		if r.syncs == nil {
			continue
		}
		key, value, err := (&mm2.Record{Kind: mm2.OffsetSyncs, OffsetSync: &s}).Encode()
		if err != nil {
			return err
		}
		raw, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: r.syncs.LogEndOffset(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]decode.RecordSpec{{Timestamp: T0 + int64(len(r.res.Syncs)), Key: key, Value: value}})
		if err != nil {
			return err
		}
		if err := r.syncs.Append(raw); err != nil {
			return err
		}
	}
	return nil
}

func (r *replicator) close() error {
	// The task stops: its last commit promotes the delayed syncs.
	r.sw.promoteDelayed()
	if err := r.fire(); err != nil {
		return err
	}
	r.con.close()
	if r.syncs != nil {
		if err := r.syncs.Close(); err != nil {
			return err
		}
	}
	return r.tgt.Close()
}

// dropSegments deletes a partition's first n segments, as retention does.
func dropSegments(dir string, n int) error {
	pd, err := segment.OpenPartitionDir(dir)
	if err != nil {
		return err
	}
	for i, s := range pd.Segments {
		if i >= n || i == len(pd.Segments)-1 {
			break
		}
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if f != "" {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
