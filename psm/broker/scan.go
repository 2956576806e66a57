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

// Finding kinds.
const (
	KindCorruptRecord        = "corrupt-record"
	KindCorruptLog           = "corrupt-log"
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
				findings = append(findings, Finding{Kind: KindCorruptLog, Severity: psm.SeverityError, Subject: name, Partition: pd.Path, Offset: b.BaseOffset,
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
		if t.Kind != segment.TailClean && t.Kind != segment.TailZeroFilled {
			msg := fmt.Sprintf("%s: %d bytes from position %d do not frame a batch; not read", file, t.InvalidBytes(), t.ValidBytes)
			if t.Err != nil {
				msg = t.Err.Error() + "; the rest of the segment is not read"
			}
			findings = append(findings, Finding{Kind: KindCorruptLog, Severity: psm.SeverityError, Subject: name, Partition: pd.Path, Offset: logEnd, Message: msg})
		}
	}
	return logEnd, findings, nil
}

func corruptRecords(name, path, file string, pos int64, b *decode.Batch, err error) Finding {
	return Finding{Kind: KindCorruptLog, Severity: psm.SeverityError, Subject: name, Partition: path, Offset: b.BaseOffset,
		Message: fmt.Sprintf("%s: batch at position %d (baseOffset %d): %v; its remaining records are skipped", file, pos, b.BaseOffset, err)}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
