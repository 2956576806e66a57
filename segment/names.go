package segment

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// OffsetDigits is the width of the zero-padded offset that prefixes every
// segment and snapshot file name (LogFileUtils.filenamePrefixFromOffset).
const OffsetDigits = 20

// EpochDigits is the width of the epoch in a KRaft snapshot name
// (org.apache.kafka.snapshot.Snapshots EPOCH_WIDTH).
const EpochDigits = 10

// File-name suffixes, as in LogFileUtils and LocalLog.
const (
	LogSuffix         = ".log"
	IndexSuffix       = ".index"
	TimeIndexSuffix   = ".timeindex"
	TxnIndexSuffix    = ".txnindex"
	SnapshotSuffix    = ".snapshot"
	DeletedSuffix     = ".deleted" // scheduled for async deletion (LogFileUtils.DELETED_FILE_SUFFIX)
	CleanedSuffix     = ".cleaned" // cleaner output being built (LogFileUtils.CLEANED_FILE_SUFFIX)
	SwapSuffix        = ".swap"    // cleaned/split segment ready to replace originals (LogFileUtils.SWAP_FILE_SUFFIX)
	PartialSuffix     = ".part"    // KRaft snapshot being written (Snapshots PARTIAL_SUFFIX ".checkpoint.part")
	CheckpointSuffix  = ".checkpoint"
	metadataDeleteSfx = CheckpointSuffix + DeletedSuffix
	metadataPartSfx   = CheckpointSuffix + PartialSuffix
)

// Fixed file names. Partition-directory files first, then log-directory
// (root) files.
const (
	LeaderEpochCheckpointName       = "leader-epoch-checkpoint" // LeaderEpochCheckpointFile
	PartitionMetadataName           = "partition.metadata"      // PartitionMetadataFile
	QuorumStateName                 = "quorum-state"            // KRaft FileQuorumStateStore, in __cluster_metadata-0
	RecoveryPointCheckpointName     = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointName    = "log-start-offset-checkpoint"
	ReplicationOffsetCheckpointName = "replication-offset-checkpoint" // high watermarks
	CleanerOffsetCheckpointName     = "cleaner-offset-checkpoint"
	MetaPropertiesName              = "meta.properties"
	CleanShutdownName               = ".kafka_cleanshutdown"
	BootstrapCheckpointName         = "bootstrap.checkpoint"
	LockName                        = ".lock"
)

// FileKind classifies a file by its name alone.
type FileKind int

// File kinds. KindUnknown is anything Kafka does not write.
const (
	KindUnknown FileKind = iota
	KindLog
	KindIndex
	KindTimeIndex
	KindTxnIndex
	KindProducerSnapshot
	KindLeaderEpochCheckpoint
	KindPartitionMetadata
	KindRecoveryPointCheckpoint
	KindLogStartOffsetCheckpoint
	KindReplicationOffsetCheckpoint
	KindCleanerOffsetCheckpoint
	KindMetaProperties
	KindCleanShutdown
	KindMetadataSnapshot // KRaft <endOffset>-<epoch>.checkpoint
	KindBootstrapCheckpoint
	KindQuorumState
	KindLock
)

var kindNames = [...]string{
	KindUnknown:                     "unknown",
	KindLog:                         "log",
	KindIndex:                       "index",
	KindTimeIndex:                   "timeindex",
	KindTxnIndex:                    "txnindex",
	KindProducerSnapshot:            "snapshot",
	KindLeaderEpochCheckpoint:       LeaderEpochCheckpointName,
	KindPartitionMetadata:           PartitionMetadataName,
	KindRecoveryPointCheckpoint:     RecoveryPointCheckpointName,
	KindLogStartOffsetCheckpoint:    LogStartOffsetCheckpointName,
	KindReplicationOffsetCheckpoint: ReplicationOffsetCheckpointName,
	KindCleanerOffsetCheckpoint:     CleanerOffsetCheckpointName,
	KindMetaProperties:              MetaPropertiesName,
	KindCleanShutdown:               CleanShutdownName,
	KindMetadataSnapshot:            "metadata-snapshot",
	KindBootstrapCheckpoint:         BootstrapCheckpointName,
	KindQuorumState:                 QuorumStateName,
	KindLock:                        LockName,
}

// String returns a stable lower-case name for the kind, suitable for JSON.
func (k FileKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("FileKind(%d)", int(k))
}

// IsSegmentFile reports whether files of this kind belong to one segment
// (named by the segment's base offset).
func (k FileKind) IsSegmentFile() bool {
	return k == KindLog || k == KindIndex || k == KindTimeIndex || k == KindTxnIndex
}

var fixedNames = map[string]FileKind{
	LeaderEpochCheckpointName:       KindLeaderEpochCheckpoint,
	PartitionMetadataName:           KindPartitionMetadata,
	QuorumStateName:                 KindQuorumState,
	RecoveryPointCheckpointName:     KindRecoveryPointCheckpoint,
	LogStartOffsetCheckpointName:    KindLogStartOffsetCheckpoint,
	ReplicationOffsetCheckpointName: KindReplicationOffsetCheckpoint,
	CleanerOffsetCheckpointName:     KindCleanerOffsetCheckpoint,
	MetaPropertiesName:              KindMetaProperties,
	CleanShutdownName:               KindCleanShutdown,
	BootstrapCheckpointName:         KindBootstrapCheckpoint,
	LockName:                        KindLock,
}

var offsetSuffixes = map[string]FileKind{
	LogSuffix:       KindLog,
	IndexSuffix:     KindIndex,
	TimeIndexSuffix: KindTimeIndex,
	TxnIndexSuffix:  KindTxnIndex,
	SnapshotSuffix:  KindProducerSnapshot,
}

// FileInfo is what a file name says about a file.
type FileInfo struct {
	Name string
	Kind FileKind
	// Offset is the base offset of a segment file, the (exclusive) end
	// offset of a producer snapshot or KRaft snapshot, else -1.
	Offset int64
	// Epoch is the leader epoch of a KRaft snapshot, else -1.
	Epoch int32
	// Suffix is a transient suffix after the normal name: DeletedSuffix,
	// CleanedSuffix, SwapSuffix, PartialSuffix (KRaft snapshot being
	// written) or TempSuffix (an interrupted checkpoint write); "" for a
	// file in its final state.
	Suffix string
	// Canonical is false when the offset (or epoch) is not written with
	// exactly the digits Kafka uses. Kafka's offsetFromFileName accepts any
	// parseable number, but never writes such a name.
	Canonical bool
}

// Transient reports whether the file carries a transient suffix, i.e. the
// broker would delete, rename or ignore it at the next load
// (LogLoader#removeTempFilesAndCollectSwapFiles).
func (fi FileInfo) Transient() bool { return fi.Suffix != "" }

// FormatOffset renders an offset the way file names carry it: decimal,
// zero-padded to 20 digits (LogFileUtils.filenamePrefixFromOffset, a
// NumberFormat with 20 minimum integer digits and no grouping).
func FormatOffset(offset int64) string {
	return fmt.Sprintf("%0*d", OffsetDigits, offset)
}

// SegmentFileName returns the name of a segment-related file, e.g.
// SegmentFileName(0, LogSuffix) = "00000000000000000000.log".
func SegmentFileName(offset int64, suffix string) string {
	return FormatOffset(offset) + suffix
}

// MetadataSnapshotName returns the name of a KRaft snapshot
// (Snapshots.filenameFromSnapshotId): "<20-digit endOffset>-<10-digit epoch>.checkpoint".
func MetadataSnapshotName(endOffset int64, epoch int32) string {
	return fmt.Sprintf("%0*d-%0*d%s", OffsetDigits, endOffset, EpochDigits, epoch, CheckpointSuffix)
}

// ParseFileName classifies a file by name. ok is false for names Kafka does
// not write (Kind is then KindUnknown and Offset/Epoch are -1).
func ParseFileName(name string) (FileInfo, bool) {
	fi := FileInfo{Name: name, Kind: KindUnknown, Offset: -1, Epoch: -1, Canonical: true}
	if k, ok := fixedNames[name]; ok {
		fi.Kind = k
		return fi, true
	}
	// CheckpointFile, PartitionMetadataFile, FileQuorumStateStore,
	// BootstrapDirectory and PropertiesUtils all write "<name>.tmp" first.
	if base, ok := strings.CutSuffix(name, TempSuffix); ok {
		if k, ok := fixedNames[base]; ok && k != KindLock {
			fi.Kind, fi.Suffix = k, TempSuffix
			return fi, true
		}
	}
	if parseMetadataSnapshotName(name, &fi) {
		return fi, true
	}
	rest := name
	for _, s := range []string{DeletedSuffix, CleanedSuffix, SwapSuffix} {
		if r, ok := strings.CutSuffix(name, s); ok {
			rest, fi.Suffix = r, s
			break
		}
	}
	// LogFileUtils.offsetFromFileName: Long.parseLong(name.substring(0, name.indexOf('.'))).
	dot := strings.IndexByte(rest, '.')
	if dot <= 0 {
		return unknownFile(name), false
	}
	kind, ok := offsetSuffixes[rest[dot:]]
	if !ok {
		return unknownFile(name), false
	}
	off, ok := parseDigits(rest[:dot], 63)
	if !ok {
		return unknownFile(name), false
	}
	fi.Kind, fi.Offset, fi.Canonical = kind, off, dot == OffsetDigits
	return fi, true
}

func unknownFile(name string) FileInfo {
	return FileInfo{Name: name, Kind: KindUnknown, Offset: -1, Epoch: -1}
}

// parseMetadataSnapshotName mirrors Snapshots.parse: the name ends in
// ".checkpoint", ".checkpoint.deleted" or ".checkpoint.part", the first 20
// characters are the end offset, then '-', then 10 characters of epoch.
// A partial snapshot is a temp file "<offset>-<epoch>-<random>.checkpoint.part".
func parseMetadataSnapshotName(name string, fi *FileInfo) bool {
	const head = OffsetDigits + 1 + EpochDigits
	if len(name) < head || name[OffsetDigits] != '-' {
		return false
	}
	tail := name[head:]
	switch {
	case tail == CheckpointSuffix:
	case tail == metadataDeleteSfx:
		fi.Suffix = DeletedSuffix
	case strings.HasPrefix(tail, "-") && strings.HasSuffix(tail, metadataPartSfx):
		fi.Suffix = PartialSuffix
	default:
		return false
	}
	off, ok1 := parseDigits(name[:OffsetDigits], 63)
	epoch, ok2 := parseDigits(name[OffsetDigits+1:head], 31)
	if !ok1 || !ok2 {
		fi.Suffix = ""
		return false
	}
	fi.Kind, fi.Offset, fi.Epoch = KindMetadataSnapshot, off, int32(epoch)
	return true
}

// parseDigits parses a non-empty run of ASCII digits that fits in bits
// bits (signs are not accepted: Kafka never writes them).
func parseDigits(s string, bits int) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, bits+1)
	if err != nil {
		return 0, false
	}
	return v, true
}

// DirState is the life-cycle state a partition directory's name encodes.
type DirState int

// Partition directory states (LocalLog: logDeleteDirName, logFutureDirName,
// logStrayDirName).
const (
	DirLive   DirState = iota // <topic>-<partition>
	DirDelete                 // <topic>-<partition>.<uuid>-delete: deleted topic, awaiting async removal
	DirFuture                 // <topic>-<partition>.<uuid>-future: target of an alter-log-dirs move
	DirStray                  // <topic>-<partition>.<uuid>-stray: KRaft found no assignment for it
)

// Directory-name suffixes (LocalLog.DeleteDirSuffix etc.).
const (
	DeleteDirSuffix = "-delete"
	FutureDirSuffix = "-future"
	StrayDirSuffix  = "-stray"
)

func (s DirState) String() string { return enumName(dirStateNames[:], int(s), "DirState") }

var dirStateNames = [...]string{DirLive: "live", DirDelete: "delete", DirFuture: "future", DirStray: "stray"}

// PartitionDirName is what a partition directory's name says.
type PartitionDirName struct {
	Topic     string
	Partition int32
	State     DirState
	// UniqueID is the 32-hex UUID of a -delete/-future/-stray directory.
	UniqueID string
}

// The patterns LocalLog.parseTopicPartitionName validates suffixed names
// with. (RE2's \S omits \v, Java's does not; Kafka never writes either.)
var (
	deleteDirPattern = regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)` + DeleteDirSuffix + `$`)
	futureDirPattern = regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)` + FutureDirSuffix + `$`)
	strayDirPattern  = regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)` + StrayDirSuffix + `$`)
)

// ParsePartitionDir parses a partition directory name exactly as
// LocalLog.parseTopicPartitionName does: "<topic>-<partition>", or
// "<topic>-<partition>.<uniqueId>-delete|-future|-stray". The topic of a
// -delete directory may have been truncated so the name fits in 255 bytes.
func ParsePartitionDir(name string) (PartitionDirName, bool) {
	var d PartitionDirName
	if name == "" || !strings.Contains(name, "-") {
		return d, false
	}
	base := name
	for _, c := range []struct {
		suffix  string
		pattern *regexp.Regexp
		state   DirState
	}{
		{DeleteDirSuffix, deleteDirPattern, DirDelete},
		{FutureDirSuffix, futureDirPattern, DirFuture},
		{StrayDirSuffix, strayDirPattern, DirStray},
	} {
		if !strings.HasSuffix(name, c.suffix) {
			continue
		}
		if !c.pattern.MatchString(name) {
			return PartitionDirName{}, false
		}
		dot := strings.LastIndexByte(name, '.')
		base = name[:dot]
		d.State = c.state
		d.UniqueID = strings.TrimSuffix(name[dot+1:], c.suffix)
		break
	}
	dash := strings.LastIndexByte(base, '-')
	if dash < 0 {
		return PartitionDirName{}, false
	}
	topic, part := base[:dash], base[dash+1:]
	if topic == "" || part == "" {
		return PartitionDirName{}, false
	}
	// Integer.parseInt: optional sign, decimal digits, fits in int32.
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil {
		return PartitionDirName{}, false
	}
	d.Topic, d.Partition = topic, int32(p)
	return d, true
}

// ParsePartitionDirName is ParsePartitionDir without the state: the topic
// and partition a directory name encodes, for any state.
func ParsePartitionDirName(name string) (topic string, partition int32, ok bool) {
	d, ok := ParsePartitionDir(name)
	return d.Topic, d.Partition, ok
}

// PartitionDirNameFor returns the live directory name for a partition
// (LocalLog.logDirName).
func PartitionDirNameFor(topic string, partition int32) string {
	return topic + "-" + strconv.FormatInt(int64(partition), 10)
}
