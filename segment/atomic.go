package segment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TempSuffix is appended to a target's name to form the temporary file that
// atomic writes go through. It is the suffix Kafka's CheckpointFile uses
// (`absolutePath + ".tmp"`), so a leftover from an interrupted kseg write
// looks like one from an interrupted broker write and is recognised by
// ParseFileName the same way.
const TempSuffix = ".tmp"

// ErrTargetExists is returned (wrapped) when a write that must not replace
// an existing file finds one at its target path.
var ErrTargetExists = errors.New("target file exists")

// ErrTempExists is returned (wrapped) when the temporary file of an atomic
// write already exists: either another writer (perhaps a live broker) is
// writing the same file right now, or an earlier write crashed. kseg never
// removes it on its own, because in the first case that would corrupt the
// other writer's output.
var ErrTempExists = errors.New("temporary file exists (concurrent writer, or left by a crash; remove it to proceed)")

// WriteFileAtomic replaces path with data so that a reader (or a broker that
// starts after a crash) sees either the old file or the complete new one,
// never a torn mix. It mirrors CheckpointFile#write with sync=true and
// Utils.atomicMoveWithFallback: write `<path>.tmp`, fsync it, rename it over
// path, fsync the directory so the rename itself is durable.
//
// Unlike Kafka the temporary file is created with O_EXCL, so two writers can
// never interleave into one temp file; see ErrTempExists. On any failure the
// temporary file is removed and path is left as it was. The new file keeps
// the replaced file's mode (else perm, whatever the umask) and, run as
// root, its owner and group (else the directory's): a broker running as its
// own user must still open it (ownLike).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm, true)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode, overwrite bool) error {
	return writeFileAtomicSync(path, data, perm, overwrite, true)
}

// writeFileAtomic is WriteFileAtomic with a choice to refuse to replace an
// existing target. The refusal is checked before anything is written and
// again, race-free where the file system allows it, at commit time by
// hard-linking the temp file to the target (link fails if the target
// exists, rename would not). Without sync nothing is fsynced (Appender's
// NoSync).
func writeFileAtomicSync(path string, data []byte, perm os.FileMode, overwrite, sync bool) (err error) {
	if !overwrite {
		if _, statErr := os.Lstat(path); statErr == nil {
			return fmt.Errorf("%s: %w", path, ErrTargetExists)
		} else if !errors.Is(statErr, os.ErrNotExist) {
			return statErr
		}
	}
	dir := filepath.Dir(path)
	tmp := path + TempSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w", tmp, ErrTempExists)
		}
		return err
	}
	committed := false
	defer func() {
		if !committed {
			// Best effort: the original error is the one worth reporting.
			_ = os.Remove(tmp)
		}
	}()
	if err := ownLike(f, dir, path, perm); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if overwrite {
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	} else if err := linkNoClobber(tmp, path); err != nil {
		return err
	}
	committed = true
	if !sync {
		return nil
	}
	return syncDir(dir)
}

// linkNoClobber moves tmp to path only if path does not exist. A hard link
// gives that atomically; where links are not supported it falls back to a
// last existence check followed by rename (a small window, acceptable for an
// offline tool that already refuses to run next to a live broker).
func linkNoClobber(tmp, path string) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		return os.Remove(tmp)
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("%s: %w", path, ErrTargetExists)
	}
	if _, statErr := os.Lstat(path); statErr == nil {
		return fmt.Errorf("%s: %w", path, ErrTargetExists)
	}
	return os.Rename(tmp, path)
}

// syncDir fsyncs a directory so that a rename or create inside it survives a
// crash (Kafka: Utils.flushDir after atomicMoveWithFallback).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return d.Close()
}

// ownLike gives f (a new file in dir, to replace path) what a broker must
// be able to open: path's mode when it exists, else perm, whatever the
// umask; and, when kseg runs as root, path's owner and group when it
// exists, else dir's (a broker opens every file of a partition read-write
// as its own user).
func ownLike(f *os.File, dir, path string, perm os.FileMode) error {
	like := dir
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm, like = fi.Mode().Perm(), path
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat(like); err == nil {
			if uid, gid, ok := ownerOf(fi); ok {
				if err := f.Chown(uid, gid); err != nil {
					return err
				}
			}
		}
	}
	return f.Chmod(perm)
}
