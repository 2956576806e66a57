package psm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kseg/kseg/decode"
)

// controlReader decodes the first record of a control batch without
// allocating. Control batches are never compressed (MemoryRecords builds
// markers and KRaft/mirror control batches uncompressed), so the record is
// read straight from the batch bytes; a compressed one (which no broker
// writes) goes through decode.Decoder.
type controlReader struct {
	dec   decode.Decoder
	key   []byte
	value []byte
	ts    int64
	found bool
	fn    func(*decode.Record) error
}

var errStopRecords = errors.New("stop")

func newControlReader() *controlReader {
	c := &controlReader{}
	c.fn = func(r *decode.Record) error {
		c.key, c.value, c.ts, c.found = r.Key, r.Value, r.Timestamp, true
		return errStopRecords
	}
	return c
}

// first reads the first record's key, value and timestamp
// (Record.timestamp(): maxTimestamp for LogAppendTime batches).
func (c *controlReader) first(b *decode.Batch) (key, value []byte, ts int64, err error) {
	if b.RecordCount <= 0 {
		return nil, nil, 0, fmt.Errorf("control batch at %d has no records", b.BaseOffset)
	}
	if b.Compression() != decode.CompressionNone {
		c.found = false
		err := c.dec.Records(b, c.fn)
		if err != nil && !errors.Is(err, errStopRecords) {
			return nil, nil, 0, err
		}
		if !c.found {
			return nil, nil, 0, fmt.Errorf("control batch at %d: no record decoded", b.BaseOffset)
		}
		return c.key, c.value, c.ts, nil
	}
	data := b.Raw[decode.RecordBatchOverhead:]
	p := 0
	varint := func(field string) (int64, error) {
		v, n := binary.Varint(data[p:])
		if n <= 0 {
			return 0, &decode.CorruptError{Pos: int64(decode.RecordBatchOverhead + p), BaseOffset: b.BaseOffset, Field: field,
				Err: fmt.Errorf("%w: invalid varint", decode.ErrCorrupt)}
		}
		p += n
		return v, nil
	}
	bytesField := func(field string) ([]byte, error) {
		n, err := varint(field)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		if n > int64(len(data)-p) {
			return nil, &decode.CorruptError{Pos: int64(decode.RecordBatchOverhead + p), BaseOffset: b.BaseOffset, Field: field,
				Err: fmt.Errorf("%w: length %d exceeds the %d bytes left", decode.ErrCorrupt, n, len(data)-p)}
		}
		v := data[p : p+int(n)]
		p += int(n)
		return v, nil
	}
	// DefaultRecord: length, attributes, timestampDelta, offsetDelta, key, value, headers.
	if _, err = varint("length"); err != nil {
		return
	}
	if p >= len(data) {
		return nil, nil, 0, &decode.CorruptError{Pos: int64(decode.RecordBatchOverhead + p), BaseOffset: b.BaseOffset, Field: "attributes",
			Err: fmt.Errorf("%w: record ends early", decode.ErrTruncated)}
	}
	p++ // attributes
	tsDelta, err := varint("timestampDelta")
	if err != nil {
		return
	}
	if _, err = varint("offsetDelta"); err != nil {
		return
	}
	if key, err = bytesField("keyLength"); err != nil {
		return
	}
	if value, err = bytesField("valueLength"); err != nil {
		return
	}
	ts = b.BaseTimestamp + tsDelta
	if b.TimestampType() == decode.LogAppendTime {
		ts = b.MaxTimestamp
	}
	return key, value, ts, nil
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
			m.Report(Anomaly{Kind: KindInvalidControl, Severity: SeverityError, Offset: b.BaseOffset, ProducerID: b.ProducerID,
				Message: fmt.Sprintf("%s: control batch of producer %d: %v; the broker's recovery stops here; batch skipped", batchWhere(file, pos, b.BaseOffset), b.ProducerID, err)})
		}
		return nil, 0, false
	}
	ver, typ, err := decode.ParseControlKey(key)
	if err != nil {
		if b.HasProducerID() {
			m.Report(Anomaly{Kind: KindInvalidControl, Severity: SeverityError, Offset: b.BaseOffset, ProducerID: b.ProducerID,
				Message: fmt.Sprintf("%s: control batch of producer %d: %v; the broker's recovery stops here (InvalidRecordException); batch skipped", batchWhere(file, pos, b.BaseOffset), b.ProducerID, err)})
		}
		return nil, 0, false
	}
	switch typ {
	case decode.ControlAbort, decode.ControlCommit, decode.ControlMirrorPidReset:
		c, err := decode.ParseControl(key, value)
		if err != nil {
			if typ == decode.ControlMirrorPidReset {
				// isMirrorPidResetBatch looks at the key only: still a barrier.
				m.Report(Anomaly{Kind: KindInvalidControl, Severity: SeverityWarning, Offset: b.BaseOffset, ProducerID: pidOf(b),
					Message: fmt.Sprintf("%s: MIRROR_PID_RESET barrier has a value kseg cannot decode (%v); applied as a barrier (the prototype tests only the key's type)", batchWhere(file, pos, b.BaseOffset), err)})
				m.control = decode.Control{KeyVersion: ver, Type: typ}
				return &m.control, ts, true
			}
			if b.HasProducerID() {
				m.Report(Anomaly{Kind: KindInvalidControl, Severity: SeverityError, Offset: b.BaseOffset, ProducerID: b.ProducerID,
					Message: fmt.Sprintf("%s: %s marker: %v; the broker's recovery stops here (InvalidRecordException); batch skipped", batchWhere(file, pos, b.BaseOffset), typ, err)})
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
