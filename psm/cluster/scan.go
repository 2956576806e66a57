package cluster

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/finding"
)

// newFinding is a view's finding: something it found (a committed offset
// outside its log, a hanging transaction, a record that does not decode, a
// part of the question that cannot be answered) about subject (a group, a
// transactional id, a topic-partition), with its evidence in the partition
// directory dir at offset (-1 when none). Damage to a log gets dump's kind
// for the same defect (crc-mismatch, corrupt-batch, torn-tail,
// corrupt-records), so the same bytes get the same word from every
// command; docs/troubleshooting.md has every kind.
func newFinding(k finding.Kind, subject, dir string, offset int64, msg string) finding.Finding {
	f := finding.New(k, msg)
	f.Subject, f.PartitionDir, f.Offset = subject, dir, offset
	return f
}

// undecodable is the corrupt-records finding of the record at offset in
// topic's partition directory dir that the decoder does not read (err).
func undecodable(topic, dir string, offset int64, err error) finding.Finding {
	return newFinding(finding.CorruptRecords, topic, dir, offset, fmt.Sprintf("record at offset %d does not decode: %v", offset, err))
}

// record is one record of an internal-topic partition as scanned. Key and
// Value alias the decoder's buffers and are valid during the callback only.
type record struct {
	Offset        int64
	Timestamp     int64
	Key, Value    []byte
	ProducerID    int64
	Transactional bool
}

// scanHandler receives an internal-topic partition in log order.
type scanHandler struct {
	record func(r *record) error
	// marker is a transaction marker (commit or abort) of producer pid.
	marker func(pid int64, commit bool, offset int64)
}

// scanPartition reads every record of a partition directory from its log
// start offset, segment by segment, in bounded memory (segment.Scanner
// windows). Damage in a segment is a finding and ends that segment's scan,
// as the broker's recovery would truncate there; the next segments are
// still read, since a compacted topic's later segments hold newer values.
// It returns the log end offset reached.
func scanPartition(pd *segment.PartitionDir, h scanHandler) (logEnd int64, findings []finding.Finding, err error) {
	name := filepath.Base(filepath.Clean(pd.Path))
	logStart, _, _ := psm.LogDirCheckpoints(pd) // a missing checkpoint means "from the first segment"
	var dec decode.Decoder
	var rec record // one for every record: the handler keeps none
	for seg := range pd.Logs() {
		lf, err := segment.OpenLog(seg.Log)
		if err != nil {
			return logEnd, findings, err
		}
		sc := lf.Scanner(segment.ScanOptions{})
		file := filepath.Base(seg.Log)
		for sc.Next() {
			b := sc.Batch()
			logEnd = max(logEnd, b.NextOffset())
			if b.LastOffset() < logStart {
				continue
			}
			if !b.CRCValid() {
				findings = append(findings, newFinding(finding.CRCMismatch, name, pd.Path, b.BaseOffset,
					fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; its records are skipped", file, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())))
				continue
			}
			if b.IsControl() {
				if h.marker == nil {
					continue
				}
				derr := dec.Records(b, func(r *decode.Record) error {
					c, err := decode.ParseControl(r.Key, r.Value)
					if err == nil && (c.Type == decode.ControlCommit || c.Type == decode.ControlAbort) {
						h.marker(b.ProducerID, c.Type == decode.ControlCommit, r.Offset)
					}
					return nil
				})
				if derr != nil {
					findings = append(findings, corruptRecords(name, pd.Path, file, sc.Pos(), b, derr))
				}
				continue
			}
			derr := dec.Records(b, func(r *decode.Record) error {
				if r.Offset < logStart {
					return nil
				}
				rec = record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value,
					ProducerID: b.ProducerID, Transactional: b.IsTransactional()}
				return h.record(&rec)
			})
			if derr != nil {
				if _, ok := decode.AsCorrupt(derr); !ok {
					lf.Close()
					return logEnd, findings, derr
				}
				findings = append(findings, corruptRecords(name, pd.Path, file, sc.Pos(), b, derr))
			}
		}
		serr := sc.Err()
		t := sc.Tail()
		lf.Close()
		if serr != nil {
			return logEnd, findings, serr
		}
		if f, ok := tailFinding(name, pd.Path, file, t, logEnd, "the rest of the segment is not read"); ok {
			findings = append(findings, f)
		}
	}
	return logEnd, findings, nil
}

// tailFinding is the finding for a segment's tail that does not frame, in
// dump's kinds: torn-tail for a last batch cut short, corrupt-batch for
// bytes that cannot be a batch. A clean or zero-filled tail (a
// preallocated segment) is none. offset is where the valid batches end.
func tailFinding(subject, dir, file string, t segment.Tail, offset int64, consequence string) (finding.Finding, bool) {
	kind := finding.CorruptBatch
	switch t.Kind {
	case segment.TailClean, segment.TailZeroFilled:
		return finding.Finding{}, false
	case segment.TailTornHeader, segment.TailTornBatch:
		kind = finding.TornTail
	}
	msg := fmt.Sprintf("%s: %d bytes from position %d do not frame a batch; %s", file, t.InvalidBytes(), t.ValidBytes, consequence)
	if t.Err != nil {
		msg = fmt.Sprintf("%s (validBytes %d); %s", t.Err.Error(), t.ValidBytes, consequence)
	}
	return newFinding(kind, subject, dir, offset, msg), true
}

func corruptRecords(name, path, file string, pos int64, b *decode.Batch, err error) finding.Finding {
	return newFinding(finding.CorruptRecords, name, path, b.BaseOffset,
		fmt.Sprintf("%s: batch at position %d (baseOffset %d): %v; its remaining records are skipped", file, pos, b.BaseOffset, err))
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
