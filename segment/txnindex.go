package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

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
//
// A segment's .txnindex holds an entry per ABORT marker in its .log
// (LogSegment.updateTxnIndex), and a marker takes at least
// decode.RecordBatchOverhead bytes there: a file larger than that allows
// for the .log beside it (MaxTxnIndexBytes) is a *decode.CorruptError
// found from the sizes, before it is read. The file is read through a
// buffer, not whole.
func ReadTxnIndex(path string) (TxnIndex, error) {
	f, size, err := openSized(path)
	if err != nil {
		return TxnIndex{Path: path}, err
	}
	defer f.Close()
	if limit, logPath := MaxTxnIndexBytes(path); size > limit {
		return TxnIndex{Path: path, Length: size}, fileCorrupt(path, limit, "size", decode.ErrCorrupt,
			fmt.Sprintf("%s is %d bytes, more than the %d bytes of entries %s can have ended", absPath(path), size, limit, filepath.Base(logPath)),
			"%d bytes, more than a broker writes: %s holds room for at most %d ABORT markers (%d bytes of entries); not read",
			size, filepath.Base(logPath), limit/AbortedTxnSize, limit)
	}
	return parseTxnIndex(bufio.NewReaderSize(io.LimitReader(f, size), int(min(64<<10, max(size, 16)))), size, path)
}

// MaxTxnIndexBytes is the most a broker writes in the .txnindex at path:
// an entry per batch the .log beside it (returned too) can hold, each at
// least decode.RecordBatchOverhead bytes; without that .log, what a
// segment of segment.bytes' largest value (2 GiB) can hold.
func MaxTxnIndexBytes(path string) (int64, string) {
	logPath := strings.TrimSuffix(path, TxnIndexSuffix) + LogSuffix
	size := int64(math.MaxInt32)
	if st, err := os.Stat(logPath); err == nil {
		size = st.Size()
	}
	return (size/decode.RecordBatchOverhead + 1) * AbortedTxnSize, logPath
}

// ParseTxnIndex decodes .txnindex bytes; path only labels errors. Like
// TransactionIndex's iterator it reads whole 34-byte entries and fails on
// the first entry whose KafkaVersion is above 0. The entries before the
// failing one are returned with the error.
func ParseTxnIndex(b []byte, path string) (TxnIndex, error) {
	return parseTxnIndex(bytes.NewReader(b), int64(len(b)), path)
}

func parseTxnIndex(r io.Reader, length int64, path string) (TxnIndex, error) {
	x := TxnIndex{Path: path, Length: length}
	n := int(length / AbortedTxnSize)
	x.TrailingBytes = int(length % AbortedTxnSize)
	x.Entries = make([]AbortedTxn, 0, n)
	var e [AbortedTxnSize]byte
	be := binary.BigEndian
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(r, e[:]); err != nil {
			return x, err // the file shrank under the read
		}
		t := AbortedTxn{
			Version:          int16(be.Uint16(e[0:])),
			ProducerID:       int64(be.Uint64(e[2:])),
			FirstOffset:      int64(be.Uint64(e[10:])),
			LastOffset:       int64(be.Uint64(e[18:])),
			LastStableOffset: int64(be.Uint64(e[26:])),
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
