//go:build unix

package edit

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/segment"
)

// BrokerLock reports whether another process holds a lock on a log
// directory's .lock file. Kafka's LogManager locks every log directory at
// start-up with FileLock → FileChannel.tryLock(), which the JDK implements
// on Linux and the BSDs as an fcntl(F_SETLK) write lock over [0,
// Long.MAX_VALUE) — a POSIX record lock, not flock(2). F_GETLK asks the
// kernel which lock would block a write lock on the whole file; the file is
// opened read-only (F_GETLK needs no write access), so nothing about it
// changes. A missing .lock means no broker has locked the directory.
func BrokerLock(path string) (pid int, held bool, err error) {
	f, err := segment.OpenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, false, nil
		}
		return 0, false, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), getLockCmd, &lk); err != nil {
		return 0, false, err
	}
	if lk.Type == unix.F_UNLCK {
		return 0, false, nil
	}
	return int(lk.Pid), true, nil
}

// takeBrokerLock takes the same fcntl write lock a broker takes, so that a
// broker started while kseg writes fails to lock the directory instead of
// loading a half-written partition. The lock lives until the file is
// closed. It fails with EAGAIN/EACCES when someone else holds it.
func takeBrokerLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = Refuse(RefuseNotRegular, path, "%s, not the regular file a broker locks", modeName(fi.Mode()))
		}
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), setLockCmd, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, errLockHeld
		}
		return nil, err
	}
	return f, nil
}

var errLockHeld = errors.New("lock held by another process")

// Writable reports whether dir can be written: not on a read-only mount
// (statfs ST_RDONLY where the platform reports it, then access(2), which
// fails with EROFS on a read-only file system and EACCES without
// permission). Neither call changes anything.
func Writable(dir string) (ok bool, why string, err error) {
	if ro, err := mountReadOnly(dir); err == nil && ro {
		return false, "the file system is mounted read-only", nil
	}
	switch err := unix.Access(dir, unix.W_OK); {
	case err == nil:
		return true, "", nil
	case errors.Is(err, unix.EROFS):
		return false, "the file system is read-only", nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return false, "the directory is not writable by this user", nil
	default:
		return false, "", err
	}
}

// fileOwner returns the owner of a file, (-1, -1) when unknown.
func fileOwner(fi os.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// setOwner gives path the owner uid:gid when kseg runs as root (only root
// can), so files written into a partition stay the broker user's.
func setOwner(path string, uid, gid int) error {
	if os.Geteuid() != 0 || uid < 0 || gid < 0 {
		return nil
	}
	return os.Lchown(path, uid, gid)
}

// diskFree is the space an unprivileged writer may still use on path's file
// system, and the file system's device; ok is false when unknown.
func diskFree(path string) (free, dev uint64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), uint64(s.Dev), true
}

// openAppendFlags open a file kseg appends to without following a
// symbolic link and without blocking on a FIFO swapped in (openAppend then
// refuses it: not a regular file).
const openAppendFlags = os.O_WRONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW
