package edit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// Action is what a FileOp does to its file.
type Action string

// File operation actions.
const (
	OpReplace Action = "replace"
	OpCreate  Action = "create"
	OpDelete  Action = "delete"
	// OpAppend keeps the file's first OldSize bytes and writes NewSize -
	// OldSize bytes (Content, then Sources) after them, in place: no
	// backup copy, no staged copy (see append.go).
	OpAppend Action = "append"
)

// FileOp is one file of the partition directory that changes. New content
// is KeepPrefix bytes of the current file followed by Content, then the
// Sources (a .log keeps its prefix; every other file is Content alone);
// an append's is the first OldSize bytes followed by Content, then the
// Sources (KeepPrefix 0). The engine fills in the hashes before it touches
// anything, and they are what a resumed run checks every file against (an
// append's: the fingerprint of its kept bytes and the appended bytes'
// hash, see OpAppend).
type FileOp struct {
	Name       string `json:"name"`
	Action     Action `json:"action"`
	Why        string `json:"why"`
	OldSize    int64  `json:"oldSize"` // -1 for create
	NewSize    int64  `json:"newSize"` // -1 for delete
	KeepPrefix int64  `json:"keepPrefix,omitempty"`
	Content    []byte `json:"content,omitempty"`
	// Sources follow Content in the new content (a mirror's copied
	// batches).
	Sources []SourceRange `json:"sources,omitempty"`
	// Verbatim: the Sources of a .log are copied as bytes, not as record
	// batches, whose CRCs the staging read-back would otherwise check: a
	// restore puts back what a file held before an edit, damaged or not
	// (a repair's backup holds the batch that failed its CRC).
	Verbatim  bool   `json:"verbatim,omitempty"`
	OldSHA256 string `json:"oldSha256,omitempty"`
	NewSHA256 string `json:"newSha256,omitempty"`
	// NewFraming, for a created copy identified by its sources
	// (bySources), is the SHA-256 of its batches' framing as its staging
	// read-back verified them (framingOf): what identifies the committed
	// file when its sources are gone (the source's retention deleted the
	// segments before a rerun or a rollback).
	NewFraming string `json:"newFraming,omitempty"`
	// Perm, UID and GID are what the new file gets: the old file's (a
	// created file: 0644 and the partition directory's owner). UID/GID
	// are -1 when unknown.
	Perm uint32 `json:"perm,omitempty"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`

	// Staged is the staged file as this run read it back and verified it
	// (the size and modification time after its fsync), nil when this run
	// did not stage it. A check after the commit compares the committed
	// file with it (os.SameFile, size, modification time): the rename
	// moves that inode, whose bytes the read-back verified.
	Staged os.FileInfo `json:"-"`

	// headSHA256 is the SHA-256 of the kept prefix followed by Content,
	// taken by seal in the same read as OldSHA256 when the new content
	// has Sources (whose hash waits for the staged copy; see stage). ""
	// when unknown (an op read back from a journal).
	headSHA256 string
}

// SourceRange is a byte range of another file, copied into a FileOp's new
// content after its Content: the batches a mirror copies from its source
// segments, which are never held in memory (or in the journal).
type SourceRange struct {
	Path string `json:"path"`
	Pos  int64  `json:"pos"`
	Len  int64  `json:"len"`
}

// CopyBytes is what an edit of ops copies from the start (Options.Progress
// counts up to it): a backup of every file that is replaced or deleted,
// and the new content of every file that is replaced or created; of an
// append, the appended bytes alone.
func CopyBytes(ops []FileOp) int64 {
	var n int64
	for _, op := range ops {
		if op.Action == OpAppend {
			n += max(0, op.NewSize-op.OldSize)
			continue
		}
		if op.Action != OpCreate && op.OldSize > 0 {
			n += op.OldSize
		}
		if op.Action != OpDelete && op.NewSize > 0 {
			n += op.NewSize
		}
	}
	return n
}

// progressStep is how much of a long copy is made between calls to
// Options.Progress.
const progressStep = 4 << 20

// copyN copies n bytes (n < 0: to the end of r) from r to w in steps of
// progressStep, reporting each to progress (nil: one copy). Each step is
// still one io.Copy of a limited reader, so that into an *os.File it stays
// copy_file_range on Linux.
func copyN(w io.Writer, r io.Reader, n int64, progress func(int64)) (int64, error) {
	if progress == nil {
		if n < 0 {
			return io.Copy(w, r)
		}
		return io.Copy(w, io.LimitReader(r, n))
	}
	var done int64
	for n < 0 || done < n {
		step := int64(progressStep)
		if n >= 0 {
			step = min(step, n-done)
		}
		m, err := io.Copy(w, io.LimitReader(r, step))
		done += m
		if m > 0 {
			progress(m)
		}
		if err != nil || m < step {
			return done, err
		}
	}
	return done, nil
}

// copyRange copies r to w. Into an *os.File this is copy_file_range on
// Linux: the bytes never pass through user space.
func copyRange(w io.Writer, r SourceRange) error {
	return copyRangeProgress(w, r, nil)
}

// copyRangeProgress is copyRange reporting to progress (nil: none).
func copyRangeProgress(w io.Writer, r SourceRange, progress func(int64)) error {
	f, err := segment.OpenFile(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(r.Pos, io.SeekStart); err != nil {
		return err
	}
	n, err := copyN(w, f, r.Len, progress)
	if err != nil {
		return err
	}
	if n != r.Len {
		return fmt.Errorf("%s: %d bytes at position %d, need %d (did it change?)", r.Path, n, r.Pos, r.Len)
	}
	return nil
}

// copiedToBackup: the backup holds a copy of the file (a replace or a
// delete). A created file has no old content; an append's backup is its
// size and fingerprint, in the manifest.
func (op *FileOp) copiedToBackup() bool { return op.Action != OpCreate && op.Action != OpAppend }

// stagedBeside: the new content is staged beside the file and renamed
// over it (a replace or a create). A delete has no new content; an append
// writes in place.
func (op *FileOp) stagedBeside() bool { return op.Action != OpDelete && op.Action != OpAppend }

// createFresh is createExcl after removing a leftover at path: the name
// is kseg's own (a staged file, a journal's temporary), so what an
// interrupted run left there is replaced.
func createFresh(path string, flag int, perm os.FileMode) (*os.File, func(error) error, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	return createExcl(path, flag, perm)
}

// createExcl creates path for writing with O_EXCL (flag adds oNoFollow
// where a link may stand in the way) and mode perm. fail closes the file
// and returns err, removing the file unless err is an injected fault: a
// crash leaves what it leaves, for the rerun to find.
func createExcl(path string, flag int, perm os.FileMode) (f *os.File, fail func(error) error, err error) {
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|flag, perm)
	if err != nil {
		return nil, nil, err
	}
	return f, func(err error) error {
		f.Close()
		if !isFault(err) {
			os.Remove(path)
		}
		return err
	}, nil
}

// syncAfter records step, then fsyncs and closes f, written at path and
// made by createExcl (fail is its own): a failure removes the file,
// unless an injected fault stopped the run where a crash would.
func (a *applier) syncAfter(step string, f *os.File, path string, fail func(error) error) error {
	if err := a.step(step); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// syncDir fsyncs a directory so that a create, rename or unlink in it is
// durable (Kafka: Utils.flushDir after atomicMoveWithFallback).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	return syncClose(d, err, "directory "+dir)
}

// syncFile fsyncs a regular file kseg wrote earlier (a backup an
// interrupted run left), refusing anything else without blocking on it.
func syncFile(path string) error {
	f, err := segment.OpenFile(path)
	return syncClose(f, err, path)
}

// syncClose fsyncs and closes f, just opened (err: the open's error);
// name says what f is in the error.
func syncClose(f *os.File, err error, name string) error {
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	return f.Close()
}

// within reports whether path is dir or inside it, after resolving
// symbolic links of the longest existing prefix of each.
func within(path, dir string) bool {
	rp, rd := RealPath(path), RealPath(dir)
	rel, err := filepath.Rel(rd, rp)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// RealPath makes path absolute and resolves the symbolic links of its
// longest existing prefix; the rest is appended as it is.
func RealPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
