//go:build unix

package segment

import (
	"os"
	"syscall"
)

// ownerOf is a file's owner and group (ok false when unknown).
func ownerOf(fi os.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
