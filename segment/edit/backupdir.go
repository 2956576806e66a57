package edit

import (
	"os"
	"path/filepath"

	"github.com/kseg/kseg/segment"
)

// logDirMarkers are files only a Kafka log directory holds (LogManager's
// checkpoints, meta.properties, the lock, the clean-shutdown marker).
var logDirMarkers = []string{segment.MetaPropertiesName, segment.RecoveryPointCheckpointName, segment.LogStartOffsetCheckpointName,
	segment.ReplicationOffsetCheckpointName, segment.CleanerOffsetCheckpointName, segment.CleanShutdownName, segment.LockName}

// refuseKafkaDir refuses a backup directory bd inside logDir (the log
// directory being edited), or that is, or is inside, a directory that is
// or looks like a Kafka log directory (any of logDirMarkers) or partition
// directory (a <topic>-<partition> name holding a .log, partition.metadata
// or leader-epoch-checkpoint). A broker refuses to start with a folder in
// its log directory that is not a partition (LogManager.loadLogs parses
// every subdirectory's name), and a backup written into another partition
// is taken for that partition's own segments. Symbolic links are resolved
// first. It returns a *RefusalError.
func refuseKafkaDir(bd, logDir string) error {
	if within(bd, logDir) {
		return Refuse(RefuseBackupDir, bd, "inside the log directory %s: a broker refuses to start with a folder there that is not a partition", logDir)
	}
	for p := RealPath(bd); ; {
		if why := kafkaDir(p); why != "" {
			return Refuse(RefuseBackupDir, bd, "inside %s, %s: a broker would refuse a folder that is not a partition there, or take the backup for its own files", p, why)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// kafkaDir says why dir is or looks like a Kafka log directory or
// partition directory; "" when it does not (or does not exist).
func kafkaDir(dir string) string {
	for _, name := range logDirMarkers {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
			return "a Kafka log directory (it holds " + name + ")"
		}
	}
	if _, ok := segment.ParsePartitionDir(filepath.Base(dir)); ok && segment.IsPartitionDir(dir) {
		return "a Kafka partition directory"
	}
	return ""
}
