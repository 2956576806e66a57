package decode

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Field is one annotated byte range of an entry, for showing an operator
// the bytes of a batch field by field (kseg explain).
type Field struct {
	Pos   int    // byte position within the entry; within the decompressed records when Decompressed
	Len   int    // bytes
	Name  string // Kafka's field name
	Value string // decoded value, human readable
	Depth int    // 0 batch header, 1 record, 2 header of a record
	// Decompressed marks a field that exists only after decompression:
	// Pos counts bytes of the decompressed records section.
	Decompressed bool
}

// Layout annotates every field of the entry b (a parsed batch): the header,
// and each record with its varints, key, value and headers. Compressed
// records are annotated at their decompressed positions. The last field
// may be a "(damaged)" range when the entry does not decode; the error is
// returned with it.
func (d *Decoder) Layout(b *Batch) ([]Field, error) {
	raw := b.Raw
	var fs []Field
	be := binary.BigEndian
	add := func(pos, n int, name, val string) { fs = append(fs, Field{Pos: pos, Len: n, Name: name, Value: val}) }
	if b.IsLegacy() {
		// The log overhead of a legacy entry holds the message's offset
		// (a wrapper's LAST inner offset) and its size.
		add(0, 8, "offset", fmt.Sprint(b.BaseOffset))
		add(8, 4, "size", fmt.Sprintf("%d (entry is %d bytes)", b.BatchLength, b.Size()))
		add(12, 4, "crc", crcText(b))
		add(16, 1, "magic", fmt.Sprint(b.Magic))
		add(17, 1, "attributes", fmt.Sprintf("0x%02x (%s, %s)", b.Attributes, b.Compression(), b.TimestampType()))
		p := 18
		if b.Magic == 1 {
			add(18, 8, "timestamp", fmt.Sprint(int64(be.Uint64(raw[18:]))))
			p = 26
		}
		for _, name := range []string{"key", "value"} {
			n := int32(be.Uint32(raw[p:]))
			add(p, 4, name+"Length", fmt.Sprint(n))
			p += 4
			if n > 0 {
				add(p, int(n), name, preview(raw[p:p+int(n)]))
				p += int(n)
			}
		}
		return fs, nil
	}
	add(0, 8, "baseOffset", fmt.Sprint(b.BaseOffset))
	add(8, 4, "batchLength", fmt.Sprintf("%d (entry is %d bytes)", b.BatchLength, b.Size()))
	add(12, 4, "partitionLeaderEpoch", fmt.Sprint(b.PartitionLeaderEpoch))
	add(16, 1, "magic", "2")
	add(17, 4, "crc", crcText(b))
	add(21, 2, "attributes", fmt.Sprintf("0x%04x (%s)", uint16(b.Attributes), attrText(b)))
	add(23, 4, "lastOffsetDelta", fmt.Sprintf("%d (lastOffset %d)", b.LastOffsetDelta, b.LastOffset()))
	bt := fmt.Sprint(b.BaseTimestamp)
	if _, ok := b.DeleteHorizonMs(); ok {
		bt += " (delete horizon)"
	}
	add(27, 8, "baseTimestamp", bt)
	add(35, 8, "maxTimestamp", fmt.Sprint(b.MaxTimestamp))
	add(43, 8, "producerId", fmt.Sprint(b.ProducerID))
	add(51, 2, "producerEpoch", fmt.Sprint(b.ProducerEpoch))
	add(53, 4, "baseSequence", fmt.Sprintf("%d (lastSequence %d)", b.BaseSequence, b.LastSequence()))
	add(57, 4, "recordsCount", fmt.Sprint(b.RecordCount))
	if b.RecordCount <= 0 || len(raw) == RecordBatchOverhead {
		return fs, nil
	}
	data := raw[RecordBatchOverhead:]
	base := RecordBatchOverhead
	compressed := b.Compression() != CompressionNone
	if compressed {
		add(RecordBatchOverhead, len(data), "records", fmt.Sprintf("%d bytes %s-compressed", len(data), b.Compression()))
		var err error
		d.buf, err = d.decompress(d.buf[:0], b.Compression(), b.Magic, data)
		if err != nil {
			return fs, err
		}
		data = d.buf
		base = 0
	}
	c := NewCursor(data, 0)
	for i := int32(0); i < b.RecordCount && c.Len() > 0; i++ {
		start := int(c.Pos())
		rf, err := recordLayout(&c, b, int(i))
		for _, f := range rf {
			f.Pos += base
			f.Decompressed = compressed
			fs = append(fs, f)
		}
		if err != nil {
			fs = append(fs, Field{Pos: base + start, Len: len(data) - start, Name: "(damaged)", Value: err.Error(), Depth: 1, Decompressed: compressed})
			return fs, err
		}
	}
	return fs, nil
}

func crcText(b *Batch) string {
	if b.CRCValid() {
		return fmt.Sprintf("%d (0x%08x, valid)", b.CRC, b.CRC)
	}
	c := b.ComputeCRC()
	return fmt.Sprintf("%d (0x%08x) INVALID: computed %d (0x%08x)", b.CRC, b.CRC, c, c)
}

func attrText(b *Batch) string {
	parts := []string{"compression " + b.Compression().String(), b.TimestampType().String()}
	if b.IsTransactional() {
		parts = append(parts, "transactional")
	}
	if b.IsControl() {
		parts = append(parts, "control")
	}
	if _, ok := b.DeleteHorizonMs(); ok {
		parts = append(parts, "hasDeleteHorizonMs")
	}
	return strings.Join(parts, ", ")
}

// preview shows at most 32 bytes of a value: quoted when printable ASCII,
// hex otherwise.
func preview(v []byte) string {
	s := v
	more := ""
	if len(s) > 32 {
		s, more = s[:32], fmt.Sprintf("… (%d bytes)", len(v))
	}
	for _, c := range s {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%x%s", s, more)
		}
	}
	return fmt.Sprintf("%q%s", s, more)
}

// recordLayout annotates the DefaultRecord at c. Unlike readRecord it
// keeps what it has read when a field fails, so the operator sees the
// bytes up to the damage.
func recordLayout(c *Cursor, b *Batch, idx int) ([]Field, error) {
	var l fieldList
	s := c.Pos()
	length := c.Varint("length")
	if err := c.Err(); err != nil {
		return l.fs, err
	}
	l.add(s, int(c.Pos()-s), 1, fmt.Sprintf("record[%d].length", idx), fmt.Sprint(length))
	if length < 0 || int(length) > c.Len() {
		return l.fs, corruptf(s, b.BaseOffset, "length", ErrCorrupt, "record length %d exceeds the %d bytes left", length, c.Len())
	}
	r := c.Sub(int(length), "length")
	end := r.Pos() + int64(length)
	if r.Len() == 0 {
		return l.fs, corruptf(r.Pos(), b.BaseOffset, "attributes", ErrTruncated, "record body is empty")
	}
	s = r.Pos()
	l.add(s, 1, 1, "attributes", fmt.Sprint(r.Int8("attributes")))
	s = r.Pos()
	ts := r.Varlong("timestampDelta")
	if err := r.Err(); err != nil {
		return l.fs, err
	}
	l.add(s, int(r.Pos()-s), 1, "timestampDelta", fmt.Sprintf("%d (timestamp %d)", ts, b.BaseTimestamp+ts))
	od, err := l.varint(&r, "offsetDelta", 1)
	if err != nil {
		return l.fs, err
	}
	l.fs[len(l.fs)-1].Value = fmt.Sprintf("%d (offset %d)", od, b.BaseOffset+int64(od))
	for _, name := range []string{"key", "value"} {
		if err := l.payload(&r, b, name); err != nil {
			return l.fs, err
		}
	}
	if err := l.headers(&r, b); err != nil {
		return l.fs, err
	}
	if r.Len() != 0 {
		return l.fs, corruptf(r.Pos(), b.BaseOffset, "length", ErrCorrupt, "record body ends at %d, length says %d", r.Pos(), end)
	}
	return l.fs, nil
}

// fieldList collects the annotated fields of one record.
type fieldList struct{ fs []Field }

func (l *fieldList) add(pos int64, n, depth int, name, val string) {
	l.fs = append(l.fs, Field{Pos: int(pos), Len: n, Name: name, Value: val, Depth: depth})
}

// varint reads a varint of r and annotates it.
func (l *fieldList) varint(r *Cursor, name string, depth int) (int32, error) {
	s := r.Pos()
	v := r.Varint(name)
	if err := r.Err(); err != nil {
		return 0, err
	}
	l.add(s, int(r.Pos()-s), depth, name, fmt.Sprint(v))
	return v, nil
}

// payload annotates the record's key or value: its varint length and, when
// not null or empty, a preview of its bytes (a control batch's key also
// names its ControlRecordType).
func (l *fieldList) payload(r *Cursor, b *Batch, name string) error {
	n, err := l.varint(r, name+"Length", 1)
	if err != nil || n <= 0 {
		return err
	}
	if int(n) > r.Len() {
		return corruptf(r.Pos(), b.BaseOffset, name, ErrCorrupt, "length %d exceeds the bytes left", n)
	}
	s := r.Pos()
	v := r.Bytes(int(n), name)
	val := preview(v)
	if b.IsControl() && name == "key" && n >= 4 {
		_, t, _ := ParseControlKey(v)
		val += fmt.Sprintf(" (control type %d %s)", int16(t), t)
	}
	l.add(s, int(n), 1, name, val)
	return nil
}

// headers annotates headersCount and each Header (keyLength, key,
// valueLength, value) one level deeper.
func (l *fieldList) headers(r *Cursor, b *Batch) error {
	hc, err := l.varint(r, "headersCount", 1)
	if err != nil {
		return err
	}
	for h := int32(0); h < hc && r.Len() > 0; h++ {
		kl, err := l.varint(r, fmt.Sprintf("header[%d].keyLength", h), 2)
		if err != nil {
			return err
		}
		if kl < 0 || int(kl) > r.Len() {
			return corruptf(r.Pos(), b.BaseOffset, "headerKey", ErrCorrupt, "header key length %d invalid", kl)
		}
		s := r.Pos()
		l.add(s, int(kl), 2, "headerKey", preview(r.Bytes(int(kl), "headerKey")))
		vl, err := l.varint(r, "headerValueLength", 2)
		if err != nil {
			return err
		}
		if vl > 0 {
			if int(vl) > r.Len() {
				return corruptf(r.Pos(), b.BaseOffset, "headerValue", ErrCorrupt, "header value length %d invalid", vl)
			}
			s = r.Pos()
			l.add(s, int(vl), 2, "headerValue", preview(r.Bytes(int(vl), "headerValue")))
		}
	}
	return nil
}
