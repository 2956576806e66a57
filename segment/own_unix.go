//go:build unix

package segment

import (
	"os"
	"syscall"
)

// ownLike gives f (a new file in dir, to replace path) what a broker must
// be able to open: the mode perm whatever the umask, or path's mode when
// it exists; and, when kseg runs as root, path's owner and group when it
// exists, else dir's (a broker opens every file of a partition read-write
// as its own user).
func ownLike(f *os.File, dir, path string, perm os.FileMode) error {
	like := dir
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm, like = fi.Mode().Perm(), path
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat(like); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil {
					return err
				}
			}
		}
	}
	return f.Chmod(perm)
}
