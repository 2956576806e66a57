//go:build !unix

package edit

import (
	"errors"
	"os"
)

var (
	errLockHeld  = errors.New("lock held by another process")
	errFlockHeld = errors.New("flock held by another process")
)

// BrokerLock cannot see a JVM file lock on this platform.
func BrokerLock(string) (LockHolder, bool, error) { return LockHolder{}, false, nil }

// brokerLock is the .lock kseg opened (no lock on this platform).
type brokerLock struct {
	f       *os.File
	path    string
	created bool
}

func (l *brokerLock) Close() error {
	err := l.f.Close()
	if l.created {
		_ = os.Remove(l.path)
	}
	return err
}

func takeBrokerLock(path string, _, _ int) (*brokerLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		return &brokerLock{f: f, path: path}, nil
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &brokerLock{f: f, path: path, created: true}, nil
}

func Writable(string) (bool, string, error) { return true, "", nil }

func fileOwner(os.FileInfo) (int, int) { return -1, -1 }

func setOwner(string, int, int) error { return nil }

func fchown(*os.File, int, int) error { return nil }

func linkCount(os.FileInfo) uint64 { return 1 }

// diskFree is unknown on this platform.
func diskFree(string) (free, dev uint64, ok bool) { return 0, 0, false }

// openAppendFlags: no O_NOFOLLOW or O_NONBLOCK here.
const openAppendFlags = os.O_WRONLY

// oNoFollow: no O_NOFOLLOW here.
const oNoFollow = 0
