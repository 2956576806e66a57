package psm

import (
	"fmt"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/segment/finding"
)

// controlReader reads the first record of a control batch through
// decode.Decoder.FirstRecord, which checks it as the broker's
// ProducerAppendInfo.append does (DefaultRecord.readFrom) and allocates
// nothing for the uncompressed batches every broker writes.
type controlReader struct {
	dec decode.Decoder
}

func newControlReader() *controlReader { return &controlReader{} }

// first reads the first record's key, value and timestamp
// (Record.timestamp(): maxTimestamp for LogAppendTime batches).
func (c *controlReader) first(b *decode.Batch) (key, value []byte, ts int64, err error) {
	r, err := c.dec.FirstRecord(b)
	if err != nil {
		return nil, nil, 0, err
	}
	if r == nil {
		return nil, nil, 0, fmt.Errorf("control batch at %d has no records", b.BaseOffset)
	}
	return r.Key, r.Value, r.Timestamp, nil
}

// batchWhere names a batch for messages: "<file>: batch at position P
// (baseOffset B)", or "batch at offset B" when the file is unknown.
func batchWhere(file string, pos, baseOffset int64) string {
	if file == "" || pos < 0 {
		return fmt.Sprintf("batch at offset %d", baseOffset)
	}
	return fmt.Sprintf("%s: batch at position %d (baseOffset %d)", file, pos, baseOffset)
}

// decodeControl reads the control record of b. Transaction markers and
// barriers are decoded in full; other types keep only their key (the PSM
// ignores them). ok is false when the batch must be skipped; the reason is
// reported as an anomaly when the batch has a producer id.
func (m *Manager) decodeControl(b *decode.Batch, file string, pos int64) (*decode.Control, int64, bool) {
	if m.ctl == nil {
		m.ctl = newControlReader()
	}
	key, value, ts, err := m.ctl.first(b)
	if err != nil {
		if b.HasProducerID() {
			m.Report(anomaly(finding.InvalidControl, b.BaseOffset, b.ProducerID,
				fmt.Sprintf("%s: control batch of producer %d: %v; the broker's recovery stops here; batch skipped", batchWhere(file, pos, b.BaseOffset), b.ProducerID, err)))
		}
		return nil, 0, false
	}
	ver, typ, err := decode.ParseControlKey(key)
	if err != nil {
		if b.HasProducerID() {
			m.Report(anomaly(finding.InvalidControl, b.BaseOffset, b.ProducerID,
				fmt.Sprintf("%s: control batch of producer %d: %v; the broker's recovery stops here (InvalidRecordException); batch skipped", batchWhere(file, pos, b.BaseOffset), b.ProducerID, err)))
		}
		return nil, 0, false
	}
	switch {
	case typ == decode.ControlMirrorPidReset && b.HasProducerID():
		// Not a barrier (barrier.md §4.3): EndTransactionMarker.deserialize
		// rejects the type before it reads the value; applyControl reports it.
		m.control = decode.Control{KeyVersion: ver, Type: typ}
	case typ == decode.ControlAbort, typ == decode.ControlCommit, typ == decode.ControlMirrorPidReset:
		c, err := decode.ParseControl(key, value)
		if err != nil {
			if typ == decode.ControlMirrorPidReset {
				// isMirrorPidResetBatch looks at the key only: still a barrier.
				m.Report(anomaly(finding.InvalidBarrierValue, b.BaseOffset, pidOf(b),
					fmt.Sprintf("%s: MIRROR_PID_RESET barrier has a value kseg cannot decode (%v); applied as a barrier (the prototype tests only the key's type)", batchWhere(file, pos, b.BaseOffset), err)))
				m.control = decode.Control{KeyVersion: ver, Type: typ}
				return &m.control, ts, true
			}
			if b.HasProducerID() {
				m.Report(anomaly(finding.InvalidControl, b.BaseOffset, b.ProducerID,
					fmt.Sprintf("%s: %s marker: %v; the broker's recovery stops here (InvalidRecordException); batch skipped", batchWhere(file, pos, b.BaseOffset), typ, err)))
			}
			return nil, 0, false
		}
		m.control = c
	default:
		m.control = decode.Control{KeyVersion: ver, Type: typ}
	}
	return &m.control, ts, true
}

// ApplyBatch applies b in log order, decoding the record of a control
// batch itself (without allocating). A control record that does not decode
// is reported as an invalid-control anomaly and the batch is skipped, as
// Rebuild does.
func (m *Manager) ApplyBatch(b *decode.Batch) error {
	if b.IsControl() && b.RecordCount > 0 {
		ctl, ts, ok := m.decodeControl(b, "", -1)
		if !ok {
			m.mapEndOffset = b.NextOffset()
			return nil
		}
		return m.ApplyWithTimestamp(b, ctl, ts)
	}
	return m.ApplyWithTimestamp(b, nil, b.MaxTimestamp)
}
