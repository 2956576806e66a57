package edit

import "golang.org/x/sys/unix"

// On Linux kseg uses open-file-description locks (F_OFD_*): they conflict
// with the classic POSIX locks the JVM takes, exactly like those, but are
// owned by the open file rather than the process, so closing some other
// descriptor of .lock inside kseg can never drop them (a classic fcntl lock
// is released when the process closes ANY descriptor of the file).
const (
	getLockCmd = unix.F_OFD_GETLK
	setLockCmd = unix.F_OFD_SETLK
)

func mountReadOnly(dir string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false, err
	}
	return st.Flags&unix.ST_RDONLY != 0, nil
}
