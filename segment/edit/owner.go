package edit

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/segment"
)

// What a broker must be able to open afterwards. Kafka opens every file of
// a partition read-write when it loads it (LogSegment.open through
// FileRecords.open, the indexes through AbstractIndex's RandomAccessFile
// "rw", LogManager's FileLock on .lock), as the user it runs as. kseg runs
// as root when an operator follows docs/failover.md: what it writes must
// still be the broker user's. So:
//
//   - a file kseg replaces keeps the old file's owner, group and mode;
//   - a file it creates takes the owner and group of the partition
//     directory, and the mode of the partition's newest segment (0644 when
//     it has none), set explicitly so that the umask does not narrow it;
//   - a partition directory it creates takes the owner and group of the
//     log directory, and mode 0755 (a broker under the default umask 022
//     creates its own so, Files.createDirectories);
//   - the journal it keeps in the partition directory is the partition
//     directory's owner's, so that a rerun as the broker's user can finish
//     it;
//   - a .lock it has to create is the log directory's owner's, and removed
//     again (takeBrokerLock).
//
// As rsync --archive and restic's restorer keep owners and modes, for the
// same reason.

// Modes of what kseg creates when nothing says otherwise.
const (
	NewDirMode  = 0o755
	NewFileMode = 0o644
)

// Ownership is what the files and directory an edit creates will be: the
// owner and group (-1 when unknown), the mode of a created file, and of a
// created partition directory (0 when none is created). Replaced files
// keep their own.
type Ownership struct {
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	FileMode uint32 `json:"fileMode"`
	DirMode  uint32 `json:"dirMode,omitempty"`
}

// PlannedOwnership is the Ownership an edit of dir (in logDir; createsDir:
// dir does not exist yet) gives what it creates, for a plan to name; nil
// when that is what any write by this process makes anyway (the owner is
// this user, the modes are the defaults), so that plans name it only when
// it is worth naming (kseg run as root in a broker user's directory).
func PlannedOwnership(dir, logDir string, createsDir bool) *Ownership {
	like := dir
	if createsDir {
		like = logDir
	}
	fi, err := os.Stat(like)
	if err != nil {
		return nil
	}
	o := &Ownership{FileMode: newFileMode(dir)}
	o.UID, o.GID = fileOwner(fi)
	if createsDir {
		o.DirMode = NewDirMode
	}
	if (o.UID < 0 || o.UID == os.Geteuid()) && (o.GID < 0 || o.GID == os.Getegid()) && o.FileMode == NewFileMode {
		return nil
	}
	return o
}

// newFileMode is the mode a file created in dir gets: that of its newest
// segment's .log (a broker's umask decided it), else NewFileMode.
func newFileMode(dir string) uint32 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return NewFileMode
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if !strings.HasSuffix(e.Name(), segment.LogSuffix) || !e.Type().IsRegular() {
			continue
		}
		if fi, ok := segment.ParseFileName(e.Name()); !ok || fi.Kind != segment.KindLog || fi.Suffix != "" {
			continue
		}
		if info, err := e.Info(); err == nil {
			return uint32(info.Mode().Perm())
		}
	}
	return NewFileMode
}

// makeDir creates the partition directory a job creates, with the log
// directory's owner and group and NewDirMode whatever the umask, and makes
// its name durable.
func (a *applier) makeDir() error {
	if err := os.Mkdir(a.dir, NewDirMode); err != nil && !os.IsExist(err) {
		return err
	}
	if fi, err := os.Stat(a.logDir); err == nil {
		uid, gid := fileOwner(fi)
		if err := setOwner(a.dir, uid, gid); err != nil {
			return err
		}
	}
	if err := os.Chmod(a.dir, NewDirMode); err != nil {
		return err
	}
	return syncDir(a.logDir)
}

// dirOwner is the partition directory's owner and group (-1 when unknown).
func (a *applier) dirOwner() (uid, gid int) {
	fi, err := os.Stat(a.dir)
	if err != nil {
		return -1, -1
	}
	return fileOwner(fi)
}

// ownAs gives the open file f the mode perm (not narrowed by the umask)
// and, when kseg runs as root, the owner uid:gid.
func ownAs(f *os.File, perm uint32, uid, gid int) error {
	if err := fchown(f, uid, gid); err != nil {
		return err
	}
	return f.Chmod(os.FileMode(perm))
}

var _ = filepath.Join
