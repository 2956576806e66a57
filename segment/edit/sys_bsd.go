//go:build unix && !linux

package edit

import "golang.org/x/sys/unix"

// Classic POSIX record locks, what the JVM takes (FileChannel.tryLock).
const (
	getLockCmd = unix.F_GETLK
	setLockCmd = unix.F_SETLK
)

// mountReadOnly is left to access(2) (EROFS) on these platforms.
func mountReadOnly(string) (bool, error) { return false, nil }
