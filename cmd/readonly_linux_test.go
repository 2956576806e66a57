//go:build linux

package cmd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fsWatch watches every directory of a tree with inotify (see the file
// comment of readonly_test.go for why this proves read-only opens even for
// root).
type fsWatch struct {
	fd   int
	dirs map[int32]string
}

// writeMask are the events that mean something was opened for writing or
// changed.
const writeMask = syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_DELETE_SELF | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_MOVE_SELF

func watchTree(t *testing.T, root string) *fsWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify_init1: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	w := &fsWatch{fd: fd, dirs: map[int32]string{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := syscall.InotifyAddWatch(fd, p, writeMask|syscall.IN_OPEN|syscall.IN_CLOSE_NOWRITE)
		if err != nil {
			return fmt.Errorf("inotify_add_watch %s: %w", p, err)
		}
		w.dirs[int32(wd)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *fsWatch) enabled() bool { return true }

// fsEvent is one inotify event.
type fsEvent struct {
	path string
	mask uint32
}

func (e fsEvent) write() bool { return e.mask&writeMask != 0 }

// readClose is a regular file closed after a read-only open.
func (e fsEvent) readClose() bool {
	return e.mask&syscall.IN_CLOSE_NOWRITE != 0 && e.mask&syscall.IN_ISDIR == 0
}

func (e fsEvent) String() string {
	var names []string
	for _, m := range []struct {
		bit  uint32
		name string
	}{
		{syscall.IN_CLOSE_WRITE, "IN_CLOSE_WRITE (was opened for writing)"}, {syscall.IN_MODIFY, "IN_MODIFY"},
		{syscall.IN_ATTRIB, "IN_ATTRIB"}, {syscall.IN_CREATE, "IN_CREATE"}, {syscall.IN_DELETE, "IN_DELETE"},
		{syscall.IN_DELETE_SELF, "IN_DELETE_SELF"}, {syscall.IN_MOVED_FROM, "IN_MOVED_FROM"},
		{syscall.IN_MOVED_TO, "IN_MOVED_TO"}, {syscall.IN_MOVE_SELF, "IN_MOVE_SELF"},
	} {
		if e.mask&m.bit != 0 {
			names = append(names, m.name)
		}
	}
	return e.path + ": " + strings.Join(names, "|")
}

// drain returns the events queued so far. The kernel queues an event in
// the system call that causes it, so after a synchronous Run every event
// of that run is in the queue.
func (w *fsWatch) drain(t *testing.T) []fsEvent {
	t.Helper()
	var evs []fsEvent
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) || n <= 0 {
			return evs
		}
		if err != nil {
			t.Fatalf("reading inotify events: %v", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+nameLen], "\x00"))
			off += syscall.SizeofInotifyEvent + nameLen
			if mask&syscall.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflow: events were lost")
			}
			if mask&syscall.IN_IGNORED != 0 {
				continue
			}
			evs = append(evs, fsEvent{path: filepath.Join(w.dirs[wd], name), mask: mask})
		}
	}
}

// checkNothingOpen fails when a descriptor or a memory mapping of a file
// under root outlives the command.
func (w *fsWatch) checkNothingOpen(t *testing.T, root, run string) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Logf("cannot list /proc/self/fd: %v", err)
		return
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, root+string(filepath.Separator)) {
			info, _ := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
			t.Errorf("%s: descriptor %s into the tree left open: %s (%s)", run, fd.Name(), target, strings.ReplaceAll(string(info), "\n", " "))
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if i := strings.Index(line, root+string(filepath.Separator)); i >= 0 {
			t.Errorf("%s: mapping into the tree left behind: %s", run, line)
		}
	}
}
