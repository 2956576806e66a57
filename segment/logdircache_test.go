package segment

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kseg/kseg/decode"
)

// TestLogDirCacheReadsOnce: partition directories opened through one
// LogDirCache read their log directory's checkpoints, meta.properties and
// .kafka_cleanshutdown once — a file changed after the first partition
// read it is not read again for the next — while a partition opened
// without a cache reads the file as it is now. The entries and errors are
// CheckpointOffset's either way (the first line of a repeated partition,
// -1 for a missing file or entry, the parse error for a bad file).
func TestLogDirCacheReadsOnce(t *testing.T) {
	ld := t.TempDir()
	for _, p := range []string{"orders-0", "orders-1", "orders-2", "unparsed"} {
		if err := os.Mkdir(filepath.Join(ld, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ld, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(LogStartOffsetCheckpointName, "0\n3\norders 0 5\norders 1 7\norders 0 9\n")
	write(ReplicationOffsetCheckpointName, "0\n2\norders 0 1\n")
	write(MetaPropertiesName, "node.id=3\n")

	c := NewLogDirCache()
	open := func(name string) *PartitionDir {
		t.Helper()
		pd, err := c.OpenPartitionDir(filepath.Join(ld, name))
		if err != nil {
			t.Fatal(err)
		}
		return pd
	}
	p0, p1 := open("orders-0"), open("orders-1")
	if off, err := CheckpointOffset(p0, LogStartOffsetCheckpointName); off != 5 || err != nil {
		t.Errorf("orders-0 log start %d, %v; want the first entry, 5", off, err)
	}
	if CleanShutdownPresent(p0) {
		t.Error("no .kafka_cleanshutdown yet")
	}
	if props, err := c.MetaProperties(ld); err != nil || props["node.id"] != "3" {
		t.Errorf("meta.properties: %v, %v", props, err)
	}
	// Everything changes on disk after the first reads.
	write(LogStartOffsetCheckpointName, "0\n2\norders 0 50\norders 1 70\n")
	write(ReplicationOffsetCheckpointName, "not a checkpoint\n")
	write(CleanShutdownName, "")
	write(MetaPropertiesName, "node.id=4\n")

	if off, err := CheckpointOffset(p1, LogStartOffsetCheckpointName); off != 7 || err != nil {
		t.Errorf("orders-1 log start %d, %v; want 7, from the file as first read", off, err)
	}
	// The replication checkpoint had not been read: its first read is now,
	// and its error is every partition's.
	for _, pd := range []*PartitionDir{p0, p1, open("orders-2")} {
		if off, err := CheckpointOffset(pd, ReplicationOffsetCheckpointName); off != -1 || !errors.Is(err, decode.ErrCorrupt) {
			t.Errorf("%s high watermark %d, %v; want -1 and the parse error", pd.Path, off, err)
		}
	}
	if CleanShutdownPresent(p1) {
		t.Error(".kafka_cleanshutdown was looked up again")
	}
	if props, _ := c.MetaProperties(ld); props["node.id"] != "3" {
		t.Errorf("meta.properties read again: %v", props)
	}
	if off, err := CheckpointOffset(open("orders-2"), LogStartOffsetCheckpointName); off != -1 || err != nil {
		t.Errorf("orders-2 log start %d, %v; want -1 (no entry)", off, err)
	}
	if off, _ := CheckpointOffset(open("unparsed"), LogStartOffsetCheckpointName); off != -1 {
		t.Errorf("a directory that is no <topic>-<partition> has entry %d", off)
	}
	if _, err := c.OpenPartitionDir(filepath.Join(ld, "missing-0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing partition directory: %v", err)
	}

	// Without a cache, the files as they are now.
	fresh, err := OpenPartitionDir(filepath.Join(ld, "orders-1"))
	if err != nil {
		t.Fatal(err)
	}
	if off, err := CheckpointOffset(fresh, LogStartOffsetCheckpointName); off != 70 || err != nil {
		t.Errorf("uncached orders-1 log start %d, %v; want 70", off, err)
	}
	if !CleanShutdownPresent(fresh) {
		t.Error("uncached: .kafka_cleanshutdown not seen")
	}
	var nilCache *LogDirCache
	if pd, err := nilCache.OpenPartitionDir(filepath.Join(ld, "orders-0")); err != nil || pd.logDir != nil {
		t.Errorf("a nil cache: %v, %v", pd, err)
	}

	// A missing checkpoint is -1 without error, once per run too.
	c2 := NewLogDirCache()
	if err := os.Remove(filepath.Join(ld, LogStartOffsetCheckpointName)); err != nil {
		t.Fatal(err)
	}
	pd, err := c2.OpenPartitionDir(filepath.Join(ld, "orders-0"))
	if err != nil {
		t.Fatal(err)
	}
	if off, err := CheckpointOffset(pd, LogStartOffsetCheckpointName); off != -1 || err != nil {
		t.Errorf("missing checkpoint: %d, %v", off, err)
	}
}

// TestLogDirCacheConcurrent: partitions opened and read on many goroutines
// at once (the log-directory commands' --jobs workers) get their own
// entries.
func TestLogDirCacheConcurrent(t *testing.T) {
	ld := t.TempDir()
	const n = 64
	var entries []OffsetCheckpointEntry
	for i := range n {
		if err := os.Mkdir(filepath.Join(ld, PartitionDirNameFor("t", int32(i))), 0o755); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, OffsetCheckpointEntry{Topic: "t", Partition: int32(i), Offset: int64(1000 + i)})
	}
	if err := os.WriteFile(filepath.Join(ld, LogStartOffsetCheckpointName), EncodeOffsetCheckpoint(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewLogDirCache()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			pd, err := c.OpenPartitionDir(filepath.Join(ld, PartitionDirNameFor("t", int32(i))))
			if err != nil {
				errs[i] = err
				return
			}
			if off, err := CheckpointOffset(pd, LogStartOffsetCheckpointName); off != int64(1000+i) || err != nil {
				errs[i] = errors.New(pd.Path + ": wrong entry")
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
