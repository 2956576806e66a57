package segment

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// LogDirCache holds what one run reads at the root of the log directories
// it meets: the offset checkpoints (recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, replication-offset-checkpoint,
// cleaner-offset-checkpoint), meta.properties, whether
// .kafka_cleanshutdown is there, and the check that none of them is a
// FIFO or device (OpenPartitionDir's). Each is read and parsed once per
// log directory, however many of its partitions the run opens: a broker's
// checkpoints have a line per partition, so reading them again for each of
// N partitions costs N² (5,000 partitions: 25 million lines).
//
// A cache is a snapshot, like LogManager's own read of the checkpoints at
// start-up: a file changed while the run goes on is not read again. The
// read-only commands that walk a log directory use one per invocation;
// write commands, which change these files, open their partition without
// one (a nil *LogDirCache reads every time). It is safe for concurrent
// use.
type LogDirCache struct {
	mu   sync.Mutex
	dirs map[string]*cachedLogDir
}

// NewLogDirCache returns an empty cache, for one run.
func NewLogDirCache() *LogDirCache { return &LogDirCache{dirs: map[string]*cachedLogDir{}} }

// cachedLogDir is one log directory's files, each loaded at most once.
type cachedLogDir struct {
	path string

	checkOnce sync.Once
	checkErr  error

	mu          sync.Mutex
	checkpoints map[string]*offsetLookup

	cleanOnce sync.Once
	clean     bool

	propsOnce sync.Once
	props     map[string]string
	propsErr  error
}

// offsetLookup is one offset checkpoint file, parsed: the entry of each
// topic-partition (the first, when a file repeats one, as
// CheckpointOffset's scan takes it).
type offsetLookup struct {
	once    sync.Once
	entries map[topicPartition]int64
	err     error
}

type topicPartition struct {
	topic     string
	partition int32
}

func (c *LogDirCache) logDir(path string) *cachedLogDir {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.dirs[path]
	if l == nil {
		l = &cachedLogDir{path: path, checkpoints: map[string]*offsetLookup{}}
		c.dirs[path] = l
	}
	return l
}

// OpenPartitionDir is segment.OpenPartitionDir with the log directory's
// files taken from (and put in) the cache. A nil cache opens as
// segment.OpenPartitionDir does.
func (c *LogDirCache) OpenPartitionDir(path string) (*PartitionDir, error) {
	if c == nil {
		return OpenPartitionDir(path)
	}
	return openPartitionDir(path, c)
}

// Attach makes later reads of pd's log-directory files (CheckpointOffset,
// CleanShutdownPresent) go through the cache; a nil cache leaves pd as it
// is.
func (c *LogDirCache) Attach(pd *PartitionDir) {
	if c != nil && pd != nil && pd.Topic != "" {
		pd.logDir = c.logDir(LogDirOf(pd.Path))
	}
}

// MetaProperties is ReadMetaProperties of the log directory's
// meta.properties, read once.
func (c *LogDirCache) MetaProperties(logDir string) (map[string]string, error) {
	if c == nil {
		return ReadMetaProperties(filepath.Join(logDir, MetaPropertiesName))
	}
	l := c.logDir(filepath.Clean(logDir))
	l.propsOnce.Do(func() { l.props, l.propsErr = ReadMetaProperties(filepath.Join(l.path, MetaPropertiesName)) })
	return l.props, l.propsErr
}

// check is checkLogDirFiles, once.
func (l *cachedLogDir) check() error {
	l.checkOnce.Do(func() { l.checkErr = checkLogDirFiles(l.path) })
	return l.checkErr
}

// offset is the entry of (topic, partition) in the checkpoint name, as
// CheckpointOffset returns it.
func (l *cachedLogDir) offset(name, topic string, partition int32) (int64, error) {
	l.mu.Lock()
	f := l.checkpoints[name]
	if f == nil {
		f = &offsetLookup{}
		l.checkpoints[name] = f
	}
	l.mu.Unlock()
	f.once.Do(func() {
		entries, err := ReadOffsetCheckpoint(filepath.Join(l.path, name))
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err != nil {
			f.err = err
			return
		}
		f.entries = make(map[topicPartition]int64, len(entries))
		for _, e := range entries {
			k := topicPartition{e.Topic, e.Partition}
			if _, dup := f.entries[k]; !dup {
				f.entries[k] = e.Offset
			}
		}
	})
	if f.err != nil {
		return -1, f.err
	}
	if off, ok := f.entries[topicPartition{topic, partition}]; ok {
		return off, nil
	}
	return -1, nil
}

// cleanShutdown reports whether .kafka_cleanshutdown exists, looked up
// once.
func (l *cachedLogDir) cleanShutdown() bool {
	l.cleanOnce.Do(func() {
		_, err := os.Stat(filepath.Join(l.path, CleanShutdownName))
		l.clean = err == nil
	})
	return l.clean
}

// CleanShutdownPresent reports whether pd's log directory holds
// .kafka_cleanshutdown (LogManager.loadLogs: hadCleanShutdown). It is
// false when pd's name is not <topic>-<partition> (then it is no
// partition of a log directory).
func CleanShutdownPresent(pd *PartitionDir) bool {
	if pd.Topic == "" || pd.Partition < 0 {
		return false
	}
	if pd.logDir != nil {
		return pd.logDir.cleanShutdown()
	}
	_, err := os.Stat(filepath.Join(LogDirOf(pd.Path), CleanShutdownName))
	return err == nil
}
