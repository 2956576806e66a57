package scan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/kseg/kseg/segment"
)

// File is one file to dump, with what its name says.
type File struct {
	Path string
	Info segment.FileInfo
	// Named: the path was given as such (not found by expanding a
	// directory); Missing: it does not exist (kept only under
	// DumpLogSegments, which reports it where kafka-dump-log does).
	Named, Missing bool
	// Entries and Selected: how many entries the file holds and how many
	// of them the filters selected (select.go), set for EndFile.
	Entries, Selected int
}

// NewFile is the file at path, with what its name says.
func NewFile(path string) File {
	fi, _ := segment.ParseFileName(filepath.Base(path))
	return File{Path: path, Info: fi}
}

// Collect expands paths (files, partition directories, log directories) into files in a stable order:
// per partition, segment files by base offset (.log, .index, .timeindex,
// .txnindex), then producer snapshots, then the metadata files.
//
// dumpLogSegments keeps a file that does not exist in the list (marked missing), as
// kafka-dump-log reaches it in turn.
//
// A partition directory of a log directory that cannot be listed does not
// stop the dump: it is in unread, which the caller reports, and the
// others are read.
func Collect(args []string, dumpLogSegments bool, logDirs *segment.LogDirCache) (out []File, unread []error, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			if dumpLogSegments && errors.Is(err, fs.ErrNotExist) {
				fi, _ := segment.ParseFileName(filepath.Base(a))
				out = append(out, File{Path: a, Info: fi, Named: true, Missing: true})
				continue
			}
			return nil, nil, err
		}
		if !st.IsDir() {
			fi, _ := segment.ParseFileName(filepath.Base(a))
			out = append(out, File{Path: a, Info: fi, Named: true})
			continue
		}
		if segment.IsPartitionDir(a) {
			files, err := partitionFiles(a, logDirs)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, files...)
			continue
		}
		ld, err := segment.OpenLogDir(a)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range ld.Files {
			fi, _ := segment.ParseFileName(filepath.Base(f.Path))
			if fi.Kind == segment.KindLock {
				continue
			}
			out = append(out, File{Path: f.Path, Info: fi})
		}
		for _, p := range ld.Partitions {
			files, err := partitionFiles(p, logDirs)
			if err != nil {
				unread = append(unread, err)
				continue
			}
			out = append(out, files...)
		}
	}
	return out, unread, nil
}

func partitionFiles(dir string, logDirs *segment.LogDirCache) ([]File, error) {
	pd, err := logDirs.OpenPartitionDir(dir)
	if err != nil {
		return nil, err
	}
	return PartitionFiles(pd), nil
}

// PartitionFiles are the files of a partition directory already listed,
// in the order Collect gives them.
func PartitionFiles(pd *segment.PartitionDir) []File {
	var out []File
	add := func(p string) {
		if p == "" {
			return
		}
		fi, _ := segment.ParseFileName(filepath.Base(p))
		out = append(out, File{Path: p, Info: fi})
	}
	for _, sg := range pd.Segments {
		add(sg.Log)
		add(sg.Index)
		add(sg.TimeIndex)
		add(sg.TxnIndex)
	}
	for _, sn := range pd.Snapshots {
		add(sn.Path)
	}
	for _, ms := range pd.MetadataSnapshots {
		add(ms.Path)
	}
	add(pd.LeaderEpochCheckpoint)
	add(pd.PartitionMetadata)
	rest := append(append([]string(nil), pd.Transient...), pd.Other...)
	sort.Strings(rest)
	for _, p := range rest {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			add(p)
		}
	}
	return out
}
