package clustertest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/decode"
	"github.com/kseg/kseg/decode/schema"
	"github.com/kseg/kseg/segment"
)

// Meta encodes a KRaft metadata record (AbstractApiMessageSerde framing:
// frame version 1, apiKey, version 0, then the message) with
// decode/schema's writer, from field values by Kafka's field names. Fields
// not given take their schema default. Values are typed as the schema
// reader returns them: int32, int64, int16, int8, bool, string,
// schema.UUID, []any, *schema.Struct.
func Meta(name string, fields map[string]any) []byte {
	m := schema.Lookup(name)
	if m == nil {
		panic("no metadata record " + name)
	}
	body, err := schema.Encode(m, structOf(m.Fields, fields))
	if err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	v := binary.AppendUvarint(nil, 1)
	v = binary.AppendUvarint(v, uint64(m.APIKey))
	v = binary.AppendUvarint(v, 0)
	return append(v, body...)
}

// structOf builds a version-0 struct from values by field name.
func structOf(defs []*schema.Field, fields map[string]any) *schema.Struct {
	s := &schema.Struct{}
	for _, f := range defs {
		if v, ok := fields[f.Name]; ok {
			if sub, ok := v.(map[string]any); ok {
				v = structOf(f.Fields, sub)
			}
			if subs, ok := v.([]map[string]any); ok {
				arr := make([]any, len(subs))
				for i, x := range subs {
					arr[i] = structOf(f.Fields, x)
				}
				v = arr
			}
			s.Fields = append(s.Fields, schema.FieldValue{Field: f, Value: v})
		}
	}
	return s
}

// Ints is an []int32 field value.
func Ints(xs ...int32) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// MetaBatch is one batch of metadata records at baseOffset, as the KRaft
// leader appends them (no producer, leader epoch epoch).
func MetaBatch(baseOffset, ts int64, epoch int32, values ...[]byte) []byte {
	specs := make([]decode.RecordSpec, len(values))
	for i, v := range values {
		specs[i] = decode.RecordSpec{OffsetDelta: int32(i), Timestamp: ts, Value: v}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: baseOffset, PartitionLeaderEpoch: epoch, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, specs)
	if err != nil {
		panic(err)
	}
	return b
}

// snapshotControl is the control batch of a SnapshotHeaderRecord v0
// (version, lastContainedLogTimestamp, no tagged fields) or a
// SnapshotFooterRecord v0. Like every batch of a KRaft snapshot it carries
// the snapshot's epoch as its partitionLeaderEpoch: RecordsSnapshotWriter
// appends the header, the data and the footer through one
// BatchAccumulator created with snapshotId.epoch(), so a reader (kseg dump
// among them) sees one epoch throughout and no leader-epoch regression.
func snapshotControl(offset, ts int64, epoch int32, typ decode.ControlType) []byte {
	var v []byte
	if typ == decode.ControlSnapshotHeader {
		v = binary.BigEndian.AppendUint16(nil, 0)
		v = binary.BigEndian.AppendUint64(v, uint64(ts))
		v = append(v, 0)
	} else {
		v = []byte{0, 0, 0}
	}
	b, err := decode.AppendBatch(nil, decode.BatchSpec{BaseOffset: offset, PartitionLeaderEpoch: epoch, Control: true, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]decode.RecordSpec{{Timestamp: ts, Key: decode.AppendControlKey(nil, typ), Value: v}})
	if err != nil {
		panic(err)
	}
	return b
}

// WriteMetadata writes __cluster_metadata-0 in logDir: the log of batches
// (each a []byte of MetaBatch) and, when snapshotAt > 0, the KRaft
// snapshot <snapshotAt>-<epoch>.checkpoint holding every record of the
// batches below snapshotAt, framed by SNAPSHOT_HEADER and SNAPSHOT_FOOTER
// as a KRaft snapshot writer frames them.
func WriteMetadata(logDir string, ts int64, epoch int32, snapshotAt int64, batches ...[]byte) (string, error) {
	dir, err := WritePartition(logDir, "__cluster_metadata", 0, &[16]byte{15: 1}, batches...)
	if err != nil || snapshotAt <= 0 {
		return dir, err
	}
	var values [][]byte
	var d decode.Decoder
	for _, raw := range batches {
		b, err := decode.ParseBatch(raw)
		if err != nil {
			return "", err
		}
		if err := d.Records(&b, func(r *decode.Record) error {
			if r.Offset < snapshotAt {
				values = append(values, append([]byte(nil), r.Value...))
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	// A snapshot's records are numbered from 0 (the header), as
	// RecordsSnapshotWriter appends them.
	file := snapshotControl(0, ts, epoch, decode.ControlSnapshotHeader)
	file = append(file, MetaBatch(1, ts, epoch, values...)...)
	file = append(file, snapshotControl(int64(1+len(values)), ts, epoch, decode.ControlSnapshotFooter)...)
	return dir, os.WriteFile(filepath.Join(dir, segment.MetadataSnapshotName(snapshotAt, epoch)), file, 0o644)
}
