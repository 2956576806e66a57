package segment

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// OpenFile opens a file of a partition or log directory for reading without
// ever blocking on it, and refuses anything that is not a regular file. A
// FIFO named like a Kafka file would otherwise hang every command in open(2)
// until some writer appears; O_NONBLOCK makes the open return at once (it
// changes nothing for a regular file), and the fstat after it turns FIFOs,
// sockets and devices away with an error naming the file.
func OpenFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Mode: fi.Mode()}}
	}
	return f, nil
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
