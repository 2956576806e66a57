// Package decode turns the bytes of Kafka log entries into batches and
// records. It knows bytes, not files: positions in its errors are relative to
// the slice it was given, and the segment package rebases them.
//
// Every entry of a .log file starts with the 12-byte log overhead and a magic
// byte (Records.java, FileLogInputStream):
//
//	offset  size  field
//	0       8     baseOffset (v2) / offset of the (wrapper) message = its LAST offset (v0/v1)
//	8       4     batchLength / size: bytes that follow this field
//	12      4     partitionLeaderEpoch (v2) / crc (v0/v1)
//	16      1     magic
//
// A v2 record batch (DefaultRecordBatch) continues with
//
//	17 crc uint32 (CRC-32C over bytes [21, end))   21 attributes int16
//	23 lastOffsetDelta int32  27 baseTimestamp int64  35 maxTimestamp int64
//	43 producerId int64  51 producerEpoch int16  53 baseSequence int32
//	57 recordsCount int32  61 records (compressed as a whole when codec != none)
//
// # Place in the flow
//
// kseg's packages depend one way: cmd → barrier/{mirror,recovery} → barrier →
// psm → segment/edit → segment → decode.
// decode is the floor: it imports no other kseg package. segment frames
// batches in files and hands their bytes here; psm and barrier read control
// records through Decoder.FirstRecord; cmd renders what comes back. Every
// variable-length field is read through Cursor, whose first failure sticks
// with the failing field's name and absolute position, so a varint Kafka
// rejects is rejected everywhere with the same *CorruptError.
package decode
