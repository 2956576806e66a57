//go:build !unix

package edit

import (
	"errors"
	"os"
)

var errLockHeld = errors.New("lock held by another process")

// BrokerLock cannot see a JVM file lock on this platform.
func BrokerLock(string) (int, bool, error) { return 0, false, nil }

func takeBrokerLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func Writable(string) (bool, string, error) { return true, "", nil }

func fileOwner(os.FileInfo) (int, int) { return -1, -1 }

func setOwner(string, int, int) error { return nil }

// diskFree is unknown on this platform.
func diskFree(string) (free, dev uint64, ok bool) { return 0, 0, false }

// openAppendFlags: no O_NOFOLLOW or O_NONBLOCK here.
const openAppendFlags = os.O_WRONLY
