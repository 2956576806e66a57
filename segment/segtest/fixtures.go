package segtest

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kseg/kseg/decode"
)

const (
	none   = decode.CompressionNone
	gzip   = decode.CompressionGzip
	snappy = decode.CompressionSnappy
	lz4    = decode.CompressionLZ4
	zstd   = decode.CompressionZstd
)

// orders builds orders-0: v2 data from three idempotent producers and from
// non-idempotent ones, every codec, headers, null keys and values, one
// LogAppendTime batch, one batch from a producer whose clock is behind,
// a sequence that wraps at 2^31-1, two leader epochs, segments of at most
// 2 KiB with an index entry every 512 bytes, a producer snapshot at every
// roll and at the log end.
func (g *gen) orders(dir string) error {
	p, err := g.open(dir, partitionOpts{segmentBytes: 2048, indexInterval: IndexIntervals["orders-0"], topic: 1, snapshots: true})
	if err != nil {
		return err
	}
	p.epoch = 3
	seq := map[int64]int32{1000: 0, 1001: 0, 1002: math.MaxInt32 - 1}
	epoch := map[int64]int16{1000: 0, 1001: 3, 1002: 0}
	codecs := []decode.Compression{none, gzip, snappy, lz4, zstd}
	order := 0
	for i := range 30 {
		if i == 16 {
			p.epoch = 5 // a new leader
		}
		pid := [...]int64{1000, -1, 1001, 1000}[i%4]
		if i == 7 || i == 23 {
			pid = 1002
		}
		ts := T0 + int64(i)*1000
		if i == 12 {
			ts = T0 - 60_000 // a producer whose clock is a minute behind
		}
		n := 1 + i%4
		var recs []decode.RecordSpec
		for j := range n {
			order++
			key := fmt.Appendf(nil, "order-%d", order)
			value := fmt.Appendf(nil, `{"order":%d,"sku":"SKU-%03d","qty":%d}`, order, order*7%1000, 1+order%5)
			if order%7 == 3 {
				key = nil
			}
			if order%11 == 5 {
				value = nil // a tombstone
			}
			rts := ts + int64(j)
			if i == 10 {
				rts = ts + int64([...]int{5, 1, 3}[j%3]) // not in timestamp order
			}
			var hs []decode.Header
			if i%3 == 0 {
				hs = []decode.Header{hdr("trace-id", fmt.Appendf(nil, "t-%04d", order)), hdr("source", nil)}
			}
			recs = append(recs, rec(int32(j), rts, key, value, hs...))
		}
		spec := decode.BatchSpec{Compression: codecs[i%5], ProducerID: pid, ProducerEpoch: -1, BaseSequence: -1}
		if pid >= 0 {
			spec.ProducerEpoch = epoch[pid]
			spec.BaseSequence = seq[pid]
			seq[pid] = decode.IncrementSequence(seq[pid], int32(n))
		}
		if i == 20 {
			// The topic switched to LogAppendTime: the broker stamped the
			// batch's maxTimestamp and kept the producer's record deltas.
			spec.LogAppendTime = true
			spec.MaxTimestamp = i64(ts + 2500)
		}
		p.batch(spec, recs...)
	}
	return p.close()
}

// txn builds txn-0: transactions from four producers over two segments —
// committed (coordinatorEpoch 5, then 6 after an epoch bump), aborted (one
// starting in the first segment and aborted in the second, one inside the
// second; both in the second segment's .txnindex with the last stable
// offset pinned by a transaction still open), a non-transactional batch,
// and one transaction still open at the end. The segment rolls by time
// (segment.ms = 1 hour).
func (g *gen) txn(dir string) error {
	p, err := g.open(dir, partitionOpts{segmentMs: 3_600_000, indexInterval: IndexIntervals["txn-0"], topic: 2, snapshots: true})
	if err != nil {
		return err
	}
	p.epoch = 7
	ts := T0
	data := func(pid int64, epoch int16, baseSeq int32, codec decode.Compression, n int) {
		ts += 100
		recs := make([]decode.RecordSpec, n)
		for j := range recs {
			recs[j] = rec(int32(j), ts+int64(j), fmt.Appendf(nil, "acct-%d", pid%100+int64(j)),
				fmt.Appendf(nil, `{"pid":%d,"seq":%d}`, pid, baseSeq+int32(j)))
		}
		p.batch(decode.BatchSpec{Compression: codec, Transactional: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: baseSeq}, recs...)
	}
	marker := func(pid int64, epoch int16, t decode.ControlType, coordinatorEpoch int32) {
		ts += 100
		p.batch(decode.BatchSpec{Transactional: true, Control: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
			rec(0, ts, decode.AppendControlKey(nil, t), decode.AppendEndTxnMarkerValue(nil, coordinatorEpoch)))
	}
	data(2000, 0, 0, none, 2) // 0-1   txn A (2000) starts
	data(2001, 0, 0, gzip, 3) // 2-4   txn B (2001) starts
	ts += 100                 //       a plain producer
	p.batch(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		rec(0, ts, s("plain"), s("not transactional"))) // 5
	data(2000, 0, 2, none, 1)                // 6
	marker(2000, 0, decode.ControlCommit, 5) // 7     A committed
	data(2002, 1, 0, snappy, 2)              // 8-9   txn C (2002) starts, never ends
	data(2001, 0, 3, none, 1)                // 10
	ts += 3_600_000                          //       an hour later: segment.ms rolls at 11
	marker(2001, 0, decode.ControlAbort, 5)  // 11    B aborted: first 2, LSO 8 (C is open)
	data(2003, 0, 0, lz4, 2)                 // 12-13 txn D (2003)
	marker(2003, 0, decode.ControlAbort, 6)  // 14    D aborted: first 12, LSO 8
	data(2000, 1, 0, zstd, 1)                // 15    A's producer, bumped epoch
	marker(2000, 1, decode.ControlCommit, 6) // 16    committed
	data(2002, 1, 2, none, 2)                // 17-18 C goes on, still open at the end
	return p.close()
}

// control builds control-0: every control record type. A KRaft batch with
// LEADER_CHANGE, KRAFT_VERSION and KRAFT_VOTERS (value sizes 19, 5, 55),
// SNAPSHOT_HEADER (11) and SNAPSHOT_FOOTER (3) batches around a data
// batch, a committed and an aborted transaction (COMMIT and ABORT markers,
// the abort in the .txnindex), the KIP-1279 MIRROR_PID_RESET barrier with
// its version-only value and with SourceClusterId, and a control record of
// unknown type 9.
func (g *gen) control(dir string) error {
	p, err := g.open(dir, partitionOpts{indexInterval: IndexIntervals["control-0"], topic: 3, snapshots: true})
	if err != nil {
		return err
	}
	p.epoch = 1
	ts := T0
	kraft := func(recs ...decode.RecordSpec) {
		p.batch(decode.BatchSpec{Control: true, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs...)
	}
	ctl := func(d int32, t decode.ControlType, value []byte) decode.RecordSpec {
		return rec(d, ts, decode.AppendControlKey(nil, t), value)
	}
	var dirID [16]byte
	for i := range dirID {
		dirID[i] = byte(0xa0 + i)
	}
	kraft(ctl(0, decode.ControlLeaderChange, leaderChangeValue(1, []int32{1}, []int32{1})),
		ctl(1, decode.ControlKRaftVersion, kraftVersionValue(1)),
		ctl(2, decode.ControlKRaftVoters, votersValue(1, dirID, "CONTROLLER", "localhost", 9093, 0, 1))) // 0-2
	ts += 10
	kraft(ctl(0, decode.ControlSnapshotHeader, snapshotHeaderValue(T0-1000))) // 3
	ts += 10
	p.batch(decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		rec(0, ts, s("metadata"), s("a data record between header and footer"))) // 4
	ts += 10
	kraft(ctl(0, decode.ControlSnapshotFooter, snapshotFooterValue())) // 5
	ts += 10
	p.batch(decode.BatchSpec{Transactional: true, ProducerID: 3000, ProducerEpoch: 0, BaseSequence: 0},
		rec(0, ts, s("k1"), s("committed 1")), rec(1, ts+1, s("k2"), s("committed 2"))) // 6-7
	ts += 10
	p.batch(decode.BatchSpec{Transactional: true, Control: true, ProducerID: 3000, ProducerEpoch: 0, BaseSequence: -1},
		ctl(0, decode.ControlCommit, decode.AppendEndTxnMarkerValue(nil, 2))) // 8
	ts += 10
	p.batch(decode.BatchSpec{Transactional: true, ProducerID: 3001, ProducerEpoch: 4, BaseSequence: 0},
		rec(0, ts, s("k3"), s("aborted"))) // 9
	ts += 10
	p.batch(decode.BatchSpec{Transactional: true, Control: true, ProducerID: 3001, ProducerEpoch: 4, BaseSequence: -1},
		ctl(0, decode.ControlAbort, decode.AppendEndTxnMarkerValue(nil, 2))) // 10
	ts += 10
	kraft(ctl(0, decode.ControlMirrorPidReset, decode.AppendMirrorPidResetValue(nil, nil))) // 11: 75 bytes
	ts += 10
	src := "bhKx9kzDTW6IYAX6MriLZQ"
	kraft(ctl(0, decode.ControlMirrorPidReset, decode.AppendMirrorPidResetValue(nil, &src))) // 12: 98 bytes
	ts += 10
	kraft(ctl(0, decode.ControlType(9), []byte{0, 0, 0})) // 13: unknown type
	return p.close()
}

// compacted builds compacted-0 as the log cleaner leaves it: a batch whose
// surviving records have gaps (offsetDelta 1 and 4 of 0..4), an empty
// (count 0) batch kept for an idempotent producer's state, a whole batch
// gone (offsets 8..11), a gzip batch with one survivor, a batch rebuilt
// with a delete horizon (tombstone, negative timestamp deltas), an empty
// transaction-marker batch of a producer never seen before, and a last
// intact batch.
func (g *gen) compacted(dir string) error {
	p, err := g.open(dir, partitionOpts{indexInterval: IndexIntervals["compacted-0"], topic: 4, snapshots: true})
	if err != nil {
		return err
	}
	p.epoch = 0
	plain := decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	// 0..4: offsets 0, 2 and 3 were superseded.
	sp := plain
	sp.LastOffsetDelta = i32(4)
	p.batch(sp, rec(1, T0+1, s("user-1"), s("alice v2")), rec(4, T0+4, s("user-2"), s("bob v2")))
	// 5..7: an idempotent producer's batch, every record superseded; the
	// header stays for its state (DefaultRecordBatch.writeEmptyHeader).
	p.batch(decode.BatchSpec{ProducerID: 5000, ProducerEpoch: 0, BaseSequence: 10,
		LastOffsetDelta: i32(2), BaseTimestamp: i64(decode.NoTimestamp), MaxTimestamp: i64(T0 + 7)})
	p.next = 12 // 8..11 removed entirely
	gz := plain
	gz.Compression = gzip
	gz.LastOffsetDelta = i32(2)
	p.batch(gz, rec(2, T0+14, s("user-3"), s("carol v3"))) // 12..14, only 14 left
	// 15..17 kept a tombstone (15) and a value (17); the cleaner set the
	// delete horizon (now + delete.retention.ms), so record timestamps are
	// before the base timestamp.
	dh := plain
	dh.DeleteHorizonMs = i64(T0 + 86_400_000)
	dh.LastOffsetDelta = i32(2)
	p.batch(dh, rec(0, T0+15, s("user-1"), nil), rec(2, T0+17, s("user-4"), s("dave v1")))
	// 18: an ABORT marker whose transaction data is gone, emptied.
	p.batch(decode.BatchSpec{Transactional: true, Control: true, ProducerID: 5001, ProducerEpoch: 2, BaseSequence: -1,
		LastOffsetDelta: i32(0), BaseTimestamp: i64(decode.NoTimestamp), MaxTimestamp: i64(T0 + 18)})
	p.batch(plain, rec(0, T0+19, s("user-5"), s("erin v1")), rec(1, T0+20, s("user-2"), s("bob v3"))) // 19..20
	return p.close()
}

// legacyV0 builds legacy-v0-0 as a 0.9 broker wrote it: magic 0 messages
// (with null keys and values) and gzip, snappy and lz4 wrappers (absolute
// inner offsets; lz4 with the magic-0 header checksum), no timestamps (so
// an empty time index), no leader epochs or snapshots.
func (g *gen) legacyV0(dir string) error {
	p, err := g.open(dir, partitionOpts{indexInterval: IndexIntervals["legacy-v0-0"]})
	if err != nil {
		return err
	}
	msg := func(key, value []byte) decode.LegacySpec { return decode.LegacySpec{Magic: 0, Key: key, Value: value} }
	p.legacy(msg(s("k0"), s("v0")))
	p.legacy(msg(nil, s("v1 with a null key")))
	p.legacy(msg(s("k2"), nil))
	for _, c := range []decode.Compression{gzip, snappy, lz4} {
		first := p.next
		var inner []decode.LegacySpec
		for j := range 3 {
			inner = append(inner, msg(fmt.Appendf(nil, "k%d", first+int64(j)), fmt.Appendf(nil, "%s value %d", c, first+int64(j))))
		}
		p.legacy(decode.LegacySpec{Magic: 0, Compression: c, Inner: inner})
	}
	p.legacy(msg(s("k12"), s("last")))
	return p.close()
}

// legacyV1 builds legacy-v1-0 as a 0.10 broker wrote it: magic 1 messages
// with CreateTime timestamps and gzip, snappy and lz4 wrappers (relative
// inner offsets, wrapper timestamp = the largest inner one), one gzip
// wrapper stamped with LogAppendTime, and a message with a null key.
func (g *gen) legacyV1(dir string) error {
	p, err := g.open(dir, partitionOpts{indexInterval: IndexIntervals["legacy-v1-0"]})
	if err != nil {
		return err
	}
	ts := T0
	msg := func(key, value []byte) decode.LegacySpec {
		ts += 10
		return decode.LegacySpec{Magic: 1, Timestamp: ts, Key: key, Value: value}
	}
	p.legacy(msg(s("k0"), s("v0")))
	p.legacy(msg(s("k1"), s("v1")))
	wrapper := func(c decode.Compression, n int, lat bool) {
		first := p.next
		var inner []decode.LegacySpec
		for j := range n {
			inner = append(inner, msg(fmt.Appendf(nil, "k%d", first+int64(j)), fmt.Appendf(nil, "%s value %d", c, first+int64(j))))
		}
		w := decode.LegacySpec{Magic: 1, Compression: c, Inner: inner, Timestamp: ts}
		if lat {
			w.LogAppendTime, w.Timestamp = true, ts+1000
		}
		p.legacy(w)
	}
	wrapper(gzip, 3, false)   // 2..4
	wrapper(snappy, 2, false) // 5..6
	wrapper(lz4, 3, false)    // 7..9
	wrapper(gzip, 2, true)    // 10..11, LogAppendTime
	p.legacy(msg(nil, s("v12 with a null key")))
	return p.close()
}

// ------------------------------------------------------------ KRaft values

// The KRaft control values are flexible-version messages (formats.md
// §6.2): compact arrays and strings (uvarint N+1), raw UUIDs, and a tagged
// field count (00) closing every struct.

func uvarint(b []byte, v int) []byte { return binary.AppendUvarint(b, uint64(v)) }

// leaderChangeValue is LeaderChangeMessage v0.
func leaderChangeValue(leader int32, voters, granting []int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(leader))
	for _, vs := range [][]int32{voters, granting} {
		b = uvarint(b, len(vs)+1)
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
			b = append(b, 0)
		}
	}
	return append(b, 0)
}

// snapshotHeaderValue is SnapshotHeaderRecord v0.
func snapshotHeaderValue(lastContainedLogTimestamp int64) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(lastContainedLogTimestamp))
	return append(b, 0)
}

// snapshotFooterValue is SnapshotFooterRecord v0.
func snapshotFooterValue() []byte { return []byte{0, 0, 0} }

// kraftVersionValue is KRaftVersionRecord v0.
func kraftVersionValue(v int16) []byte {
	return append(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(v)), 0)
}

// votersValue is VotersRecord v0 with one voter and one endpoint.
func votersValue(id int32, dirID [16]byte, listener, host string, port uint16, minV, maxV int16) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = uvarint(b, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(id))
	b = append(b, dirID[:]...)
	b = uvarint(b, 2)
	b = uvarint(b, len(listener)+1)
	b = append(b, listener...)
	b = uvarint(b, len(host)+1)
	b = append(b, host...)
	b = binary.BigEndian.AppendUint16(b, port)
	b = append(b, 0) // endpoint tags
	b = binary.BigEndian.AppendUint16(b, uint16(minV))
	b = binary.BigEndian.AppendUint16(b, uint16(maxV))
	b = append(b, 0)    // KRaftVersionFeature tags
	b = append(b, 0)    // voter tags
	return append(b, 0) // record tags
}

// ------------------------------------------------------------ broken siblings

// broken builds <name>/events-0: six uncompressed batches of an idempotent
// producer (an index entry every 128 bytes), then the named defect:
//
//	crc-mismatch        a value byte of the batch at offset 4 flipped (CRC-32C no longer matches)
//	torn-tail           the log cut in the middle of its last batch (indexes as recovery rebuilds them)
//	zero-tail           4096 zero bytes after the last batch, as a preallocated segment leaves them
//	bad-magic           the magic byte of the batch at offset 6 set to 7
//	negative-count      recordsCount of the batch at offset 4 set to -1 (CRC recomputed)
//	huge-length         batchLength of the batch at offset 6 set to 0x7fffff00
//	bad-varint          a seventh batch whose record's offsetDelta varint has a 5th byte with the MSB set (CRC valid)
//	decompression-bomb  a seventh batch, zstd, that inflates to BombSize zero bytes (CRC valid)
//	index-past-eof      an extra .index entry whose position is 4096 bytes past the end of the log
func (g *gen) broken(name, dir string) error {
	if err := g.brokenBatches(name, dir); err != nil {
		return err
	}
	logPath := filepathJoin(dir, "00000000000000000000.log")
	log, err := readFile(logPath)
	if err != nil {
		return err
	}
	pos, err := entries(log)
	if err != nil {
		return err
	}
	if log, err = damage(name, dir, log, pos); err != nil {
		return err
	}
	if err := writeFile(logPath, log); err != nil {
		return err
	}
	if name == "torn-tail" {
		// A crash leaves the last batch torn; the indexes are what recovery
		// rebuilds for the valid prefix, so the torn tail is the only defect.
		idx, tidx, err := segmentRebuild(logPath)
		if err != nil {
			return err
		}
		if err := writeFile(filepathJoin(dir, "00000000000000000000.index"), idx); err != nil {
			return err
		}
		return writeFile(filepathJoin(dir, "00000000000000000000.timeindex"), tidx)
	}
	return nil
}

// brokenBatches writes the six batches every broken sibling holds, and
// the seventh of bad-varint and decompression-bomb.
func (g *gen) brokenBatches(name, dir string) error {
	p, err := g.open(dir, partitionOpts{indexInterval: IndexIntervals[BrokenPartition], topic: 9})
	if err != nil {
		return err
	}
	p.epoch = 2
	var seq int32
	for i := range 6 {
		ts := T0 + int64(i)*1000
		var recs []decode.RecordSpec
		for j := range 2 {
			off := int64(2*i + j)
			recs = append(recs, rec(int32(j), ts+int64(j), fmt.Appendf(nil, "event-%d", off), fmt.Appendf(nil, "payload %d", off)))
		}
		p.batch(decode.BatchSpec{ProducerID: 9000, ProducerEpoch: 0, BaseSequence: seq}, recs...)
		seq += 2
	}
	one := decode.BatchSpec{ProducerID: 9000, ProducerEpoch: 0, BaseSequence: seq}
	switch name {
	case "bad-varint":
		b := p.build(one, rec(0, T0+6000, s("x"), s("y")))
		// length 11 | attributes | timestampDelta 0 | offsetDelta ff ff ff ff ff 01 | key null | value null | 0 headers
		p.raw(setRecords(b, []byte{0x16, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01, 0x01, 0}))
	case "decompression-bomb":
		b := p.build(one, rec(0, T0+6000, s("x"), s("y")))
		bomb, err := g.codecs.Compress(nil, zstd, 2, make([]byte, BombSize))
		if err != nil {
			return err
		}
		b[22] |= byte(zstd)
		p.raw(setRecords(b, bomb))
	}
	return p.close()
}

// damage plants name's defect in log, whose batches start at pos (the
// .index of index-past-eof is written here).
func damage(name, dir string, log []byte, pos []int) ([]byte, error) {
	switch name {
	case "crc-mismatch":
		log[pos[3]-2] ^= 0x01 // inside the last value of the batch at offset 4
	case "torn-tail":
		log = log[:pos[5]+40]
	case "zero-tail":
		log = append(log, make([]byte, 4096)...)
	case "bad-magic":
		log[pos[3]+16] = 7
	case "negative-count":
		binary.BigEndian.PutUint32(log[pos[2]+57:], 0xffffffff)
		fixCRC(log[pos[2]:pos[3]])
	case "huge-length":
		binary.BigEndian.PutUint32(log[pos[3]+8:], 0x7fffff00)
	case "index-past-eof":
		idxPath := filepathJoin(dir, "00000000000000000000.index")
		idx, err := readFile(idxPath)
		if err != nil {
			return nil, err
		}
		idx = binary.BigEndian.AppendUint32(idx, 11)
		idx = binary.BigEndian.AppendUint32(idx, uint32(len(log)+4096))
		if err := writeFile(idxPath, idx); err != nil {
			return nil, err
		}
	}
	return log, nil
}
