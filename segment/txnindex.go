package segment

import (
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/decode"
)

// AbortedTxnSize is the size of one .txnindex entry (AbortedTxn.TOTAL_SIZE).
const AbortedTxnSize = 34

// AbortedTxnCurrentVersion is AbortedTxn.CURRENT_VERSION.
const AbortedTxnCurrentVersion = 0

// AbortedTxn is one .txnindex entry: a transaction whose ABORT marker is in
// this segment (TransactionIndex, AbortedTxn).
//
//	off 0  int16 version (0)
//	off 2  int64 producerId
//	off 10 int64 firstOffset       first offset of the transaction (maybe in an earlier segment)
//	off 18 int64 lastOffset        offset of the ABORT marker
//	off 26 int64 lastStableOffset  LSO when the marker was written
type AbortedTxn struct {
	// Version is the int16 as stored. Kafka's AbortedTxn#version() reads
	// only the high byte (buffer.get(0)); see KafkaVersion.
	Version          int16
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// KafkaVersion is what Kafka reads and kafka-dump-log prints as the
// version: the high byte of the stored int16, sign-extended.
func (t AbortedTxn) KafkaVersion() int8 { return int8(uint16(t.Version) >> 8) }

// String is AbortedTxn#toString, which Kafka's error messages embed.
func (t AbortedTxn) String() string {
	return fmt.Sprintf("AbortedTxn(version=%d, producerId=%d, firstOffset=%d, lastOffset=%d, lastStableOffset=%d)",
		t.KafkaVersion(), t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
}

// TxnIndex is a decoded .txnindex file.
type TxnIndex struct {
	Path    string
	Length  int64
	Entries []AbortedTxn
	// TrailingBytes is the partial entry at the end. Kafka's iterator
	// stops while fewer than 34 bytes remain, so it ignores them.
	TrailingBytes int
}

// ReadTxnIndex reads a .txnindex file read-only. A missing file is an
// os.ErrNotExist error; callers treat that as "no aborted transactions",
// as Kafka does (the file is created on the first append).
func ReadTxnIndex(path string) (TxnIndex, error) {
	b, err := ReadFile(path)
	if err != nil {
		return TxnIndex{Path: path}, err
	}
	return ParseTxnIndex(b, path)
}

// ParseTxnIndex decodes .txnindex bytes; path only labels errors. Like
// TransactionIndex's iterator it reads whole 34-byte entries and fails on
// the first entry whose KafkaVersion is above 0. The entries before the
// failing one are returned with the error.
func ParseTxnIndex(b []byte, path string) (TxnIndex, error) {
	x := TxnIndex{Path: path, Length: int64(len(b))}
	n := len(b) / AbortedTxnSize
	x.TrailingBytes = len(b) % AbortedTxnSize
	x.Entries = make([]AbortedTxn, 0, n)
	// Only whole entries are read, so the cursor's reads cannot fail.
	c := decode.NewCursor(b[:n*AbortedTxnSize], 0)
	for i := 0; i < n; i++ {
		t := AbortedTxn{
			Version:          c.Int16("version"),
			ProducerID:       c.Int64("producerId"),
			FirstOffset:      c.Int64("firstOffset"),
			LastOffset:       c.Int64("lastOffset"),
			LastStableOffset: c.Int64("lastStableOffset"),
		}
		if v := t.KafkaVersion(); v > AbortedTxnCurrentVersion {
			return x, fileCorrupt(path, int64(i*AbortedTxnSize), "version", decode.ErrUnsupported,
				fmt.Sprintf("Unexpected aborted transaction version %d in transaction index %s, current version is %d",
					v, absPath(path), AbortedTxnCurrentVersion),
				"aborted transaction version %d, expected %d", v, AbortedTxnCurrentVersion)
		}
		x.Entries = append(x.Entries, t)
	}
	return x, nil
}

// SanityCheckTxnIndex applies TransactionIndex#sanityCheck: every entry's
// lastOffset must be at least the segment's base offset.
func SanityCheckTxnIndex(x *TxnIndex, baseOffset int64) error {
	for i, t := range x.Entries {
		if t.LastOffset < baseOffset {
			return fileCorrupt(x.Path, int64(i*AbortedTxnSize+18), "lastOffset", decode.ErrCorrupt,
				fmt.Sprintf("Last offset of aborted transaction %s in index %s is less than start offset %d",
					t, absPath(x.Path), baseOffset),
				"last offset %d of aborted transaction (producerId %d) is less than the base offset %d",
				t.LastOffset, t.ProducerID, baseOffset)
		}
	}
	return nil
}

// AppendAbortedTxn appends the 34-byte encoding of t to dst
// (AbortedTxn#toByteBuffer, with t.Version written as stored; new entries
// use AbortedTxnCurrentVersion).
func AppendAbortedTxn(dst []byte, t AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(t.Version))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}
