package barrier

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
	"github.com/kseg/kseg/segment/edit"
)

// Planning steps shared by PlanInjection, PlanRepair and PlanMirror.

// checkPartitionDir refuses, in this order, what is not a live partition
// directory: not a directory, a name that is not <topic>-<partition>, a
// deleted or future directory, the KRaft metadata log (when metadataWhy
// says why), a directory with nothing of a partition in it (and no
// journal). It returns the parsed name.
func checkPartitionDir(dir string, metadataWhy string) (segment.PartitionDirName, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return segment.PartitionDirName{}, err
	}
	name, ok := segment.ParsePartitionDir(filepath.Base(dir))
	switch {
	case !st.IsDir():
		return name, refuse(RefuseNotPartition, dir, "not a directory")
	case !ok:
		return name, refuse(RefuseNotPartition, dir, "the name is not <topic>-<partition>")
	case name.State != segment.DirLive:
		return name, refuse(RefuseNotPartition, dir, "a %s directory, not a live partition", name.State)
	case metadataWhy != "" && name.Topic == "__cluster_metadata":
		return name, refuse(RefuseNotPartition, dir, "%s", metadataWhy)
	case !segment.IsPartitionDir(dir) && !HasJournal(dir):
		// (A directory a mirror is creating holds only its journal.)
		return name, refuse(RefuseNotPartition, dir, "no .log, partition.metadata or leader-epoch-checkpoint in it")
	}
	return name, nil
}

// checkWritableLogDir refuses when a broker holds logDir, or when probe (the
// partition directory, or the log directory it is to be created in) is not
// writable. check replaces the read-only probe in tests.
func checkWritableLogDir(logDir, probe string, check func(dir string) (bool, string, error)) error {
	if err := checkNoBroker(logDir); err != nil {
		return err
	}
	if check == nil {
		check = edit.Writable
	}
	if ok, why, err := check(probe); err != nil {
		return err
	} else if !ok {
		return refuse(RefuseReadOnly, probe, "%s", why)
	}
	return nil
}

// deleteOp is the FileOp that deletes path.
func deleteOp(path, why string) (FileOp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FileOp{}, err
	}
	return FileOp{Name: filepath.Base(path), Action: OpDelete, Why: why, OldSize: st.Size(), NewSize: -1}, nil
}

// writeOp is the FileOp that gives dir/name content: a replacement, a
// creation, or none (nil) when the file already holds exactly that.
func writeOp(dir, name string, content []byte, why string) (*FileOp, error) {
	old, err := segment.ReadFile(filepath.Join(dir, name))
	switch {
	case err == nil:
		if bytes.Equal(old, content) {
			return nil, nil
		}
		return &FileOp{Name: name, Action: OpReplace, Why: why, OldSize: int64(len(old)), NewSize: int64(len(content)), Content: content}, nil
	case errors.Is(err, os.ErrNotExist):
		return &FileOp{Name: name, Action: OpCreate, Why: why, OldSize: -1, NewSize: int64(len(content)), Content: content}, nil
	default:
		return nil, err
	}
}

// deleteSegment plans the deletion of a segment wholly above a cut: its
// index entries count as removed, and del deletes its .log and each index
// it has.
func deleteSegment(f segment.SegmentFiles, why string, index, timeIndex, txnIndex *IndexChange, del func(path, why string) error) error {
	if f.Index != "" {
		if x, err := segment.ReadOffsetIndex(f.Index, f.BaseOffset); err == nil {
			index.Removed += len(x.Entries)
		}
	}
	if f.TimeIndex != "" {
		if x, err := segment.ReadTimeIndex(f.TimeIndex, f.BaseOffset); err == nil {
			timeIndex.Removed += len(x.Entries)
		}
	}
	if f.TxnIndex != "" {
		if x, err := segment.ReadTxnIndex(f.TxnIndex); err == nil {
			txnIndex.Removed += len(x.Entries)
		}
	}
	for _, path := range []string{f.Log, f.Index, f.TimeIndex, f.TxnIndex} {
		if path != "" {
			if err := del(path, why); err != nil {
				return err
			}
		}
	}
	return nil
}
