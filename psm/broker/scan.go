package broker

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/psm"
	"github.com/kseg/kseg/segment"
)

// Finding is something a view found: a committed offset outside its log, a
// hanging transaction, a record that does not decode, a part of the
// question that cannot be answered. Severity is psm's (error = exit 3 in
// the CLI). Subject names what it is about (a group, a transactional id,
// a topic-partition); Partition the partition directory the evidence is
// in, Offset the offset there (-1 when none).
type Finding struct {
	Kind      string
	Severity  string
	Subject   string
	Partition string
	Offset    int64
	Message   string
}

// Finding kinds. Damage to a log is reported with dump's kind for the
// same defect (crc-mismatch, corrupt-batch, torn-tail, corrupt-records),
// so the same bytes get the same word from every command; the others are
// the views' own (docs/troubleshooting.md has them all).
const (
	// KindCRCMismatch: a batch whose stored CRC does not match its bytes;
	// its records are not applied.
	KindCRCMismatch = "crc-mismatch"
	// KindCorruptBatch: bytes in the middle of a segment that do not frame
	// a batch; the rest of the segment is not read.
	KindCorruptBatch = "corrupt-batch"
	// KindTornTail: the segment's last batch is cut short.
	KindTornTail = "torn-tail"
	// KindCorruptRecords: a batch whose records do not decode, or a
	// record whose key or value does not decode as its internal topic's
	// schema.
	KindCorruptRecords = "corrupt-records"

	KindOffsetBelowLogStart  = "offset-below-log-start"
	KindOffsetAboveLogEnd    = "offset-above-log-end"
	KindHangingTransaction   = "hanging-transaction"
	KindCoordinatorMissing   = "coordinator-partitions-missing"
	KindPartitionNotReplayed = "partition-not-replayed"
)

// HasErrors reports a finding of severity error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == psm.SeverityError {
			return true
		}
	}
	return false
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
func scanPartition(pd *segment.PartitionDir, h scanHandler) (logEnd int64, findings []Finding, err error) {
	name := filepath.Base(filepath.Clean(pd.Path))
	logStart, _, _ := psm.LogDirCheckpoints(pd) // a missing checkpoint means "from the first segment"
	var dec decode.Decoder
	for _, seg := range pd.Segments {
		if seg.Log == "" {
			continue
		}
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
				findings = append(findings, Finding{Kind: KindCRCMismatch, Severity: psm.SeverityError, Subject: name, Partition: pd.Path, Offset: b.BaseOffset,
					Message: fmt.Sprintf("%s: batch at position %d (baseOffset %d): crc mismatch: stored 0x%08x, computed 0x%08x; its records are skipped", file, sc.Pos(), b.BaseOffset, b.CRC, b.ComputeCRC())})
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
				return h.record(&record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value,
					ProducerID: b.ProducerID, Transactional: b.IsTransactional()})
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
func tailFinding(subject, dir, file string, t segment.Tail, offset int64, consequence string) (Finding, bool) {
	kind := KindCorruptBatch
	switch t.Kind {
	case segment.TailClean, segment.TailZeroFilled:
		return Finding{}, false
	case segment.TailTornHeader, segment.TailTornBatch:
		kind = KindTornTail
	}
	msg := fmt.Sprintf("%s: %d bytes from position %d do not frame a batch; %s", file, t.InvalidBytes(), t.ValidBytes, consequence)
	if t.Err != nil {
		msg = fmt.Sprintf("%s (validBytes %d); %s", t.Err.Error(), t.ValidBytes, consequence)
	}
	return Finding{Kind: kind, Severity: psm.SeverityError, Subject: subject, Partition: dir, Offset: offset, Message: msg}, true
}

func corruptRecords(name, path, file string, pos int64, b *decode.Batch, err error) Finding {
	return Finding{Kind: KindCorruptRecords, Severity: psm.SeverityError, Subject: name, Partition: path, Offset: b.BaseOffset,
		Message: fmt.Sprintf("%s: batch at position %d (baseOffset %d): %v; its remaining records are skipped", file, pos, b.BaseOffset, err)}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
