package segment

import (
	"cmp"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/segment/plural"
)

// SegmentFiles are the files of one segment, named by its base offset.
// A path is empty when the file is absent. Log can be empty too: an index
// without a log is an orphan that LogLoader would delete ("Found an orphaned
// index file"), and kseg reports rather than hides it.
type SegmentFiles struct {
	BaseOffset int64
	Log        string
	Index      string
	TimeIndex  string
	TxnIndex   string
}

// SnapshotFile is a producer-state snapshot <offset>.snapshot.
type SnapshotFile struct {
	Offset int64 // exclusive end offset the snapshot covers (lastMapOffset)
	Path   string
}

// MetadataSnapshotFile is a KRaft metadata snapshot
// <endOffset>-<epoch>.checkpoint, found in __cluster_metadata-0.
type MetadataSnapshotFile struct {
	EndOffset int64
	Epoch     int32
	Path      string
}

// PartitionDir is the listing of one partition directory. It records names
// only; nothing is read from the files.
type PartitionDir struct {
	Path string
	// Topic and Partition come from the directory name; when the name does
	// not parse (a copy under another name), Topic is "" and Partition -1.
	Topic     string
	Partition int32
	State     DirState // live, or a -delete/-future/-stray directory
	// Segments are sorted by base offset.
	Segments []SegmentFiles
	// Snapshots are the producer snapshots, sorted by offset.
	Snapshots []SnapshotFile
	// MetadataSnapshots are KRaft snapshots, sorted by (end offset, epoch).
	MetadataSnapshots []MetadataSnapshotFile
	// LeaderEpochCheckpoint and PartitionMetadata are paths, "" if absent.
	LeaderEpochCheckpoint string
	PartitionMetadata     string
	// Transient are files with a transient suffix (.deleted, .cleaned,
	// .swap, .tmp, .part) the broker would clean up at the next load.
	Transient []string
	// Other is everything else: unknown files, subdirectories, files with a
	// non-canonical offset, and files Kafka keeps elsewhere (quorum-state).
	Other []string

	// logDir, when set (LogDirCache), serves the log directory's files.
	logDir *cachedLogDir
}

// OpenPartitionDir lists a partition directory (LogLoader's view of it,
// without loading anything). All lists are in a deterministic order.
// Errors are I/O errors only: unusual contents are reported in Other and
// Transient, never as failures. A FIFO, socket or device named like a
// Kafka file — in the partition directory, or in its log directory (.lock,
// the checkpoints, meta.properties) — is such an error (a
// *NotRegularError), found here without opening it, so that every command
// fails at once with its name instead of blocking on it or skipping it.
func OpenPartitionDir(path string) (*PartitionDir, error) { return openPartitionDir(path, nil) }

func openPartitionDir(path string, cache *LogDirCache) (*PartitionDir, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	d := &PartitionDir{Path: path, Partition: -1}
	if n, ok := ParsePartitionDir(filepath.Base(filepath.Clean(path))); ok {
		d.Topic, d.Partition, d.State = n.Topic, n.Partition, n.State
	}
	if d.Topic != "" {
		if cache != nil {
			cache.Attach(d)
			err = d.logDir.check()
		} else {
			err = checkLogDirFiles(LogDirOf(path))
		}
		if err != nil {
			return nil, err
		}
	}
	segs := map[int64]*SegmentFiles{}
	for _, e := range entries { // os.ReadDir sorts by name
		name := e.Name()
		p := filepath.Join(path, name)
		fi, ok := ParseFileName(name)
		if ok && fi.Kind != KindUnknown && !e.IsDir() {
			if err := checkRegular(p, e.Type()); err != nil {
				return nil, err
			}
		}
		switch {
		case e.IsDir():
			d.Other = append(d.Other, p)
		case !ok:
			d.Other = append(d.Other, p)
		case fi.Transient():
			d.Transient = append(d.Transient, p)
		case !fi.Canonical:
			d.Other = append(d.Other, p)
		case fi.Kind.IsSegmentFile():
			s := segs[fi.Offset]
			if s == nil {
				s = &SegmentFiles{BaseOffset: fi.Offset}
				segs[fi.Offset] = s
			}
			switch fi.Kind {
			case KindLog:
				s.Log = p
			case KindIndex:
				s.Index = p
			case KindTimeIndex:
				s.TimeIndex = p
			case KindTxnIndex:
				s.TxnIndex = p
			}
		case fi.Kind == KindProducerSnapshot:
			d.Snapshots = append(d.Snapshots, SnapshotFile{Offset: fi.Offset, Path: p})
		case fi.Kind == KindMetadataSnapshot:
			d.MetadataSnapshots = append(d.MetadataSnapshots, MetadataSnapshotFile{EndOffset: fi.Offset, Epoch: fi.Epoch, Path: p})
		case fi.Kind == KindLeaderEpochCheckpoint:
			d.LeaderEpochCheckpoint = p
		case fi.Kind == KindPartitionMetadata:
			d.PartitionMetadata = p
		default:
			d.Other = append(d.Other, p)
		}
	}
	d.Segments = make([]SegmentFiles, 0, len(segs))
	for _, s := range segs {
		d.Segments = append(d.Segments, *s)
	}
	slices.SortFunc(d.Segments, func(a, b SegmentFiles) int { return cmp.Compare(a.BaseOffset, b.BaseOffset) })
	// Canonical names sort by offset already; sort anyway to not depend on it.
	slices.SortFunc(d.Snapshots, func(a, b SnapshotFile) int { return cmp.Compare(a.Offset, b.Offset) })
	slices.SortFunc(d.MetadataSnapshots, func(a, b MetadataSnapshotFile) int {
		return cmp.Or(cmp.Compare(a.EndOffset, b.EndOffset), cmp.Compare(a.Epoch, b.Epoch))
	})
	return d, nil
}

// Logs yields the segments that have a .log, in base-offset order (an
// index or a .txnindex whose log is gone is a segment without one).
func (d *PartitionDir) Logs() iter.Seq[SegmentFiles] {
	return func(yield func(SegmentFiles) bool) {
		for _, s := range d.Segments {
			if s.Log != "" && !yield(s) {
				return
			}
		}
	}
}

// Segment returns the segment with the given base offset.
func (d *PartitionDir) Segment(baseOffset int64) (SegmentFiles, bool) {
	i, ok := slices.BinarySearchFunc(d.Segments, baseOffset, func(s SegmentFiles, off int64) int {
		return cmp.Compare(s.BaseOffset, off)
	})
	if !ok {
		return SegmentFiles{}, false
	}
	return d.Segments[i], true
}

// IsPartitionDir reports whether path is a directory whose name parses as a
// partition directory and that holds at least one .log file,
// partition.metadata or leader-epoch-checkpoint: the files a broker creates
// for every partition it hosts.
func IsPartitionDir(path string) bool {
	if _, ok := ParsePartitionDir(filepath.Base(filepath.Clean(path))); !ok {
		return false
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		fi, ok := ParseFileName(e.Name())
		if !ok || fi.Transient() {
			continue
		}
		switch fi.Kind {
		case KindLog, KindPartitionMetadata, KindLeaderEpochCheckpoint:
			return true
		}
	}
	return false
}

// LogDirFile is a regular file at the root of a log directory.
type LogDirFile struct {
	Path string
	FileInfo
}

// LogDir is the listing of a log directory (a `log.dirs` entry).
type LogDir struct {
	Path string
	// Partitions are the paths of subdirectories whose names parse as
	// partition directories (in any state), sorted by topic, partition,
	// then name.
	Partitions []string
	// Files are the regular files at the root (meta.properties,
	// checkpoints, .lock …), sorted by name; Kind is KindUnknown for
	// files Kafka does not write.
	Files []LogDirFile
	// OtherDirs are subdirectories that are not partition directories.
	OtherDirs []string
}

// File returns the root file of the given kind (in its final state).
func (l *LogDir) File(kind FileKind) (string, bool) {
	for _, f := range l.Files {
		if f.Kind == kind && !f.Transient() {
			return f.Path, true
		}
	}
	return "", false
}

// OpenLogDir lists a log directory without reading any file.
func OpenLogDir(path string) (*LogDir, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	l := &LogDir{Path: path}
	type part struct {
		name PartitionDirName
		base string
	}
	var parts []part
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(path, name)
		if isDirOrLinkToDir(p, e) {
			if n, ok := ParsePartitionDir(name); ok {
				parts = append(parts, part{n, name})
			} else {
				l.OtherDirs = append(l.OtherDirs, p)
			}
			continue
		}
		fi, _ := ParseFileName(name)
		l.Files = append(l.Files, LogDirFile{Path: p, FileInfo: fi})
	}
	slices.SortFunc(parts, func(a, b part) int {
		return cmp.Or(cmp.Compare(a.name.Topic, b.name.Topic),
			cmp.Compare(a.name.Partition, b.name.Partition),
			cmp.Compare(a.base, b.base))
	})
	for _, p := range parts {
		l.Partitions = append(l.Partitions, filepath.Join(path, p.base))
	}
	return l, nil
}

// isDirOrLinkToDir: e (at p) is a directory or a symbolic link to one.
// Operators move a partition directory to another disk and link it back;
// the JVM's File.isDirectory, which LogManager.loadLogs uses, follows the
// link, so the partition is loaded like any other.
func isDirOrLinkToDir(p string, e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// LogDirOf returns the log directory that holds a partition directory:
// its parent. Kafka keeps partition directories directly under a log dir.
func LogDirOf(partitionPath string) string {
	return filepath.Dir(filepath.Clean(partitionPath))
}

// String summarises the listing for debugging.
func (d *PartitionDir) String() string {
	return fmt.Sprintf("%s: %s, %s, %d transient, %d other",
		d.Path, plural.N(len(d.Segments), "segment"), plural.N(len(d.Snapshots), "snapshot"), len(d.Transient), len(d.Other))
}

// logDirFiles are the files a broker keeps in a log directory, beside the
// partition directories.
var logDirFiles = []string{LockName, RecoveryPointCheckpointName, LogStartOffsetCheckpointName, ReplicationOffsetCheckpointName,
	CleanerOffsetCheckpointName, MetaPropertiesName, CleanShutdownName}

// checkLogDirFiles refuses a log directory whose broker files are not
// regular files (see checkRegular). A missing file is fine.
func checkLogDirFiles(logDir string) error {
	for _, name := range logDirFiles {
		p := filepath.Join(logDir, name)
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if err := checkRegular(p, st.Mode().Type()); err != nil {
			return err
		}
	}
	return nil
}

// checkRegular refuses a FIFO, socket or device named like a Kafka file,
// or a symbolic link to one, without opening it (open(2) on a FIFO blocks
// until a writer comes). A symbolic link to a regular file is read through
// (the write commands refuse to replace one: edit's not-regular).
func checkRegular(path string, t fs.FileMode) error {
	if t.IsRegular() {
		return nil
	}
	if t&fs.ModeSymlink != 0 {
		st, err := os.Stat(path)
		if err != nil || st.Mode().IsRegular() {
			return nil // a dangling link fails where it is opened
		}
		t = st.Mode()
	}
	return &fs.PathError{Op: "open", Path: path, Err: &NotRegularError{Mode: t}}
}
