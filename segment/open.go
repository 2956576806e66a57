package segment

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"

	"github.com/kseg/kseg/decode"
)

// OpenFile opens a file of a partition or log directory for reading without
// ever blocking on it, and refuses anything that is not a regular file. A
// FIFO named like a Kafka file would otherwise hang every command in open(2)
// until some writer appears; O_NONBLOCK makes the open return at once (it
// changes nothing for a regular file), and the fstat after it turns FIFOs,
// sockets and devices away with an error naming the file.
func OpenFile(path string) (*os.File, error) {
	f, _, err := openSized(path)
	return f, err
}

// Bounds on the files a broker keeps small: what it writes, with room to
// spare. A larger file is refused before a byte of it is read (a sparse
// 64 MiB leader-epoch-checkpoint took 17 s and 1.7 GB to parse, a 1 GiB
// partition.metadata over a minute and 6 GB).
const (
	// MaxOffsetCheckpointBytes bounds recovery-point-offset-checkpoint,
	// log-start-offset-checkpoint, replication-offset-checkpoint and
	// cleaner-offset-checkpoint: a line ("<topic> <partition> <offset>",
	// a topic name of at most 249 bytes) per partition of the log
	// directory.
	MaxOffsetCheckpointBytes = 64 << 20
	// MaxEpochCheckpointBytes bounds leader-epoch-checkpoint: a line
	// ("<epoch> <startOffset>") per leader epoch that still has records.
	MaxEpochCheckpointBytes = 16 << 20
	// MaxTextFileBytes bounds meta.properties, quorum-state and
	// .kafka_cleanshutdown: a few lines.
	MaxTextFileBytes = 1 << 20
	// MaxPartitionMetadataBytes is how much of partition.metadata is read:
	// PartitionMetadataReadBuffer reads two lines of about 30 bytes.
	MaxPartitionMetadataBytes = 64 << 10
	// MaxCheckpointLine bounds one line of a checkpoint: longer than any
	// line a broker writes, it is malformed, and is not copied whole.
	MaxCheckpointLine = 4 << 10
	// QuoteBytes is how much of a bad line an error message quotes.
	QuoteBytes = 64
)

// openSized is OpenFile with the file's size, from the fstat that checks
// it is a regular file.
func openSized(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Mode: fi.Mode()}}
	}
	return f, fi.Size(), nil
}

// ReadFileLimit is ReadFile of a file a broker keeps small: a file of
// more than limit bytes is a *decode.CorruptError naming it (what is the
// kind of file, for the message), found from its size before anything is
// read, and never more than limit bytes are read from a file that grows.
func ReadFileLimit(path string, limit int64, what string) ([]byte, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := func(n int64) error {
		return fileCorrupt(path, limit, "size", decode.ErrCorrupt,
			fmt.Sprintf("%s is %d bytes, more than the %d bytes kseg reads of a %s", absPath(path), n, limit, what),
			"%d bytes, more than the %d bytes a broker writes in a %s: not read", n, limit, what)
	}
	if size > limit {
		return nil, tooLarge(size)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(int64(len(b)))
	}
	return b, nil
}

// ReadFileAtMost reads path when it holds at most max bytes; a larger
// file is not read (nil) and its size is returned. A comparison with max
// bytes needs no more: a plan that compares the 34 bytes it would write
// with a 1 GiB file reads nothing of it.
func ReadFileAtMost(path string, max int64) ([]byte, int64, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, -1, err
	}
	defer f.Close()
	if size > max {
		return nil, size, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, -1, err
	}
	if int64(len(b)) > max { // grew under the read
		return nil, int64(len(b)), nil
	}
	return b, int64(len(b)), nil
}

// quote is at most QuoteBytes of a line, for an error message: "…" marks
// a line cut short.
func quote(s string) string {
	if len(s) <= QuoteBytes {
		return s
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ReadFile is os.ReadFile through OpenFile.
func ReadFile(path string) ([]byte, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// NotRegularError is a FIFO, socket, device or directory where a Kafka file
// is expected.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch m := e.Mode; {
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a directory"
	}
	return fmt.Sprintf("%s where a Kafka file is expected (kseg reads regular files only)", what)
}
