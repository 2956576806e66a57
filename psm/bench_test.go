package psm

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/segtest"
)

var (
	benchOnce  sync.Once
	benchDir   string
	benchBytes int64
	benchErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}

// benchPartition generates a ~100 MB partition once: 4 segments of
// uncompressed 16-record batches from 40 idempotent and 8 transactional
// producers, a COMMIT or ABORT every few transactional batches, and a
// MIRROR_PID_RESET barrier in the middle. Batches are built with
// decode.AppendBatch from templates and re-stamped (offsets, sequences,
// producer, CRC) so generation stays quick.
func benchPartition(b *testing.B) (string, int64) {
	benchOnce.Do(func() {
		root, err := os.MkdirTemp("", "kseg-psm-bench")
		if err != nil {
			benchErr = err
			return
		}
		dir := filepath.Join(root, "bench-0")
		if benchErr = os.Mkdir(dir, 0o755); benchErr != nil {
			return
		}
		recs := make([]decode.RecordSpec, 16)
		for i := range recs {
			recs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: 1_700_000_000_000, Value: make([]byte, 80)}
		}
		idem, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: 1, BaseSequence: 0}, recs)
		txn, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: 1, BaseSequence: 0, Transactional: true}, recs)
		marker := func(commit bool) []byte {
			typ := decode.ControlAbort
			if commit {
				typ = decode.ControlCommit
			}
			out, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: 1, BaseSequence: -1, Transactional: true, Control: true},
				[]decode.RecordSpec{{Timestamp: 1_700_000_000_000, Key: decode.AppendControlKey(nil, typ), Value: decode.AppendEndTxnMarkerValue(nil, 0)}})
			return out
		}
		commit, abort := marker(true), marker(false)
		barrier, _ := decode.AppendBatch(nil, decode.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true},
			[]decode.RecordSpec{{Timestamp: 1_700_000_000_000, Key: decode.AppendControlKey(nil, decode.ControlMirrorPidReset), Value: decode.AppendMirrorPidResetValue(nil, nil)}})

		be := binary.BigEndian
		var buf []byte
		off, ts := int64(0), int64(1_700_000_000_000)
		seqs := map[int64]int32{}
		open := map[int64]int{}
		stamp := func(tmpl []byte, pid int64, seq int32, count int64) {
			start := len(buf)
			buf = append(buf, tmpl...)
			bb := buf[start:]
			be.PutUint64(bb[0:], uint64(off))
			be.PutUint64(bb[27:], uint64(ts))
			be.PutUint64(bb[35:], uint64(ts))
			be.PutUint64(bb[43:], uint64(pid))
			be.PutUint32(bb[53:], uint32(seq))
			be.PutUint32(bb[17:], decode.CRC32C(bb[21:]))
			off += count
			ts += 3
		}
		const segBytes = 25 << 20
		segBase := int64(0)
		flush := func() {
			if benchErr == nil {
				benchErr = os.WriteFile(filepath.Join(dir, segment.FormatOffset(segBase)+".log"), buf, 0o644)
			}
			benchBytes += int64(len(buf))
			buf, segBase = buf[:0], off
		}
		for n := 0; benchBytes+int64(len(buf)) < 100<<20; n++ {
			if n == 30000 {
				// Complete every open transaction first (pitfall 8).
				for pid := int64(1000); pid < 1008; pid++ {
					if open[pid] > 0 {
						stamp(commit, pid, -1, 1)
					}
				}
				stamp(barrier, -1, -1, 1)
				clear(seqs)
				clear(open)
			}
			if n%6 == 5 {
				pid := int64(1000 + n%8)
				stamp(txn, pid, seqs[pid], 16)
				seqs[pid] += 16
				if open[pid]++; open[pid] == 3 {
					if n%4 == 1 {
						stamp(abort, pid, -1, 1)
					} else {
						stamp(commit, pid, -1, 1)
					}
					open[pid] = 0
				}
			} else {
				pid := int64(n % 40)
				stamp(idem, pid, seqs[pid], 16)
				seqs[pid] += 16
			}
			if len(buf) >= segBytes {
				flush()
			}
		}
		flush()
		benchDir = dir
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir, benchBytes
}

// BenchmarkReplay rebuilds the producer state of a ~100 MB partition from
// the log alone (headers only, CRCs verified).
func BenchmarkReplay(b *testing.B) { benchReplay(b, true) }

// BenchmarkReplayNoCRC is BenchmarkReplay without CRC verification: the
// cost of framing and producer-state updates alone.
func BenchmarkReplayNoCRC(b *testing.B) { benchReplay(b, false) }

func benchReplay(b *testing.B, verifyCRC bool) {
	dir, size := benchPartition(b)
	pd := segtest.OpenDir(b, dir)
	opts := DefaultOptions()
	opts.FromSnapshot = SnapshotNone
	opts.VerifyCRC = verifyCRC
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Rebuild(pd, opts)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Barriers) != 1 || r.HasErrors() {
			b.Fatalf("unexpected result: %d barriers, %+v", len(r.Barriers), r.Anomalies)
		}
	}
}
