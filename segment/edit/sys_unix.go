//go:build unix

package edit

import (
	"errors"
	"io"
	"io/fs"
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
// changes. An flock(2) lock (flock(1) in a wrapper script, another tool)
// is independent of fcntl locks on Linux, and counts as held too: it is
// found by asking for a shared one without waiting, given back at once.
// Shared, because a probe's own lock must not look like a holder to
// another probe: two kseg runs reading partitions of one log directory at
// once (or a command's parallel jobs) each take and give back a probe
// lock, and exclusive probes made one of them report the directory held
// (broker-running). An exclusive flock — flock(1)'s default, and what
// takeBrokerLock takes while kseg writes — still blocks a shared one; a
// shared holder is let through here and refused by takeBrokerLock's
// exclusive lock before anything is written. A missing
// .lock means no broker has locked the directory; a .lock that is a
// symbolic link is refused (not-regular): kseg never follows one.
func BrokerLock(path string) (h LockHolder, held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return h, false, nil
		case errors.Is(err, unix.ELOOP):
			return h, false, refuseLockLink(path)
		}
		return h, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return h, false, err
	} else if !fi.Mode().IsRegular() {
		return h, false, &fs.PathError{Op: "open", Path: path, Err: &segment.NotRegularError{Mode: fi.Mode()}}
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), getLockCmd, &lk); err != nil {
		return h, false, err
	}
	if lk.Type != unix.F_UNLCK {
		return LockHolder{Pid: int(lk.Pid), Kind: LockFcntl}, true, nil
	}
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return LockHolder{Kind: LockFlock}, true, nil
	case err != nil:
		// No flock(2) on this file system: nothing can hold one.
		return h, false, nil
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return h, false, nil
}

// takeBrokerLock takes the same fcntl write lock a broker takes, so that a
// broker started while kseg writes fails to lock the directory instead of
// loading a half-written partition, and an flock(2) lock, so that a
// wrapper script using flock(1) sees the directory as busy too. The locks
// live until the lock is closed. It fails with errLockHeld when someone
// else holds either.
//
// .lock is opened without following a symbolic link (a dangling one would
// have root create a file wherever it points) and without blocking on a
// FIFO. A broker that stopped cleanly deleted its .lock (FileLock.destroy):
// when there is none, kseg creates it with O_EXCL, gives it the log
// directory's owner and group (uid, gid; -1 leaves kseg's) so that a broker
// running as its own user can still open it if kseg is killed, and removes
// it again when it closes the lock.
func takeBrokerLock(path string, uid, gid int) (*brokerLock, error) {
	const flags = os.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK
	var f *os.File
	created := false
	for try := 0; f == nil; try++ {
		var err error
		f, err = os.OpenFile(path, flags, 0)
		if errors.Is(err, os.ErrNotExist) && try < 8 {
			f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o644)
			created = err == nil
			if errors.Is(err, os.ErrExist) {
				// Another process made it meanwhile: open that one.
				f, err = nil, nil
				continue
			}
		}
		if errors.Is(err, unix.ELOOP) {
			return nil, refuseLockLink(path)
		}
		if err != nil {
			return nil, err
		}
	}
	l := &brokerLock{f: f, path: path, created: created}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = Refuse(RefuseNotRegular, path, "%s, not the regular file a broker locks", modeName(fi.Mode()))
	}
	if err == nil && created {
		// Not subject to the umask, and the broker user's, as the file
		// a broker creates is.
		if err = fchown(f, uid, gid); err == nil {
			err = f.Chmod(0o644)
		}
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), setLockCmd, &lk); err != nil {
		l.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, errLockHeld
		}
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		l.Close()
		return nil, errFlockHeld
	}
	return l, nil
}

// brokerLock is the lock kseg holds on a log directory's .lock.
type brokerLock struct {
	f       *os.File
	path    string
	created bool // kseg created .lock: it removes it again
}

// Close removes a .lock kseg created (while still holding it, and only if
// it is still the file kseg created), then gives the locks up.
func (l *brokerLock) Close() error {
	if l.created {
		if fi, err := l.f.Stat(); err == nil {
			if now, err := os.Lstat(l.path); err == nil && os.SameFile(fi, now) {
				_ = os.Remove(l.path)
			}
		}
	}
	return l.f.Close()
}

// fchown gives f the owner uid:gid when kseg runs as root (only root can),
// so files written into a log directory stay the broker user's.
func fchown(f *os.File, uid, gid int) error {
	if os.Geteuid() != 0 || uid < 0 || gid < 0 {
		return nil
	}
	return f.Chown(uid, gid)
}

var (
	errLockHeld  = errors.New("lock held by another process")
	errFlockHeld = errors.New("flock held by another process")
)

// refuseLockLink refuses a .lock that is a symbolic link.
func refuseLockLink(path string) error {
	return Refuse(RefuseNotRegular, path, "a symbolic link: kseg never follows one for the log directory lock (it would create or lock the file it points to); remove it")
}

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

// linkCount is a file's number of hard links (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// oNoFollow makes an open fail on a symbolic link.
const oNoFollow = unix.O_NOFOLLOW
