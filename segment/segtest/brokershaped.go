package segtest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
)

// Broker-shaped partitions: what a broker leaves on disk in the situations
// the committed fixtures and the real ones are thin on (issue 27), written
// at test time with the fixtures' writer (segment.Appender, a producer-state
// tracker that expires producers as a broker's periodic check does, and
// snapshots at every roll). Kafka's own loader (segment/kafkaoracle) judges
// what kseg makes of them.
//
//	span-0          transactions spanning segments: one aborted two rolls
//	                after it began, one committed across a roll, one still
//	                open at the end, beside an idempotent producer
//	deleterecords-0 DeleteRecords into transactions: the log start lies
//	                inside a segment, after the first batch of two
//	                transactions whose markers (an ABORT, a COMMIT) lie
//	                above it, and above an aborted transaction wholly below
//	                it
//	expiry-0        producers that stop writing, then a pause of more than
//	                producer.id.expiration.ms before others write: the
//	                snapshots after the pause no longer hold them
//	bump-0          a transaction the coordinator aborts on timeout with a
//	                bumped epoch (KIP-360), the producer back at a new
//	                epoch from sequence 0; a transaction-version-2 producer
//	                (KIP-890) whose every marker bumps its epoch
//	follower-0      a follower's replica: the batches were appended a
//	                fetched chunk of three at a time, so each offset-index
//	                entry names the last offset of the chunk at the
//	                position of its first batch (LogSegment.append); the
//	                leader's replica of the same batches has one entry per
//	                batch
//	retention-0     retention deleted the first two segments (and the
//	                snapshots at their bases), with a producer that wrote
//	                only in them; after the crash the checkpoints have no
//	                entry yet, so every segment is recovered and the
//	                checkpointed log start lies below the first segment,
//	                whose snapshot recovery loads (LogLoader.recoverSegment
//	                passes the checkpointed log start to truncateAndReload,
//	                not the first segment's base)
//
// Each is written into two log directories:
//
//	clean/    after a clean shutdown: .kafka_cleanshutdown, the snapshot
//	          at the log end, recovery point and high watermark at the end
//	crashed/  after a crash: no marker, no snapshot at the log end, the
//	          recovery point at the last segment's base and the high
//	          watermark below the last markers
var BrokerShapedNames = []string{"span-0", "deleterecords-0", "expiry-0", "bump-0"}

// BrokerShapedIndexInterval is the index.interval.bytes of the
// broker-shaped partitions' topics.
const BrokerShapedIndexInterval = 200

// BrokerShapedLogDirs are the log directories WriteBrokerShaped writes.
var BrokerShapedLogDirs = []string{"clean", "crashed"}

// brokerShaped is one partition's writer and where its log directory's
// checkpoints put it.
type brokerShaped struct {
	name  string
	write func(p *partition) error
	// logStart is the log-start-offset-checkpoint entry (-1: the first
	// segment's base).
	logStart int64
	// segmentBytes is segment.bytes.
	segmentBytes int64
	// retained: retention deleted this many leading segments.
	retained int
	// chunk: a follower appended the batches this many at a time.
	chunk int
}

// WriteBrokerShaped writes the broker-shaped partitions under
// root/clean and root/crashed and returns the partition directories.
func WriteBrokerShaped(root string) ([]string, error) {
	g := &gen{}
	parts := []brokerShaped{
		{name: "span-0", write: writeSpan, logStart: -1, segmentBytes: 700},
		{name: "deleterecords-0", write: writeDeleteRecords, logStart: DeleteRecordsLogStart, segmentBytes: 2000},
		{name: "expiry-0", write: writeExpiry, logStart: -1, segmentBytes: 700},
		{name: "bump-0", write: writeBump, logStart: -1, segmentBytes: 700},
		{name: "retention-0", write: writeRetention, logStart: -1, segmentBytes: 500, retained: 2},
		{name: "follower-0", write: writeFollower, logStart: -1, segmentBytes: 1500, chunk: 3},
	}
	var dirs []string
	for _, ld := range BrokerShapedLogDirs {
		crashed := ld == "crashed"
		logDir := filepath.Join(root, ld)
		var recovery, logStart, hw []segment.OffsetCheckpointEntry
		for i, bs := range parts {
			dir := filepath.Join(logDir, bs.name)
			p, err := g.open(dir, partitionOpts{segmentBytes: bs.segmentBytes, indexInterval: BrokerShapedIndexInterval, topic: byte(8 + i), snapshots: true})
			if err != nil {
				return nil, err
			}
			p.track.expireMs = 86_400_000
			p.chunk = bs.chunk
			p.noEndSnapshot = crashed
			p.epoch = 2
			if err := bs.write(p); err != nil {
				_ = p.app.Close()
				return nil, fmt.Errorf("%s: %w", bs.name, err)
			}
			if err := p.close(); err != nil {
				return nil, fmt.Errorf("%s: %w", bs.name, err)
			}
			topic, part, _ := segment.ParsePartitionDirName(bs.name)
			end := p.next
			if bs.retained > 0 {
				segs := p.app.Segments()
				if err := deleteSegments(dir, segs[:bs.retained]); err != nil {
					return nil, err
				}
				if !crashed {
					// The clean shutdown checkpointed the log start retention moved.
					logStart = append(logStart, segment.OffsetCheckpointEntry{Topic: topic, Partition: part, Offset: segs[bs.retained]})
				}
			}
			rp, h := end, end
			if crashed {
				segs := p.app.Segments()
				rp = segs[len(segs)-1]
				h = p.lastMarker // the last marker not yet replicated
			}
			if !crashed || bs.retained == 0 {
				recovery = append(recovery, segment.OffsetCheckpointEntry{Topic: topic, Partition: part, Offset: rp})
			}
			hw = append(hw, segment.OffsetCheckpointEntry{Topic: topic, Partition: part, Offset: h})
			if bs.logStart >= 0 {
				logStart = append(logStart, segment.OffsetCheckpointEntry{Topic: topic, Partition: part, Offset: bs.logStart})
			}
			dirs = append(dirs, dir)
		}
		files := map[string][]byte{
			segment.RecoveryPointCheckpointName:     segment.EncodeOffsetCheckpoint(recovery),
			segment.ReplicationOffsetCheckpointName: segment.EncodeOffsetCheckpoint(hw),
			segment.LogStartOffsetCheckpointName:    segment.EncodeOffsetCheckpoint(logStart),
		}
		if !crashed {
			files[segment.CleanShutdownName] = nil
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(logDir, name), b, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return dirs, nil
}

// deleteSegments deletes the segments at bases with the snapshots named
// by them, as retention does (UnifiedLog.deleteSegments,
// deleteProducerSnapshots).
func deleteSegments(dir string, bases []int64) error {
	for _, b := range bases {
		for _, suffix := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix, segment.SnapshotSuffix} {
			if err := os.Remove(filepath.Join(dir, segment.SegmentFileName(b, suffix))); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// BrokerShaped writes the broker-shaped partitions under root
// (WriteBrokerShaped) and returns the directories of those named name, one
// per log directory ("" returns every partition).
func BrokerShaped(root, name string) ([]string, error) {
	dirs, err := WriteBrokerShaped(root)
	if err != nil || name == "" {
		return dirs, err
	}
	var out []string
	for _, d := range dirs {
		if filepath.Base(d) == name {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no broker-shaped partition %q", name)
	}
	return out, nil
}

// producer writes one producer's batches into a broker-shaped partition.
type producer struct {
	p     *partition
	pid   int64
	epoch int16
	seq   int32
}

func (p *partition) producer(pid int64, epoch int16) *producer {
	return &producer{p: p, pid: pid, epoch: epoch}
}

// data appends n records at ts (transactional or not).
func (w *producer) data(ts int64, n int, txn bool) {
	recs := make([]decode.RecordSpec, n)
	for j := range recs {
		recs[j] = rec(int32(j), ts, fmt.Appendf(nil, "k-%d-%d", w.pid, w.seq+int32(j)), fmt.Appendf(nil, `{"pid":%d,"seq":%d,"pad":"%s"}`, w.pid, w.seq+int32(j), "0123456789abcdef"))
	}
	w.p.batch(decode.BatchSpec{Transactional: txn, ProducerID: w.pid, ProducerEpoch: w.epoch, BaseSequence: w.seq}, recs...)
	w.seq = decode.IncrementSequence(w.seq, int32(n))
}

// marker appends a COMMIT or ABORT at ts with the given producer epoch
// (the coordinator's: the transaction's, or one above it when it bumps).
func (w *producer) marker(ts int64, t decode.ControlType, epoch int16, coordinatorEpoch int32) {
	w.p.lastMarker = w.p.next
	w.p.batch(decode.BatchSpec{Transactional: true, Control: true, ProducerID: w.pid, ProducerEpoch: epoch, BaseSequence: -1},
		rec(0, ts, decode.AppendControlKey(nil, t), decode.AppendEndTxnMarkerValue(nil, coordinatorEpoch)))
}

// plain appends a batch without a producer id.
func (p *partition) plain(ts int64, n int) {
	recs := make([]decode.RecordSpec, n)
	for j := range recs {
		recs[j] = rec(int32(j), ts, nil, fmt.Appendf(nil, "plain record %d at %d, padding padding", j, ts))
	}
	p.batch(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs...)
}

// writeSpan: transactions spanning segments (segment.bytes 700).
func writeSpan(p *partition) error {
	a, b, c, idem := p.producer(7000, 0), p.producer(7001, 3), p.producer(7002, 1), p.producer(7003, 0)
	ts := T0
	step := func() int64 { ts += 1000; return ts }
	a.data(step(), 2, true) // A begins
	b.data(step(), 1, true) // B begins
	idem.data(step(), 3, false)
	a.data(step(), 2, true)
	b.data(step(), 2, true)
	p.plain(step(), 2)
	b.marker(step(), decode.ControlCommit, 3, 4) // B committed, a roll after it began
	idem.data(step(), 2, false)
	a.data(step(), 1, true)
	c.data(step(), 2, true) // C begins, never ends
	idem.data(step(), 1, false)
	a.marker(step(), decode.ControlAbort, 0, 4) // A aborted, rolls after it began (LSO pinned by C)
	b.data(step(), 1, true)                     // B's next transaction
	b.marker(step(), decode.ControlAbort, 3, 4)
	c.data(step(), 1, true)
	idem.data(step(), 2, false)
	return p.err
}

// DeleteRecordsLogStart is deleterecords-0's log start offset: inside its
// first segment, after the first batches of the transactions of 7100 and
// 7101, after the data of 7105's transaction (its COMMIT lies above) and
// after 7104's aborted transaction.
const DeleteRecordsLogStart = 17

// writeDeleteRecords: DeleteRecords into transactions.
func writeDeleteRecords(p *partition) error {
	a, b, c, d, e, f := p.producer(7100, 0), p.producer(7101, 0), p.producer(7102, 2), p.producer(7103, 0), p.producer(7104, 1), p.producer(7105, 0)
	ts := T0 + 3_600_000
	step := func() int64 { ts += 500; return ts }
	c.data(step(), 3, false)                    // 0-2
	e.data(step(), 2, true)                     // 3-4
	c.data(step(), 3, false)                    // 5-7
	e.marker(step(), decode.ControlAbort, 1, 2) // 8: 7104 aborted
	f.data(step(), 1, true)                     // 9: 7105 begins
	p.plain(step(), 2)                          // 10-11
	a.data(step(), 2, true)                     // 12-13: 7100 begins
	b.data(step(), 2, true)                     // 14-15: 7101 begins
	c.data(step(), 1, false)                    // 16
	// The log start: 17 (DeleteRecordsLogStart).
	a.data(step(), 2, true)                      // 17-18
	f.marker(step(), decode.ControlCommit, 0, 2) // 19: 7105's data lies wholly below the log start
	c.data(step(), 2, false)                     // 20-21
	a.marker(step(), decode.ControlAbort, 0, 2)  // 7100 aborted above the log start
	b.data(step(), 1, true)                      //
	b.marker(step(), decode.ControlCommit, 0, 2) // 7101 committed above it
	f.data(step(), 2, true)                      // 7105's next transaction goes on from its last sequence (transaction version 1)
	f.marker(step(), decode.ControlCommit, 0, 2)
	d.data(step(), 2, true) // 7103 begins and is aborted
	c.data(step(), 2, false)
	d.marker(step(), decode.ControlAbort, 0, 3)
	a.data(step(), 1, true) // 7100's next transaction, aborted
	a.marker(step(), decode.ControlAbort, 0, 3)
	c.data(step(), 2, false)
	return p.err
}

// writeExpiry: producers that stop, a pause longer than
// producer.id.expiration.ms, and others after it.
func writeExpiry(p *partition) error {
	ts := T0
	old := []*producer{p.producer(7200, 0), p.producer(7201, 0), p.producer(7202, 4)}
	for i := range 6 {
		ts += 60_000
		old[i%3].data(ts, 2, false)
	}
	t := p.producer(7203, 0) // a transaction completed before the pause
	ts += 1000
	t.data(ts, 1, true)
	ts += 1000
	t.marker(ts, decode.ControlCommit, 0, 1)
	ts += 25 * 3_600_000 // a day and an hour later
	late := []*producer{p.producer(7204, 0), p.producer(7205, 2)}
	for i := range 6 {
		ts += 30_000
		late[i%2].data(ts, 2, false)
	}
	ts += 1000
	old[0].data(ts, 1, false) // 7200 comes back: the broker forgot it
	ts += 1000
	late[0].data(ts, 1, false)
	return p.err
}

// writeBump: epoch bumps after a timeout abort, and transaction-version-2
// markers.
func writeBump(p *partition) error {
	ts := T0 + 7_200_000
	step := func(d int64) int64 { ts += d; return ts }
	a := p.producer(7300, 0)
	a.data(step(1000), 2, true)
	a.data(step(1000), 2, true)
	// transaction.timeout.ms passes: the coordinator aborts with the
	// epoch bumped (KIP-360).
	a.marker(step(60_000), decode.ControlAbort, 1, 5)
	// The producer re-initialises: InitProducerId bumps the epoch again.
	a.epoch, a.seq = 2, 0
	a.data(step(1000), 2, true)
	a.marker(step(1000), decode.ControlCommit, 2, 5)
	a.data(step(1000), 1, true)
	v2 := p.producer(7301, 5) // transaction version 2: every marker bumps
	v2.data(step(1000), 2, true)
	v2.marker(step(1000), decode.ControlCommit, 6, 5)
	v2.epoch, v2.seq = 6, 0
	v2.data(step(1000), 1, true)
	a.data(step(1000), 2, true)
	v2.marker(step(1000), decode.ControlAbort, 7, 5)
	v2.epoch, v2.seq = 7, 0
	v2.data(step(1000), 2, true)
	a.marker(step(1000), decode.ControlCommit, 2, 5)
	v2.marker(step(1000), decode.ControlCommit, 8, 5)
	p.plain(step(1000), 1)
	return p.err
}

// writeRetention: several segments of two producers, the first two of
// which retention deletes.
func writeRetention(p *partition) error {
	a, b, gone := p.producer(7400, 0), p.producer(7401, 1), p.producer(7402, 3)
	ts := T0 + 10_800_000
	gone.data(ts, 2, false) // only in the segments retention deletes
	for i := range 8 {
		ts += 1000
		a.data(ts, 2, false)
		ts += 1000
		b.data(ts, 1, true)
		ts += 1000
		b.marker(ts, []decode.ControlType{decode.ControlCommit, decode.ControlAbort}[i%2], 1, 2)
	}
	ts += 1000
	a.data(ts, 1, false)
	return p.err
}

// writeFollower: idempotent producers and committed transactions (a
// follower's .txnindex entries would be computed per chunk, which this
// writer does not model), one left open.
func writeFollower(p *partition) error {
	a, b, c, t := p.producer(7500, 0), p.producer(7501, 2), p.producer(7502, 0), p.producer(7503, 1)
	ts := T0 + 14_400_000
	for i := range 10 {
		ts += 1000
		a.data(ts, 2, false)
		ts += 1000
		b.data(ts, 1, false)
		ts += 1000
		t.data(ts, 1, true)
		if i%3 == 2 {
			ts += 1000
			t.marker(ts, decode.ControlCommit, 1, 1)
		}
		if i%4 == 0 {
			ts += 1000
			c.data(ts, 3, false)
		}
		if i%5 == 4 {
			ts += 1000
			p.plain(ts, 2)
		}
	}
	return p.err
}
